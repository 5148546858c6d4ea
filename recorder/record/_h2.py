"""A passive HTTP/2 decoder for gRPC seen as raw TCP bytes (`_grpcrecord` feeds it), sans-I/O.

It never answers nor changes a byte, so it accepts whatever the peers accept:
- One HPACK decoder per direction sees every header block, on any stream: HPACK state is the
  connection's, and one skipped block corrupts every later one (RFC 7541 §2.2).
- A side's SETTINGS_HEADER_TABLE_SIZE raises the other direction's decoder limit, never lowers.
- A call ends with the response's END_STREAM or a reset; a trailers-only response repeats its
  HEADERS as `trailers`, with `trailers_only` set.
- grpc-core's raw `-bin` metadata (SETTINGS 0xFE03) is kept as latin-1 text, byte for byte.
- Bytes that are not HTTP/2 raise `H2ProtocolError` once; later bytes are ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from hpack import Decoder, HPACKError
from hyperframe.exceptions import HyperframeError
from hyperframe.frame import (
    ContinuationFrame,
    DataFrame,
    Frame,
    HeadersFrame,
    PushPromiseFrame,
    RstStreamFrame,
    SettingsFrame,
)

from recorder._errors import H2ProtocolError

Headers = tuple[tuple[str, str], ...]
Role = Literal["client", "server"]

CLIENT_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
FRAME_HEADER_SIZE = 9
DEFAULT_MAX_FRAME_SIZE = 16_384  # RFC 9113 §6.5.2 initial value
MAX_HEADER_LIST_SIZE = 16 * 1024 * 1024  # far above what gRPC peers allow; we only observe


@dataclass(frozen=True, slots=True)
class H2Call:
    """One HTTP/2 stream (one gRPC call) as observed; `response_chunks` are the non-empty DATA
    payloads with the time (µs) of the feed that completed each."""

    stream_id: int
    request_headers: Headers
    request_data: bytes
    response_headers: Headers
    response_chunks: tuple[tuple[int, bytes], ...]
    trailers: Headers
    reset: bool
    started_us: int
    ended_us: int
    reset_code: int | None = None
    trailers_only: bool = False
    truncated: bool = False

    @property
    def path(self) -> str | None:
        return _find(self.request_headers, ":path")

    def request_header(self, name: str) -> str | None:
        return _find(self.request_headers, name)

    def response_header(self, name: str) -> str | None:
        return _find(self.response_headers, name)


def _find(headers: Headers, name: str) -> str | None:
    wanted = name.lower()
    return next((value for key, value in headers if key == wanted), None)


@dataclass(slots=True)
class _Stream:
    stream_id: int
    request_headers: Headers
    started_us: int
    request_data: bytearray = field(default_factory=bytearray)
    response_headers: Headers = ()
    response_chunks: list[tuple[int, bytes]] = field(default_factory=list)
    trailers: Headers = ()
    trailers_only: bool = False

    def freeze(
        self,
        ended_us: int,
        *,
        reset: bool = False,
        reset_code: int | None = None,
        truncated: bool = False,
    ) -> H2Call:
        return H2Call(
            stream_id=self.stream_id,
            request_headers=self.request_headers,
            request_data=bytes(self.request_data),
            response_headers=self.response_headers,
            response_chunks=tuple(self.response_chunks),
            trailers=self.trailers,
            reset=reset,
            started_us=self.started_us,
            ended_us=ended_us,
            reset_code=reset_code,
            trailers_only=self.trailers_only,
            truncated=truncated,
        )


@dataclass(slots=True)
class _Block:
    """A header block being assembled from HEADERS/PUSH_PROMISE + CONTINUATION frames."""

    stream_id: int
    end_stream: bool
    push: bool
    fragments: list[bytes]


@dataclass(slots=True)
class _Side:
    """One direction of the connection: the bytes one peer sends."""

    role: Role
    decoder: Decoder
    buffer: bytearray = field(default_factory=bytearray)
    preface_left: int = 0  # client preface bytes still to check
    frames_seen: int = 0
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE  # what the other peer lets this side send
    block: _Block | None = None


def _side(role: Role) -> _Side:
    preface = len(CLIENT_PREFACE) if role == "client" else 0
    return _Side(role, Decoder(max_header_list_size=MAX_HEADER_LIST_SIZE), preface_left=preface)


class H2Observer:
    """Watch one HTTP/2 connection's bytes, fed in the order they crossed, and collect its calls."""

    def __init__(self) -> None:
        self._sides: dict[Role, _Side] = {"client": _side("client"), "server": _side("server")}
        self._streams: dict[int, _Stream] = {}
        self._last_stream_id = 0
        self._done: list[H2Call] = []
        self.error: H2ProtocolError | None = None

    @property
    def open_streams(self) -> int:
        return len(self._streams)

    def client_data(self, data: bytes, at_us: int) -> None:
        self._feed("client", data, at_us)

    def server_data(self, data: bytes, at_us: int) -> None:
        self._feed("server", data, at_us)

    def request_headers(self, stream_id: int) -> Headers:
        """The request headers of a stream still open (none for any other)."""
        stream = self._streams.get(stream_id)
        return stream.request_headers if stream is not None else ()

    def completed(self) -> list[H2Call]:
        """Finished calls since the last call, in the order they finished."""
        done, self._done = self._done, []
        return done

    def close(self, at_us: int) -> None:
        """The connection ended: streams still open become `truncated` calls."""
        for stream in self._streams.values():
            self._done.append(stream.freeze(at_us, truncated=True))
        self._streams.clear()

    def _feed(self, role: Role, data: bytes, at_us: int) -> None:
        if self.error is not None:
            return
        try:
            self._consume(self._sides[role], data, at_us)
        except (HyperframeError, HPACKError, H2ProtocolError) as err:
            self.error = _as_protocol_error(role, err)
            raise self.error from err

    def _consume(self, side: _Side, data: bytes, at_us: int) -> None:
        side.buffer += data
        _check_preface(side)
        while (frame := _next_frame(side)) is not None:
            side.frames_seen += 1
            self._on_frame(side, frame, at_us)

    def _on_frame(self, side: _Side, frame: Frame, at_us: int) -> None:
        if side.block is not None and not isinstance(frame, ContinuationFrame):
            raise H2ProtocolError(f"{frame.__class__.__name__} inside an open header block")
        handler = _HANDLERS.get(type(frame))
        if handler is not None:
            handler(self, side, frame, at_us)

    # --- header blocks ---------------------------------------------------------------------

    def _on_block(self, side: _Side, frame: Frame, at_us: int) -> None:
        assert isinstance(frame, HeadersFrame | PushPromiseFrame)
        end_stream = "END_STREAM" in frame.flags
        push = isinstance(frame, PushPromiseFrame)
        side.block = _Block(frame.stream_id, end_stream, push, [bytes(frame.data)])
        if "END_HEADERS" in frame.flags:
            self._close_block(side, at_us)

    def _on_continuation(self, side: _Side, frame: Frame, at_us: int) -> None:
        assert isinstance(frame, ContinuationFrame)
        if side.block is None or side.block.stream_id != frame.stream_id:
            raise H2ProtocolError(f"CONTINUATION on stream {frame.stream_id} out of place")
        side.block.fragments.append(bytes(frame.data))
        if "END_HEADERS" in frame.flags:
            self._close_block(side, at_us)

    def _close_block(self, side: _Side, at_us: int) -> None:
        block, side.block = side.block, None
        assert block is not None
        headers = _decode_block(side.decoder, b"".join(block.fragments))  # always: HPACK state
        if block.push:
            return  # gRPC never pushes; the block only had to pass through the decoder
        if side.role == "client":
            self._request_headers(block, headers, at_us)
        else:
            self._response_headers(block, headers, at_us)

    def _request_headers(self, block: _Block, headers: Headers, at_us: int) -> None:
        if block.stream_id in self._streams or block.stream_id <= self._last_stream_id:
            return  # request trailers, or a stream we already finished: nothing gRPC uses
        self._last_stream_id = block.stream_id
        self._streams[block.stream_id] = _Stream(block.stream_id, headers, at_us)

    def _response_headers(self, block: _Block, headers: Headers, at_us: int) -> None:
        stream = self._streams.get(block.stream_id)
        if stream is None:
            return
        if stream.response_headers:
            stream.trailers = headers
        elif _is_informational(headers) and not block.end_stream:
            return  # a 1xx response; the real one follows
        else:
            stream.response_headers = headers
            if block.end_stream:  # trailers-only: the status rides in the only HEADERS
                stream.trailers, stream.trailers_only = headers, True
        if block.end_stream:
            self._finish(block.stream_id, at_us)

    # --- other frames ----------------------------------------------------------------------

    def _on_data(self, side: _Side, frame: Frame, at_us: int) -> None:
        assert isinstance(frame, DataFrame)
        stream = self._streams.get(frame.stream_id)
        if stream is None:
            return
        if side.role == "client":
            stream.request_data += frame.data
            return
        if frame.data:
            stream.response_chunks.append((at_us, bytes(frame.data)))
        if "END_STREAM" in frame.flags:
            self._finish(frame.stream_id, at_us)

    def _on_rst_stream(self, side: _Side, frame: Frame, at_us: int) -> None:
        assert isinstance(frame, RstStreamFrame)
        stream = self._streams.pop(frame.stream_id, None)
        if stream is not None:
            self._done.append(stream.freeze(at_us, reset=True, reset_code=frame.error_code))

    def _on_settings(self, side: _Side, frame: Frame, at_us: int) -> None:
        assert isinstance(frame, SettingsFrame)
        peer = self._sides["server" if side.role == "client" else "client"]
        table = frame.settings.get(SettingsFrame.HEADER_TABLE_SIZE)
        if table is not None:
            peer.decoder.max_allowed_table_size = max(peer.decoder.max_allowed_table_size, table)
        size = frame.settings.get(SettingsFrame.MAX_FRAME_SIZE)
        if size is not None:
            peer.max_frame_size = max(peer.max_frame_size, size)

    def _finish(self, stream_id: int, at_us: int) -> None:
        stream = self._streams.pop(stream_id)
        self._done.append(stream.freeze(at_us))


_Handler = Callable[[H2Observer, _Side, Frame, int], None]

# Frames that matter to a passive gRPC observer; the rest carry nothing a recording needs.
_HANDLERS: Mapping[type[Frame], _Handler] = {
    HeadersFrame: H2Observer._on_block,
    PushPromiseFrame: H2Observer._on_block,
    ContinuationFrame: H2Observer._on_continuation,
    DataFrame: H2Observer._on_data,
    RstStreamFrame: H2Observer._on_rst_stream,
    SettingsFrame: H2Observer._on_settings,
}


def _check_preface(side: _Side) -> None:
    if side.preface_left == 0:
        return
    offset = len(CLIENT_PREFACE) - side.preface_left
    seen = bytes(side.buffer[: side.preface_left])
    if seen != CLIENT_PREFACE[offset : offset + len(seen)]:
        raise H2ProtocolError(f"client did not send the HTTP/2 preface: {seen[:24]!r}")
    del side.buffer[: len(seen)]
    side.preface_left -= len(seen)


def _next_frame(side: _Side) -> Frame | None:
    if side.preface_left or len(side.buffer) < FRAME_HEADER_SIZE:
        return None
    frame, length = Frame.parse_frame_header(memoryview(bytes(side.buffer[:FRAME_HEADER_SIZE])))
    _check_first_frame(side, frame)
    if length > side.max_frame_size:
        raise H2ProtocolError(f"{side.role} frame of {length} bytes exceeds the frame size limit")
    end = FRAME_HEADER_SIZE + length
    if len(side.buffer) < end:
        return None
    frame.parse_body(memoryview(bytes(side.buffer[FRAME_HEADER_SIZE:end])))
    del side.buffer[:end]
    return frame


def _check_first_frame(side: _Side, frame: Frame) -> None:
    # RFC 9113 §3.4: each side's connection preface starts with a SETTINGS frame.
    if side.frames_seen == 0 and not isinstance(frame, SettingsFrame):
        raise H2ProtocolError(f"{side.role} did not start with a SETTINGS frame")


def _decode_block(decoder: Decoder, block: bytes) -> Headers:
    pairs = decoder.decode(block, raw=True)
    return tuple(_header(bytes(name), bytes(value)) for name, value in pairs)


def _header(name: bytes, value: bytes) -> tuple[str, str]:
    text = name.decode("latin-1")
    # A `-bin` value may be raw bytes (grpc-core's "true binary" form, b"\0" + bytes): keep
    # every byte as latin-1 so that `value.encode("latin-1")` gives them back.
    if text.endswith("-bin"):
        return text, value.decode("latin-1")
    try:
        return text, value.decode()
    except UnicodeDecodeError:
        return text, value.decode("latin-1")


def _is_informational(headers: Headers) -> bool:
    return (_find(headers, ":status") or "").startswith("1")


def _as_protocol_error(role: Role, err: Exception) -> H2ProtocolError:
    if isinstance(err, H2ProtocolError):
        return err
    return H2ProtocolError(f"{role} bytes are not valid HTTP/2: {err}")
