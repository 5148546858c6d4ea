"""Damaged capture files: each raises CaptureParseError naming file:line, never anything else."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recorder.capture import (
    Capture,
    CaptureParseError,
    Exchange,
    GrpcMessage,
    Request,
    Response,
    SseEvent,
    parse,
    render,
)
from recorder.capture._parse import parse_bytes
from recorder.protocol import Binding, Classification

SEND = Classification(binding=Binding.JSONRPC, operation="SendMessage")
GRPC = Classification(binding=Binding.GRPC, operation="SendMessage")

VALID = Capture(
    started="2026-11-29T23:49:25.123456Z",
    recorder_version="0.1.0",
    exchanges=(
        Exchange(
            1,
            SEND,
            Request("POST", "/a2a", (("Content-Type", "application/json"),), b'{"a":1,"b":[1,2]}'),
            Response(200, "OK", (("Content-Type", "application/json"),), b'{"ok":true}'),
            started_us=1_000,
            duration_us=2_000,
        ),
        Exchange(2, SEND, Request("GET", "/bin"), Response(200, "OK", (), bytes(range(90)))),
        Exchange(
            3,
            SEND,
            Request("POST", "/s", (), b"{}"),
            Response(
                200,
                "OK",
                events=(
                    SseEvent(10, ('data: {"x":1}',)),
                    SseEvent(20, (": ping",)),
                    SseEvent(30, ("id: 1",)),
                ),
            ),
        ),
        Exchange(
            4,
            GRPC,
            Request(
                "POST",
                "/lf.a2a.v1.A2AService/SendMessage",
                http_version="HTTP/2",
                messages=(GrpcMessage(0, json='{"m":1}'),),
            ),
            Response(
                200,
                "",
                http_version="HTTP/2",
                messages=(GrpcMessage(5, raw=b"\x01\x02"), GrpcMessage(6, json='{"n":2}')),
                trailers=(("grpc-status", "0"),),
            ),
        ),
        Exchange(5, SEND, Request("GET", "/gone"), None, error="connection refused"),
        Exchange(
            6, SEND, Request("GET", "/plain"), Response(404, "Not Found", (), b"no such page")
        ),
    ),
)
TEXT = render(VALID)
LINES = TEXT.split("\n")


def _line_of(text: str, start: int = 0) -> int:
    """1-based number of the first line equal to `text` (or starting with it) from `start`."""
    return next(i for i, line in enumerate(LINES) if i >= start and line.startswith(text)) + 1


def _replace(old: str, new: str, count: int = 1) -> str:
    assert old in TEXT
    return TEXT.replace(old, new, count)


def _cut_after(line: int) -> str:
    return "\n".join(LINES[:line]) + "\n"


def _line_in(text: str, prefix: str) -> int:
    """1-based number of the first line of `text` that starts with `prefix`."""
    return next(i for i, line in enumerate(text.split("\n")) if line.startswith(prefix)) + 1


def _expect(text: str, line: int, fragment: str) -> CaptureParseError:
    with pytest.raises(CaptureParseError) as info:
        parse(text, "damaged.http")
    error = info.value
    assert isinstance(error, ValueError)
    assert (error.filename, error.line) == ("damaged.http", line), str(error)
    assert fragment in str(error)
    assert str(error).startswith(f"damaged.http:{line}: ")
    return error


def test_the_undamaged_file_parses() -> None:
    assert parse(TEXT) == VALID


def test_truncated_after_request() -> None:
    status = _line_of("HTTP/1.1 200 OK")
    _expect(_cut_after(status - 1), status, "expected a status line")


def test_truncated_mid_line() -> None:
    _expect(TEXT[:-5], len(LINES) - 2, "does not end with a newline")


def test_truncated_inside_json_body() -> None:
    line = _line_of('  "b": [')
    _expect(_cut_after(line), line, "missing or not ended by a blank line")


def test_truncated_sse_stream_is_noticed() -> None:
    ping = _line_of(": ping")
    _expect(
        _cut_after(ping + 1),
        _line_of("# response-body: event-stream"),
        "3 SSE events declared, 2 found",
    )


def test_truncated_trailers_are_noticed() -> None:
    trailer = _line_of("# trailer grpc-status")
    error = _expect(_cut_after(trailer - 1), _line_of("# response-body: grpc"), "trailers declared")
    assert "1 trailers declared, 0 found" in error.message


def test_bad_status_line() -> None:
    _expect(
        _replace("HTTP/1.1 200 OK", "HTTP/1.1 2OO OK"),
        _line_of("HTTP/1.1 200 OK"),
        "bad status line",
    )


def test_bad_request_line() -> None:
    _expect(_replace("GET /bin HTTP/1.1", "GET /bin"), _line_of("GET /bin"), "bad request line")


def test_missing_blank_line_after_request_headers() -> None:
    text = _replace("application/json\n\n{", "application/json\n{")
    _expect(text, _line_in(text, "{"), "missing blank line after headers")


def test_missing_blank_line_before_next_exchange() -> None:
    text = _replace("HTTP/1.1 200 OK\n\nAAEC", "HTTP/1.1 200 OK\nAAEC")
    _expect(text, _line_in(text, "AAEC"), "bad header line")


def test_headers_running_into_the_status_line() -> None:
    text = _replace("GET /gone HTTP/1.1\n\n", "GET /gone HTTP/1.1\n")
    _expect(text, _line_in(text, "### 6"), "missing blank line after headers")


def test_invalid_json_where_json_is_declared() -> None:
    line = _line_of('  "a": 1,')
    _expect(_replace('  "a": 1,', '  "a": 1,,'), line, "invalid JSON")


def test_invalid_json_in_an_sse_block() -> None:
    line = _line_of('data:   "x": 1')
    _expect(_replace('data:   "x": 1', 'data:   "x": '), line + 1, "invalid JSON")


def test_unknown_json_form() -> None:
    line = _line_of("# request-body: json compact")
    _expect(
        _replace("# request-body: json compact", "# request-body: json fancy"),
        line,
        "unknown JSON form 'fancy'",
    )


def test_bad_base64() -> None:
    line = _line_of("AAECAw")
    _expect(_replace("AAECAw", "AAE!Aw"), line, "bad base64")


def test_unknown_format_version() -> None:
    _expect(_replace("capture format 2", "capture format 3"), 1, "unknown capture format version 3")


def test_not_a_capture() -> None:
    _expect("GET / HTTP/1.1\n\n", 1, "not an a2a-recorder capture")
    _expect("", 1, "empty file")


def test_duplicate_exchange_number() -> None:
    _expect(_replace("### 2 ", "### 1 "), _line_of("### 2 "), "exchange 1 follows 1")


def test_out_of_order_exchange_number() -> None:
    _expect(_replace("### 6 ", "### 4 "), _line_of("### 6 "), "exchange 4 follows 5")


def test_bad_offsets() -> None:
    _expect(
        _replace("# started: +0.001000s", "# started: +1.5s"),
        _line_of("# started: +0.001000s"),
        "bad time '+1.5s'",
    )
    _expect(
        _replace(": +0.000010s json compact", ": soon json compact"),
        _line_of(": +0.000010s"),
        "annotation",
    )
    _expect(
        _replace("# message +0.000005s", "# message 5ms"),
        _line_of("# message +0.000005s"),
        "bad time",
    )


def test_missing_started_line() -> None:
    _expect(_replace("# started: +0.001000s\n", ""), _line_of("### 1") + 1, "no '# started:'")


def test_unknown_binding() -> None:
    _expect(
        _replace("### 2 SendMessage JSONRPC", "### 2 SendMessage SOAP"),
        _line_of("### 2"),
        "unknown binding 'SOAP'",
    )


def test_body_without_form_line() -> None:
    text = _replace("# response-body: text\n", "")
    _expect(text, _line_in(text, "no such page"), "body present but no")


def test_response_none_with_a_response() -> None:
    text = _replace("# response-body: json compact", "# response: none")
    _expect(text, _line_of("# response-body: json compact"), "'response: none' but has a response")


def test_duplicate_single_metadata_key() -> None:
    text = _replace("# duration: 0.002000s", "# duration: 0.002000s\n# duration: 0.003000s")
    _expect(text, _line_of("# duration: 0.002000s") + 1, "'duration' given more than once")


def test_crlf_line_endings_read_as_lf() -> None:
    # A Windows checkout (git's autocrlf) ends every line with CRLF: the same capture.
    assert parse(TEXT.replace("\n", "\r\n"), "damaged.http") == parse(TEXT, "damaged.http")
    some = _replace("# duration: 0.002000s\n", "# duration: 0.002000s\r\n")
    assert parse(some, "damaged.http") == parse(TEXT, "damaged.http")


def test_a_carriage_return_that_ends_no_line() -> None:
    text = _replace("# duration: 0.002000s", "# duration: 0.00\r2000s")
    _expect(text, _line_of("# duration: 0.002000s"), "CR found that does not end a line")
    _expect(TEXT.replace("\n", "\r"), 1, "CR found that does not end a line")


def test_bad_metadata_line() -> None:
    _expect(
        _replace("# duration: 0.002000s", "# Duration 2ms"),
        _line_of("# duration: 0.002000s"),
        "bad metadata line",
    )


def test_bad_quoted_value() -> None:
    _expect(
        _replace("# error: connection refused", '# error: "unterminated'),
        _line_of("# error: connection refused"),
        "bad quoted value",
    )


def test_unknown_metadata_keys_are_ignored() -> None:
    text = _replace("# duration: 0.002000s", "# duration: 0.002000s\n# from-the-future: yes")
    assert parse(text) == VALID


def test_unknown_header_keys_are_kept_in_extra() -> None:
    text = _replace("# recorder: 0.1.0", "# recorder: 0.1.0\n# proxy-mode: reverse")
    assert parse(text).extra == (("proxy-mode", "reverse"),)


# --- properties ----------------------------------------------------------------------------

DATA = TEXT.encode("utf-8")


@settings(max_examples=400, deadline=None)
@given(st.integers(0, len(DATA)))
def test_property_truncation_raises_or_gives_a_prefix(cut: int) -> None:
    try:
        parsed = parse_bytes(DATA[:cut], "cut.http")
    except CaptureParseError as error:
        assert error.line >= 1
        return
    # This file has no text body with blank lines, so a cut can only land between exchanges.
    assert parsed.exchanges == VALID.exchanges[: len(parsed.exchanges)]
    assert parsed.started == VALID.started


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, len(DATA) - 1), st.integers(0, 255)), min_size=1, max_size=4),
    st.integers(0, len(DATA)),
)
def test_property_damage_raises_only_capture_parse_error(
    flips: list[tuple[int, int]], cut: int
) -> None:
    data = bytearray(DATA)
    for position, value in flips:
        data[position] = value
    try:
        parsed = parse_bytes(bytes(data[:cut]) if cut % 3 == 0 else bytes(data), "flip.http")
    except CaptureParseError:
        return
    assert isinstance(parsed, Capture)


def _with_meta(line: str) -> str:
    # An extra metadata line for exchange 1, right after its `duration` line.
    anchor = next(x for x in LINES if x.startswith("# duration:"))
    return _replace(anchor, f"{anchor}\n{line}")


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("# exact: target not-json", "bad exact value"),
        ("# exact: target 42", "bad exact value"),
        ('# exact: nowhere "x"', "bad exact value"),
        ('# exact: request-header "x"', "needs index"),
        ('# exact: target 3 "x"', "takes no index"),
        ('# exact: target "\\x"', "bad exact value"),
        ("# wire-header: request x Content-Length: 1", "bad wire-header"),
        ("# wire-header: sideways 1 Content-Length: 1", "bad wire-header"),
    ],
)
def test_bad_head_metadata(line: str, fragment: str) -> None:
    _expect(_with_meta(line), _line_of("# duration:") + 1, fragment)


def test_a_repeated_exact_value() -> None:
    text = _with_meta('# exact: target "/a"\n# exact: target "/b"')
    _expect(text, _line_of("# duration:") + 2, "twice")


@pytest.mark.parametrize(
    "line",
    ['# exact: request-header 7 "x"', "# wire-header: request 9 Content-Length: 1"],
)
def test_a_head_index_that_does_not_fit(line: str) -> None:
    _expect(_with_meta(line), _line_of("### 1 "), "header")


# -- a bad line is quoted cut (issue 20) ---------------------------------------------------------


@pytest.mark.parametrize(
    "where",
    ["header line", "request line", "exchange line"],
)
def test_a_huge_bad_line_is_quoted_cut(where: str) -> None:
    """A 1 MB bad line: the message quotes its first 200 characters and says how long it was
    (a 100 MB line was echoed whole, 104 MB of output)."""
    huge = "X" * 1_000_000
    text = render(VALID)
    anchors = {
        "header line": "Content-Type: application/json\n",
        "request line": "POST /a2a HTTP/1.1\n",
        "exchange line": "### 2 ",
    }
    anchor = anchors[where]
    bad = {"request line": f"{huge}\n", "exchange line": f"### {huge}\n{anchor}"}
    text = text.replace(anchor, bad.get(where, f"{huge}\n{anchor}"), 1)
    with pytest.raises(CaptureParseError) as caught:
        parse(text, "huge.http")
    message = str(caught.value)
    assert len(message) < 600, message[:300]
    assert 190 < message.count("X") <= 200  # the line's first 200 characters
    assert re.search(r"\(100000\d characters\)", message)


def test_any_parse_error_message_stays_bounded() -> None:
    error = CaptureParseError("y" * 50_000, "f.http", 3)
    assert len(str(error)) < 1_100 and str(error).startswith("f.http:3: ")


# -- one exchange alone (show FILE N) --------------------------------------------------------------


def test_only_reads_the_exchange_asked_for() -> None:
    """The other exchanges are stepped over unread: damage in them is not seen, and a 100 MB
    body elsewhere costs nothing."""
    text = render(VALID)
    second = text.index("### 2 ")
    damaged = text[:second] + text[second:].replace("GET /bin HTTP/1.1", "GET", 1)
    with pytest.raises(CaptureParseError):
        parse(damaged)
    for number in (1, 3):
        alone = parse(damaged, only=number)
        assert alone.exchanges == (VALID.exchanges[number - 1],)
        assert alone.started == VALID.started
    assert parse(text, only=2).exchanges == (VALID.exchanges[1],)
    assert parse(text, only=99).exchanges == ()
