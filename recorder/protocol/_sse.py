"""Server-sent event framing, sans-I/O and incremental.

The framer splits bytes into lines (CRLF, LF or CR, per the HTML event-stream grammar) and
blocks ended by a blank line, keeping every line as it was (comments too), so `render_events`
gives back the exact wire bytes; the first ending seen is the `newline`.  Decoding is UTF-8
with surrogateescape, so a byte that is not UTF-8 survives the round trip.  Real agents'
framings (`_framings`, VoltAgent's RFC 7464 separator) are kept line for line, read alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_ENDINGS = ("\r\n", "\n", "\r")
EVENT_STREAM = "text/event-stream"
RECORD_SEPARATOR = "\x1e"  # RFC 7464; VoltAgent writes `data: \x1e{...}`


def is_event_stream(content_type: str | None) -> bool:
    return (content_type or "").split(";")[0].strip().lower() == EVENT_STREAM


class SseFramer:
    """Turn an event stream's bytes, fed in arbitrary chunks, into event blocks; a CR ending a
    chunk ends its line now, and a LF starting the next one is its partner."""

    def __init__(self) -> None:
        self._pending = b""  # bytes of an unfinished line
        self._cr = False  # the last chunk ended in CR: a LF now belongs to it
        self._block: list[str] = []
        self._newline: str | None = None
        self._tentative = False  # `_newline` came from a chunk-final CR: may become CRLF

    @property
    def newline(self) -> str:
        return self._newline or "\n"

    def feed(self, chunk: bytes) -> list[tuple[str, ...]]:
        """The blocks these bytes complete, each as its lines without endings."""
        data = chunk
        if self._cr and data:
            if data.startswith(b"\n"):
                data = data[1:]  # the LF of a CRLF split across chunks
                if self._tentative:
                    self._newline = "\r\n"
            self._cr = self._tentative = False
        blocks: list[tuple[str, ...]] = []
        buf = self._pending + data
        start = 0
        while (found := _next_ending(buf, start))[0] >= 0:
            end, width = found
            if width == 1 and buf[end] == 0x0D and end + 1 == len(buf):
                self._cr = True
                self._tentative = self._newline is None
            if self._newline is None:
                self._newline = buf[end : end + width].decode("ascii")
            self._line(buf[start:end].decode("utf-8", "surrogateescape"), blocks)
            start = end + width
        self._pending = buf[start:]
        return blocks

    def close(self) -> tuple[str, ...] | None:
        """End of stream: the incomplete last block (a truncated stream), or None."""
        if self._pending:
            self._block.append(self._pending.decode("utf-8", "surrogateescape"))
            self._pending = b""
        block, self._block = self._block, []
        return tuple(block) if block else None

    def _line(self, line: str, blocks: list[tuple[str, ...]]) -> None:
        if line:
            self._block.append(line)
        elif self._block:
            blocks.append(tuple(self._block))
            self._block = []


def _next_ending(buf: bytes, start: int) -> tuple[int, int]:
    """Position and width of the next line ending from `start`, or (-1, 0)."""
    cr = buf.find(b"\r", start)
    lf = buf.find(b"\n", start)
    if cr < 0 and lf < 0:
        return -1, 0
    if cr < 0 or (0 <= lf < cr):
        return lf, 1
    if buf[cr + 1 : cr + 2] == b"\n":
        return cr, 2
    return cr, 1


@dataclass(frozen=True, slots=True)
class SseFields:
    """An event block read by the SSE field rules (HTML §9.2.6); `comments` as written."""

    event: str
    data: str
    id: str | None
    comments: tuple[str, ...]


def event_fields(lines: Sequence[str]) -> SseFields:
    """An event block's fields; never raises (unknown fields are ignored)."""
    kind, data, event_id, comments = "", [], None, []
    for line in lines:
        name, value = _field(line)
        if line.startswith(":"):
            comments.append(line)
        elif name == "data":
            data.append(value)
        elif name == "event":
            kind = value
        elif name == "id" and "\0" not in value:
            event_id = value
    return SseFields(kind or "message", "\n".join(data), event_id, tuple(comments))


def event_type(lines: Sequence[str]) -> str:
    """The last `event` field, "message" when there is none or it is empty."""
    return event_fields(lines).event


def event_data(lines: Sequence[str]) -> str:
    """The `data` values joined with "\\n", less one leading RFC 7464 record separator."""
    return event_fields(lines).data.removeprefix(RECORD_SEPARATOR)


def _field(line: str) -> tuple[str, str]:
    """(name, value) of a line; comments get the name ""; one leading space is dropped."""
    if line.startswith(":"):
        return "", line[1:]
    name, colon, value = line.partition(":")
    if colon and value.startswith(" "):
        value = value[1:]
    return name, value


def render_events(blocks: Iterable[Sequence[str]], newline: str = "\n") -> bytes:
    """The wire bytes of event blocks: each line then `newline`, each block then a blank line."""
    if newline not in _ENDINGS:
        raise ValueError(f"newline must be one of {_ENDINGS!r}, not {newline!r}")
    out = "".join("".join(line + newline for line in block) + newline for block in blocks)
    return encode_lines(out)


def encode_lines(text: str) -> bytes:
    """Event text back to bytes; a lone surrogate not from surrogateescape (a hand-edited
    capture) is encoded as is rather than refused."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")
