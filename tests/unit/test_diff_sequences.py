"""Event sequences aligned as sequences, on real corpus captures with one event edited.

Each test takes a capture the corpus recorded from a real SDK, inserts, removes or changes one
SSE event, gRPC message or push delivery in a copy, and checks the diff says exactly that.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from recorder.capture import Capture, Exchange, SseEvent, read_capture
from recorder.diff import DiffKind, PairKind, align_levels, diff_captures
from recorder.diff._align import StepKind

CORPUS = Path(__file__).resolve().parents[2] / "captures" / "a2a-python-1.3.0"


def _replace_exchange(capture: Capture, number: int, new: Exchange) -> Capture:
    return replace(
        capture, exchanges=tuple(new if x.number == number else x for x in capture.exchanges)
    )


def _stream(capture: Capture) -> Exchange:
    return next(
        x for x in capture.exchanges if x.classification.operation == "SendStreamingMessage"
    )


def _with_text(data: str, text: str) -> str:
    """An SSE data line's JSON-RPC status update, with the status message text replaced."""
    document = json.loads(data)
    status = document["result"]["statusUpdate"]["status"]
    status["message"] = {"messageId": "m-extra", "role": "ROLE_AGENT", "parts": [{"text": text}]}
    return json.dumps(document)


def _counted(capture_a: Capture, capture_b: Capture) -> list[tuple[DiffKind, str]]:
    result = diff_captures(capture_a, capture_b)
    return [(d.kind, d.path) for e in result.exchanges for d in e.differences if d.counts]


def test_an_sse_event_inserted_in_a_real_stream() -> None:
    a = read_capture(CORPUS / "05-streaming.http")
    stream = _stream(a)
    assert stream.response is not None
    events = list(stream.response.events)
    working = next(e for e in events if "TASK_STATE_WORKING" in e.lines[0])
    extra = SseEvent(
        working.offset_us + 1,
        ("data: " + _with_text(working.lines[0].removeprefix("data: "), "checking sources"),),
    )
    at = events.index(working) + 1
    events.insert(at, extra)
    b_stream = replace(stream, response=replace(stream.response, events=tuple(events)))
    b = _replace_exchange(a, stream.number, b_stream)
    assert _counted(a, b) == [(DiffKind.ADDED, f"events[{at}]")]


def test_an_sse_event_removed_from_a_real_stream() -> None:
    a = read_capture(CORPUS / "05-streaming.http")
    stream = _stream(a)
    assert stream.response is not None
    events = list(stream.response.events)
    del events[2]
    b_stream = replace(stream, response=replace(stream.response, events=tuple(events)))
    b = _replace_exchange(a, stream.number, b_stream)
    assert _counted(a, b) == [(DiffKind.REMOVED, "events[2]")]


def test_a_grpc_message_inserted_in_a_real_stream() -> None:
    a = read_capture(CORPUS / "grpc" / "05-streaming.http")
    stream = _stream(a)
    assert stream.response is not None
    messages = list(stream.response.messages)
    at, update = next(
        (i, m) for i, m in enumerate(messages) if m.json is not None and "statusUpdate" in m.json
    )
    document = json.loads(update.json or "")
    document["statusUpdate"]["status"]["message"] = {
        "messageId": "m-extra",
        "role": "ROLE_AGENT",
        "parts": [{"text": "checking sources"}],
    }
    messages.insert(at + 1, replace(update, json=json.dumps(document)))
    b_stream = replace(stream, response=replace(stream.response, messages=tuple(messages)))
    b = _replace_exchange(a, stream.number, b_stream)
    assert _counted(a, b) == [(DiffKind.ADDED, f"messages[{at + 1}]")]


def test_a_push_delivery_inserted_is_one_inserted_exchange() -> None:
    a = read_capture(CORPUS / "08-push-configs.http")
    deliveries = [x for x in a.exchanges if x.classification.operation == "PushDelivery"]
    assert len(deliveries) == 4
    first = next(x for x in deliveries if b"statusUpdate" in x.request.body)
    extra_body = json.loads(first.request.body)
    extra_body["statusUpdate"]["status"]["message"] = {
        "messageId": "m-extra",
        "role": "ROLE_AGENT",
        "parts": [{"text": "checking sources"}],
    }
    extra = replace(
        first,
        number=99,
        started_us=first.started_us + 1,
        request=replace(first.request, body=json.dumps(extra_body).encode()),
    )
    b = replace(a, exchanges=(*a.exchanges, extra))
    result = diff_captures(a, b)
    assert [
        (e.kind, e.operation, e.b) for e in result.exchanges if e.kind is not PairKind.SAME
    ] == [(PairKind.INSERTED, "PushDelivery", 99)]


def test_levels_pair_equal_content_first_then_what_is_carried() -> None:
    # content: A = a b c, B = a X b c'; signature: c and c' carry the same state.
    content_a, content_b = ["a", "b", "c"], ["a", "X", "b", "c2"]
    signature_a, signature_b = ["s", "w", "done"], ["s", "w", "w", "done"]
    steps = align_levels([content_a, signature_a], [content_b, signature_b], pair_rest=True).steps
    assert [(s.kind, s.a, s.b) for s in steps] == [
        (StepKind.PAIR, 0, 0),
        (StepKind.INSERTED, None, 1),
        (StepKind.PAIR, 1, 2),
        (StepKind.PAIR, 2, 3),
    ]
