"""The capture model: one recorded session as frozen values.

Exchanges are in the order they completed.  Bodies are the bytes that crossed the wire (after
content decoding, which is noted); how the file shows them is the renderer's business.  Times
are integer microseconds, so a value survives a round trip through the file exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from recorder.protocol import Classification

FORMAT_VERSION = 2
# Versions a reader accepts (the model is the same: version 1 reads as is, `migrate` rewrites).
READABLE_VERSIONS = (1, 2)

Headers = tuple[tuple[str, str], ...]


def started_at(timestamp: float) -> str:
    """`Capture.started` for a Unix time: ISO 8601, UTC, microseconds."""
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One server-sent event block as it arrived: its wire lines, without endings nor the
    blank line that ends it; `offset_us` from the response headers."""

    offset_us: int
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GrpcMessage:
    """One length-prefixed gRPC message: its compact proto-JSON when the A2A descriptors
    decode it (as `type_name`), else its `raw` bytes; exactly one of the two."""

    offset_us: int
    json: str | None = None
    raw: bytes | None = None
    compressed: bool = False
    type_name: str | None = None

    def __post_init__(self) -> None:
        if (self.json is None) == (self.raw is None):
            raise ValueError("a gRPC message holds exactly one of json and raw")


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    target: str  # path and query, as on the request line
    headers: Headers = ()
    body: bytes = b""
    http_version: str = "HTTP/1.1"
    messages: tuple[GrpcMessage, ...] = ()

    def header(self, name: str) -> str | None:
        return header_value(self.headers, name)


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    reason: str = ""
    headers: Headers = ()
    body: bytes = b""  # empty when the body is an event stream or gRPC messages
    http_version: str = "HTTP/1.1"
    events: tuple[SseEvent, ...] = ()
    newline: str = "\n"  # the event stream's line ending on the wire: "\n", "\r\n" or "\r"
    messages: tuple[GrpcMessage, ...] = ()
    trailers: Headers = ()

    def header(self, name: str) -> str | None:
        return header_value(self.headers, name)


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request and what came back (`response` None when nothing did); `notes` say what
    the recorder did or saw beyond the bytes ("gzip decoded")."""

    number: int
    classification: Classification
    request: Request
    response: Response | None
    started_us: int = 0
    duration_us: int = 0
    notes: tuple[str, ...] = ()
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Capture:
    """A recorded session: a header and its exchanges."""

    started: str  # ISO 8601, UTC, e.g. 2026-11-29T23:49:25.123456Z
    recorder_version: str
    exchanges: tuple[Exchange, ...] = ()
    upstreams: tuple[str, ...] = ()
    redacted: tuple[str, ...] = ()
    format_version: int = FORMAT_VERSION
    extra: tuple[tuple[str, str], ...] = field(default=())  # header keys this version ignores


def header_value(headers: Headers, name: str) -> str | None:
    """The first value of header `name` (any case), or None."""
    wanted = name.lower()
    for key, value in headers:  # a loop, not next(generator): replay loading asks per exchange
        if key.lower() == wanted:
            return value
    return None
