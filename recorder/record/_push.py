"""Push notifications while recording: where push configs name webhooks, and the relay.

The recorder's choice for push configs is a **relay**: in reverse mode it replaces each
push-config `url` it sees in a request (an HTTP body, or a gRPC message: `grpc_swap`) by a URL
of its own (`<proxy>/__a2a_recorder/push/<n>`) and remembers the real one; the agent POSTs
deliveries there and the addon forwards each to the real webhook, recording it.  `PushRelay`
is that memory; it and the helpers here are pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

from recorder._errors import GrpcCodecError
from recorder.capture import Request
from recorder.protocol import (
    PUSH_DELIVERY,
    WEBHOOK_PATHS,
    Binding,
    Classification,
    Direction,
    decode_message,
    encode_message,
    grpc_method,
    parse_json,
    value_at,
)

RELAY_PREFIX = "/__a2a_recorder/push/"

# Operations whose requests may carry push configs (where: the protocol's `WEBHOOK_PATHS`).
PUSH_CONFIG_OPERATIONS = frozenset(
    {"CreateTaskPushNotificationConfig", "SendMessage", "SendStreamingMessage"}
)
# gRPC answers that may carry a relay URL: the push-config rpcs (v1.0 and v0.3 names).
GRPC_CONFIG_ANSWERS = frozenset(
    f"{verb}TaskPushNotificationConfig{s}" for verb in ("Create", "Get", "List") for s in ("", "s")
)


class PushRelay:
    """The relay's memory: real webhook URL <-> relay number."""

    def __init__(self) -> None:
        self._real: dict[int, str] = {}
        self._number: dict[str, int] = {}

    def knows(self, url: str) -> bool:
        """Whether `url` is a real webhook the relay stands for."""
        return url in self._number

    def __bool__(self) -> bool:
        return bool(self._number)

    def relay_path(self, real: str) -> str:
        if real not in self._number:
            self._number[real] = len(self._number) + 1
            self._real[self._number[real]] = real
        return f"{RELAY_PREFIX}{self._number[real]}"

    def real_url(self, path: str) -> str | None:
        """The real webhook for a relay path (`/__a2a_recorder/push/3`), or None."""
        match = re.fullmatch(re.escape(RELAY_PREFIX) + r"(\d+)(?:\?.*)?", path)
        return self._real.get(int(match.group(1))) if match else None

    def to_relay(self, body: bytes, root: tuple[str, ...], origin: str) -> tuple[bytes, int]:
        """Replace push-config urls in a JSON body by relay URLs; (new body, how many)."""
        urls = set(webhook_urls(parse_json(body), root))
        pairs = {u: origin + self.relay_path(u) for u in urls if RELAY_PREFIX not in u}
        return swap_json_strings(body, pairs), len(pairs)

    def to_real(self, body: bytes, origin: str) -> bytes:
        """Replace relay URLs in a body by the real webhook URLs they stand for."""
        if RELAY_PREFIX.encode() not in body:
            return body
        pairs = {origin + RELAY_PREFIX + str(n): real for n, real in self._real.items()}
        return swap_json_strings(body, pairs)


def grpc_swap(
    relay: PushRelay, origin: str, path: str, request: bool, encoding: str | None
) -> Callable[[bool, bytes], bytes | None] | None:
    """The rewrite of the gRPC call at `path`'s messages through the relay, as HTTP bodies'
    (None for a call that carries no push config)."""
    method = grpc_method(path)
    names = PUSH_CONFIG_OPERATIONS if request else GRPC_CONFIG_ANSWERS
    if method is None or method.name not in names:
        return None
    direction: Direction = "request" if request else "response"

    def swap(compressed: bool, data: bytes) -> bytes | None:
        found = decode_message(path, data, direction, compressed=compressed, encoding=encoding)
        if found is None:
            return None  # not decodable: it goes as it came (`learn_grpc` says so)
        text = found[1].encode()
        new = relay.to_relay(text, (), origin)[0] if request else relay.to_real(text, origin)
        try:
            return None if new == text else encode_message(found[0], new.decode())
        except GrpcCodecError:
            return None

    return swap


def webhook_urls(document: Any, root: tuple[str, ...]) -> Iterator[str]:
    """The http(s) webhook URLs that the push configs in a request document name."""
    base = value_at(document, root)
    for path in WEBHOOK_PATHS:
        url = value_at(base, path)
        if isinstance(url, str) and url.startswith(("http://", "https://")):
            yield url


def config_root(classification: Classification) -> tuple[str, ...]:
    """Where a push-config request's own fields start: JSON-RPC `params`, else the body."""
    return ("params",) if classification.binding is Binding.JSONRPC else ()


def as_delivery(found: Classification, request: Request) -> Classification:
    """A request known to be a push delivery, classified as one even if its body is odd."""
    if found.operation == PUSH_DELIVERY:
        return found
    path = urlsplit(request.target).path
    method = f"{request.method} {path}"
    return Classification(binding=Binding.HTTP, operation=PUSH_DELIVERY, method=method)


def swap_json_strings(body: bytes, pairs: dict[str, str]) -> bytes:
    """Swap JSON string tokens in the raw text, keeping the body's formatting."""
    if not pairs:
        return body
    text = body.decode("utf-8")
    for old, new in pairs.items():
        text = text.replace(json.dumps(old), json.dumps(new))
    return text.encode("utf-8")
