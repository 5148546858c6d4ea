"""Normalisation: volatile values become placeholders, consistently within one capture."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from test_diff_factory import capture, ident, session, stream_exchange

import recorder.diff as diff
from recorder.capture import Request, Response
from recorder.diff import (
    Body,
    IdKind,
    Normaliser,
    normalise_body,
    normalise_capture,
)
from recorder.protocol import decode_status_details

# (document observed and then normalised, expected result): one row per id-finding rule.
ID_CASES: list[tuple[str, Any, Any]] = [
    (
        "v1 task in a JSON-RPC result",
        {"jsonrpc": "2.0", "id": "r-1", "result": {"task": {"id": "t-1", "contextId": "c-1"}}},
        {
            "jsonrpc": "2.0",
            "id": "<jsonrpc-id-1>",
            "result": {"task": {"id": "<task-1>", "contextId": "<context-1>"}},
        },
    ),
    (
        "v0.3 task with kind",
        {"kind": "task", "id": "t-1", "status": {"state": "completed"}},
        {"kind": "task", "id": "<task-1>", "status": {"state": "completed"}},
    ),
    (
        "message ids and reference task ids",
        {"messageId": "m-1", "taskId": "t-1", "referenceTaskIds": ["t-2", "t-1"]},
        {
            "messageId": "<message-1>",
            "taskId": "<task-1>",
            "referenceTaskIds": ["<task-2>", "<task-1>"],
        },
    ),
    (
        "artifact id",
        {"artifactId": "a-77", "parts": [{"text": "x"}]},
        {"artifactId": "<artifact-1>", "parts": [{"text": "x"}]},
    ),
    (
        "v1 flat push config: id is the config id",
        {"id": "cfg-1", "taskId": "t-1", "url": "http://127.0.0.1:5001/hook", "token": "tok"},
        {
            "id": "<config-1>",
            "taskId": "<task-1>",
            "url": "http://<origin-1><webhook-1>",
            "token": "<token>",
        },
    ),
    (
        "v0.3 nested push config",
        {
            "taskId": "t-1",
            "pushNotificationConfig": {
                "id": "cfg-9",
                "url": "https://h:1/x",
                "authentication": {"credentials": "secret"},
            },
        },
        {
            "taskId": "<task-1>",
            "pushNotificationConfig": {
                "id": "<config-1>",
                "url": "https://<origin-1><webhook-1>",
                "authentication": {"credentials": "<credentials>"},
            },
        },
    ),
    (
        "v0.3 push-config get params: id is the task",
        {"id": "t-1", "pushNotificationConfigId": "cfg-1"},
        {"id": "<task-1>", "pushNotificationConfigId": "<config-1>"},
    ),
    (
        "v1 push-config get params: id is the config",
        {"taskId": "t-1", "id": "cfg-1"},
        {"taskId": "<task-1>", "id": "<config-1>"},
    ),
    (
        "GetTask params",
        {"id": "t-1", "historyLength": 2},
        {"id": "<task-1>", "historyLength": 2},
    ),
    (
        "skills keep their ids",
        {"skills": [{"id": "echo", "name": "echo", "tags": []}]},
        {"skills": [{"id": "echo", "name": "echo", "tags": []}]},
    ),
    (
        "v0.3 gRPC resource name",
        {"name": "tasks/t-1/pushNotificationConfigs/cfg-1"},
        {"name": "tasks/<task-1>/pushNotificationConfigs/<config-1>"},
    ),
    (
        "integer JSON-RPC ids only at their field",
        {"jsonrpc": "2.0", "id": 1, "result": {"task": {"id": "t-1", "historyLength": 1}}},
        {
            "jsonrpc": "2.0",
            "id": "<jsonrpc-id-1>",
            "result": {"task": {"id": "<task-1>", "historyLength": 1}},
        },
    ),
    (
        "timestamps, page tokens, signatures",
        {
            "status": {"timestamp": "2026-01-01T10:00:00.252581Z"},
            "nextPageToken": "abc",
            "signatures": [{"protected": "p", "signature": "zzz"}],
            "note": "at 2026-02-03T04:05:06Z ok",
        },
        {
            "status": {"timestamp": "<timestamp>"},
            "nextPageToken": "<page-token>",
            "signatures": [{"protected": "p", "signature": "<signature>"}],
            "note": "at <timestamp> ok",
        },
    ),
    (
        "an empty page token means the last page and stays",
        {"tasks": [], "nextPageToken": ""},
        {"tasks": [], "nextPageToken": ""},
    ),
    (
        "redaction placeholders lose their numbers",
        {"token": "<redacted:3>", "other": "Bearer <redacted:1>"},
        {"token": "<token>", "other": "Bearer <redacted>"},
    ),
    (
        "gRPC interface url is host:port",
        {"supportedInterfaces": [{"url": "127.0.0.1:50051", "protocolBinding": "GRPC"}]},
        {"supportedInterfaces": [{"url": "<origin-1>", "protocolBinding": "GRPC"}]},
    ),
]


@pytest.mark.parametrize(
    ("document", "expected"), [c[1:] for c in ID_CASES], ids=[c[0] for c in ID_CASES]
)
def test_ids_found_by_field_and_replaced(document: Any, expected: Any) -> None:
    n = Normaliser()
    n.observe_json(document)
    assert n.json(document) == expected


def test_same_value_same_placeholder_everywhere() -> None:
    n = Normaliser()
    n.observe_json({"task": {"id": "9f2c1e7a", "contextId": "ctx-42"}})
    assert n.text("Task 9f2c1e7a is in terminal state.") == "Task <task-1> is in terminal state."
    assert n.target("/a2a/rest/tasks/9f2c1e7a:cancel") == "/a2a/rest/tasks/<task-1>:cancel"
    assert (
        n.target("/tasks?contextId=ctx-42&pageSize=2") == "/tasks?contextId=<context-1>&pageSize=2"
    )
    assert n.json({"taskId": "9f2c1e7a"}) == {"taskId": "<task-1>"}


def test_placeholders_follow_first_seen_order() -> None:
    n = Normaliser()
    for task in ("zz-last-alphabetically", "aa-first-alphabetically", "zz-last-alphabetically"):
        n.observe_json({"taskId": task})
    assert n.text("aa-first-alphabetically") == "<task-2>"
    assert n.text("zz-last-alphabetically") == "<task-1>"


def test_short_and_numeric_ids_are_not_replaced_inside_text() -> None:
    n = Normaliser()
    n.observe_json({"jsonrpc": "2.0", "id": 1, "result": {"taskId": "t1"}})
    assert n.text("retry 1 of t1s") == "retry 1 of t1s"
    assert n.text("t1") == "<task-1>"  # a whole string equal to an id is still that id


def test_ids_in_path_are_discovered_before_bodies() -> None:
    n = Normaliser()
    n.observe_target("/v1/tasks/abcd-1234/pushNotificationConfigs/cfg-77?historyLength=3")
    assert n.target("/v1/tasks/abcd-1234/pushNotificationConfigs/cfg-77?historyLength=3") == (
        "/v1/tasks/<task-1>/pushNotificationConfigs/<config-1>?historyLength=3"
    )


def test_volatile_query_values() -> None:
    n = Normaliser()
    target = "/tasks?statusTimestampAfter=2026-01-01T00%3A00%3A00Z&pageToken=xyz&pageSize=5"
    assert (
        n.target(target)
        == "/tasks?statusTimestampAfter=<timestamp>&pageToken=<page-token>&pageSize=5"
    )


def test_webhook_path_token_matches_the_delivery_target() -> None:
    n = Normaliser()
    n.observe_json({"taskId": "t-1", "url": "http://127.0.0.1:38325/webhook/c902e26d88f5"})
    assert n.target("/webhook/c902e26d88f5") == "<webhook-1>"
    assert n.json({"url": "http://127.0.0.1:38325/webhook/c902e26d88f5", "token": "x"}) == {
        "url": "http://<origin-1><webhook-1>",
        "token": "<token>",
    }


def test_headers_drop_volatile_keep_schemes() -> None:
    n = Normaliser()
    headers = (
        ("Date", "Mon, 01 Jan 2026 10:00:00 GMT"),
        ("Content-Length", "12"),
        ("ETag", 'W/"abc"'),
        ("Host", "127.0.0.1:8080"),
        ("User-Agent", "httpx"),
        ("Server", "uvicorn"),
        ("Keep-Alive", "timeout=5"),
        (":authority", "127.0.0.1:50051"),
        ("Content-Type", "application/json"),
        ("Authorization", "Bearer s3cret"),
        ("X-A2A-Notification-Token", "tok-1"),
    )
    assert n.headers(headers) == (
        ("content-type", "application/json"),
        ("authorization", "Bearer <credentials>"),
        ("x-a2a-notification-token", "<token>"),
    )


def _status_details(message: str) -> str:
    from google.rpc import status_pb2

    status = status_pb2.Status(code=5, message=message)
    return base64.b64encode(status.SerializeToString()).decode().rstrip("=")


def test_grpc_status_details_are_compared_decoded() -> None:
    n = Normaliser()
    n.observe_json({"taskId": "task-0001"})
    trailers = (
        ("grpc-status", "5"),
        ("grpc-status-details-bin", _status_details("task-0001 not found")),
    )
    assert n.headers(trailers) == (
        ("grpc-status", "5"),
        ("grpc-status-details", '{"code":5,"message":"<task-1> not found","details":[]}'),
    )


def test_undecodable_status_details_are_dropped_not_fatal() -> None:
    assert decode_status_details("!!not base64!!") is None
    assert Normaliser().headers((("grpc-status-details-bin", "%%%"),)) == ()


BODY_CASES = [
    (b"", Body("empty")),
    (b'{"a": 1}', Body("json", {"a": 1})),
    (b'{"a": 1', Body("text", '{"a": 1')),  # malformed JSON stays visible as text
    (b"plain words", Body("text", "plain words")),
    (b"\xff\xfe\x00", Body("bytes", "<3 bytes sha256:")),
]


@pytest.mark.parametrize(
    ("data", "expected"), BODY_CASES, ids=["empty", "json", "broken", "text", "binary"]
)
def test_bodies_never_crash(data: bytes, expected: Body) -> None:
    got = normalise_body(data, Normaliser())
    assert got.kind == expected.kind
    if expected.kind == "bytes":
        assert got.value.startswith(expected.value)
    else:
        assert got.value == expected.value


def test_same_scenario_normalises_identically() -> None:
    a = normalise_capture(session("first", port=8080))
    b = normalise_capture(session("second", port=9999))
    assert a == b
    assert (
        a[1].response is not None and a[1].response.body.value["result"]["task"]["id"] == "<task-1>"
    )


def test_task_id_returned_then_used_reads_the_same() -> None:
    exchanges = normalise_capture(session("s", polls=2))
    send, poll = exchanges[1], exchanges[2]
    assert send.response is not None
    assert (
        poll.request.body.value["params"]["id"] == send.response.body.value["result"]["task"]["id"]
    )


def test_sse_events_and_ping_blocks() -> None:
    (normal,) = normalise_capture(capture(stream_exchange(1, "s", 8080, "\r\n", pings=2)))
    assert normal.response is not None
    assert normal.response.comment_blocks == 2
    assert [e.event for e in normal.response.events] == ["message"] * 3
    assert normal.response.events[0].data.value["id"] == "<jsonrpc-id-1>"
    assert normal.response.newline == "\r\n"


def test_error_text_with_id_seen_later_is_still_replaced() -> None:
    task = ident("s", "task")
    early = Request("POST", "/a2a/jsonrpc", body=b'{"jsonrpc":"2.0","id":1,"method":"X"}')
    error = (
        f'{{"jsonrpc":"2.0","id":1,"error":{{"code":-32001,"message":"Task {task} not found"}}}}'
    )
    from test_diff_factory import classification, exchange

    first = exchange(1, classification("GetTask"), early, Response(200, body=error.encode()))
    late = exchange(2, classification("GetTask", task_id=task), early, Response(200, body=b"{}"))
    normal = normalise_capture(capture(first, late))
    assert normal[0].response is not None
    assert normal[0].response.body.value["error"]["message"] == "Task <task-1> not found"


def test_id_kinds_cover_the_brief() -> None:
    assert {k.value for k in IdKind} >= {
        "task",
        "context",
        "message",
        "artifact",
        "config",
        "jsonrpc-id",
    }
    assert {
        "date",
        "content-length",
        "etag",
        "host",
        "user-agent",
        "keep-alive",
        "server",
        ":authority",
    } <= diff.VOLATILE_HEADERS


def test_lone_surrogates_in_events_and_grpc_messages_are_normalised_not_fatal() -> None:
    """A capture can hold text UTF-8 cannot (lone surrogates from `"\\ud800"` JSON escapes):
    event lines and proto-JSON are compared as text, never re-encoded."""
    from recorder.capture import Exchange, GrpcMessage, SseEvent
    from recorder.diff import diff_captures
    from recorder.protocol import classify

    def capture_with(mark: str) -> Any:
        request = Request(
            "POST",
            "/a2a/jsonrpc",
            (("content-type", "application/json"),),
            b'{"jsonrpc":"2.0","id":"\\ud801","method":"SendStreamingMessage",'
            b'"params":{"message":{"messageId":"\\udfff"}}}',
        )
        events = (
            SseEvent(0, (f'data: {{"jsonrpc":"2.0","id":1,"result":"{mark}"}}',)),
            SseEvent(5, (f"data: not json {mark}",)),
        )
        stream = Response(200, headers=(("content-type", "text/event-stream"),), events=events)
        grpc = Response(
            200,
            messages=(GrpcMessage(0, json=f'{{"message":"{mark}"}}'),),
            trailers=(("grpc-status", "0"),),
        )
        return capture(
            Exchange(1, classify(request, stream), request, stream),
            Exchange(2, classify(request, grpc), request, grpc),
        )

    result = diff_captures(capture_with("\ud800"), capture_with("\udc00"))
    changed = [(d.path, d.old, d.new) for e in result.exchanges for d in e.differences]
    assert ("events[0].data.result", "\ud800", "\udc00") in changed
    assert ("events[1].data", "not json \ud800", "not json \udc00") in changed
    assert ("messages[0].message", "\ud800", "\udc00") in changed
    assert diff_captures(capture_with("\ud800"), capture_with("\ud800")).same
