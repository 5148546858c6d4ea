"""gRPC knowledge, sans-I/O: message framing, the A2A descriptor codec, status and metadata.

DATA frames are not message boundaries, so `GrpcFramer` re-frames incrementally.  The A2A
protos ship as package data (`scripts/descriptors`) in a private pool, so no a2a-sdk is needed
at runtime and a user's own never changes decoding; so does a draft a peer speaks under v0.3's
service name (a2a-java's, renamed: `DRAFT_SERVICES`), which reads what v0.3's schema cannot.
Invariant: a message is shown as proto-JSON only when that JSON gives back the same message
(else the caller keeps the raw bytes), so `encode_message(*decode_message(...))` is equal.
`GrpcFramingError`: a peer broke the framing; `GrpcCodecError`: our caller asked to encode
something unknown or malformed.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message, message_factory

from recorder._errors import GrpcCodecError, GrpcFramingError
from recorder.protocol._errors import ERROR_INFO_TYPE

Direction = Literal["request", "response"]

# --- framing -------------------------------------------------------------------------------

PREFIX_SIZE = 5  # 1 byte compressed flag + 4 bytes big-endian length
_FLAGS: Mapping[int, bool] = {0: False, 1: True}


def frame_message(data: bytes, compressed: bool = False) -> bytes:
    """Wrap one message in its 5-byte gRPC prefix."""
    return bytes((int(compressed),)) + len(data).to_bytes(4, "big") + data


class GrpcFramer:
    """Incremental splitter of a gRPC body into `(compressed, message_bytes)`; `pending` counts
    an unfinished message's bytes.  A flag byte neither 0 nor 1 raises `GrpcFramingError`, then
    again on every later feed."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._error: GrpcFramingError | None = None

    @property
    def pending(self) -> int:
        return len(self._buffer)

    def feed(self, chunk: bytes) -> list[tuple[bool, bytes]]:
        if self._error is not None:
            raise self._error
        self._buffer += chunk
        messages: list[tuple[bool, bytes]] = []
        while (found := self._next()) is not None:
            messages.append(found)
        return messages

    def _next(self) -> tuple[bool, bytes] | None:
        if len(self._buffer) < PREFIX_SIZE:
            return None
        flag = self._buffer[0]
        if flag not in _FLAGS:
            self._error = GrpcFramingError(f"gRPC message flag byte is {flag:#04x}, not 0 or 1")
            raise self._error
        end = PREFIX_SIZE + int.from_bytes(self._buffer[1:PREFIX_SIZE], "big")
        if len(self._buffer) < end:
            return None
        data = bytes(self._buffer[PREFIX_SIZE:end])
        del self._buffer[:end]
        return _FLAGS[flag], data


def timed_messages(
    chunks: Iterable[tuple[int, bytes]],
) -> tuple[list[tuple[int, bool, bytes]], int]:
    """`([(at_us, compressed, data)], pending)`: a message's time is its last chunk's."""
    framer = GrpcFramer()
    out = [(at, flag, data) for at, chunk in chunks for flag, data in framer.feed(chunk)]
    return out, framer.pending


# --- the shipped descriptors, and the A2A rpc table read from them ------------------------

DESCRIPTOR_SET = "descriptors/a2a.binpb"
DESCRIPTOR_MANIFEST = "descriptors/a2a.json"
# Files whose services we know: v1.0 (package lf.a2a.v1) and v0.3 (package a2a.v1).
DESCRIPTOR_FILES = ("a2a.proto", "a2a_v0_3.proto")
# Schemas a peer speaks under another's service name, shipped renamed: the service on the wire ->
# the shipped service whose rpc of the same name reads what the first one's does not read
# losslessly, and serves the rpcs the first lacks.  a2a-java 1.0.0.Alpha3 serves a draft of
# v1.0 as `a2a.v1.A2AService` (its CreateTaskPushNotificationConfigRequest is {task_id,
# config_id, tenant, config: PushNotificationConfig} where v0.3's is {parent, config_id,
# config}); `scripts/descriptors` ships its file as package a2a_java_draft.v1.
DRAFT_SERVICES: Mapping[str, str] = {"a2a.v1.A2AService": "a2a_java_draft.v1.A2AService"}
STATUS_TYPE = "google.rpc.Status"
ANY_TYPE = "google.protobuf.Any"


def _package_data(name: str) -> bytes:
    return resources.files("recorder.protocol").joinpath(name).read_bytes()


@cache
def a2a_pool() -> descriptor_pool.DescriptorPool:
    """A private pool of the shipped files (listed after what they import), built once."""
    shipped = descriptor_pb2.FileDescriptorSet.FromString(_package_data(DESCRIPTOR_SET))
    pool = descriptor_pool.DescriptorPool()
    for file in shipped.file:
        pool.AddSerializedFile(file.SerializeToString())
    return pool


@cache
def descriptor_manifest() -> Mapping[str, Any]:
    """`{"source": "a2a-sdk 1.3.0", "files": {name: "dist version"}}` of the shipped set."""
    found: dict[str, Any] = json.loads(_package_data(DESCRIPTOR_MANIFEST))
    return found


def descriptor_source() -> str:
    """`shipped with a2a-recorder (protos of a2a-sdk 1.3.0; drafts: a2a_java_draft.proto of
    io.github.a2asdk:a2a-java-sdk-spec-grpc 1.0.0.Alpha3)`."""
    manifest = descriptor_manifest()
    drafts = [f"{name} of {manifest['files'][name]}" for name in manifest.get("renamed", {})]
    said = f"; drafts: {', '.join(drafts)}" if drafts else ""
    return f"shipped with a2a-recorder (protos of {manifest['source']}{said})"


@dataclass(frozen=True, slots=True)
class GrpcMethod:
    path: str  # /lf.a2a.v1.A2AService/SendMessage
    service: str  # lf.a2a.v1.A2AService
    name: str  # SendMessage
    input_type: str  # full message name
    output_type: str
    client_streaming: bool
    server_streaming: bool

    def message_type(self, direction: Direction) -> str:
        return self.input_type if direction == "request" else self.output_type


@cache
def grpc_methods() -> Mapping[str, GrpcMethod]:
    """Every rpc path we know: the services of `DESCRIPTOR_FILES`, and a draft's rpcs that
    the service it is spoken under lacks (`/a2a.v1.A2AService/ListTasks`: a2a-java's)."""
    table: dict[str, GrpcMethod] = {}
    pool = a2a_pool()
    for file_name in DESCRIPTOR_FILES:
        for service in pool.FindFileByName(file_name).services_by_name.values():
            for rpc in service.methods:
                found = _method(service.full_name, rpc)
                table[found.path] = found
    return {**draft_methods(), **table}


@cache
def draft_methods() -> Mapping[str, GrpcMethod]:
    """The drafts' rpcs (`DRAFT_SERVICES`) by their path on the wire, with the draft's types."""
    table: dict[str, GrpcMethod] = {}
    for wire, shipped in DRAFT_SERVICES.items():
        for rpc in a2a_pool().FindServiceByName(shipped).methods:
            found = _method(wire, rpc)
            table[found.path] = found
    return table


def _method(service: str, rpc: Any) -> GrpcMethod:
    return GrpcMethod(
        path=f"/{service}/{rpc.name}",
        service=service,
        name=rpc.name,
        input_type=rpc.input_type.full_name,
        output_type=rpc.output_type.full_name,
        client_streaming=bool(rpc.client_streaming),
        server_streaming=bool(rpc.server_streaming),
    )


def grpc_method(path: str) -> GrpcMethod | None:
    return grpc_methods().get(path)


@cache
def message_class(type_name: str) -> type[message.Message] | None:
    """The shipped pool's class for a full message name, or None (not a2a-sdk's class)."""
    try:
        descriptor = a2a_pool().FindMessageTypeByName(type_name)
    except KeyError:
        return None
    cls: type[message.Message] = message_factory.GetMessageClass(descriptor)
    return cls


# --- message codec --------------------------------------------------------------------------

DECOMPRESSORS: Mapping[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.decompress,
    "deflate": zlib.decompress,  # gRPC "deflate" is the zlib format (RFC 1950)
}


def decompress(data: bytes, encoding: str | None) -> bytes | None:
    """Undo a `grpc-encoding`; None when unknown or the bytes are damaged."""
    undo = DECOMPRESSORS.get((encoding or "").strip().lower())
    if undo is None:
        return None
    try:
        return undo(data)
    except (OSError, EOFError, zlib.error):
        return None


def decode_message(
    path: str,
    data: bytes,
    direction: Direction,
    *,
    compressed: bool = False,
    encoding: str | None = None,
) -> tuple[str, str] | None:
    """One message of the rpc at `path` as `(type full name, compact JSON)`, or None for an
    unknown rpc or compression, junk, or JSON that would not reproduce it (a newer peer's).
    What the path's own schema does not read losslessly, a draft spoken under the same service
    (`DRAFT_SERVICES`) may: then the type named is the draft's."""
    method = grpc_method(path)
    if method is None:
        return None
    if compressed:
        plain = decompress(data, encoding)
        if plain is None:
            return None
        data = plain
    found = decode_as(method.message_type(direction), data)
    draft = draft_methods().get(path) if found is None else None
    if draft is not None and draft is not method:
        return decode_as(draft.message_type(direction), data)
    return found


def decode_as(type_name: str, data: bytes) -> tuple[str, str] | None:
    """Decode `data` as the message `type_name`; None unless the JSON is lossless."""
    cls = message_class(type_name)
    if cls is None:
        return None
    parsed = cls()
    try:
        parsed.ParseFromString(data)
        text = message_json(parsed)
        again = json_format.Parse(text, cls(), descriptor_pool=a2a_pool())
    except (message.DecodeError, json_format.Error, ValueError, TypeError):
        return None
    if again.SerializeToString(deterministic=True) != parsed.SerializeToString(deterministic=True):
        return None
    return type_name, text


def message_json(msg: message.Message) -> str:
    """Compact proto-JSON with camelCase names, as A2A's JSON bindings write them."""
    as_dict = json_format.MessageToDict(
        msg, preserving_proto_field_name=False, descriptor_pool=a2a_pool()
    )
    return json.dumps(as_dict, separators=(",", ":"), ensure_ascii=False)


def encode_message(type_name: str, json_text: str) -> bytes:
    """Serialize proto-JSON as the message `type_name` (unframed); else `GrpcCodecError`."""
    cls = message_class(type_name)
    if cls is None:
        raise GrpcCodecError(f"unknown protobuf message type {type_name!r}")
    try:
        parsed = json_format.Parse(json_text, cls(), descriptor_pool=a2a_pool())
    except (json_format.ParseError, ValueError, TypeError) as err:
        raise GrpcCodecError(f"JSON does not fit {type_name}: {err}") from err
    data: bytes = parsed.SerializeToString()
    return data


# --- status ---------------------------------------------------------------------------------

STATUS_HEADER = "grpc-status"
MESSAGE_HEADER = "grpc-message"
DETAILS_HEADER = "grpc-status-details-bin"
ENCODING_HEADER = "grpc-encoding"


def decode_status_details(value: str | bytes | None) -> dict[str, Any] | None:
    """The one decoder of `grpc-status-details-bin` (a base64 `google.rpc.Status`, a2a-wire.md
    §5) as `{"code", "message", "details"}`; an unknown detail is `{"@type", "value": base64}`.
    Takes either base64 alphabet, the true-binary form or bytes; None for anything else."""
    if not value:
        return None
    try:
        raw = value if isinstance(value, bytes) else decode_binary_header(_standard_b64(value))
        status: Any = _shipped(STATUS_TYPE)()
        status.ParseFromString(raw)
    except (ValueError, message.DecodeError):
        return None
    return {
        "code": status.code,
        "message": status.message,
        "details": [_detail_dict(detail) for detail in status.details],
    }


def _shipped(type_name: str) -> type[message.Message]:
    cls = message_class(type_name)
    assert cls is not None, f"{type_name} is missing from {DESCRIPTOR_SET}"
    return cls


def status_reason(status: Mapping[str, Any] | None) -> str | None:
    """The `reason` of the first `google.rpc.ErrorInfo` in a decoded Status, or None."""
    for detail in (status or {}).get("details", ()):
        if str(detail.get("@type", "")).endswith("/" + ERROR_INFO_NAME):
            reason = detail.get("reason")
            if isinstance(reason, str) and reason:
                return reason
    return None


ERROR_INFO_NAME = ERROR_INFO_TYPE.rpartition("/")[2]  # google.rpc.ErrorInfo
_URL_SAFE = str.maketrans("-_", "+/")


def _standard_b64(value: str) -> str:
    # Some peers send the URL-safe alphabet; the true-binary form is left alone.
    return value if value.startswith(TRUE_BINARY_MARK) else value.translate(_URL_SAFE)


def _detail_dict(detail: Any) -> dict[str, Any]:
    try:
        known: dict[str, Any] = json_format.MessageToDict(detail, descriptor_pool=a2a_pool())
        return known
    except (json_format.Error, message.DecodeError, TypeError, KeyError):
        return {"@type": detail.type_url, "value": base64.b64encode(detail.value).decode()}


def encode_status_details(status: Mapping[str, Any]) -> str:
    """`decode_status_details`' inverse, unpadded; `GrpcCodecError` for a misfit detail."""
    built: Any = _shipped(STATUS_TYPE)(
        code=int(status.get("code", 0)), message=status.get("message", "")
    )
    for detail in status.get("details", ()):
        built.details.append(_detail_any(detail))
    return encode_binary_header(built.SerializeToString())


def _detail_any(detail: Mapping[str, Any]) -> message.Message:
    any_class = _shipped(ANY_TYPE)
    if set(detail) == {"@type", "value"} and isinstance(detail["value"], str):
        try:
            return any_class(type_url=detail["@type"], value=decode_binary_header(detail["value"]))
        except ValueError:
            pass  # not base64: let json_format say what is wrong
    try:
        return json_format.ParseDict(dict(detail), any_class(), descriptor_pool=a2a_pool())
    except (json_format.ParseError, ValueError, TypeError, KeyError) as err:
        raise GrpcCodecError(f"status detail does not fit its @type: {err}") from err


# grpc-message: percent-encode bytes outside printable ASCII, and '%' itself.
_PLAIN_BYTES = frozenset(range(0x20, 0x7F)) - {ord("%")}


def encode_grpc_message(text: str) -> str:
    return "".join(chr(b) if b in _PLAIN_BYTES else f"%{b:02X}" for b in text.encode())


def decode_grpc_message(value: str) -> str:
    """Undo `grpc-message` percent-encoding (PROTOCOL-HTTP2.md); malformed escapes are kept."""
    out = bytearray()
    i = 0
    while i < len(value):
        escape = value[i + 1 : i + 3] if value[i] == "%" else ""
        if len(escape) == 2 and all(c in "0123456789abcdefABCDEF" for c in escape):
            out.append(int(escape, 16))
            i += 3
        else:
            out += value[i].encode()
            i += 1
    return out.decode(errors="replace")


# --- metadata -------------------------------------------------------------------------------

BINARY_SUFFIX = "-bin"
GRPC_CONTENT_TYPE = "application/grpc"


def is_grpc_content_type(value: str | None) -> bool:
    """`application/grpc`, `application/grpc+proto`, `application/grpc; ...`."""
    base = (value or "").split(";")[0].strip().lower()
    return base == GRPC_CONTENT_TYPE or base.startswith(GRPC_CONTENT_TYPE + "+")


def is_binary_header(name: str) -> bool:
    return name.lower().endswith(BINARY_SUFFIX)


# grpc-core's "true binary metadata" (both peers send SETTINGS 0xFE03 = 1): a `-bin` value goes
# raw after a NUL instead of base64; seen on plaintext grpcio <-> grpcio relayed as TCP.
TRUE_BINARY_MARK = "\x00"


def decode_binary_header(value: str) -> bytes:
    """A `-bin` value's bytes from base64 (padded or not) or the true-binary form (NUL, then
    latin-1 text, as `recorder.record._h2` hands it over); else ValueError."""
    if value.startswith(TRUE_BINARY_MARK):
        return value[1:].encode("latin-1")
    text = value.strip()
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except binascii.Error as err:
        raise ValueError(f"not base64: {value[:40]!r}") from err


def encode_binary_header(data: bytes) -> str:
    """A `-bin` metadata value: unpadded base64, as gRPC emits."""
    return base64.b64encode(data).decode().rstrip("=")


def canonical_binary_header(value: str) -> str:
    """A `-bin` value as unpadded base64, whatever form it came in."""
    return encode_binary_header(decode_binary_header(value))
