"""Fault profiles on replay, with no sockets: specs read from the table, answers as a faulted
network gives them, the state left for a retry, and a cut stream continued by SubscribeToTask.

The captures are the corpus's real ones (a2a-sdk 1.3.0 on JSON-RPC and gRPC); each live
request is the recorded one sent back as written, so an answer without a fault is exactly the
recorded one and every difference is the fault's.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from recorder import Exit, OptionError
from recorder._errors import exit_status
from recorder.capture import Capture, Exchange, Request, read_capture
from recorder.options import REPLAY
from recorder.protocol import FaultStatus as Status
from recorder.protocol import event_data, fold_task, parse_json
from recorder.protocol._grpc import encode_message
from recorder.replay import (
    FAULT_KINDS,
    FaultSpec,
    FaultSpecError,
    Fleet,
    HttpAnswer,
    Replayer,
    ReplayService,
    Served,
    parse_fault,
    read_faults,
)
from recorder.replay.core._grpcanswer import GrpcAnswer, live_request

ROOT = Path(__file__).resolve().parents[2] / "captures" / "a2a-python-1.3.0"
STREAM = ROOT / "05-streaming.http"
GRPC_STREAM = ROOT / "grpc" / "05-streaming.http"
SEND = ROOT / "03-blocking-task.http"
UNAVAILABLE = 14


def capture(path: Path) -> Capture:
    return read_capture(path)


def service(path: Path, *specs: str) -> tuple[ReplayService, Capture]:
    found = capture(path)
    return ReplayService([found], faults=[parse_fault(s) for s in specs]), found


def serve(svc: ReplayService, request: Request) -> Served:
    outcome = svc.handle(request)
    assert isinstance(outcome, Served), getattr(outcome, "describe", lambda: outcome)()
    return outcome


def stream_exchange(found: Capture) -> Exchange:
    return next(e for e in found.exchanges if e.classification.operation == "SendStreamingMessage")


def datas(answer: HttpAnswer) -> list[dict[str, object]]:
    """Each event's JSON, as a client reads it (every event here is one block)."""
    from recorder.protocol import SseFramer

    out = []
    for _, data in answer.events:
        framer = SseFramer()
        blocks = framer.feed(data)
        out.extend(json.loads(event_data(b)) for b in blocks if event_data(b))
    return out


def subscribe(found: Capture, task: str, jsonrpc_id: int = 99) -> Request:
    send = stream_exchange(found).request
    body = {"jsonrpc": "2.0", "id": jsonrpc_id, "method": "SubscribeToTask", "params": {"id": task}}
    return dataclasses.replace(send, body=json.dumps(body).encode())


# -- reading specs --------------------------------------------------------------------------

GOOD = [
    ("SendStreamingMessage:cut-after=2", "cut-after", 2, None, "SendStreamingMessage"),
    ("#3:status=429", "status", Status(429, None), 3, None),
    (
        "#3:status=503,Retry-After=7,x-why=maintenance",
        "status",
        Status(503, None, (("retry-after", "7"), ("x-why", "maintenance"))),
        3,
        None,
    ),
    (
        "GetTask:status=resource_exhausted",
        "status",
        Status(None, "RESOURCE_EXHAUSTED"),
        None,
        "GetTask",
    ),
    ("SendMessage:delay=1.5", "delay", 1.5, None, "SendMessage"),
    ("SendMessage:delay=250ms", "delay", 0.25, None, "SendMessage"),
    ("#2:delay-events=2s", "delay-events", 2.0, 2, None),
    ("#2:reset", "reset", None, 2, None),
    ("#2:framing=crlf+ping+split", "framing", ("crlf", "ping", "split"), 2, None),
    ("#2:envelope=wrong-id", "envelope", "wrong-id", 2, None),
    ("AgentCard:status=503", "status", Status(503, None), None, "AgentCard"),
]


@pytest.mark.parametrize(("text", "kind", "value", "exchange", "operation"), GOOD)
def test_a_spec_is_read_from_the_table(
    text: str, kind: str, value: object, exchange: int | None, operation: str | None
) -> None:
    assert parse_fault(text) == FaultSpec(text, kind, value, exchange, operation)


BAD = [
    ("SendStreamingMessage", "expected SELECTOR:KIND[=ARG]"),
    ("#0:reset", "'#0' is no exchange number"),
    ("#x:reset", "'#x' is no exchange number"),
    ("#２:reset", "'#２' is no exchange number"),  # full-width digits are no number
    ("#2:cut-after=２", "cut-after needs a number of events"),
    ("#2:delay=１", "delay needs seconds"),
    ("#2:status=４２９", "status needs an HTTP status"),
    ("SendStreamMessage:reset", "is neither #N nor an operation (SendMessage, "),
    ("#2:explode", "no fault kind 'explode'"),
    ("#2:cut-after", "cut-after needs a number of events"),
    ("#2:cut-after=-1", "cut-after needs a number of events"),
    ("#2:delay=soon", "delay needs seconds"),
    ("#2:delay=7200", "at most 3600 seconds"),
    ("#2:status=200", "status needs an HTTP status from 400 to 599 or a gRPC code name"),
    ("#2:status=OK", "status needs an HTTP status"),
    ("#2:status=429,retry-after", "'retry-after' is no header NAME=VALUE"),
    ("#2:reset=now", "reset takes no argument"),
    ("#2:framing=crlf+tabs", "framing has no variant 'tabs'; the variants are lf, crlf, cr,"),
    ("#2:envelope=broken", "envelope needs one of no-jsonrpc, wrong-id, truncated"),
]


@pytest.mark.parametrize(("text", "problem"), BAD)
def test_a_bad_spec_is_named_with_the_kinds_listed(text: str, problem: str) -> None:
    with pytest.raises(FaultSpecError) as raised:
        parse_fault(text)
    message = str(raised.value)
    assert message.startswith(f"fault {text!r}: ") and problem in message
    assert all(kind.usage in message for kind in FAULT_KINDS.values())


def test_a_faults_toml_holds_the_same_specs(tmp_path: Path) -> None:
    path = tmp_path / "faults.toml"
    path.write_text('faults = ["SendStreamingMessage:cut-after=2", "#3:status=429"]\n')
    assert [s.text for s in read_faults(path)] == [
        "SendStreamingMessage:cut-after=2",
        "#3:status=429",
    ]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('fault = ["#2:reset"]\n', "nothing else (not 'fault')"),
        ("faults = [2]\n", 'holds `faults = ["SELECTOR:KIND[=ARG]", ...]`'),
        ('faults = ["#2:explode"]\n', "fault '#2:explode': no fault kind 'explode'"),
        ("faults = [\n", "cannot read fault profile"),
    ],
)
def test_a_bad_faults_toml_names_its_file(tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "faults.toml"
    path.write_text(content)
    with pytest.raises(FaultSpecError, match=r"faults\.toml: ") as raised:
        read_faults(path)
    assert problem in str(raised.value)


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("#9:status=429", "the captures hold no exchange #9 (they hold #1 to #2)"),
        ("#1:cut-after=1", "cut-after applies to a stream (SSE or gRPC server streaming)"),
        ("#1:framing=lf", "framing applies to an SSE stream, and exchange #1 is not one"),
    ],
)
def test_a_spec_that_names_no_exchange_it_can_apply_to_is_refused(spec: str, problem: str) -> None:
    with pytest.raises(FaultSpecError) as raised:
        service(STREAM, spec)
    assert str(raised.value).startswith(f"fault {spec!r}: {problem}")
    with pytest.raises(FaultSpecError, match="envelope applies to a JSON-RPC answer"):
        service(GRPC_STREAM, "#2:envelope=no-jsonrpc")


# -- the replayer's option table (issue 23) ---------------------------------------------------


def test_a_fault_profile_is_a_row_of_the_replayers_table() -> None:
    """`faults` goes through REPLAY.settings: each spec read (and kept as written), anything
    else an OptionError naming `faults`, before a socket is bound."""
    assert REPLAY.settings({"faults": [" SendMessage:reset ", "#2:delay=1"]})["faults"] == (
        "SendMessage:reset",
        "#2:delay=1",
    )
    assert REPLAY.settings({})["faults"] == ()
    with pytest.raises(OptionError, match="^faults: fault 'SendMessage:explode': no fault kind"):
        Replayer([capture(SEND)], faults=["SendMessage:explode"])
    with pytest.raises(OptionError, match="^faults must be a list of strings, not 'Send"):
        Replayer([capture(SEND)], faults="SendMessage:reset")  # not split into characters
    with pytest.raises(FaultSpecError, match="^fault '#9:reset': the captures hold no"):
        Replayer([capture(SEND)], faults=["#9:reset"])
    with pytest.raises(OptionError, match="^faults: not with serve_version"):
        Replayer([capture(SEND)], faults=["SendMessage:reset"], serve_version="0.3")
    assert exit_status(FaultSpecError("x")) is exit_status(OptionError("x")) is Exit.ERROR


def test_a_fleet_refuses_a_fault_profile() -> None:
    """A #N names one capture's exchange: a fleet of several agents takes no profile."""
    with pytest.raises(OptionError, match="^faults: a fleet takes none"):
        Fleet([(SEND, capture(SEND))], faults=["SendMessage:reset"])


# -- answers ----------------------------------------------------------------------------------


def test_a_status_fault_answers_first_and_the_identical_retry_is_served_as_recorded() -> None:
    plain, found = service(SEND)
    svc, _ = service(SEND, "SendMessage:status=429")
    send = found.exchanges[1].request
    faulted = serve(svc, send)
    assert isinstance(faulted.answer, HttpAnswer) and faulted.answer.status == 429
    assert ("retry-after", "1") in faulted.answer.headers
    assert faulted.kind == "synthesized" and faulted.deliveries == ()
    entry = svc.journal.requests[-1]
    assert entry.faults == ("SendMessage:status=429",) and entry.answer == "synthesized"
    assert "the request was not carried out" in entry.changes[0]
    assert "SendMessage" in [e.classification.operation for e in svc.report.unserved]
    serve(svc, found.exchanges[0].request)  # the card
    retry = serve(svc, dataclasses.replace(send, body=send.body.replace(b'"id"', b'"id" ', 1)))
    assert retry.answer == serve(plain, send).answer  # the recorded task id, not a fresh one
    assert retry.kind == "recorded" and svc.journal.requests[-1].faults == ()
    report = svc.report.as_json()
    assert report["clean"] and report["synthesized"] == [] and len(report["faulted"]) == 1


def test_a_new_request_gets_the_fault_again_and_grpc_gets_the_code() -> None:
    svc, found = service(GRPC_STREAM, "SendStreamingMessage:status=429,x-why=busy")
    send = stream_exchange(found).request
    first = serve(svc, send).answer
    assert isinstance(first, GrpcAnswer) and first.code == UNAVAILABLE and first.messages == ()
    assert ("x-why", "busy") in first.trailing
    assert "as a gRPC client reads HTTP 429" in svc.journal.requests[-1].changes[0]
    assert serve(svc, send).answer.code == 0  # type: ignore[union-attr]
    message = json.loads(send.messages[0].json or "")
    message["message"].update(messageId="another-message", contextId="another-context")
    other = dataclasses.replace(send.messages[0], json=json.dumps(message))
    again = serve(svc, dataclasses.replace(send, messages=(other,))).answer
    assert isinstance(again, GrpcAnswer) and again.code == UNAVAILABLE


def test_a_reset_sends_nothing_and_journals_no_status() -> None:
    svc, found = service(STREAM, "#2:reset")
    served = serve(svc, stream_exchange(found).request)
    assert served.shape.reset and served.kind == "synthesized"
    assert svc.journal.requests[-1].status is None
    grpc, found = service(GRPC_STREAM, "#2:reset")
    answer = serve(grpc, stream_exchange(found).request).answer
    assert isinstance(answer, GrpcAnswer) and answer.code == UNAVAILABLE and not answer.messages


@pytest.mark.parametrize(
    ("how", "check"),
    [
        ("no-jsonrpc", lambda doc, live: "jsonrpc" not in doc and doc["id"] == live),
        ("wrong-id", lambda doc, live: doc["jsonrpc"] == "2.0" and doc["id"] != live),
    ],
)
def test_a_malformed_envelope_changes_only_what_it_says(how: str, check: object) -> None:
    plain, found = service(SEND)
    svc, _ = service(SEND, f"#2:envelope={how}")
    send = found.exchanges[1].request
    live_id = json.loads(send.body)["id"]
    answer = serve(svc, send).answer
    recorded = serve(plain, send).answer
    assert isinstance(answer, HttpAnswer) and isinstance(recorded, HttpAnswer)
    document, expected = json.loads(answer.body), json.loads(recorded.body)
    assert check(document, live_id)  # type: ignore[operator]
    assert document["result"] == expected["result"]
    assert svc.journal.requests[-1].answer == "adapted"


def test_a_truncated_body_is_half_of_it_and_a_stream_loses_its_first_event_whole() -> None:
    plain, found = service(SEND)
    svc, _ = service(SEND, "#2:envelope=truncated")
    send = found.exchanges[1].request
    body = serve(svc, send).answer.body  # type: ignore[union-attr]
    full = serve(plain, send).answer.body  # type: ignore[union-attr]
    assert body == full[: len(full) // 2] and parse_json(body) is not None
    streams, found = service(STREAM, "#2:envelope=truncated")
    answer = serve(streams, stream_exchange(found).request).answer
    assert isinstance(answer, HttpAnswer) and len(answer.events) == 6
    with pytest.raises(json.JSONDecodeError):
        datas(replace_events(answer, answer.events[:1]))
    assert len(datas(replace_events(answer, answer.events[1:]))) == 5


def replace_events(answer: HttpAnswer, events: tuple[tuple[int, bytes], ...]) -> HttpAnswer:
    return dataclasses.replace(answer, events=events)


def test_delays_and_framings_change_how_not_what() -> None:
    plain, found = service(STREAM)
    spec = "SendStreamingMessage:framing=lf+ping+id+multiline+split"
    svc, _ = service(STREAM, spec, "#2:delay=0.5", "#2:delay-events=0.1")
    send = stream_exchange(found).request
    served = serve(svc, send)
    recorded = serve(plain, send).answer
    assert isinstance(served.answer, HttpAnswer) and isinstance(recorded, HttpAnswer)
    assert datas(served.answer) == datas(recorded) and len(datas(recorded)) == 6
    shape = served.shape
    assert (shape.delay, shape.gap, shape.drop) == (0.5, 0.1, False)
    for n, (_, data) in enumerate(served.answer.events):
        writes = shape.writes(n, data)
        assert b"".join(writes) == data and len(writes) >= 4
        assert b"\r" not in data and data.startswith(b": ping\n\nid: %d\ndata: " % n)
    assert served.kind == "adapted" and set(svc.journal.requests[-1].faults) == {
        spec,
        "#2:delay=0.5",
        "#2:delay-events=0.1",
    }
    again = serve(svc, send)  # shaping kinds apply every time
    assert again.shape.delay == 0.5


# -- a cut stream and its continuation --------------------------------------------------------


def test_a_cut_stream_is_continued_by_subscribe_with_nothing_lost_or_doubled() -> None:
    plain, found = service(STREAM)
    svc, _ = service(STREAM, "SendStreamingMessage:cut-after=2")
    send = stream_exchange(found).request
    recorded = datas(serve(plain, send).answer)  # type: ignore[arg-type]
    cut = serve(svc, send)
    assert cut.shape.drop and datas(cut.answer) == recorded[:2]  # type: ignore[arg-type]
    task = recorded[0]["result"]["task"]["id"]  # type: ignore[index]
    resumed = serve(svc, subscribe(found, task))
    events = datas(resumed.answer)  # type: ignore[arg-type]
    assert all(e["id"] == 99 for e in events)
    assert events[0]["result"]["task"] == fold_task(recorded[:2])
    assert events[0]["result"]["task"]["status"]["state"] == "TASK_STATE_WORKING"
    assert [e["result"] for e in events[1:]] == [e["result"] for e in recorded[2:]]
    assert fold_task([events[0], *events[1:]]) == fold_task(recorded)
    entry = svc.journal.requests[-1]
    assert entry.answer == "synthesized" and entry.faults == ("SendStreamingMessage:cut-after=2",)
    assert (
        "synthesized from its recorded events 1 to 2, then its recorded events 3 to 6"
        in (entry.changes[0])
    )
    assert svc.report.synthesized_answers == [] and svc.report.faults_unused == []
    later = svc.handle(subscribe(found, task))  # continued whole: the cut is forgotten
    assert not isinstance(later, Served)


def test_a_cut_continuation_is_cut_again_and_continued_from_there() -> None:
    svc, found = service(STREAM, "#2:cut-after=1", "SubscribeToTask:cut-after=3")
    plain, _ = service(STREAM)
    send = stream_exchange(found).request
    recorded = datas(serve(plain, send).answer)  # type: ignore[arg-type]
    serve(svc, send)
    task = recorded[0]["result"]["task"]["id"]  # type: ignore[index]
    first = datas(serve(svc, subscribe(found, task)).answer)  # type: ignore[arg-type]
    assert len(first) == 3 and [e["result"] for e in first[1:]] == [
        e["result"] for e in recorded[1:3]
    ]
    second = datas(serve(svc, subscribe(found, task, 100)).answer)  # type: ignore[arg-type]
    assert second[0]["result"]["task"] == fold_task(recorded[:3])
    assert [e["result"] for e in second[1:]] == [e["result"] for e in recorded[3:]]


def test_a_grpc_stream_is_cut_unavailable_and_continued_over_grpc() -> None:
    svc, found = service(GRPC_STREAM, "SendStreamingMessage:cut-after=2")
    plain, _ = service(GRPC_STREAM)
    send = stream_exchange(found).request
    recorded = serve(plain, send).answer
    cut = serve(svc, send).answer
    assert isinstance(cut, GrpcAnswer) and isinstance(recorded, GrpcAnswer)
    assert cut.code == UNAVAILABLE and cut.messages == recorded.messages[:2]
    first = json.loads(stream_exchange(found).response.messages[0].json or "")  # type: ignore[union-attr]
    path = "/lf.a2a.v1.A2AService/SubscribeToTask"
    data = encode_message(
        "lf.a2a.v1.SubscribeToTaskRequest", json.dumps({"id": first["task"]["id"]})
    )
    resumed = serve(svc, live_request(path, data, ()))
    answer = resumed.answer
    assert isinstance(answer, GrpcAnswer) and answer.code == 0
    assert [m for _, m in answer.messages[1:]] == [m for _, m in recorded.messages[2:]]
    assert len(answer.messages) == 5


def test_a_fault_that_never_happened_leaves_the_report_unclean() -> None:
    svc, found = service(STREAM, "AgentCard:status=503")  # the card is never fetched
    serve(svc, stream_exchange(found).request)
    assert svc.report.faults_unused == ["AgentCard:status=503"]
    assert not svc.report.clean and svc.report.as_json()["faults_unused"]
