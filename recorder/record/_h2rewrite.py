"""Rewriting gRPC messages inside a relayed HTTP/2 connection, sans-I/O: the push relay's way
into gRPC (`_grpcrecord`).  A `Reframer` on one direction holds the DATA of the streams `pick`
chooses until each message is whole, and sends a changed one on in new DATA frames.

- Only DATA payloads change; frames held behind a stream, and header blocks (HPACK state is the
  connection's), keep their order.
- A message is held only while small (`MAX_HELD`: a sender may wait for window); a larger one,
  or a reset, lets the stream's frames go as they came.
- Flow control stays whole (RFC 9113 §6.9): the receiver's next WINDOW_UPDATEs shrink by what
  DATA grew (grpc-core refuses padded DATA, so padding cannot keep the length).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from recorder._errors import GrpcFramingError
from recorder.protocol import frame_message, timed_messages

PREFACE_SIZE = 24  # the client's `PRI * HTTP/2.0...` (RFC 9113 §3.4)
HEADER_SIZE = 9
DATA, RST_STREAM, WINDOW_UPDATE = 0x0, 0x3, 0x8
HEADER_BLOCK = frozenset({0x1, 0x5, 0x9})  # HEADERS, PUSH_PROMISE, CONTINUATION
END_STREAM, PADDED = 0x1, 0x8
MAX_DATA = 16_384
MAX_HELD = 16_384  # far below any window a peer starts with (65,535 by default, §6.9.2)
MAX_INCREMENT = 2**31 - 1

# A stream's message rewrite: (compressed, message) -> the new message (uncompressed), or None.
Rewrite = Callable[[bool, bytes], bytes | None]


@dataclass(slots=True)
class _Held:
    stream: int
    rewrite: Rewrite
    frames: list[bytes] = field(default_factory=list)  # the stream's DATA frames, as they came
    data: bytearray = field(default_factory=bytearray)  # their payloads, without padding
    after: list[bytes] = field(default_factory=list)  # later frames, waiting behind them
    waiting: set[int] = field(default_factory=set)  # the streams of those frames


class Reframer:
    """One direction of an HTTP/2 connection; `other`'s growth its WINDOW_UPDATEs repay."""

    def __init__(self, pick: Callable[[int], Rewrite | None], *, client: bool) -> None:
        self.pick = pick
        self.other: Reframer | None = None
        self.grown: Counter[int] = Counter()  # bytes added, per stream and (0) connection
        self.rewritten: set[int] = set()
        self._passed: set[int] = set()  # streams let go as they came (a message too large)
        self._preface = PREFACE_SIZE if client else 0
        self._buffer = bytearray()
        self._held: _Held | None = None

    def feed(self, data: bytes) -> bytes:
        """The bytes to forward now, for `data` received."""
        self._buffer += data
        out = bytearray(self._buffer[: self._preface])
        del self._buffer[: self._preface]
        self._preface -= len(out)
        while len(self._buffer) >= HEADER_SIZE:
            end = HEADER_SIZE + int.from_bytes(self._buffer[:3], "big")
            if len(self._buffer) < end:
                break
            out += self._frame(bytes(self._buffer[:end]))
            del self._buffer[:end]
        return bytes(out)

    def flush(self) -> bytes:
        """Everything held and not yet framed, as it came; nothing is held afterwards."""
        held, self._held = self._held, None
        out = b"".join([*held.frames, *held.after]) if held else b""
        out, self._buffer = out + bytes(self._buffer), bytearray()
        return out

    def _release(self, held: _Held, out: bytes | None) -> bytes:
        """`out` (else the held frames as they came), then the frames that waited."""
        self._held = None
        return (out or b"".join(held.frames)) + b"".join(map(self._frame, held.after))

    def _frame(self, raw: bytes) -> bytes:
        kind, stream = raw[3], int.from_bytes(raw[5:9], "big") & 0x7FFF_FFFF
        held = self._held
        if held is None and kind == DATA and stream not in self._passed:
            rewrite = self.pick(stream)
            held = self._held = _Held(stream, rewrite) if rewrite is not None else None
        if held is not None and stream == held.stream and kind in (DATA, RST_STREAM):
            return self._taken(held, raw, kind)
        if held is not None and (kind in HEADER_BLOCK or {stream} & {held.stream, *held.waiting}):
            held.after.append(raw)
            held.waiting.add(stream)
            return b""
        if kind == WINDOW_UPDATE and self.other is not None and self.other.grown[stream]:
            return self._repaid(raw, stream, self.other.grown)
        return raw

    def _taken(self, held: _Held, raw: bytes, kind: int) -> bytes:
        """A frame of the held stream: the message rewritten once whole, or all let go."""
        if kind == RST_STREAM:
            held.after.append(raw)
            return self._release(held, None)
        held.frames.append(raw)
        held.data += _data(raw)
        try:
            messages, pending = timed_messages([(0, bytes(held.data))])
        except GrpcFramingError:  # no gRPC: it goes as it comes
            messages, pending = [], MAX_HELD + 1
        if pending and not raw[4] & END_STREAM:
            if pending <= MAX_HELD:
                return b""  # the rest of a message is still to come
            self._passed.add(held.stream)
            return self._release(held, None)
        body = b"".join(frame_message(*_rewritten(held.rewrite, c, m)) for _, c, m in messages)
        out = self._reframed(held, body, bool(raw[4] & END_STREAM)) if not pending else None
        return self._release(held, out)

    def _reframed(self, held: _Held, body: bytes, end: bool) -> bytes | None:
        """`body` in new DATA frames, as long as the held ones were; None if nothing changed."""
        if body == held.data:
            return None
        self.rewritten.add(held.stream)
        grown = len(body) - sum(len(frame) - HEADER_SIZE for frame in held.frames)
        self.grown.update({held.stream: grown, 0: grown})
        chunks = [body[i : i + MAX_DATA] for i in range(0, len(body), MAX_DATA)]
        return b"".join(
            _data_frame(held.stream, chunk, end and i == len(chunks) - 1)
            for i, chunk in enumerate(chunks)
        )

    @staticmethod
    def _repaid(raw: bytes, stream: int, grown: Counter[int]) -> bytes:
        """A WINDOW_UPDATE less what the other direction's rewrites grew the stream by."""
        due = (int.from_bytes(raw[HEADER_SIZE:], "big") & 0x7FFF_FFFF) - grown[stream]
        sent = max(0, min(due, MAX_INCREMENT))
        grown[stream] = sent - due
        if not sent:
            return b""  # an increment of 0 is a protocol error (§6.9): none at all
        return raw[:HEADER_SIZE] + sent.to_bytes(4, "big")


def _rewritten(rewrite: Rewrite, compressed: bool, message: bytes) -> tuple[bytes, bool]:
    new = rewrite(compressed, message)
    return (message, compressed) if new is None else (new, False)


def _data(raw: bytes) -> bytes:
    """A DATA frame's payload without its padding."""
    payload = raw[HEADER_SIZE:]
    if raw[4] & PADDED and payload:
        return payload[1 : len(payload) - payload[0]]
    return payload


def _data_frame(stream: int, data: bytes, end: bool) -> bytes:
    flags = END_STREAM if end else 0
    return len(data).to_bytes(3, "big") + bytes((DATA, flags)) + stream.to_bytes(4, "big") + data
