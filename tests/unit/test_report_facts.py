"""The report's pure parts: what an answer says, an exchange's outcome, how text is shown."""

from __future__ import annotations

import dataclasses
import json

import pytest

from recorder._pages import printable
from recorder.capture import Exchange, GrpcMessage, Request, Response, SseEvent
from recorder.protocol import PUSH_DELIVERY, Binding, Classification
from recorder.protocol._answers import Answer, read_answer
from recorder.report._display import pretty_json, show_body
from recorder.report._facts import Lane, Tone, exchange_facts, short_id
from recorder.report._layout import LANE_X, place, timeline
from recorder.report._units import axis_step, axis_text, duration_text, offset_text

TASK_ID = "3f2a9c1e-0000-4000-8000-000000000001"

ANSWERS = [
    # v1.0 JSON-RPC, a task in a SendMessageResponse
    (
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"task": {"id": TASK_ID, "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}},
        },
        Answer("task", "INPUT_REQUIRED", TASK_ID),
    ),
    # v1.0 stream event, bare (HTTP+JSON, gRPC, push)
    (
        {"statusUpdate": {"taskId": TASK_ID, "status": {"state": "TASK_STATE_WORKING"}}},
        Answer("statusUpdate", "WORKING", TASK_ID),
    ),
    (
        {"artifactUpdate": {"taskId": TASK_ID, "artifact": {"name": "chunk-1"}}},
        Answer("artifactUpdate", None, TASK_ID, "chunk-1"),
    ),
    ({"message": {"messageId": "m", "role": "ROLE_AGENT"}}, Answer("message")),
    # v0.3: kind discriminators and lower-case states
    (
        {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {
                "kind": "status-update",
                "taskId": TASK_ID,
                "status": {"state": "input-required"},
            },
        },
        Answer("statusUpdate", "INPUT_REQUIRED", TASK_ID),
    ),
    (
        {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {"kind": "task", "id": TASK_ID, "status": {"state": "completed"}},
        },
        Answer("task", "COMPLETED", TASK_ID),
    ),
    # GetTask outside JSON-RPC: a bare Task (v0.3 proto-JSON spells CANCELLED: one state)
    (
        {"id": TASK_ID, "status": {"state": "TASK_STATE_CANCELLED"}},
        Answer("task", "CANCELED", TASK_ID),
    ),
    # errors, JSON-RPC and HTTP+JSON
    (
        {"jsonrpc": "2.0", "id": 4, "error": {"code": -32001, "message": "x"}},
        Answer("error", detail="-32001"),
    ),
    ({"error": {"code": 404, "status": "NOT_FOUND"}}, Answer("error", detail="NOT_FOUND")),
    # not A2A
    ({"hello": "world"}, Answer()),
    ([1, 2], Answer()),
]


@pytest.mark.parametrize(("document", "expected"), ANSWERS)
def test_read_answer(document: object, expected: Answer) -> None:
    found = read_answer(json.dumps(document))
    assert dataclasses.replace(found, raw_state=None) == expected


def test_read_answer_keeps_the_state_as_written() -> None:
    bare = {"id": TASK_ID, "status": {"state": "TASK_STATE_CANCELLED"}}
    assert read_answer(json.dumps(bare)).raw_state == "TASK_STATE_CANCELLED"
    v03 = {"kind": "status-update", "taskId": TASK_ID, "status": {"state": "input-required"}}
    assert read_answer(json.dumps(v03)).raw_state == "input-required"
    assert read_answer(json.dumps({"message": {"messageId": "m"}})).raw_state is None


def test_read_answer_of_non_json() -> None:
    assert read_answer(b"\xff\xfe") == Answer() and read_answer("") == Answer()


# ---- outcomes ----

SEND = Request("POST", "/a2a", (("Content-Type", "application/json"),), b"{}")


def _exchange(response: Response | None, c: Classification | None = None, **kw: object) -> Exchange:
    c = c or Classification(binding=Binding.JSONRPC, operation="SendMessage")
    return Exchange(1, c, SEND, response, **kw)  # type: ignore[arg-type]


def _json(document: object) -> bytes:
    return json.dumps(document).encode()


def _sse(*documents: object) -> Response:
    events = tuple(SseEvent(i * 1000, (f"data: {json.dumps(d)}",)) for i, d in enumerate(documents))
    return Response(200, events=events)


def _rpc(result: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 1, "result": result}


def _state(state: str) -> dict[str, object]:
    return {"statusUpdate": {"taskId": TASK_ID, "status": {"state": state}}}


OUTCOMES = [
    (_exchange(None, error="reset"), "no response", Tone.ERROR),
    (
        _exchange(
            Response(200), Classification(operation="SendMessage", error="TaskNotFoundError")
        ),
        "TaskNotFoundError",
        Tone.ERROR,
    ),
    (_exchange(Response(200, trailers=(("grpc-status", "5"),))), "NOT_FOUND", Tone.ERROR),
    (_exchange(Response(200, headers=(("grpc-status", "14"),))), "UNAVAILABLE", Tone.ERROR),
    (_exchange(Response(503)), "503", Tone.ERROR),
    (
        _exchange(
            _sse(
                _rpc({"task": {"id": TASK_ID, "status": {"state": "TASK_STATE_SUBMITTED"}}}),
                _rpc(_state("TASK_STATE_WORKING")),
                _rpc({"artifactUpdate": {}}),
                _rpc(_state("TASK_STATE_COMPLETED")),
            )
        ),
        "COMPLETED",
        Tone.OK,
    ),
    (_exchange(Response(200, body=_json(_rpc(_state("TASK_STATE_FAILED"))))), "FAILED", Tone.WARN),
    (_exchange(Response(200, body=_json(_rpc({"message": {}})))), "message", Tone.OK),
    (
        _exchange(_sse(_rpc(_state("TASK_STATE_WORKING"))), error="client closed"),
        "WORKING",
        Tone.WARN,
    ),
    (
        _exchange(
            Response(200, messages=(GrpcMessage(0, json="{}"),), trailers=(("grpc-status", "0"),))
        ),
        "OK",
        Tone.OK,
    ),
    (_exchange(Response(404), Classification(reason="no A2A route")), "404", Tone.ERROR),
    (_exchange(Response(200), Classification(reason="no A2A route")), "200", Tone.MUTED),
]


@pytest.mark.parametrize(("exchange", "outcome", "tone"), OUTCOMES)
def test_outcome(exchange: Exchange, outcome: str, tone: Tone) -> None:
    facts = exchange_facts(exchange)
    assert (facts.outcome, facts.tone) == (outcome, tone)


def test_a_push_delivery_goes_from_agent_to_webhook_and_says_what_it_delivered() -> None:
    delivery = Request("POST", "/webhook", body=_json(_state("TASK_STATE_WORKING")))
    c = Classification(binding=Binding.HTTP, operation=PUSH_DELIVERY)
    facts = exchange_facts(Exchange(3, c, delivery, Response(200)))
    assert (facts.source, facts.target, facts.is_push) == (Lane.AGENT, Lane.WEBHOOK, True)
    assert (facts.outcome, facts.tone, facts.task_id) == ("WORKING", Tone.OK, TASK_ID)
    refused = exchange_facts(Exchange(3, c, delivery, Response(500)))
    assert (refused.outcome, refused.tone) == ("500", Tone.ERROR)


def test_ticks_name_each_event_and_flags_the_notes_that_matter() -> None:
    working = f"data: {json.dumps(_state('TASK_STATE_WORKING'))}"
    response = Response(
        200,
        events=(
            SseEvent(0, (": ping",)),
            SseEvent(7, ("event: error", "data: {}")),
            SseEvent(9, (working,)),
        ),
    )
    facts = exchange_facts(
        _exchange(
            response,
            notes=("stream truncated", "gzip decoded", "possible secret: JWT in request body"),
        )
    )
    assert [(t.index, t.offset_us, t.label, t.tone) for t in facts.ticks] == [
        (0, 0, ": ping", Tone.MUTED),
        (1, 7, "event: error", Tone.ERROR),
        (2, 9, "statusUpdate WORKING", Tone.OK),
    ]
    assert [(f.word, f.tone) for f in facts.flags] == [("cut", Tone.WARN), ("secret?", Tone.ERROR)]


# ---- layout ----


def test_ticks_sit_on_the_arrow_and_the_bar_at_their_offsets() -> None:
    response = Response(
        200,
        events=(
            SseEvent(0, ("data: 1",)),
            SseEvent(50, ("data: 2",)),
            SseEvent(100, ("data: 3",)),
            SseEvent(400, ("data: 4",)),
        ),
    )
    first = exchange_facts(_exchange(Response(200), started_us=0, duration_us=100))
    stream = exchange_facts(_exchange(response, started_us=100, duration_us=100))
    axis = timeline([first, stream])
    row = place(stream, axis)
    assert (row.x1, row.x2) == (LANE_X[Lane.CLIENT] + 4, LANE_X[Lane.AGENT] - 4)
    xs = [p.x for p in row.arrow_ticks]
    assert xs[0] == row.x1 and xs[2] == row.x2 == xs[3]  # a late event stays on the arrow
    assert xs[1] == pytest.approx((row.x1 + row.x2) / 2)
    assert row.bar_x == pytest.approx(axis.x(100)) and axis.x(200) == pytest.approx(
        row.bar_x + row.bar_width
    )
    assert [p.x for p in row.bar_ticks][1] == pytest.approx(axis.x(150))


def test_a_zero_length_capture_still_has_an_axis() -> None:
    facts = exchange_facts(_exchange(Response(200)))
    axis = timeline([facts])
    assert axis.marks[0] == (axis.x(0), "0") and place(facts, axis).bar_width >= 2


# ---- text ----


def test_printable_escapes_lone_surrogates_and_controls_only() -> None:
    assert printable("a\ud800b\x00c\x85\td\ne\rf é 😀") == "a\\ud800b\\u0000c\\u0085\td\ne\rf é 😀"


def test_pretty_json_only_when_it_hides_nothing() -> None:
    assert pretty_json('{"a":1,"b":[true]}') == '{\n  "a": 1,\n  "b": [\n    true\n  ]\n}'
    assert pretty_json('{"a": "\\u00e9"}') == '{\n  "a": "é"\n}'  # ascii form: still exact
    assert pretty_json('{"a":1.00}') is None  # 1.00 would show as 1.0
    assert pretty_json('{"a":1,"a":2}') is None  # a duplicate key would vanish
    assert pretty_json('{\n  "a": 1\n}') is None and pretty_json("nope") is None


def test_bodies_that_are_not_text_show_as_base64() -> None:
    body = show_body(b"\x00\x01binary")
    assert body is not None and body.form == "base64" and "binary, 8 bytes" in (body.note or "")
    utf8 = show_body(b"\xff")
    assert utf8 is not None and "not UTF-8" in (utf8.note or "")
    assert show_body(b"") is None


def test_units() -> None:
    assert offset_text(1_250_000) == "+1.250000s" and offset_text(-5) == "-0.000005s"
    assert [duration_text(us) for us in (400, 14_000, 1_234_000, 123_000_000)] == [
        "0.4 ms",
        "14 ms",
        "1.23 s",
        "2 min 3 s",
    ]
    assert axis_step(1_230_000) == 200_000 and axis_step(0) == 1
    assert [axis_text(us) for us in (0, 250_000, 1_500_000, 120_000_000)] == [
        "0",
        "250 ms",
        "1.5 s",
        "2 min",
    ]
    assert short_id(TASK_ID) == "3f2a9c1e…" and short_id("abc") == "abc" and short_id(None) == ""


def test_exports_are_complete_and_sorted() -> None:
    import recorder.report

    assert recorder.report.__all__ == sorted(recorder.report.__all__)
    assert all(hasattr(recorder.report, name) for name in recorder.report.__all__)
