"""Comparison of aligned exchanges: clean diffs, insertions, renames, statuses, framing, ignores."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from test_diff_factory import (
    JSON_HEADERS,
    body,
    capture,
    card,
    card_exchange,
    classification,
    exchange,
    get_task_exchange,
    grpc_get_task_exchange,
    ident,
    push_create_exchange,
    push_delete_exchange,
    send_exchange,
    session,
    stream_exchange,
    task_v1,
)

from recorder.capture import Exchange, Request, Response, SseEvent, parse
from recorder.diff import (
    CaptureDiff,
    Correspondence,
    Difference,
    DiffKind,
    ExchangeDiff,
    IgnorePattern,
    PairKind,
    describe,
    diff_captures,
)
from recorder.protocol import Binding, Version


def changed(result: CaptureDiff) -> list[ExchangeDiff]:
    return [e for e in result.exchanges if e.kind is not PairKind.SAME]


def paths(pair: ExchangeDiff, kind: DiffKind | None = None) -> list[str]:
    return [d.path for d in pair.differences if kind is None or d.kind is kind]


def one(a: Exchange, b: Exchange, **options: Any) -> ExchangeDiff:
    (pair,) = diff_captures(capture(a), capture(b), **options).exchanges
    return pair


def test_same_scenario_with_other_ids_timestamps_ports_is_clean() -> None:
    result = diff_captures(session("monday", port=8080), session("tuesday", port=41999))
    assert result.same
    assert changed(result) == []
    assert result.summary() == "5 exchanges compared, 0 differ, 0 inserted, 0 removed, 0 renames"


def test_one_extra_poll_is_one_insertion() -> None:
    result = diff_captures(session("a", polls=1), session("b", polls=2))
    assert [(e.kind, e.operation, e.b) for e in changed(result)] == [
        (PairKind.INSERTED, "GetTask", 4)
    ]
    assert result.count(PairKind.INSERTED) == 1 and result.count(PairKind.CHANGED) == 0
    assert not result.same


def test_one_missing_poll_is_one_removal() -> None:
    result = diff_captures(session("a", polls=3), session("b", polls=2))
    assert [(e.kind, e.a) for e in changed(result)] == [(PairKind.REMOVED, 5)]


def _v03_v1_pair() -> ExchangeDiff:
    a = capture(send_exchange(1, "old", 8080, version="0.3"))
    b = capture(send_exchange(1, "new", 9090, version="1.0"))
    (pair,) = diff_captures(a, b).exchanges
    return pair


def test_v03_vs_v10_is_summarised_as_renames() -> None:
    pair = _v03_v1_pair()
    texts = {r.text for r in pair.renames}
    assert "method renamed: message/send → SendMessage (v0.3 → v1.0)" in texts
    assert "enum form: completed → TASK_STATE_COMPLETED (v0.3 → v1.0)" in texts
    assert "kind discriminator replaced by wrapper member `task` (v0.3 → v1.0)" in texts
    assert "enum form: user → ROLE_USER (v0.3 → v1.0)" in texts
    assert {r.rule for r in pair.renames} >= {
        "method",
        "enum",
        "kind-wrapper",
        "part-kind",
        "version",
    }
    # Nothing in the bodies is left unexplained; the missing A2A-Version header is real.
    assert [p for p in paths(pair) if "body" in p] == []
    assert paths(pair) == ["request.header:a2a-version"]
    assert pair.kind is PairKind.CHANGED


def test_raw_differences_stay_available_under_the_renames() -> None:
    pair = _v03_v1_pair()
    raw = {d.path for d in pair.raw}
    assert {"request.body.method", "body.result.kind", "body.result.task"} <= raw
    by_rule = {r.rule: r for r in pair.renames}
    assert [d.path for d in by_rule["method"].raw] == ["request.body.method"]
    assert "body.result.task" in {d.path for d in by_rule["kind-wrapper"].raw}


def test_renames_read_backwards_when_b_is_the_old_version() -> None:
    a = capture(send_exchange(1, "new", 9090, version="1.0"))
    b = capture(send_exchange(1, "old", 8080, version="0.3"))
    (pair,) = diff_captures(a, b).exchanges
    texts = {r.text for r in pair.renames}
    assert "method renamed: SendMessage → message/send (v1.0 → v0.3)" in texts
    assert all(r.reverse for r in pair.renames)


def test_two_v03_captures_show_no_renames_only_the_real_change() -> None:
    a = send_exchange(1, "x", 8080, version="0.3")
    b = send_exchange(1, "y", 8080, version="0.3")
    payload = json.loads(b.response.body)  # type: ignore[union-attr]
    payload["result"]["status"]["state"] = "failed"
    b = replace(b, response=replace(b.response, body=body(payload)))  # type: ignore[arg-type]
    pair = one(a, b)
    assert pair.renames == ()
    assert [(d.path, d.old, d.new) for d in pair.differences] == [
        ("body.result.status.state", "completed", "failed")
    ]


def test_real_change_survives_translation() -> None:
    a = send_exchange(1, "x", 8080, version="0.3")
    b = send_exchange(1, "y", 8080, version="1.0")
    payload = json.loads(b.response.body)  # type: ignore[union-attr]
    payload["result"]["task"]["status"]["state"] = "TASK_STATE_FAILED"
    b = replace(b, response=replace(b.response, body=body(payload)))  # type: ignore[arg-type]
    pair = one(a, b)
    assert ("body.result.task.status.state", "TASK_STATE_COMPLETED", "TASK_STATE_FAILED") in [
        (d.path, d.old, d.new) for d in pair.differences
    ]


STATUS_CASES = [
    (
        "push-config create: py 200, js 201",
        push_create_exchange(1, "py", 8080, status=200),
        push_create_exchange(1, "js", 8081, status=201),
        [("status", 200, 201)],
    ),
    (
        "push-config delete: py 200 {}, js 204 empty",
        push_delete_exchange(1, "py", 8080, status=200),
        push_delete_exchange(1, "js", 8081, status=204),
        [("status", 200, 204), ("body", {}, "(absent)")],
    ),
]


@pytest.mark.parametrize(
    ("a", "b", "expected"), [c[1:] for c in STATUS_CASES], ids=[c[0] for c in STATUS_CASES]
)
def test_status_code_differences(
    a: Exchange, b: Exchange, expected: list[tuple[str, Any, Any]]
) -> None:
    pair = one(a, b)
    assert pair.kind is PairKind.CHANGED
    assert [
        (d.path, d.old, repr(d.new) if d.kind is DiffKind.REMOVED else d.new)
        for d in pair.differences
    ] == expected


def test_sse_framing_crlf_vs_lf_and_pings() -> None:
    pair = one(
        stream_exchange(1, "py", 8080, "\r\n", pings=2), stream_exchange(1, "js", 8080, "\n")
    )
    assert [(d.kind, d.path, d.old, d.new) for d in pair.differences] == [
        (DiffKind.FRAMING, "framing.newline", "CRLF", "LF"),
        (DiffKind.FRAMING, "framing.comments", 2, 0),
    ]


def test_sse_event_sequences_compare_by_event() -> None:
    a = stream_exchange(1, "a", 8080)
    b = stream_exchange(
        1, "b", 8080, states=("TASK_STATE_WORKING", "TASK_STATE_WORKING", "TASK_STATE_FAILED")
    )
    pair = one(a, b)
    # An extra WORKING update is inserted, and the last update (the outcome) is compared with
    # the last: COMPLETED became FAILED.  A's event 2 is B's event 3.
    assert [(d.kind, d.path) for d in pair.differences] == [
        (DiffKind.ADDED, "events[2]"),
        (DiffKind.CHANGED, "events[2~3].data.result.statusUpdate.status.state"),
    ]
    changed = pair.differences[1]
    assert (changed.old, changed.new) == ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED")
    assert IgnorePattern.parse("events[3].data").matches(changed)
    assert IgnorePattern.parse("events[*].data.result").matches(changed)
    assert not IgnorePattern.parse("events[1]").matches(changed)


def _with_events(x: Exchange, results: list[dict[str, Any]]) -> Exchange:
    """`x` (a stream) with one event per result, in the same JSON-RPC envelope."""
    assert x.response is not None
    envelope = json.loads(x.response.events[0].lines[0].removeprefix("data: "))
    events = tuple(
        SseEvent(i * 1000, ("data: " + json.dumps({**envelope, "result": r}),))
        for i, r in enumerate(results)
    )
    return replace(x, response=replace(x.response, events=events))


def _status(seed: str, state: str, text: str) -> dict[str, Any]:
    message = {"messageId": ident(seed, text), "role": "ROLE_AGENT", "parts": [{"text": text}]}
    status = {"state": state, "message": message}
    return {
        "statusUpdate": {
            "taskId": ident(seed, "task"),
            "contextId": ident(seed, "ctx"),
            "status": status,
        }
    }


def _eight(seed: str) -> list[dict[str, Any]]:
    steps = ["reading", "thinking", "drafting", "checking", "polishing", "formatting"]
    return [
        {"task": task_v1(seed, "TASK_STATE_SUBMITTED")},
        *(_status(seed, "TASK_STATE_WORKING", step) for step in steps),
        _status(seed, "TASK_STATE_COMPLETED", "done"),
    ]


@pytest.mark.parametrize("at", [1, 4, 7])
def test_one_inserted_event_is_one_insertion(at: int) -> None:
    a = _with_events(stream_exchange(1, "a", 8080), _eight("a"))
    b_events = _eight("b")
    b_events.insert(at, _status("b", "TASK_STATE_WORKING", "checking sources"))
    pair = one(a, _with_events(stream_exchange(1, "b", 8080), b_events))
    assert [(d.kind, d.path) for d in pair.differences] == [(DiffKind.ADDED, f"events[{at}]")]
    assert "checking sources" in json.dumps(pair.differences[0].new)


def test_one_removed_event_is_one_removal() -> None:
    a = _with_events(stream_exchange(1, "a", 8080), _eight("a"))
    shorter = _eight("b")
    del shorter[3]
    pair = one(a, _with_events(stream_exchange(1, "b", 8080), shorter))
    assert [(d.kind, d.path) for d in pair.differences] == [(DiffKind.REMOVED, "events[3]")]


def test_one_changed_event_is_one_change_in_place() -> None:
    a = _with_events(stream_exchange(1, "a", 8080), _eight("a"))
    changed = _eight("b")
    changed[5]["statusUpdate"]["status"]["message"]["parts"][0]["text"] = "polishing again"
    pair = one(a, _with_events(stream_exchange(1, "b", 8080), changed))
    assert [(d.kind, d.path, d.old, d.new) for d in pair.differences] == [
        (DiffKind.CHANGED, "events[5].data.result.statusUpdate.status.message.parts[0].text",
         "polishing", "polishing again"),
    ]  # fmt: skip


def test_key_order_is_no_difference_unless_strict() -> None:
    a = get_task_exchange(1, "a", 8080)
    payload = json.loads(a.response.body)  # type: ignore[union-attr]
    reordered = {k: payload[k] for k in ("result", "id", "jsonrpc")}
    b = replace(a, response=replace(a.response, body=body(reordered)))  # type: ignore[arg-type]
    pair = one(a, b)
    assert pair.kind is PairKind.SAME and pair.differences == () and pair.raw == ()
    strict = one(a, b, strict_order=True)
    assert strict.kind is PairKind.CHANGED
    assert [(d.kind, d.path, d.new, d.counts) for d in strict.differences] == [
        (DiffKind.KEY_ORDER, "body", ["result", "id", "jsonrpc"], True)
    ]
    assert "key order at body: jsonrpc, id, result → result, id, jsonrpc" in describe(
        strict.differences[0]
    )


def test_grpc_service_rename_enum_spelling_and_trailers() -> None:
    pair = one(
        grpc_get_task_exchange(1, "a", "a2a.v1", status="0"),
        grpc_get_task_exchange(1, "b", status="5"),
    )
    texts = {r.text for r in pair.renames}
    assert "gRPC service renamed: a2a.v1.A2AService → lf.a2a.v1.A2AService (v0.3 → v1.0)" in texts
    assert "enum form: TASK_STATE_CANCELLED → TASK_STATE_CANCELED (v0.3 → v1.0)" in texts
    assert ("trailer:grpc-status", "0", "5") in [(d.path, d.old, d.new) for d in pair.differences]


def test_rest_route_and_extension_header_renames() -> None:
    def rest(target: str, header: str) -> Exchange:
        version = "0.3" if "/v1/" in target else "1.0"  # as the classifier labels them
        c = classification("SendMessage", Binding.HTTP_JSON, version)
        headers = (("Content-Type", "application/json"), (header, "https://ext.example/v1"))
        return exchange(
            1, c, Request("POST", target, headers, b'{"message":{}}'), Response(200, body=b"{}")
        )

    pair = one(
        rest("/a2a/rest/v1/message:send", "X-A2A-Extensions"),
        rest("/a2a/rest/message:send", "A2A-Extensions"),
    )
    texts = {r.text for r in pair.renames}
    assert (
        "route renamed: /a2a/rest/v1/message:send → /a2a/rest/message:send (v0.3 → v1.0)" in texts
    )
    assert "header renamed: x-a2a-extensions → a2a-extensions (v0.3 → v1.0)" in texts
    assert pair.differences == ()


def test_a_v1_route_under_a_v1_base_path_is_no_rename() -> None:
    # A v1.0 agent mounted at /api/v1: its routes end like v0.3 ones, but they are not.
    def rest(target: str, version: str) -> Exchange:
        c = classification("CancelTask", Binding.HTTP_JSON, version)
        return exchange(1, c, Request("POST", target, JSON_HEADERS), Response(200, body=b"{}"))

    pair = one(rest("/api/v1/tasks/t1:cancel", "1.0"), rest("/api/tasks/t1:cancel", "1.0"))
    assert pair.renames == ()
    assert paths(pair) == ["request.target"]
    renamed = one(rest("/api/v1/tasks/t1:cancel", "0.3"), rest("/api/tasks/t1:cancel", "1.0"))
    assert [r.rule for r in renamed.renames] == ["route", "version"]
    assert paths(renamed) == []


def test_card_legacy_fields_are_a_rename() -> None:
    a = card_exchange(1, "py", 8080)
    hybrid = card(8080) | {
        "url": "http://127.0.0.1:8080/a2a/jsonrpc",
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3",
        "supportsAuthenticatedExtendedCard": False,
    }
    a = replace(a, response=replace(a.response, body=body(hybrid)))  # type: ignore[arg-type]
    pair = one(a, card_exchange(1, "js", 8080))
    assert {r.rule for r in pair.renames} == {"card-field"}
    assert paths(pair) == []


def test_missing_response() -> None:
    a = get_task_exchange(1, "a", 8080)
    pair = one(a, replace(a, response=None, error="connection reset"))
    assert [(d.path, d.new) for d in pair.differences] == [
        ("error", "connection reset"),
        ("response", pair.differences[1].new),
    ]
    assert pair.differences[1].kind is DiffKind.REMOVED


def test_timing_only_with_the_flag() -> None:
    a = stream_exchange(1, "a", 8080)
    late = tuple(replace(e, offset_us=e.offset_us + 400_000) for e in a.response.events)  # type: ignore[union-attr]
    b = replace(a, response=replace(a.response, events=late))  # type: ignore[arg-type]
    assert one(a, b).kind is PairKind.SAME
    timed = one(a, b, timing=True)
    assert timed.kind is PairKind.CHANGED
    assert {d.kind for d in timed.differences} == {DiffKind.TIMING}
    assert "events[1].offset_us" in paths(timed)


IGNORE_CASES = [
    ("status", "status", None, True),
    ("status", "request.target", None, False),
    ("header:ETag", "header:etag", None, True),
    ("header:etag", "request.header:etag", None, True),
    ("response.header:etag", "request.header:etag", None, False),
    ("request.header:etag", "request.header:etag", None, True),
    ("body.result.kind", "body.result.kind", "result.kind", True),
    ("body.result", "body.result.task.status.state", "result.task.status.state", True),
    ("body.result", "body.resultx", "resultx", False),
    (
        "$.result.task.metadata",
        "events[3].data.result.task.metadata.x",
        "result.task.metadata.x",
        True,
    ),
    ("$.result.task.metadata", "events[3].data.result.task.id", "result.task.id", False),
    ("events[*].data", "events[7].data.result", "result", True),
    ("events[2]", "events[7].data.result", "result", False),
    ("body.items[*].id", "body.items[4].id", "items[4].id", True),
    ("body.*.id", "body.task.id", "task.id", True),
    ("framing", "framing.newline", None, True),
    (
        "request.body.params.message.messageId",
        "request.body.params.message.messageId",
        "params.message.messageId",
        True,
    ),
]


@pytest.mark.parametrize(("pattern", "path", "json_path", "expected"), IGNORE_CASES)
def test_ignore_pattern_syntax(
    pattern: str, path: str, json_path: str | None, expected: bool
) -> None:
    diff = Difference(DiffKind.CHANGED, path, 1, 2, json_path)
    assert IgnorePattern.parse(pattern).matches(diff) is expected


@pytest.mark.parametrize("bad", ["", "body..x", "body[1", "  "])
def test_bad_ignore_patterns_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="bad ignore pattern"):
        IgnorePattern.parse(bad)


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("foo", "'foo' is not a keyword"),
        ("events.count", "'events' has no 'count'"),
        ("status.code", "'status' has nothing under it"),
        ("framing.crlf", "'framing' has no 'crlf'"),
        ("rename:enums", "no rename rule 'enums'"),
        ("header:", "needs a name after the colon"),
        ("request", "'request' is not a keyword"),
        ("response.foo", "'foo' is not a keyword"),
    ],
)
def test_unknown_ignore_keywords_are_refused_with_the_valid_ones(bad: str, why: str) -> None:
    with pytest.raises(ValueError, match="unknown ignore pattern") as raised:
        IgnorePattern.parse(bad)
    message = str(raised.value)
    assert why in message
    for keyword in (
        "status",
        "header:NAME",
        "events[N][.data.PATH]",
        "$.PATH",
        "rename:RULE",
        "key-order",
        "empty-defaults",
        "card-field",
    ):
        assert keyword in message


@pytest.mark.parametrize(
    "good",
    [
        "response",
        "request.method",
        "events[2~3].data",
        "messages[*].task",
        "trailer:grpc-message",
        "rename:*",
        "timing.duration_us",
        "$",
        "body",
    ],
)
def test_documented_patterns_parse(good: str) -> None:
    assert IgnorePattern.parse(good).text == good


def test_ignore_key_order_and_empty_defaults_keywords() -> None:
    a = get_task_exchange(1, "a", 8080)
    payload = json.loads(a.response.body)  # type: ignore[union-attr]
    reordered = {k: payload[k] for k in ("result", "id", "jsonrpc")}
    reordered["result"] = {**reordered["result"], "metadata": {}}
    b = replace(a, response=replace(a.response, body=body(reordered)))  # type: ignore[arg-type]
    strict = one(a, b, strict_order=True)
    assert {d.kind for d in strict.differences} == {DiffKind.KEY_ORDER, DiffKind.EMPTY_DEFAULT}
    quiet = one(a, b, strict_order=True, ignore=["key-order", "empty-defaults"])
    assert quiet.kind is PairKind.SAME and quiet.differences == ()


def test_ignore_makes_a_difference_disappear() -> None:
    a = push_create_exchange(1, "py", 8080, status=200)
    b = push_create_exchange(1, "js", 8080, status=201)
    assert one(a, b).kind is PairKind.CHANGED
    assert one(a, b, ignore=["status"]).kind is PairKind.SAME


def test_ignore_a_rename_rule() -> None:
    a = capture(send_exchange(1, "old", 8080, version="0.3"))
    b = capture(send_exchange(1, "new", 8080, version="1.0"))
    (pair,) = diff_captures(a, b, ignore=["rename:enum", "request.header:a2a-version"]).exchanges
    assert "enum" not in {r.rule for r in pair.renames}
    assert "method" in {r.rule for r in pair.renames}
    (everything,) = diff_captures(a, b, ignore=["rename:*", "request.header:a2a-version"]).exchanges
    assert everything.kind is PairKind.SAME


def test_different_operations_at_one_position_are_removal_plus_insertion() -> None:
    result = diff_captures(
        capture(get_task_exchange(1, "a", 8080)), capture(stream_exchange(1, "a", 8080))
    )
    assert [e.kind for e in result.exchanges] == [PairKind.REMOVED, PairKind.INSERTED]


def test_extra_poll_before_more_json_rpc_calls_does_not_cascade() -> None:
    # The extra poll brings a fresh JSON-RPC id, which shifts B's `<jsonrpc-id-N>` numbering.
    a = capture(
        send_exchange(1, "a", 8080),
        get_task_exchange(2, "a", 8080),
        stream_exchange(3, "a", 8080),
        get_task_exchange(4, "a", 8080),
    )
    b = capture(
        send_exchange(1, "b", 8080),
        get_task_exchange(2, "b", 8080),
        get_task_exchange(3, "b", 8080),
        stream_exchange(4, "b", 8080),
        get_task_exchange(5, "b", 8080),
    )
    result = diff_captures(a, b)
    # Which of two identical polls is "the extra one" is a free choice.
    assert [(e.kind, e.operation) for e in changed(result)] == [(PairKind.INSERTED, "GetTask")]


def test_an_id_used_where_the_other_capture_uses_a_different_one_is_a_difference() -> None:
    a = capture(send_exchange(1, "a", 8080), get_task_exchange(2, "a", 8080))
    b_poll = get_task_exchange(2, "b", 8080)
    other = ident("b", "someone-else")
    swapped = b_poll.request.body.replace(ident("b", "task").encode(), other.encode())
    b = capture(
        send_exchange(1, "b", 8080), replace(b_poll, request=replace(b_poll.request, body=swapped))
    )
    (_, poll) = diff_captures(a, b).exchanges
    assert [(d.path, d.old, d.new) for d in poll.differences] == [
        ("request.body.params.id", "<task-1>", "<task-2>")
    ]


@pytest.mark.parametrize(
    ("pairs", "expected"),
    [
        ([("<task-1>", "<task-2>"), ("/tasks/<task-1>", "/tasks/<task-2>")], [True, True]),
        ([("<task-1>", "<task-2>"), ("<task-1>", "<task-1>")], [True, False]),
        ([("<task-1>", "<task-2>"), ("<task-3>", "<task-2>")], [True, False]),
        ([("<task-1>", "<context-1>")], [False]),
        ([("a <task-1> b", "a <task-1> c")], [False]),
        ([("plain", "plain"), ("plain", "other")], [True, False]),
    ],
)
def test_placeholder_correspondence(pairs: list[tuple[str, str]], expected: list[bool]) -> None:
    ids = Correspondence()
    assert [ids.same(a, b) for a, b in pairs] == expected


def test_v03_grpc_resource_names_are_a_rename() -> None:
    pair = one(grpc_get_task_exchange(1, "a", "a2a.v1"), grpc_get_task_exchange(1, "b"))
    assert "resource name → ids: name → id (v0.3 → v1.0)" in {r.text for r in pair.renames}
    assert [p for p in paths(pair) if p.startswith("request.messages")] == []


def test_v03_stream_events_kind_and_final() -> None:
    v1 = stream_exchange(1, "new", 8080, states=("TASK_STATE_COMPLETED",))
    rpc = ident("new", "rpc1")  # the id the request carries
    task, ctx = ident("old", "task"), ident("old", "ctx")
    first = {"kind": "task", "id": task, "contextId": ctx, "status": {"state": "submitted"}}
    update = {
        "kind": "status-update",
        "taskId": task,
        "contextId": ctx,
        "status": {"state": "completed"},
        "final": True,
    }
    events = tuple(
        SseEvent(i, (f"data: {json.dumps({'jsonrpc': '2.0', 'id': rpc, 'result': r})}",))
        for i, r in enumerate((first, update))
    )
    request = replace(
        v1.request, body=v1.request.body.replace(b"SendStreamingMessage", b"message/stream")
    )
    v03 = replace(v1, request=request, response=replace(v1.response, events=events))  # type: ignore[arg-type]
    v03 = replace(v03, classification=replace(v03.classification, version=Version.V0_3))
    pair = one(v03, v1)
    texts = {r.text for r in pair.renames}
    assert "method renamed: message/stream → SendStreamingMessage (v0.3 → v1.0)" in texts
    assert "kind discriminator replaced by wrapper member `statusUpdate` (v0.3 → v1.0)" in texts
    assert "`final` removed from status updates (v0.3 → v1.0)" in texts
    assert "enum form: submitted → TASK_STATE_SUBMITTED (v0.3 → v1.0)" in texts
    # What is left is what the v1.0 task snapshot really carries beyond the v0.3 one.
    assert {p.split(".")[-1] for p in paths(pair) if p.startswith("events")} <= {
        "artifacts",
        "history",
        "timestamp",
    }


DEMO = Path(__file__).resolve().parents[1] / "data" / "sessions" / "demo-session-jsonrpc.http"


def test_a_recorded_session_against_itself_with_fresh_volatile_values() -> None:
    text = DEMO.read_text(encoding="utf-8")
    renamed = re.sub(
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32}",
        lambda m: (
            uuid.uuid5(uuid.NAMESPACE_URL, m.group(0)).hex[: len(m.group(0))]
            if len(m.group(0)) == 32
            else str(uuid.uuid5(uuid.NAMESPACE_URL, m.group(0)))
        ),
        text,
    )
    renamed = re.sub(r"127\.0\.0\.1:(\d+)", lambda m: f"127.0.0.1:{int(m.group(1)) + 7}", renamed)
    renamed = re.sub(
        r"(20\d\d-\d\d-\d\dT\d\d:)(\d\d)",
        lambda m: f"{m.group(1)}{(int(m.group(2)) + 1) % 60:02d}",
        renamed,
    )
    assert renamed != text
    result = diff_captures(parse(text, "a.http"), parse(renamed, "b.http"))
    assert [(e.label, e.operation, [d.path for d in e.differences]) for e in changed(result)] == []


def push_get_exchange(seed: str, version: str) -> Exchange:
    t, cfg, url = ident(seed, "task"), ident(seed, "cfg"), "http://127.0.0.1:9/webhook"
    if version == "0.3":
        method = "tasks/pushNotificationConfig/get"
        params = {"id": t, "pushNotificationConfigId": cfg}
        result: dict[str, Any] = {"taskId": t, "pushNotificationConfig": {"id": cfg, "url": url}}
    else:
        method, params = "GetTaskPushNotificationConfig", {"taskId": t, "id": cfg}
        result = {"taskId": t, "id": cfg, "url": url}
    rpc = ident(seed, "rpc")
    request = {"jsonrpc": "2.0", "id": rpc, "method": method, "params": params}
    return exchange(
        1,
        classification("GetTaskPushNotificationConfig", version=version, method=method),
        Request("POST", "/a2a/jsonrpc", (("Content-Type", "application/json"),), body(request)),
        Response(200, "OK", (("Content-Type", "application/json"),),
                 body({"jsonrpc": "2.0", "id": rpc, "result": result})),
    )  # fmt: skip


def test_v03_push_config_get_params_are_a_rename() -> None:
    pair = one(push_get_exchange("a", "0.3"), push_get_exchange("b", "1.0"))
    texts = {r.text for r in pair.renames}
    assert "push config: {id, pushNotificationConfigId} → {taskId, id} (v0.3 → v1.0)" in texts
    assert paths(pair) == []


def test_v10_push_config_params_are_left_alone() -> None:
    pair = one(push_get_exchange("a", "1.0"), push_get_exchange("b", "1.0"))
    assert pair.kind is PairKind.SAME and pair.renames == ()


def card_with(**fields: Any) -> Exchange:
    a = card_exchange(1, "py", 8080)
    return replace(a, response=replace(a.response, body=body(card(8080) | fields)))  # type: ignore[arg-type]


JSONRPC_EXTRA = {"transport": "JSONRPC", "url": "http://127.0.0.1:8080/a2a/jsonrpc"}
REST_EXTRA = {"transport": "HTTP+JSON", "url": "http://127.0.0.1:8080/a2a/rest"}
GRPC_EXTRA = {"transport": "GRPC", "url": "127.0.0.1:8081"}


def test_additional_interfaces_compare_by_transport_not_index() -> None:
    pair = one(
        card_with(additionalInterfaces=[JSONRPC_EXTRA, REST_EXTRA, GRPC_EXTRA]),
        card_with(additionalInterfaces=[REST_EXTRA, GRPC_EXTRA]),
    )
    assert [(d.kind, d.path) for d in pair.differences] == [
        (DiffKind.REMOVED, "body.additionalInterfaces[transport=JSONRPC]")
    ]


def test_keyed_list_members_compare_under_their_name_and_order_only_when_strict() -> None:
    moved = {**REST_EXTRA, "url": "http://127.0.0.1:8080/a2a/v2"}
    a = card_with(additionalInterfaces=[REST_EXTRA, GRPC_EXTRA])
    b = card_with(additionalInterfaces=[GRPC_EXTRA, moved])
    pair = one(a, b)
    assert paths(pair) == ["body.additionalInterfaces[transport=HTTP+JSON].url"]
    strict = one(a, b, strict_order=True)
    assert paths(strict, DiffKind.KEY_ORDER) == ["body.additionalInterfaces"]
    assert IgnorePattern.parse("body.additionalInterfaces[*].url").matches(pair.differences[0])


def test_lists_without_distinct_names_compare_by_index() -> None:
    twice = [REST_EXTRA, {**REST_EXTRA, "url": "http://127.0.0.1:8080/other"}]
    pair = one(card_with(additionalInterfaces=twice), card_with(additionalInterfaces=[REST_EXTRA]))
    assert paths(pair) == ["body.additionalInterfaces[1]"]


def test_v03_security_schemes_and_requirements_are_renames() -> None:
    v03 = {
        "securitySchemes": {
            "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
            "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
        },
        "security": [{"bearer": []}, {"key": ["read"]}],
        "skills": [
            {
                "id": "e",
                "name": "e",
                "description": "e",
                "tags": ["e"],
                "security": [{"key": ["read"]}],
            }
        ],
    }
    v10 = {
        "securitySchemes": {
            "bearer": {"httpAuthSecurityScheme": {"scheme": "bearer", "bearerFormat": "JWT"}},
            "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}},
        },
        "securityRequirements": [
            {"schemes": {"bearer": {"list": []}}},
            {"schemes": {"key": {"list": ["read"]}}},
        ],
        "skills": [
            {
                "id": "e",
                "name": "e",
                "description": "e",
                "tags": ["e"],
                "securityRequirements": [{"schemes": {"key": {"list": ["read"]}}}],
            }
        ],
    }
    pair = one(card_with(**v03), card_with(**v10))
    texts = {r.text for r in pair.renames}
    assert 'card field: "type":"http" → httpAuthSecurityScheme (v0.3 → v1.0)' in texts
    assert 'card field: "type":"apiKey" → apiKeySecurityScheme (v0.3 → v1.0)' in texts
    assert "card field: security → securityRequirements (v0.3 → v1.0)" in texts
    assert paths(pair) == []


def test_a_real_security_change_survives_the_translation() -> None:
    v03 = {"securitySchemes": {"key": {"type": "apiKey", "in": "query", "name": "k"}}}
    v10 = {
        "securitySchemes": {"key": {"apiKeySecurityScheme": {"location": "header", "name": "k"}}}
    }
    pair = one(card_with(**v03), card_with(**v10))
    (difference,) = pair.differences
    assert difference.path == "body.securitySchemes.key.apiKeySecurityScheme.location"
    assert (difference.old, difference.new) == ("query", "header")
