"""mitmproxy flow parts -> capture values, and the SSE tee that watches a live stream.

The capture keeps bodies after content decoding (gzip, deflate, br, zstd), with a note; the
forwarded bytes are never touched here.  Headers keep their wire order, case and duplicates.
A body mitmproxy did not keep (streamed through, as in a flow file `mitmdump` wrote with
`stream_large_bodies`) is empty in the capture, with a note saying so.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from mitmproxy import http

from recorder._background import default_port, host_port
from recorder.capture import Headers, Request, Response, SseEvent
from recorder.protocol import SseFramer


def headers_of(message: http.Message) -> Headers:
    """The message's headers as (name, value) pairs, in wire order, duplicates kept."""
    return tuple(
        (name.decode("latin-1"), value.decode("latin-1")) for name, value in message.headers.fields
    )


def field_value(message: http.Message, name: bytes) -> str | None:
    """The first value of header `name` (lower case), found in one pass over the raw fields:
    mitmproxy's `headers.get` costs several times as much, and this runs on every flow."""
    for key, value in message.headers.fields:
        if len(key) == len(name) and key.lower() == name:
            return str(value.decode("latin-1"))
    return None


def decoded_body(message: http.Message) -> tuple[bytes, tuple[str, ...]]:
    """The body after content decoding, with a note naming the encoding undone (or failing)."""
    raw = message.raw_content
    if not raw:
        return b"", ()
    encoding = (field_value(message, b"content-encoding") or "").strip().lower()
    if not encoding or encoding == "identity" or not raw:
        return raw, ()
    try:
        content = message.get_content(strict=True)
    except ValueError:
        return raw, (f"{encoding} body could not be decoded; kept raw",)
    return (content or b""), (f"{encoding} decoded",)


def origin(scheme: str, host: str, port: int | None = None) -> str:
    """`scheme://host:port`, as capture headers name upstreams; no port: the scheme's default."""
    return f"{scheme}://{host_port(host, port or default_port(scheme))}"


NOT_STORED = "body not stored (streamed through)"
# flow.metadata: each event's µs from the response, for a stream read whole from a file.
EVENT_OFFSETS = "a2a_event_offsets"
UNKNOWN_EVENT_TIMES = "SSE event times unknown (offsets 0)"


def to_request(request: http.Request) -> tuple[Request, tuple[str, ...]]:
    """A capture `Request` from a mitmproxy request, with any decoding notes."""
    body, notes = decoded_body(request)
    if request.raw_content is None:
        notes = (*notes, f"request {NOT_STORED}")
    value = Request(
        method=request.method,
        target=request.path,
        headers=headers_of(request),
        body=body,
        http_version=request.http_version,
    )
    return value, notes


def to_response(
    response: http.Response, tee: SseTee | None = None
) -> tuple[Response, tuple[str, ...]]:
    """A capture `Response`; a streamed event stream takes its events from `tee`."""
    value = Response(
        status=response.status_code,
        reason=response.reason,
        headers=headers_of(response),
        http_version=response.http_version,
    )
    if tee is not None:
        return replace(value, events=tuple(tee.events), newline=tee.newline), ()
    body, notes = decoded_body(response)
    if response.raw_content is None:
        notes = (*notes, f"response {NOT_STORED}")
    return replace(value, body=body), notes


@dataclass
class SseTee:
    """The `flow.response.stream` callable for an event stream: every chunk goes on unchanged
    and at once; a copy is framed into timed events (not when compressed)."""

    started: float = field(default_factory=time.monotonic)
    compressed: bool = False
    events: list[SseEvent] = field(default_factory=list)
    truncated: bool = False
    _framer: SseFramer = field(default_factory=SseFramer)
    _closed: bool = False
    _given: Sequence[int] | None = None  # offsets of a stream that arrived whole (`replay`)

    def __call__(self, chunk: bytes) -> bytes:
        if chunk and not self.compressed:
            blocks = self._framer.feed(chunk)
            offset = self._offset()
            self.events.extend(SseEvent(offset, block) for block in blocks)
        return chunk

    def replay(self, body: bytes, offsets_us: Sequence[int] = ()) -> None:
        """Frame a stream that arrived whole (a flow from a file): event `i` at `offsets_us[i]`."""
        self._given = offsets_us
        for block in self._framer.feed(body):
            self.events.append(SseEvent(self._offset(), block))

    @property
    def newline(self) -> str:
        return self._framer.newline

    def close(self) -> None:
        """End of stream: keep a partial last block as an event and mark the stream truncated."""
        if self._closed:
            return
        self._closed = True
        partial = self._framer.close()
        if partial is not None:
            self.truncated = True
            self.events.append(SseEvent(self._offset(), partial))

    def _offset(self) -> int:
        if self._given is not None:
            n = len(self.events)
            return self._given[n] if n < len(self._given) else 0
        return int((time.monotonic() - self.started) * 1_000_000)
