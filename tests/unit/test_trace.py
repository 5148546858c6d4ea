"""A session as spans (`recorder.export.trace_plan`): parents, ids, attributes; and the W3C
trace context as `show` and the report page show it.  Synthetic captures, no sockets."""

from __future__ import annotations

import json
import random
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recorder._errors import InputError
from recorder.capture import Capture, Exchange, Request, Response, SseEvent
from recorder.export import otlp_json, otlp_request, span_id, trace_plan
from recorder.protocol import classify
from recorder.report import render_report
from recorder.show import capture_rows, render_table

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def _x(n: int, host: str, body: object, start_ms: int, ms: int, **headers: str) -> Exchange:
    request = Request(
        "POST",
        "/a2a/jsonrpc",
        (("Host", host), ("Content-Type", "application/json"), *headers.items()),
        json.dumps(body).encode(),
    )
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"task": {"id": "t-1", "contextId": "c-1",
              "status": {"state": "TASK_STATE_COMPLETED"}}}}  # fmt: skip
    response = Response(
        200, "OK", (("Content-Type", "application/json"),), json.dumps(answer).encode()
    )
    c = classify(request, response)
    return Exchange(n, c, request, response, start_ms * 1000, ms * 1000)


def _send(text: str) -> dict[str, object]:
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}
    return {"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {"message": message}}


def _capture(*exchanges: Exchange, started: str = "2026-01-01T00:00:00.000000Z") -> Capture:
    return Capture(started, "test", exchanges)


def _delivery(n: int, start_ms: int) -> Exchange:
    body = {
        "statusUpdate": {
            "taskId": "t-1",
            "contextId": "c-1",
            "status": {"state": "TASK_STATE_COMPLETED"},
        }
    }
    headers = (("Host", "127.0.0.1:7000"), ("X-A2A-Notification-Token", "x"))
    request = Request("POST", "/hook", headers, json.dumps(body).encode())
    return Exchange(
        n, classify(request, Response(200)), request, Response(200), start_ms * 1000, 1000
    )


def _session() -> list[tuple[str, Capture]]:
    boss = _capture(_x(1, "127.0.0.1:1000", _send("plan"), 0, 100))
    worker = _capture(
        _x(1, "127.0.0.1:2000", _send("echo"), 5, 20),  # inside the boss's call
        _x(2, "127.0.0.1:2000", _send("echo"), 150, 10),  # after it: a root
        _x(3, "127.0.0.1:2000", _send("echo"), 30, 10, traceparent=TRACEPARENT),
        started="2026-01-01T00:00:00.010000Z",  # its clock starts 10 ms later
    )
    hooks = _capture(_delivery(1, 50))
    return [("boss.http", boss), ("worker.http", worker), ("hooks.http", hooks)]


def test_parents_come_from_traceparent_the_task_or_the_open_call() -> None:
    plans = {(p.attributes["a2a_recorder.capture"], p.attributes["a2a_recorder.exchange"]): p
             for p in trace_plan(_session())}  # fmt: skip
    boss = plans["boss.http", 1]
    assert (boss.parent_id, boss.attributes["a2a_recorder.parent"]) == (None, "none")
    inner = plans["worker.http", 1]
    assert inner.parent_id == boss.span_id and inner.trace_id == boss.trace_id
    assert (inner.service, inner.attributes["a2a_recorder.parent"]) == (
        "127.0.0.1:1000",
        "open-request",
    )
    assert inner.start_ns - boss.start_ns == 15_000_000  # on one clock: 10 ms + 5 ms
    later = plans["worker.http", 2]
    assert later.parent_id is None and later.trace_id == boss.trace_id  # the session's trace
    sent = plans["worker.http", 3]
    assert sent.trace_id == 0x4BF92F3577B34DA6A3CE929D0E0E4736
    assert sent.parent_id == 0x00F067AA0BA902B7
    assert sent.attributes["a2a_recorder.parent"] == "traceparent"
    assert sent.attributes["a2a_recorder.traceparent"] == TRACEPARENT
    delivery = plans["hooks.http", 1]
    assert delivery.attributes["a2a_recorder.parent"] == "task"
    assert delivery.parent_id == sent.span_id  # the latest call that named task t-1 before it
    assert delivery.service == "127.0.0.1:2000"


def test_a2a_attributes_follow_the_proposal() -> None:
    plan = trace_plan([_session()[0]])[0]
    assert plan.name == "SendMessage"
    assert {k: v for k, v in plan.attributes.items() if k.startswith(("a2a.", "jsonrpc."))} == {
        "a2a.method.name": "SendMessage",
        "a2a.protocol.binding": "JSONRPC",
        "a2a.protocol.version": "1.0",
        "a2a.task.id": "t-1",
        "a2a.context.id": "c-1",
        "a2a.task.state": "TASK_STATE_COMPLETED",
        "jsonrpc.request.id": "7",
    }


def test_stream_events_that_come_together_are_one_batch() -> None:
    update = {"statusUpdate": {"taskId": "t-1", "status": {"state": "TASK_STATE_WORKING"}}}
    data = "data: " + json.dumps({"jsonrpc": "2.0", "id": 1, "result": update})
    events = tuple(SseEvent(at, (data,)) for at in (0, 1000, 200_000, 201_000, 900_000))
    x = _x(1, "a:1", _send("slow"), 0, 1000)
    stream = Exchange(1, x.classification, x.request, Response(200, events=events), 0, 1_000_000)
    batches = [p for p in trace_plan([("s.http", _capture(stream))]) if p.internal]
    assert [len(b.events) for b in batches] == [2, 2, 1]
    assert [b.events[0][1] - batches[0].start_ns for b in batches] == [0, 200_000_000, 900_000_000]


@given(st.randoms())
def test_ids_are_the_captures_own_whatever_the_order(rng: random.Random) -> None:
    session = _session()
    shuffled = list(session)
    rng.shuffle(shuffled)
    key = lambda p: (p.span_id, p.parent_id, p.trace_id)  # noqa: E731
    assert sorted(map(key, trace_plan(shuffled))) == sorted(map(key, trace_plan(session)))
    assert span_id("boss.http", 1) == trace_plan(session)[0].span_id


def test_otlp_json_has_hex_ids_and_the_same_spans() -> None:
    pytest.importorskip("opentelemetry.sdk")
    plans = trace_plan(_session())
    document = otlp_json(otlp_request(plans))
    spans = [s for r in document["resourceSpans"] for ss in r["scopeSpans"] for s in ss["spans"]]
    assert sorted(s["spanId"] for s in spans) == sorted(f"{p.span_id:016x}" for p in plans)
    assert {s["traceId"] for s in spans} == {f"{p.trace_id:032x}" for p in plans}
    assert all(s["kind"] == 3 for s in spans)  # client spans


def test_show_and_the_report_show_the_trace_context() -> None:
    capture = _session()[1][1]
    rows = capture_rows(capture)
    assert [r["traceparent"] for r in rows] == [None, None, TRACEPARENT]
    assert render_table(rows).splitlines()[-1] == f"#3: traceparent {TRACEPARENT}"
    assert f"<dt>traceparent</dt><dd>{TRACEPARENT}</dd>" in render_report(capture)


def test_without_the_otlp_extra_the_export_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)  # as if not installed
    with pytest.raises(InputError, match=r"pip install 'a2a-recorder\[otlp\]'"):
        otlp_request(trace_plan(_session()))
