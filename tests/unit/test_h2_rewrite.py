"""The push relay's gRPC half (issue 29): `Reframer` rewrites the gRPC messages of the streams it
is told to, inside a relayed HTTP/2 connection, and changes nothing else; the window updates of
the other direction make up for what a rewrite added or took away.

The connections are real HTTP/2 bytes (hyperframe, hpack), cut into random chunks as TCP would
deliver them; what comes out is read back with the recorder's own passive decoder."""

from __future__ import annotations

from hpack import Encoder
from hyperframe.frame import (
    DataFrame,
    Frame,
    HeadersFrame,
    PingFrame,
    RstStreamFrame,
    SettingsFrame,
    WindowUpdateFrame,
)
from hypothesis import given
from hypothesis import strategies as st

from recorder.protocol import frame_message
from recorder.record._h2 import CLIENT_PREFACE, H2Observer
from recorder.record._h2rewrite import MAX_HELD, Reframer, Rewrite

PICKED = 1  # the stream whose messages are rewritten; stream 3 is left alone


def _headers(encoder: Encoder, stream: int) -> bytes:
    block = encoder.encode([(":method", "POST"), (":path", f"/s/{stream}"), (":scheme", "http")])
    return HeadersFrame(stream, block, flags=["END_HEADERS"]).serialize()


def _data(stream: int, body: bytes, pieces: int, *, end: bool = True) -> list[bytes]:
    """`body` in `pieces` DATA frames (END_STREAM on the last)."""
    size = max(1, -(-len(body) // pieces))
    parts = [body[i : i + size] for i in range(0, len(body), size)] or [b""]
    return [
        DataFrame(
            stream, part, flags=["END_STREAM"] if end and i == len(parts) - 1 else []
        ).serialize()
        for i, part in enumerate(parts)
    ]


def _grow(by: int) -> Rewrite:
    def rewrite(compressed: bool, message: bytes) -> bytes | None:
        return None if by == 0 else (message + b"+" * by if by > 0 else message[:by])

    return rewrite


def _reframer(by: int) -> Reframer:
    return Reframer(lambda stream: _grow(by) if stream == PICKED else None, client=True)


def _fed(reframer: Reframer, data: bytes, cuts: list[int]) -> bytes:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return b"".join(reframer.feed(data[a:b]) for a, b in zip(points, points[1:], strict=False))


def _frames(data: bytes) -> list[Frame]:
    data = data.removeprefix(CLIENT_PREFACE)
    found = []
    while data:
        frame, length = Frame.parse_frame_header(memoryview(data[:9]))
        frame.parse_body(memoryview(data[9 : 9 + length]))
        found.append(frame)
        data = data[9 + length :]
    return found


def _calls(data: bytes) -> dict[int, bytes]:
    """The request body of each stream the client bytes `data` open."""
    observer = H2Observer()
    observer.client_data(data, 0)
    answers = Encoder()
    server = SettingsFrame().serialize()
    for stream in (1, 3):
        block = answers.encode([(":status", "200")])
        server += HeadersFrame(stream, block, flags=["END_HEADERS", "END_STREAM"]).serialize()
    observer.server_data(server, 1)
    return {call.stream_id: call.request_data for call in observer.completed()}


messages = st.lists(st.binary(max_size=300), min_size=1, max_size=3)


@given(
    picked=messages,
    other=messages,
    pieces=st.integers(1, 4),
    by=st.integers(-3, 40),
    cuts=st.lists(st.integers(0, 10_000), max_size=12),
)
def test_only_the_picked_streams_messages_change_and_frames_keep_their_order(
    picked: list[bytes], other: list[bytes], pieces: int, by: int, cuts: list[int]
) -> None:
    encoder = Encoder()
    body_1 = b"".join(frame_message(m) for m in picked)
    body_3 = b"".join(frame_message(m) for m in other)
    frames = [
        SettingsFrame().serialize(),
        _headers(encoder, 1),
        _headers(encoder, 3),
        *_data(1, body_1[: len(body_1) // 2], 1, end=False)[:1],
        PingFrame(0, opaque_data=b"12345678").serialize(),
        *_data(3, body_3, pieces),
        *_data(1, body_1[len(body_1) // 2 :], pieces),
    ]
    sent = CLIENT_PREFACE + b"".join(frames)
    reframer = _reframer(by)
    out = _fed(reframer, sent, cuts) + reframer.flush()
    shrunk = [m[:by] if by < 0 else m for m in picked]
    want = b"".join(frame_message(m + b"+" * max(by, 0)) for m in shrunk)
    assert _calls(out) == {1: want, 3: body_3}
    kept = [f.serialize() for f in _frames(out) if not (f.type == 0 and f.stream_id == PICKED)]
    assert kept == [f for f in frames if not (f[3] == 0 and f[8] == PICKED)]  # as they came
    grown = len(want) - len(body_1) if by else 0
    assert reframer.grown[PICKED] == reframer.grown[0] == grown


@given(by=st.integers(-5, 60), increments=st.lists(st.integers(1, 50), min_size=1, max_size=6))
def test_the_other_directions_window_updates_make_up_for_what_was_added(
    by: int, increments: list[int]
) -> None:
    client = _reframer(by)
    server = Reframer(lambda stream: None, client=False)
    server.other = client
    sent = CLIENT_PREFACE + _headers(Encoder(), 1) + b"".join(_data(1, frame_message(b"x" * 9), 1))
    client.feed(sent)
    credited = [
        f.window_increment
        for increment in increments
        for f in _frames(server.feed(WindowUpdateFrame(0, increment).serialize()))
    ]
    assert all(0 < delta < 2**31 for delta in credited)  # never an update of 0
    owed = max(by, -9)  # a message of 9 bytes loses at most 9
    assert sum(credited) == max(0, sum(increments) - owed)
    assert client.grown[0] == max(0, sum(increments) - owed) - (sum(increments) - owed)


def test_while_a_message_is_held_only_its_stream_and_header_blocks_wait() -> None:
    encoder = Encoder()
    head = CLIENT_PREFACE + SettingsFrame().serialize() + _headers(encoder, 3)
    held = DataFrame(PICKED, frame_message(b"a message")[:7]).serialize()
    passing = (
        PingFrame(0, opaque_data=b"12345678").serialize()
        + WindowUpdateFrame(0, 99).serialize()
        + DataFrame(3, frame_message(b"another stream")).serialize()
    )
    waiting = _headers(encoder, 5) + DataFrame(5, frame_message(b"opened after")).serialize()
    reset = RstStreamFrame(PICKED, 8).serialize()
    reframer = _reframer(10)
    opened = head + _headers(encoder, PICKED)
    assert reframer.feed(opened) == opened
    assert reframer.feed(held + passing + waiting) == passing  # the rest wait for the message
    assert reframer.feed(reset) == held + waiting + reset  # a reset lets them go as they came
    assert not reframer.rewritten


def test_a_message_too_large_to_hold_goes_as_it_comes() -> None:
    big = frame_message(b"x" * (2 * MAX_HELD))
    frames = _data(PICKED, big, 4)
    reframer = _reframer(10)
    reframer.feed(CLIENT_PREFACE + SettingsFrame().serialize() + _headers(Encoder(), PICKED))
    out = [reframer.feed(frame) for frame in frames]
    assert out[0] == b"" and b"".join(out) == b"".join(frames)  # held until too large, then
    assert out[-1] == frames[-1] and not reframer.rewritten  # each frame as it comes
