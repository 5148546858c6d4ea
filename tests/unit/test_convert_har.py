"""HAR -> capture conversion: HAR documents built in code, converted by the recorder's own
addons run offline (no sockets), into a capture file under tmp_path."""

from __future__ import annotations

import base64
import json
import types
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import recorder.convert
from recorder import Exit, OptionError
from recorder.capture import Capture, Exchange, parse, render
from recorder.cli import main
from recorder.convert import Conversion, ConvertError, convert, har_items
from recorder.protocol import Binding

ORIGIN = "http://agent.test:8080"
CARD = {
    "name": "t",
    "supportedInterfaces": [
        {"url": f"{ORIGIN}/rest/acme", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
    ],
    "securitySchemes": {"key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}}},
}


def entry(
    method: str,
    path: str,
    *,
    body: object = None,
    status: int = 200,
    response: object = None,
    headers: list[dict[str, str]] | None = None,
    response_headers: list[dict[str, str]] | None = None,
    content: dict[str, Any] | None = None,
    started: str = "2026-01-02T03:04:05.000+00:00",
) -> dict[str, Any]:
    request: dict[str, Any] = {
        "method": method,
        "url": ORIGIN + path,
        "httpVersion": "HTTP/1.1",
        "headers": headers or [{"name": "Content-Type", "value": "application/json"}],
    }
    if body is not None:
        request["postData"] = {"mimeType": "application/json", "text": json.dumps(body)}
    text = json.dumps(response) if response is not None else ""
    return {
        "startedDateTime": started,
        "time": 12.5,
        "request": request,
        "response": {
            "status": status,
            "statusText": "OK",
            "httpVersion": "HTTP/1.1",
            "headers": response_headers or [{"name": "Content-Type", "value": "application/json"}],
            "content": content or {"mimeType": "application/json", "text": text},
        },
    }


def har(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"log": {"version": "1.2", "creator": {"name": "test"}, "entries": list(entries)}}


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


@pytest.fixture
def out(tmp_path: Path) -> Path:
    return tmp_path / "converted.http"


def converted(document: dict[str, Any], out: Path, **options: bool) -> Conversion:
    return convert(har_items(document), out, **options)


def capture_of(document: dict[str, Any], out: Path, **options: bool) -> Capture:
    found = converted(document, out, **options).capture
    assert found is not None
    return found


def exchanges(document: dict[str, Any], out: Path, **options: bool) -> tuple[Exchange, ...]:
    return capture_of(document, out, **options).exchanges


def test_jsonrpc_entry_is_classified_and_timed(out: Path) -> None:
    send = rpc("SendMessage", {"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}})
    late = entry(
        "POST",
        "/rpc",
        body=send,
        response={"jsonrpc": "2.0", "id": 1, "result": {}},
        started="2026-01-02T03:04:06.250+00:00",
    )
    result = converted(har(entry("GET", "/favicon.ico", status=404), late), out)
    assert result.capture is not None and result.out == out
    (exchange,) = result.capture.exchanges
    assert (exchange.classification.operation, exchange.classification.binding) == (
        "SendMessage",
        Binding.JSONRPC,
    )
    assert exchange.number == 1 and result.skipped == 1 and result.converted == 1
    assert exchange.started_us == 1_250_000 and exchange.duration_us == 12_500
    assert json.loads(exchange.request.body) == send
    assert result.capture.started == "2026-01-02T03:04:05.000000Z"
    assert result.capture.upstreams == (ORIGIN,)


def test_include_all_keeps_non_a2a(out: Path) -> None:
    result = converted(har(entry("GET", "/favicon.ico", status=404)), out, include_all=True)
    assert result.skipped == 0 and result.capture is not None
    assert not result.capture.exchanges[0].classification.is_a2a


def test_card_interfaces_decide_the_tenant_once_seen(tmp_path: Path) -> None:
    # Without the card, /rest/acme/tasks/t1 reads `acme` as a tenant under base /rest; the
    # card says /rest/acme is the interface base, so there is no tenant.
    tasks = entry("GET", "/rest/acme/tasks/t1", response={"id": "t1"})
    before = exchanges(har(tasks), tmp_path / "a.http")[0].classification
    card = entry("GET", "/.well-known/agent-card.json", response=CARD)
    after = exchanges(har(card, tasks), tmp_path / "b.http")[1].classification
    assert before.tenant == "acme"
    assert after.operation == "GetTask" and after.task_id == "t1" and after.tenant is None


def test_secrets_redacted_including_card_api_keys_seen_later(tmp_path: Path) -> None:
    secret = [{"name": "Authorization", "value": "Bearer abc"}, {"name": "X-Key", "value": "k1"}]
    first = entry("GET", "/rest/acme/tasks/t1", headers=secret, response={"id": "t1"})
    card = entry("GET", "/.well-known/agent-card.json", response=CARD)
    document = har(first, card)
    redacted = capture_of(document, tmp_path / "redacted.http")
    assert redacted.exchanges[0].request.headers == (
        ("Authorization", "Bearer <redacted:1>"),
        ("X-Key", "<redacted:2>"),
    )
    assert redacted.redacted == ("Authorization", "X-Key")
    assert "redacted: Authorization, X-Key" in redacted.exchanges[0].notes
    kept = capture_of(document, tmp_path / "kept.http", keep_secrets=True)
    assert kept.exchanges[0].request.header("X-Key") == "k1" and kept.redacted == ()


def test_event_stream_is_framed_with_crlf(out: Path) -> None:
    stream = 'data: {"task": {"id": "t"}}\r\n\r\n: ping\r\n\r\ndata: {"statusUpdate": {}}\r\n\r\n'
    sse = entry(
        "POST", "/rpc", body=rpc("SendStreamingMessage", {"message": {}}),
        response_headers=[{"name": "Content-Type", "value": "text/event-stream; charset=utf-8"}],
        content={"mimeType": "text/event-stream", "text": stream},
    )  # fmt: skip
    (exchange,) = exchanges(har(sse), out)
    response = exchange.response
    assert response is not None and response.body == b"" and response.newline == "\r\n"
    assert [e.lines for e in response.events] == [
        ('data: {"task": {"id": "t"}}',),
        (": ping",),
        ('data: {"statusUpdate": {}}',),
    ]
    assert all(e.offset_us == 0 for e in response.events)
    assert "SSE event times unknown (offsets 0)" in exchange.notes


def test_event_times_from_the_entry(out: Path) -> None:
    sse = entry(
        "POST", "/rpc", body=rpc("SendStreamingMessage", {"message": {}}),
        response_headers=[{"name": "Content-Type", "value": "text/event-stream"}],
        content={"text": "data: {}\n\ndata: {}\n\n"},
    )  # fmt: skip
    start = 1767323045.0  # 2026-01-02T03:04:05Z
    sse["_eventSourceMessages"] = [{"time": start + 0.01}, {"time": start + 0.25}]
    (exchange,) = exchanges(har(sse), out)
    assert exchange.response is not None
    assert [e.offset_us for e in exchange.response.events] == [10_000, 250_000]
    assert "SSE event times unknown (offsets 0)" not in exchange.notes


def test_truncated_event_stream_keeps_the_partial_event(out: Path) -> None:
    sse = entry(
        "POST", "/rpc", body=rpc("SendStreamingMessage", {"message": {}}),
        response_headers=[{"name": "Content-Type", "value": "text/event-stream"}],
        content={"text": "data: {\"a\": 1}\n\ndata: {\"b\""},
    )  # fmt: skip
    (exchange,) = exchanges(har(sse), out)
    assert exchange.response is not None and len(exchange.response.events) == 2
    assert "stream truncated" in exchange.notes


def test_base64_content_and_encoding_note(out: Path) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}}).encode()
    e = entry(
        "POST", "/rpc", body=rpc("GetTask", {"id": "t"}),
        response_headers=[{"name": "Content-Encoding", "value": "gzip"}],
        content={"text": base64.b64encode(body).decode(), "encoding": "base64"},
    )  # fmt: skip
    (exchange,) = exchanges(har(e), out)
    assert exchange.response is not None and exchange.response.body == body
    assert "gzip decoded" in exchange.notes


def test_no_response_is_an_error(out: Path) -> None:
    e = entry("POST", "/rpc", body=rpc("GetTask", {"id": "t"}))
    e["response"] = {"status": 0, "headers": [], "content": {}, "_error": "connection refused"}
    (exchange,) = exchanges(har(e), out)
    assert exchange.response is None and exchange.error == "connection refused"


def test_browser_details_pseudo_headers_and_versions(out: Path) -> None:
    headers = [{"name": ":authority", "value": "agent.test"}, {"name": "accept", "value": "*/*"}]
    e = entry("GET", "/.well-known/agent-card.json?x=1", response=CARD, headers=headers)
    e["request"]["httpVersion"] = "h2"
    e["response"]["httpVersion"] = "http/2.0"
    (item,) = exchanges(har(e), out)
    assert item.request.headers == (("accept", "*/*"),)
    assert item.request.target == "/.well-known/agent-card.json?x=1"
    assert item.request.http_version == "HTTP/2.0"
    assert item.response is not None and item.response.http_version == "HTTP/2.0"


def test_https_default_port_in_origin(out: Path) -> None:
    e = entry("GET", "/.well-known/agent-card.json", response=CARD)
    e["request"]["url"] = "https://agent.test/.well-known/agent-card.json"
    assert capture_of(har(e), out).upstreams == ("https://agent.test:443",)


def test_converted_capture_round_trips_through_the_file_format(out: Path) -> None:
    sse = entry(
        "POST", "/rpc", body=rpc("SendStreamingMessage", {"message": {}}),
        response_headers=[{"name": "Content-Type", "value": "text/event-stream"}],
        content={"text": "data: {}\n\n"},
    )  # fmt: skip
    card = entry("GET", "/.well-known/agent-card.json", response=CARD)
    capture = capture_of(har(card, sse), out)
    assert parse(render(capture)) == capture


def test_an_exchange_the_format_cannot_hold_is_written_marked_and_said(out: Path) -> None:
    """As when recording live: a stand-in, marked, in its place; an error counted."""
    e = entry("GET", "/.well-known/agent-card.json", response=CARD)
    e["request"]["headers"] = [{"name": "bad name", "value": "x"}]
    result = converted(har(e, entry("GET", "/.well-known/agent-card.json")), out)
    assert result.capture is not None and [x.number for x in result.capture.exchanges] == [1, 2]
    assert any("bad name" in note for note in result.capture.exchanges[0].notes)
    assert len(result.problems) == 1 and "could not be written as recorded" in result.problems[0]


def test_nothing_to_convert_writes_nothing(out: Path) -> None:
    result = convert([], out)
    assert (result.converted, result.skipped, result.capture) == (0, 0, None)
    assert not out.exists()


DAMAGED: list[tuple[object, str]] = [
    ([], "no top-level 'log'"),
    ({"log": []}, "no top-level 'log'"),
    ({"log": {}}, "'log.entries' is missing"),
    ({"log": {"entries": {}}}, "not a list"),
    ({"log": {"entries": []}}, "no entries"),
    (har("x"), "entry 1: not an object"),  # type: ignore[arg-type]
    (har({"startedDateTime": "2026-01-01T00:00:00Z"}), "entry 1: request is missing"),
]


@pytest.mark.parametrize(("document", "words"), DAMAGED, ids=[w for _, w in DAMAGED])
def test_damaged_documents(document: object, words: str) -> None:
    with pytest.raises(ConvertError, match=words):
        har_items(document)


def mutate(key: str, value: object) -> dict[str, Any]:
    e = entry("GET", "/.well-known/agent-card.json", response=CARD)
    where, _, field = key.rpartition(".")
    target = e
    for part in filter(None, where.split(".")):
        target = target[part]
    target[field] = value
    return har(entry("GET", "/.well-known/agent-card.json", response=CARD), e)


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("request.url", "/relative", "entry 2: request.url '/relative' is not an absolute URL"),
        ("request.method", None, "entry 2: request: method is missing"),
        ("request.headers", "x", "entry 2: request.headers is not a list"),
        ("response.headers", [{"name": 1}], "entry 2: response.headers: an item lacks"),
        ("response.status", "200", "entry 2: response.status is missing"),
        ("response", None, "entry 2: response is missing"),
        ("startedDateTime", "yesterday", "entry 2: startedDateTime 'yesterday' is not ISO 8601"),
        ("response.content", {"text": "%%%", "encoding": "base64"}, "not valid base64"),
    ],
)
def test_damaged_entries_are_named(key: str, value: object, words: str) -> None:
    with pytest.raises(ConvertError, match=words.replace("'", ".").replace("(", r"\(")):
        har_items(mutate(key, value))


def test_an_out_the_recorder_refuses_is_named_as_each_caller_gives_it(tmp_path: Path) -> None:
    """The recorder's addons refuse the output; the error names `convert`'s `out` (Python)
    or `--out` (the command line), never mitmproxy's `a2a_out`."""
    document = har(entry("GET", "/.well-known/agent-card.json", response=CARD))
    out = tmp_path / "no" / "such" / "converted.http"
    with pytest.raises(OptionError, match=r"^out: its folder does not exist"):
        converted(document, out)
    source = tmp_path / "session.har"
    source.write_text(json.dumps(document))
    result = CliRunner().invoke(main, ["convert", str(source), "--out", str(out)])
    assert result.exit_code == Exit.ERROR
    assert f"error: --out: its folder does not exist: {out.parent}" in result.output
    assert "a2a_" not in result.output and "Traceback" not in result.output


def test_exports_are_complete_and_sorted() -> None:
    names = recorder.convert.__all__
    assert names == sorted(names)
    assert all(hasattr(recorder.convert, n) for n in names)
    public = {
        n for n, v in vars(recorder.convert).items()
        if not n.startswith("_") and not isinstance(v, types.ModuleType)
    }  # fmt: skip
    assert public == set(names)


def test_a_secret_seen_late_is_swept_from_earlier_exchanges(out: Path) -> None:
    echo = entry(
        "POST",
        "/a2a/jsonrpc",
        body=rpc("GetTask", {"id": "late-token-12345"}),
        response={"echo": "late-token-12345"},
    )
    later = entry(
        "POST",
        "/a2a/jsonrpc",
        headers=[{"name": "Authorization", "value": "Bearer late-token-12345"}],
        started="2026-01-02T03:04:06.000+00:00",
    )
    first = exchanges(har(echo, later), out, include_all=True)[0]
    assert b"late-token-12345" not in first.request.body and first.response is not None
    assert first.response.body == b'{"echo": "<redacted:1>"}'


# -- what the live recorder does, convert does (the same addons) -------------------------------


def test_junk_sent_to_a_learnt_jsonrpc_endpoint_is_recorded(out: Path) -> None:
    """A path that carried a known JSON-RPC operation is an A2A endpoint from then on: what
    a client sends there later is recorded even when it is not JSON (the classifier addon)."""
    send = entry("POST", "/rpc", body=rpc("GetTask", {"id": "t"}), response={"id": 1})
    junk = entry("POST", "/rpc", response={"error": {"code": -32700}})
    junk["request"]["postData"] = {"mimeType": "application/json", "text": "not json"}
    result = converted(har(send, junk), out)
    assert result.skipped == 0 and result.capture is not None
    assert [x.request.body for x in result.capture.exchanges][1] == b"not json"


def test_a_header_with_the_same_token_on_every_request_is_noted(out: Path) -> None:
    """The redaction addon's scan: a header no rule names, with the same high-entropy value on
    every request, is noted and warned about, as when recording live."""
    token = [{"name": "X-Session", "value": "f3a9c1e07b2d4e58a6c9d0e1f2a3b4c5d6e7f8091a2b"}]
    calls = [
        entry("POST", "/rpc", body=rpc("GetTask", {"id": f"t{n}"}), headers=token, response={})
        for n in range(4)
    ]
    result = converted(har(*calls), out)
    assert result.capture is not None
    notes = [note for x in result.capture.exchanges for note in x.notes]
    assert any(n.startswith("possible secret: header X-Session") for n in notes), notes
    assert any("X-Session" in warning for warning in result.warnings), result.warnings


def test_a_post_to_a_webhook_a_push_config_named_is_a_delivery(out: Path) -> None:
    """The push addon knows webhooks from push configs (as in forward mode): a POST there is a
    push delivery, though it carries no notification token."""
    config = {"taskId": "t1", "id": "c1", "url": "http://hook.test:9000/hook"}
    create = entry(
        "POST",
        "/rpc",
        body=rpc("CreateTaskPushNotificationConfig", config),
        response={"jsonrpc": "2.0", "id": 1, "result": config},
    )
    push = entry("POST", "/hook", body={"statusUpdate": {"taskId": "t1"}}, response={})
    push["request"]["url"] = "http://hook.test:9000/hook"
    capture = capture_of(har(create, push), out)
    assert [x.classification.operation for x in capture.exchanges] == [
        "CreateTaskPushNotificationConfig",
        "PushDelivery",
    ]
