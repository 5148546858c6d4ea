"""parse(render(c)) == c: table-driven cases, then a Hypothesis property over generated captures."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import recorder.capture as capture_pkg
from recorder.capture import (
    Capture,
    CaptureExistsError,
    CaptureParseError,
    CaptureWriter,
    Exchange,
    GrpcMessage,
    Request,
    Response,
    SseEvent,
    parse,
    read_capture,
    render,
    render_exchange,
    render_header,
    write_capture,
)
from recorder.protocol import Binding, Classification, Version

HEADER = Capture(started="2026-11-29T23:49:25.123456Z", recorder_version="0.1.0")
SEND = Classification(binding=Binding.JSONRPC, operation="SendMessage", method="SendMessage")


def _one(request: Request, response: Response | None, **kw: object) -> Capture:
    exchange = Exchange(1, kw.pop("classification", SEND), request, response, **kw)  # type: ignore[arg-type]
    return Capture(started=HEADER.started, recorder_version="0.1.0", exchanges=(exchange,))


def _post(body: bytes) -> Request:
    return Request("POST", "/a2a", (("Content-Type", "application/json"),), body)


# (id, capture, a line the rendered file must hold)
CASES: list[tuple[str, Capture, str]] = [
    (
        "json-compact",
        _one(_post(b'{"a":1,"b":[true,null]}'), Response(200, "OK")),
        "# request-body: json compact",
    ),
    (
        "json-spaced-ascii-newline",
        _one(_post(b'{"x": "\\u00e9"}\n'), Response(200, "OK")),
        "# request-body: json spaced ascii newline",
    ),
    ("json-unicode", _one(_post('{"t":"héllo ✓ 日本"}'.encode()), None), '  "t": "héllo ✓ 日本"'),
    ("json-unknown-form-is-text", _one(_post(b'{ "a" : 1 }'), Response(200)), '{ "a" : 1 }'),
    (
        "text",
        _one(_post(b"plain\n\ntext\n"), Response(404, "Not Found", (), b"Not Found")),
        "# response-body: text",
    ),
    (
        "text-looking-like-status-is-base64",
        _one(_post(b"x\nHTTP/1.1 200 OK\n"), Response(200)),
        "# request-body: base64",
    ),
    (
        "binary",
        _one(_post(bytes(range(256))), Response(200, "OK", (), b"\x00\xff")),
        "# response-body: base64",
    ),
    (
        "empty-bodies",
        _one(Request("GET", "/tasks/1?historyLength=2"), Response(204, "")),
        "HTTP/1.1 204",
    ),
    (
        "no-response",
        _one(_post(b"{}"), None, error="connect: refused", notes=("a", "b")),
        "# response: none",
    ),
    (
        "unicode-headers",
        _one(Request("GET", "/", (("X-Name", "Zoë  "), ("X-Empty", ""))), None),
        "X-Empty:",
    ),
    (
        "odd-metadata",
        _one(
            Request("GET", "/"),
            None,
            classification=Classification(
                tenant="",
                task_id=" spaced ",
                context_id='"q"',
                reason="line1\nline2",
                method="GET /v1/card",
                version=Version.V0_3,
                streaming=True,
                error="TaskNotFoundError",
            ),
        ),
        '# tenant: ""',
    ),
    (
        "sse",
        _one(
            _post(b"{}"),
            Response(
                200,
                "OK",
                (("Content-Type", "text/event-stream"),),
                events=(
                    SseEvent(
                        315000, ('data: {"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t"}}}',)
                    ),
                    SseEvent(15_000_000, (": ping",)),
                    SseEvent(15_100_000, ("event: error", 'data: {"a": 1}', "id: 7")),
                    SseEvent(16_000_000, ("data: not json", "data: two lines")),
                    SseEvent(17_000_000, ("", "### nasty", "data: x\ty")),
                    SseEvent(18_000_000, ()),
                ),
                newline="\r\n",
            ),
        ),
        ": +0.315000s json compact",
    ),
    (
        "grpc",
        _one(
            Request(
                "POST",
                "/lf.a2a.v1.A2AService/SendMessage",
                (("content-type", "application/grpc"),),
                http_version="HTTP/2",
                messages=(
                    GrpcMessage(
                        0,
                        json='{"message":{"role":"ROLE_USER"}}',
                        type_name="lf.a2a.v1.SendMessageRequest",
                    ),
                ),
            ),
            Response(
                200,
                "",
                (),
                http_version="HTTP/2",
                messages=(
                    GrpcMessage(12000, raw=b"\x0a\x03abc", compressed=True),
                    GrpcMessage(13000, raw=b""),
                    GrpcMessage(14000, json="{ not json"),
                    GrpcMessage(15000, json="two\nlines"),
                    GrpcMessage(16000, json=""),
                ),
                trailers=(("grpc-status", "0"), ("grpc-message", "")),
            ),
        ),
        "# trailer grpc-status: 0",
    ),
    (
        "grpc-trailers-only",
        _one(
            Request(
                "POST",
                "/lf.a2a.v1.A2AService/GetTask",
                http_version="HTTP/2",
                messages=(GrpcMessage(0, raw=b"\x0a\x01x"),),
            ),
            Response(
                200,
                "",
                (("grpc-status", "5"),),
                http_version="HTTP/2",
                trailers=(("grpc-status", "5"), ("grpc-message", "Task not found")),
            ),
        ),
        "# trailer grpc-message: Task not found",
    ),
    (
        "framing-headers-set-aside",
        _one(
            Request(
                "POST",
                "/a2a",
                (
                    ("Host", "h"),
                    ("Content-Length", "9"),
                    ("Content-Type", "application/json"),
                    ("Transfer-Encoding", "chunked"),
                ),
                b'{"a": 1}\n',
            ),
            Response(
                200, "OK", (("content-length", "7"), ("content-encoding", "gzip")), b'{"b":2}'
            ),
        ),
        "# wire-header: request 1 Content-Length: 9",
    ),
    (
        "framing-headers-kept-without-a-body",
        _one(
            Request("GET", "/", (("Content-Length", "0"),)),
            Response(204, "", (("Transfer-Encoding", "chunked"),)),
        ),
        "Content-Length: 0",
    ),
    (
        "target-not-utf8",
        _one(Request("GET", "/a2a/rest/tasks/\udcff\udcfe"), None),
        "GET /a2a/rest/tasks/%FF%FE HTTP/1.1",
    ),
    (
        "target-with-space-and-controls",
        _one(Request("GET", "/a b\x00c\u2028"), None),
        "GET /a%20b%00c%E2%80%A8 HTTP/1.1",
    ),
    (
        "empty-target",
        _one(Request("GET", ""), None),
        '# exact: target ""',
    ),
    (
        "header-values-a-line-cannot-hold",
        _one(
            Request("GET", "/", (("X-A", "a\r\nb"), ("X-B", "nul\x00"), ("X-C", "\ud800"))),
            Response(200, "OK\udcff", (("X-D", "\x1b[31m"),), trailers=(("grpc-message", "x\ny"),)),
        ),
        "X-B: nul?",
    ),
    (
        "lone-surrogates-in-json-and-metadata",
        _one(
            _post(b'{"jsonrpc":"2.0","id":"\\ud800","method":"GetTask","params":{"id":"\\udfff"}}'),
            Response(
                200,
                "OK",
                (),
                b'{"error":"\\udfff"}',
            ),
            classification=Classification(task_id="\udfff", error="\ud800"),
            notes=("\udcff note",),
            error="\ud800",
        ),
        '# task-id: "\\udfff"',
    ),
    (
        "sse-lines-not-utf8",
        _one(_post(b"{}"), Response(200, "OK", events=(SseEvent(0, ("data: \udcff\udcfe",)),))),
        ": +0.000000s quoted",
    ),
]


@pytest.mark.parametrize(
    ("case", "expected_line"),
    [(c, line) for _, c, line in CASES],
    ids=[name for name, _, _ in CASES],
)
def test_cases_round_trip(case: Capture, expected_line: str) -> None:
    text = render(case)
    assert expected_line in text.split("\n")
    assert parse(text) == case


def test_exports_are_complete_and_sorted() -> None:
    assert len(set(capture_pkg.__all__)) == len(capture_pkg.__all__)
    wanted = {
        "render",
        "render_header",
        "render_exchange",
        "parse",
        "CaptureParseError",
        "CaptureWriter",
        "read_capture",
        "write_capture",
    }
    assert wanted <= set(capture_pkg.__all__)
    assert all(hasattr(capture_pkg, name) for name in capture_pkg.__all__)


def test_header_fields_round_trip() -> None:
    header = Capture(
        started="2026-01-01T00:00:00Z",
        recorder_version="0.1.0+dev",
        upstreams=("http://127.0.0.1:8080", "127.0.0.1:8081"),
        redacted=("Authorization", "X-A2A-Notification-Token"),
        extra=(("proxy-mode", "reverse"), ("future.key", ""), ("proxy-mode", "x")),
    )
    text = render_header(header)
    assert text.startswith("# a2a-recorder capture format 2\n# recorder: 0.1.0+dev\n")
    assert text.endswith("\n\n")
    assert parse(text) == header


def test_render_refuses_what_cannot_round_trip() -> None:
    bad = [
        _one(Request("GET", "/", (("Bad Name", "v"),)), None),
        _one(Request("G T", "/"), None),
        _one(Request("GET", "/"), None, classification=Classification(operation="Two words")),
        _one(Request("GET", "/"), Response(200, body=b"x", events=(SseEvent(0, ()),))),
        _one(Request("GET", "/"), Response(200, newline="\n\n")),
        _one(Request("GET", "/"), Response(42)),
    ]
    for capture in bad:
        with pytest.raises(ValueError):
            render(capture)
    twice = Capture(
        started="s",
        recorder_version="v",
        exchanges=(
            Exchange(2, SEND, Request("GET", "/"), None),
            Exchange(2, SEND, Request("GET", "/"), None),
        ),
    )
    with pytest.raises(ValueError, match="increase"):
        render(twice)


def test_render_exchange_is_a_suffix_of_render() -> None:
    case = CASES[0][1]
    assert render(case) == render_header(case) + render_exchange(case.exchanges[0])


# --- writer --------------------------------------------------------------------------------


def test_writer_file_parses_after_every_append(tmp_path: Path) -> None:
    path = tmp_path / "out.http"
    exchanges = [Exchange(n, SEND, _post(b'{"n":%d}' % n), Response(200, "OK")) for n in (1, 2, 5)]
    with CaptureWriter(path, HEADER) as writer:
        assert read_capture(path) == HEADER
        for count, exchange in enumerate(exchanges, 1):
            writer.append(exchange)
            assert read_capture(path).exchanges == tuple(exchanges[:count])
        with pytest.raises(ValueError, match="increase"):
            writer.append(exchanges[0])
    assert writer.closed
    with pytest.raises(ValueError, match="closed"):
        writer.append(Exchange(9, SEND, _post(b"{}"), None))
    assert read_capture(path).exchanges == tuple(exchanges)


def test_writer_is_thread_safe(tmp_path: Path) -> None:
    path = tmp_path / "threads.http"
    counter = iter(range(1, 10_000))
    counter_lock = threading.Lock()
    writer = CaptureWriter(path, HEADER)

    def work() -> None:
        for _ in range(25):
            with counter_lock:  # number and append together, as the recorder must
                number = next(counter)
                writer.append(Exchange(number, SEND, _post(b'{"k":"' + b"x" * 500 + b'"}'), None))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    writer.close()
    numbers = [exchange.number for exchange in read_capture(path).exchanges]
    assert numbers == list(range(1, 201))


def test_writer_never_truncates_a_capture_with_exchanges(tmp_path: Path) -> None:
    path = tmp_path / "kept.http"
    first = Exchange(1, SEND, _post(b"{}"), Response(200, "OK"))
    with CaptureWriter(path, HEADER) as writer:
        writer.append(first)
    before = path.read_bytes()
    with pytest.raises(CaptureExistsError):
        CaptureWriter(path, HEADER)
    assert path.read_bytes() == before
    notes = tmp_path / "notes.txt"
    notes.write_text("not a capture\n")
    with pytest.raises(CaptureExistsError):
        CaptureWriter(notes, HEADER)
    header_only = tmp_path / "header-only.http"
    CaptureWriter(header_only, HEADER).close()
    CaptureWriter(header_only, HEADER).close()  # nothing recorded yet: fine to start again
    with CaptureWriter(path, HEADER, overwrite=True):
        pass
    assert read_capture(path).exchanges == ()


def test_writer_resumes_after_the_last_exchange(tmp_path: Path) -> None:
    path = tmp_path / "resumed.http"
    with CaptureWriter(path, HEADER) as writer:
        writer.append(Exchange(4, SEND, _post(b"{}"), None))
    with CaptureWriter.resume(path) as writer:
        assert writer.last_number == 4
        with pytest.raises(ValueError, match="increase"):
            writer.append(Exchange(4, SEND, _post(b"{}"), None))
        writer.append(Exchange(5, SEND, _post(b'{"n":5}'), None))
        assert writer.sync(timeout=10)
    assert [e.number for e in read_capture(path).exchanges] == [4, 5]
    damaged = tmp_path / "damaged.http"
    damaged.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(CaptureParseError):
        CaptureWriter.resume(damaged)


def test_writer_syncs_off_the_appending_thread(tmp_path: Path) -> None:
    path = tmp_path / "synced.http"
    with CaptureWriter(path, HEADER) as writer:
        for number in range(1, 51):
            writer.append(Exchange(number, SEND, _post(b"{}"), None))
        assert writer.sync(timeout=10)
        assert writer._synced == writer._written == 51  # the header, then 50 exchanges


def test_write_and_read_capture(tmp_path: Path) -> None:
    path = tmp_path / "whole.http"
    case = CASES[-3][1]
    write_capture(path, case)
    assert read_capture(path) == case
    assert path.read_bytes() == render(case).encode()
    assert [p.name for p in tmp_path.iterdir()] == ["whole.http"]


def test_read_capture_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.http"
    path.write_bytes(b"# a2a-recorder capture format 2\n\xff\n")
    with pytest.raises(CaptureParseError) as info:
        read_capture(path)
    assert info.value.filename == str(path)
    assert info.value.line == 2
    assert str(info.value).startswith(f"{path}:2: ")


# --- Hypothesis ----------------------------------------------------------------------------

# Any code point, lone surrogates and controls included: every value the model can hold must
# be written and read back.
_char = st.characters(exclude_categories=())
_text = st.text(_char, max_size=20)
_line = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=30)
_any_line = st.one_of(_line, st.text(_char, max_size=30))
_token = st.from_regex(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,12}", fullmatch=True)
_framing = st.sampled_from(["Content-Length", "content-encoding", "Transfer-Encoding"])
_headers = st.lists(
    st.tuples(st.one_of(_token, _token.map(lambda t: ":" + t.lower()), _framing), _any_line),
    max_size=4,
).map(tuple)
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def _json_text(draw: st.DrawFn) -> str:
    value = draw(_json_values)
    separators = draw(st.sampled_from([(",", ":"), (", ", ": "), (",", ": ")]))
    # A lone surrogate only travels escaped (`"\\ud800"`, valid JSON text).
    ascii_only = draw(st.booleans()) or not _utf8_ok(json.dumps(value, ensure_ascii=False))
    text = json.dumps(value, separators=separators, ensure_ascii=ascii_only)
    return text + ("\n" if draw(st.booleans()) else "")


def _utf8_ok(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_bodies = st.one_of(
    st.just(b""),
    st.binary(max_size=100),
    _text.map(lambda t: t.encode("utf-8", "surrogatepass")),
    _json_text().map(str.encode),
    st.sampled_from([b"HTTP/1.1 200 OK\n", b"### 1\n", b"\n", b"a\n\n", b"GET / HTTP/1.1"]),
)
_sse_lines = st.one_of(
    _line,
    st.sampled_from([": ping", "event: error", "id: 7", "", "### x", ": +1.000000s", "data:"]),
    _json_text().filter(lambda t: "\n" not in t).map(lambda t: "data: " + t),
)
_offsets = st.integers(-(10**9), 10**12)
_events = st.lists(
    st.builds(SseEvent, _offsets, st.lists(_sse_lines, max_size=4).map(tuple)),
    min_size=1,
    max_size=4,
).map(tuple)
_type_names = st.one_of(st.none(), st.sampled_from(["lf.a2a.v1.Task", "lf.a2a.v1.StreamResponse"]))
_messages = st.lists(
    st.one_of(
        st.builds(
            GrpcMessage,
            _offsets,
            json=st.one_of(_json_text(), _text),
            compressed=st.booleans(),
            type_name=_type_names,
        ),
        st.builds(
            GrpcMessage,
            _offsets,
            raw=st.binary(max_size=40),
            compressed=st.booleans(),
            type_name=_type_names,
        ),
    ),
    max_size=3,
).map(tuple)
_versions = st.sampled_from(["HTTP/1.1", "HTTP/2", "HTTP/1.0"])


@st.composite
def _responses(draw: st.DrawFn) -> Response | None:
    if draw(st.integers(0, 5)) == 0:
        return None
    common: dict[str, Any] = {
        "status": draw(st.integers(100, 599)),
        "reason": draw(
            st.one_of(st.sampled_from(["", "OK", "Not Found", " odd ", "Zoë"]), _any_line)
        ),
        "headers": draw(_headers),
        "http_version": draw(_versions),
        "newline": draw(st.sampled_from(["\n", "\r\n", "\r"])),
    }
    kind = draw(st.sampled_from(["body", "events", "grpc"]))
    if kind == "events":
        return Response(**common, events=draw(_events))
    if kind == "grpc":
        trailers = draw(
            st.lists(st.tuples(_token.map(str.lower), _any_line), max_size=3).map(tuple)
        )
        return Response(**common, messages=draw(_messages), trailers=trailers)
    return Response(**common, body=draw(_bodies))


_maybe_text = st.one_of(st.none(), _text)
_classifications = st.builds(
    Classification,
    binding=st.one_of(st.none(), st.sampled_from(list(Binding))),
    operation=st.one_of(st.none(), st.sampled_from(["SendMessage", "GetTask", "AgentCard"])),
    method=_maybe_text,
    version=st.one_of(st.none(), st.sampled_from(list(Version))),
    tenant=_maybe_text,
    task_id=_maybe_text,
    context_id=_maybe_text,
    config_id=_maybe_text,
    streaming=st.booleans(),
    error=_maybe_text,
    reason=_maybe_text,
)


@st.composite
def _requests(draw: st.DrawFn) -> Request:
    messages = draw(_messages) if draw(st.booleans()) else ()
    return Request(
        method=draw(st.sampled_from(["GET", "POST", "DELETE", "PATCH"])),
        target=draw(
            st.one_of(
                st.sampled_from(["/", "/a2a/jsonrpc/", "/tasks/abc?historyLength=2", "/x%20y"]),
                _any_line,
            )
        ),
        headers=draw(_headers),
        body=b"" if messages else draw(_bodies),
        http_version=draw(_versions),
        messages=messages,
    )


@st.composite
def captures(draw: st.DrawFn) -> Capture:
    numbers = sorted(set(draw(st.lists(st.integers(0, 500), max_size=4))))
    exchanges = tuple(
        Exchange(
            number=number,
            classification=draw(_classifications),
            request=draw(_requests()),
            response=draw(_responses()),
            started_us=draw(_offsets),
            duration_us=draw(st.integers(0, 10**10)),
            notes=tuple(draw(st.lists(_text, max_size=2))),
            error=draw(_maybe_text),
        )
        for number in numbers
    )
    return Capture(
        started=draw(_text),
        recorder_version=draw(_text),
        exchanges=exchanges,
        upstreams=tuple(draw(st.lists(_text, max_size=2))),
        redacted=tuple(draw(st.lists(_text, max_size=2))),
        extra=tuple(
            draw(
                st.lists(
                    st.tuples(st.from_regex(r"x-[a-z0-9.]{1,8}", fullmatch=True), _text), max_size=2
                )
            )
        ),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(captures())
def test_property_parse_inverts_render(capture: Capture) -> None:
    text = render(capture)
    assert text.endswith("\n") and "\r" not in text
    assert parse(text) == capture


@settings(max_examples=200, deadline=None)
@given(_bodies)
def test_property_every_body_restores_exactly(body: bytes) -> None:
    capture = _one(_post(body), Response(200, "OK", (), body))
    parsed = parse(render(capture))
    assert parsed.exchanges[0].request.body == body
    assert parsed.exchanges[0].response is not None
    assert parsed.exchanges[0].response.body == body


@settings(max_examples=300, deadline=None)
@given(_json_values, st.booleans())
def test_property_the_fast_pretty_display_is_json_dumps_indent_2(
    value: Any, ascii_only: bool
) -> None:
    from recorder.capture._bodies import _Indented

    document = json.loads(json.dumps(value))  # only what json.loads gives
    expected = json.dumps(document, indent=2, ensure_ascii=ascii_only)
    assert _Indented(ascii_only=ascii_only).text(document) == expected


# --- drafts: a capture written beside the one it may replace -------------------------------------


def test_a_draft_replaces_the_capture_in_one_rename(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "echo.http"
    draft = capture_pkg.draft_beside(path)
    assert draft.parent == path.parent and path.parent.is_dir()  # made if need be
    assert draft.name.startswith(".echo.http.") and draft != capture_pkg.draft_beside(path)
    capture_pkg.write_capture(path, HEADER)
    old = path.read_bytes()
    exchange = Exchange(1, SEND, _post(b"{}"), Response(200, "OK"))
    with CaptureWriter(draft, HEADER) as writer:
        writer.append(exchange)
    assert path.read_bytes() == old  # whole until the draft is promoted
    capture_pkg.promote(draft, path)
    assert read_capture(path).exchanges == (exchange,) and not draft.exists()


def test_a_draft_set_aside_keeps_what_it_holds(tmp_path: Path) -> None:
    path, kept = tmp_path / "echo.http", tmp_path / "echo.rejected.http"
    draft = capture_pkg.draft_beside(path)
    assert capture_pkg.set_aside(draft, kept) is False  # nothing written: nothing kept
    capture_pkg.write_capture(draft, HEADER)
    assert capture_pkg.set_aside(draft, kept) is True
    assert read_capture(kept) == HEADER and not draft.exists() and not path.exists()
    capture_pkg.remove_capture(kept)
    capture_pkg.remove_capture(kept)  # gone already: no error
    assert not kept.exists()


def test_the_pytest_plugin_leaves_files_to_the_capture_writer() -> None:
    """The plugin renames, removes and creates no file itself: the writer does (drafts)."""
    import ast

    sources = sorted(Path(capture_pkg.__file__).parents[1].glob("pytest_*.py"))  # the plugin's
    texts = [source.read_text(encoding="utf-8") for source in sources]
    trees = [ast.parse(text) for text in texts]
    calls = {
        node.func.attr
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    }
    touching = {"replace", "rename", "unlink", "mkdir", "write_bytes", "write_text", "rmdir"}
    file_calls = calls & touching - {"replace"}  # dataclasses.replace is no file operation
    assert file_calls == set()
    assert not any("os.replace" in text for text in texts)
