"""SSE framing: chunk boundaries, line endings, truncation, exact round trips."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recorder.protocol import (
    SseFields,
    SseFramer,
    event_data,
    event_fields,
    event_type,
    render_events,
)

PY_STREAM = (  # the py SDK's shape: CRLF, spaced JSON, a keep-alive comment
    b'data: {"id": "1", "jsonrpc": "2.0", "result": {"task": {"id": "t"}}}\r\n\r\n'
    b": ping - 2026-01-01 00:00:00\r\n\r\n"
    b'data: {"id": "1", "jsonrpc": "2.0", "result": {"statusUpdate": {}}}\r\n\r\n'
)
JS_STREAM = b'data: {"task":{"id":"t"}}\n\nevent: error\ndata: {"error":{"code":404}}\n\n'


def frame(chunks: list[bytes]) -> tuple[list[tuple[str, ...]], tuple[str, ...] | None, str]:
    framer = SseFramer()
    blocks = [block for chunk in chunks for block in framer.feed(chunk)]
    return blocks, framer.close(), framer.newline


def test_py_stream_in_one_chunk() -> None:
    blocks, rest, newline = frame([PY_STREAM])
    assert newline == "\r\n"
    assert rest is None
    assert blocks == [
        ('data: {"id": "1", "jsonrpc": "2.0", "result": {"task": {"id": "t"}}}',),
        (": ping - 2026-01-01 00:00:00",),
        ('data: {"id": "1", "jsonrpc": "2.0", "result": {"statusUpdate": {}}}',),
    ]


def test_js_stream_byte_by_byte() -> None:
    blocks, rest, newline = frame([JS_STREAM[i : i + 1] for i in range(len(JS_STREAM))])
    assert newline == "\n"
    assert rest is None
    assert blocks == [
        ('data: {"task":{"id":"t"}}',),
        ("event: error", 'data: {"error":{"code":404}}'),
    ]


def test_crlf_split_across_chunks() -> None:
    framer = SseFramer()
    assert framer.feed(b"data: a\r") == []
    assert framer.feed(b"\n\r") == [("data: a",)]
    assert framer.newline == "\r\n"
    assert framer.feed(b"\ndata: b\r\n\r\n") == [("data: b",)]
    assert framer.close() is None


def test_cr_only_stream() -> None:
    blocks, rest, newline = frame([b"data: a\r\rdata: b\rdata: c\r\r"])
    assert (blocks, rest, newline) == ([("data: a",), ("data: b", "data: c")], None, "\r")


def test_a_block_completes_on_the_chunk_that_ends_it() -> None:
    framer = SseFramer()
    assert framer.feed(b'data: {"a":') == []
    assert framer.feed(b" 1}\n") == []
    assert framer.feed(b"\n") == [('data: {"a": 1}',)]


@pytest.mark.parametrize(
    ("stream", "expected"),
    [
        (b"data: half", ("data: half",)),
        (b"data: one\ndata: tw", ("data: one", "data: tw")),
        (b"data: whole line\n", ("data: whole line",)),
        (b"", None),
        (b"\n\n\n", None),
    ],
)
def test_close_returns_a_truncated_block(stream: bytes, expected: tuple[str, ...] | None) -> None:
    framer = SseFramer()
    assert framer.feed(stream) == []
    assert framer.close() == expected


def test_invalid_utf8_is_kept_byte_for_byte() -> None:
    blocks, _, _ = frame([b"data: \xff\xfe \xc3\xa9\n\n"])
    assert blocks == [("data: \udcff\udcfe \u00e9",)]
    assert render_events(blocks) == b"data: \xff\xfe \xc3\xa9\n\n"


@pytest.mark.parametrize(
    ("lines", "data", "kind"),
    [
        (("data: a",), "a", "message"),
        (("data:a", "data:  b"), "a\n b", "message"),
        (("event: error", "data: {}"), "{}", "error"),
        (("event:", "data"), "", "message"),
        ((": ping",), "", "message"),
        (("id: 7", "retry: 10", "data: x", "event: a", "event: b"), "x", "b"),
        (("data: a:b",), "a:b", "message"),
    ],
)
def test_fields(lines: tuple[str, ...], data: str, kind: str) -> None:
    assert event_data(lines) == data
    assert event_type(lines) == kind


@pytest.mark.parametrize(
    ("lines", "fields"),
    [
        (("id: 7", "data: x", ": ping"), SseFields("message", "x", "7", (": ping",))),
        (("id: 1", "id: 2", "event: task"), SseFields("task", "", "2", ())),
        (("id: a\0b", "data: y"), SseFields("message", "y", None, ())),  # NUL: id ignored
        (("id",), SseFields("message", "", "", ())),  # a bare `id` resets it to ""
        ((":",), SseFields("message", "", None, (":",))),
    ],
)
def test_event_fields(lines: tuple[str, ...], fields: SseFields) -> None:
    assert event_fields(lines) == fields


def test_render_exact_bytes() -> None:
    blocks, _, newline = frame([PY_STREAM])
    assert render_events(blocks, newline) == PY_STREAM
    assert render_events([("data: x",), (": ping",)]) == b"data: x\n\n: ping\n\n"


def test_render_rejects_a_bad_newline() -> None:
    with pytest.raises(ValueError, match="newline"):
        render_events([("data: x",)], "\n\n")


# ---- properties ----

_line = st.text(
    alphabet=st.characters(exclude_characters="\r\n", exclude_categories=["Cs"]),
    min_size=1,
    max_size=20,
)
_block = st.lists(_line, min_size=1, max_size=4).map(tuple)
_blocks = st.lists(_block, max_size=6)
_newline = st.sampled_from(["\r\n", "\n", "\r"])


@st.composite
def _stream_and_cuts(draw: st.DrawFn) -> tuple[list[tuple[str, ...]], str, bytes, list[int]]:
    blocks = draw(_blocks)
    newline = draw(_newline)
    data = render_events(blocks, newline)
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=8)))
    return blocks, newline, data, cuts


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    edges = [0, *cuts, len(data)]
    return [data[a:b] for a, b in zip(edges, edges[1:], strict=False)]


@given(_stream_and_cuts())
def test_any_split_frames_the_same_and_renders_back(
    case: tuple[list[tuple[str, ...]], str, bytes, list[int]],
) -> None:
    blocks, newline, data, cuts = case
    got, rest, seen_newline = frame(_split(data, cuts))
    assert got == blocks
    assert rest is None
    if blocks:
        assert seen_newline == newline
        assert render_events(got, seen_newline) == data


@given(st.binary(max_size=200), st.lists(st.integers(0, 200), max_size=6))
def test_arbitrary_bytes_frame_the_same_in_any_chunks(data: bytes, cuts: list[int]) -> None:
    whole = frame([data])
    pieces = frame(_split(data, sorted(c for c in cuts if c <= len(data))))
    assert pieces == whole
    # Lossless: every line is the wire's bytes again, whatever they were.
    for block in whole[0]:
        for line in block:
            assert line.encode("utf-8", "surrogateescape") in data


def test_record_separator_before_data_is_left_out_of_the_data_only() -> None:
    """VoltAgent writes `data: \\x1e<json>` (RFC 7464): readers get the JSON, fields the wire."""
    from recorder.protocol import event_data, event_fields

    lines = ('data: \x1e{"a": 1}',)
    assert event_data(lines) == '{"a": 1}'
    assert event_fields(lines).data == '\x1e{"a": 1}'
    assert event_data(("data: \x1e\x1e1",)) == "\x1e1"  # one separator, not every one
