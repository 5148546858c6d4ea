"""HAR -> capture conversion, pure: HAR documents built in code, no files, no sockets."""

from __future__ import annotations

import base64
import json
import types
from typing import Any

import pytest

import recorder.convert
from recorder.capture import Request, Response, parse, render
from recorder.convert import ConvertError, Observed, convert, observed_from_har
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


def test_jsonrpc_entry_is_classified_and_timed() -> None:
    send = rpc("SendMessage", {"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}})
    late = entry(
        "POST",
        "/rpc",
        body=send,
        response={"jsonrpc": "2.0", "id": 1, "result": {}},
        started="2026-01-02T03:04:06.250+00:00",
    )
    result = convert(observed_from_har(har(entry("GET", "/favicon.ico", status=404), late)))
    (exchange,) = result.capture.exchanges
    assert (exchange.classification.operation, exchange.classification.binding) == (
        "SendMessage",
        Binding.JSONRPC,
    )
    assert exchange.number == 1 and result.skipped == 1
    assert exchange.started_us == 1_250_000 and exchange.duration_us == 12_500
    assert json.loads(exchange.request.body) == send
    assert result.capture.started == "2026-01-02T03:04:05.000000Z"
    assert result.capture.upstreams == (ORIGIN,)


def test_include_all_keeps_non_a2a() -> None:
    result = convert(
        observed_from_har(har(entry("GET", "/favicon.ico", status=404))), include_all=True
    )
    assert result.skipped == 0 and not result.capture.exchanges[0].classification.is_a2a


def test_card_interfaces_decide_the_tenant_once_seen() -> None:
    # Without the card, /rest/acme/tasks/t1 reads `acme` as a tenant under base /rest; the
    # card says /rest/acme is the interface base, so there is no tenant.
    tasks = entry("GET", "/rest/acme/tasks/t1", response={"id": "t1"})
    before = convert(observed_from_har(har(tasks))).capture.exchanges[0].classification
    card = entry("GET", "/.well-known/agent-card.json", response=CARD)
    after = convert(observed_from_har(har(card, tasks))).capture.exchanges[1].classification
    assert before.tenant == "acme"
    assert after.operation == "GetTask" and after.task_id == "t1" and after.tenant is None


def test_secrets_redacted_including_card_api_keys_seen_later() -> None:
    secret = [{"name": "Authorization", "value": "Bearer abc"}, {"name": "X-Key", "value": "k1"}]
    first = entry("GET", "/rest/acme/tasks/t1", headers=secret, response={"id": "t1"})
    card = entry("GET", "/.well-known/agent-card.json", response=CARD)
    observed = observed_from_har(har(first, card))
    redacted = convert(observed).capture
    assert redacted.exchanges[0].request.headers == (
        ("Authorization", "Bearer <redacted:1>"),
        ("X-Key", "<redacted:2>"),
    )
    assert redacted.redacted == ("Authorization", "X-Key")
    assert "redacted: Authorization, X-Key" in redacted.exchanges[0].notes
    kept = convert(observed, keep_secrets=True).capture
    assert kept.exchanges[0].request.header("X-Key") == "k1" and kept.redacted == ()


def test_event_stream_is_framed_with_crlf() -> None:
    stream = 'data: {"task": {"id": "t"}}\r\n\r\n: ping\r\n\r\ndata: {"statusUpdate": {}}\r\n\r\n'
    sse = entry(
        "POST", "/rpc", body=rpc("SendStreamingMessage", {"message": {}}),
        response_headers=[{"name": "Content-Type", "value": "text/event-stream; charset=utf-8"}],
        content={"mimeType": "text/event-stream", "text": stream},
    )  # fmt: skip
    (exchange,) = convert(observed_from_har(har(sse))).capture.exchanges
    response = exchange.response
    assert response is not None and response.body == b"" and response.newline == "\r\n"
    assert [e.lines for e in response.events] == [
        ('data: {"task": {"id": "t"}}',),
        (": ping",),
        ('data: {"statusUpdate": {}}',),
    ]
    assert all(e.offset_us == 0 for e in response.events)
    assert "SSE event times unknown (offsets 0)" in exchange.notes


def test_truncated_event_stream_keeps_the_partial_event() -> None:
    sse = entry(
        "POST", "/rpc", body=rpc("SendStreamingMessage", {"message": {}}),
        response_headers=[{"name": "Content-Type", "value": "text/event-stream"}],
        content={"text": "data: {\"a\": 1}\n\ndata: {\"b\""},
    )  # fmt: skip
    (exchange,) = convert(observed_from_har(har(sse))).capture.exchanges
    assert exchange.response is not None and len(exchange.response.events) == 2
    assert "stream truncated" in exchange.notes


def test_base64_content_and_encoding_note() -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}}).encode()
    e = entry(
        "POST", "/rpc", body=rpc("GetTask", {"id": "t"}),
        response_headers=[{"name": "Content-Encoding", "value": "gzip"}],
        content={"text": base64.b64encode(body).decode(), "encoding": "base64"},
    )  # fmt: skip
    (exchange,) = convert(observed_from_har(har(e))).capture.exchanges
    assert exchange.response is not None and exchange.response.body == body
    assert "gzip decoded" in exchange.notes


def test_no_response_is_an_error() -> None:
    e = entry("POST", "/rpc", body=rpc("GetTask", {"id": "t"}))
    e["response"] = {"status": 0, "headers": [], "content": {}, "_error": "connection refused"}
    (exchange,) = convert(observed_from_har(har(e))).capture.exchanges
    assert exchange.response is None and exchange.error == "connection refused"


def test_browser_details_pseudo_headers_and_versions() -> None:
    headers = [{"name": ":authority", "value": "agent.test"}, {"name": "accept", "value": "*/*"}]
    e = entry("GET", "/.well-known/agent-card.json?x=1", response=CARD, headers=headers)
    e["request"]["httpVersion"] = "h2"
    e["response"]["httpVersion"] = "http/2.0"
    (item,) = observed_from_har(har(e))
    assert item.request.headers == (("accept", "*/*"),)
    assert item.request.target == "/.well-known/agent-card.json?x=1"
    assert item.request.http_version == "HTTP/2.0"
    assert item.response is not None and item.response.http_version == "HTTP/2.0"


def test_https_default_port_in_origin() -> None:
    e = entry("GET", "/.well-known/agent-card.json", response=CARD)
    e["request"]["url"] = "https://agent.test/.well-known/agent-card.json"
    assert observed_from_har(har(e))[0].origin == "https://agent.test:443"


def test_converted_capture_round_trips_through_the_file_format() -> None:
    sse = entry(
        "POST", "/rpc", body=rpc("SendStreamingMessage", {"message": {}}),
        response_headers=[{"name": "Content-Type", "value": "text/event-stream"}],
        content={"text": "data: {}\n\n"},
    )  # fmt: skip
    card = entry("GET", "/.well-known/agent-card.json", response=CARD)
    capture = convert(observed_from_har(har(card, sse))).capture
    assert parse(render(capture)) == capture


def test_an_unwritable_exchange_is_reported_not_dropped_silently() -> None:
    e = entry("GET", "/.well-known/agent-card.json", response=CARD)
    e["request"]["headers"] = [{"name": "bad name", "value": "x"}]
    result = convert(observed_from_har(har(e, entry("GET", "/.well-known/agent-card.json"))))
    assert len(result.capture.exchanges) == 1 and result.capture.exchanges[0].number == 1
    assert len(result.problems) == 1 and "bad name" in result.problems[0]


def test_empty_input_gives_an_empty_capture() -> None:
    result = convert([])
    assert result.converted == 0 and result.skipped == 0


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
        observed_from_har(document)


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
        observed_from_har(mutate(key, value))


def test_exports_are_complete_and_sorted() -> None:
    names = recorder.convert.__all__
    assert names == sorted(names)
    assert all(hasattr(recorder.convert, n) for n in names)
    public = {
        n for n, v in vars(recorder.convert).items()
        if not n.startswith("_") and not isinstance(v, types.ModuleType)
    }  # fmt: skip
    assert public == set(names)


def test_a_secret_seen_late_is_swept_from_earlier_exchanges() -> None:
    def observed(request: Request, response: Response) -> Observed:
        return Observed("http://agent:1", request, response, 0.0, 0)

    echo = Request(
        "POST",
        "/a2a/jsonrpc",
        (),
        b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"late-token-12345"}}',
    )
    later = Request("POST", "/a2a/jsonrpc", (("Authorization", "Bearer late-token-12345"),))
    conversion = convert(
        [
            observed(echo, Response(200, body=b'{"echo": "late-token-12345"}')),
            observed(later, Response(200)),
        ],
        include_all=True,
    )
    first = conversion.capture.exchanges[0]
    assert b"late-token-12345" not in first.request.body and first.response is not None
    assert first.response.body == b'{"echo": "<redacted:1>"}'
