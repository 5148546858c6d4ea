"""A recorded request made ready for the live agent: live ids in, credentials in (pure).

It goes out byte for byte as recorded but for: the live ids of the step's mapping (in the body,
a gRPC message's proto-JSON, header values, and target segments or query values that *are* a
recorded id); the live agent's interface paths for the recorded one's (`PathMap`, from the two
cards); the user's credentials for redacted values (`Credentials`); and framing, which is the
client's to redo (`Host`, `Content-Length`, hop-by-hop headers; a body recorded decoded from
gzip or deflate is encoded again).  A placeholder that would still go out raises
`PlaceholderError`.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from recorder._errors import PlaceholderError
from recorder.capture import Request
from recorder.protocol import (
    Binding,
    Interface,
    Version,
    decode_binary_header,
    encode_message,
    grpc_method,
    is_binary_header,
)
from recorder.script import substitute_body, substitute_headers, substitute_json_text
from recorder.verify._secrets import PLACEHOLDER, Credentials

# Framing headers, and hop-by-hop ones only the client's own connection can mean: the HTTP
# client writes its own.  (`Connection: keep-alive` or `close` goes out as recorded.)
FRAMING_HEADERS = frozenset({
    "host", "content-length", "transfer-encoding", "keep-alive", "proxy-connection", "upgrade",
    "expect",
})  # fmt: skip
# gRPC headers grpcio writes itself (the call's path, authority, framing, encodings, agent).
GRPC_OWN_HEADERS = frozenset({
    "content-type", "te", "grpc-timeout", "grpc-encoding", "grpc-accept-encoding",
    "accept-encoding", "user-agent", "content-length",
})  # fmt: skip
ENCODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": lambda b: gzip.compress(b),
    "x-gzip": lambda b: gzip.compress(b),
    "deflate": lambda b: zlib.compress(b),
}


@dataclass(frozen=True, slots=True)
class HttpOutgoing:
    method: str
    target: str  # path and query, on the live agent
    headers: tuple[tuple[str, str], ...]
    body: bytes


@dataclass(frozen=True, slots=True)
class GrpcOutgoing:
    path: str
    metadata: tuple[tuple[str, str | bytes], ...]
    message: bytes
    server_streaming: bool


Outgoing = HttpOutgoing | GrpcOutgoing


@dataclass(frozen=True)
class PathMap:
    """Recorded interface path -> live interface path, per binding and version; `base` (where
    each card is) for requests under no interface."""

    paths: Mapping[tuple[Binding, Version | None], tuple[str, str]] = field(default_factory=dict)
    base: tuple[str, str] = ("", "")

    @classmethod
    def of(
        cls,
        recorded: Sequence[Interface],
        live: Sequence[Interface],
        base: tuple[str, str] = ("", ""),
    ) -> PathMap:
        found: dict[tuple[Binding, Version | None], tuple[str, str]] = {}
        live_paths = {(i.binding, i.version): _path(i.url) for i in live}
        for iface in recorded:
            there = live_paths.get((iface.binding, iface.version))
            if there is not None and iface.binding is not Binding.GRPC:
                found.setdefault((iface.binding, iface.version), (_path(iface.url), there))
        return cls(found, base)

    def apply(self, binding: Binding | None, version: Version | None, target: str) -> str:
        pair = self.paths.get((binding, version)) if binding is not None else None
        if pair is None and binding is not None:  # a version the card did not say
            pair = next((p for (b, _), p in self.paths.items() if b is binding), None)
        old, new = pair or self.base
        path, sep, query = target.partition("?")
        if old == new or not _under(path, old):
            return target
        return new + path[len(old) :] + sep + query


def _path(url: str) -> str:
    return urlsplit(url).path.rstrip("/")


def _under(path: str, prefix: str) -> bool:
    return (
        path == prefix
        or path.startswith(prefix + "/")
        or (prefix != "" and path.startswith(prefix + ":"))
    )


def http_outgoing(
    request: Request,
    binding: Binding | None,
    version: Version | None,
    mapping: Mapping[str, str],
    credentials: Credentials,
    paths: PathMap = PathMap(),
) -> HttpOutgoing:
    target = paths.apply(binding, version, substitute_target(request.target, mapping))
    target = credentials.fill_query(target)
    headers = _headers(request.headers, mapping, credentials)
    body = substitute_body(request.body, {**mapping, **credentials.placeholders})
    encoding = (request.header("content-encoding") or "").strip().lower()
    if encoding in ENCODERS and body:
        body = ENCODERS[encoding](body)
    elif encoding:
        headers = tuple((k, v) for k, v in headers if k.lower() != "content-encoding")
    _refuse_placeholders(request, target, headers, body)
    return HttpOutgoing(request.method, target, headers, body)


def _headers(
    headers: Sequence[tuple[str, str]], mapping: Mapping[str, str], credentials: Credentials
) -> tuple[tuple[str, str], ...]:
    kept = [(k, v) for k, v in headers if k.lower() not in FRAMING_HEADERS]
    return credentials.fill_headers(substitute_headers(kept, mapping))


def substitute_target(target: str, mapping: Mapping[str, str]) -> str:
    """`target` with each path segment (less a `:verb`) or query value that is a recorded id
    as the live one."""
    if not mapping:
        return target
    path, sep, query = target.partition("?")
    segments = [_segment(part, mapping) for part in path.split("/")]
    new_path = "/".join(segments)
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(value in mapping for _, value in pairs):
            query = urlencode([(k, mapping.get(v, v)) for k, v in pairs])
    return new_path + sep + query


def _segment(part: str, mapping: Mapping[str, str]) -> str:
    name, colon, verb = part.partition(":")
    value = unquote(name)
    if value in mapping:
        return quote(mapping[value], safe="") + colon + verb
    whole = unquote(part)
    return quote(mapping[whole], safe="") if whole in mapping else part


def _refuse_placeholders(
    request: Request, target: str, headers: Sequence[tuple[str, str]], body: bytes
) -> None:
    for name, value in headers:
        if PLACEHOLDER.search(value):
            raise PlaceholderError(f"header {name}", _hint_header(name))
    if PLACEHOLDER.search(unquote(target)):
        raise PlaceholderError(
            "the query", "supply it with --param NAME=VALUE or A2A_VERIFY_PARAM_<NAME>"
        )
    if PLACEHOLDER.search(body.decode("utf-8", "replace")):
        raise PlaceholderError("the body", "verify cannot know what it held")


def _hint_header(name: str) -> str:
    return (
        f"supply it with --header '{name}: VALUE' or {Credentials.environment_name('header', name)}"
    )


def grpc_outgoing(
    request: Request, mapping: Mapping[str, str], credentials: Credentials
) -> GrpcOutgoing:
    """A recorded gRPC call ready for grpcio; `GrpcCodecError` (a ValueError) when its message
    cannot be encoded again."""
    method = grpc_method(request.target)
    metadata: list[tuple[str, str | bytes]] = []
    for name, value in _headers(request.headers, mapping, credentials):
        key = name.lower()
        if key.startswith(":") or key in GRPC_OWN_HEADERS:
            continue
        if PLACEHOLDER.search(value):
            raise PlaceholderError(f"metadata {name}", _hint_header(name))
        metadata.append((key, decode_binary_header(value) if is_binary_header(key) else value))
    message = request.messages[0] if request.messages else None
    data = b""
    if message is not None and message.json is not None:
        text = substitute_json_text(message.json, {**mapping, **credentials.placeholders})
        if PLACEHOLDER.search(text):
            raise PlaceholderError("the message", "verify cannot know what it held")
        type_name = message.type_name or (method.input_type if method else "")
        data = encode_message(type_name, text)
    elif message is not None:
        data = message.raw or b""
    streaming = method.server_streaming if method is not None else False
    return GrpcOutgoing(request.target, tuple(metadata), data, streaming)
