"""Real clients against a replay that does what real networks do (`--fault`).

For each fault kind, the a2a-sdk 1.3.0 client of this venv and the @a2a-js/sdk 1.3.0 client
(`js/faults.mjs`) are played a corpus capture of the a2a-sdk 1.3.0 agent, on every binding
the kind applies to; each test shows what the client does.  A cut stream resumed with
`SubscribeToTask` must leave the client with the recorded task, every recorded event seen
once; a status or a reset must be followed by the recorded answer to the retry.

Where an SDK mishandles a fault, the test says so in `KNOWN` (the SDK, its version, what it
does) and asserts exactly that, so that it keeps passing and notices when the SDK changes:

- a2a-sdk 1.3.0's JSON-RPC client takes an answer without `jsonrpc` or with another
  request's `id`, unary or streamed, as if it were its own;
- a2a-sdk 1.3.0's HTTP+JSON client lets protobuf's `ParseError` escape on a truncated stream
  event (its other transports raise `A2AClientError`);
- @a2a-js/sdk 1.3.0 reads a stream whose lines end in a lone CR (which the SSE grammar
  allows) as no events at all, and raises nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from _fault_clients import (
    CARD,
    JS_BUILT,
    Job,
    Run,
    as_sent,
    corpus,
    js,
    py,
    recorded_events,
    sdk_fold,
)

from recorder.capture import read_capture
from recorder.protocol import FRAMINGS
from recorder.replay import Replayer

SDK = "a2a-python-1.3.0"  # the agent recorded; both clients are played its captures
BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"]
needs_js = pytest.mark.skipif(not JS_BUILT, reason="the @a2a-js/sdk environment is not built")
CLIENTS = ["py", pytest.param("js", marks=needs_js)]

Client = Callable[[str, str, str], Run]


def client(name: str) -> Client:
    if name == "py":
        return py
    return lambda card, binding, action: js(binding, [Job(card, action)])[0]


def replay(path: Path, *faults: str) -> Replayer:
    return Replayer([read_capture(path)], faults=faults)


def journal(replayer: Replayer) -> list[tuple[str | None, str, tuple[str, ...]]]:
    """(operation, answer kind, fault specs) of each request after the card."""
    return [
        (e.classification.operation, e.answer, e.faults)
        for e in replayer.journal.requests
        if e.classification.operation != "AgentCard"
    ]


# -- a cut stream, resumed --------------------------------------------------------------------

# What each client raises when the stream breaks after 2 events (the start of the message).
CUT_ERRORS = {
    ("py", "JSONRPC"): "A2AClientError: Network communication error: peer closed connection "
    "without sending complete message body (incomplete chunked read)",
    ("py", "HTTP+JSON"): "A2AClientError: Network communication error: peer closed connection "
    "without sending complete message body (incomplete chunked read)",
    ("py", "GRPC"): "A2AClientError: gRPC Error UNAVAILABLE: connection dropped",
    ("js", "JSONRPC"): "TypeError: terminated",
    ("js", "HTTP+JSON"): "TypeError: terminated",
    ("js", "GRPC"): "GrpcA2AErrorImpl: gRPC error for sendStreamingMessage: 14 connection dropped",
}


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("name", CLIENTS)
def test_a_cut_stream_resumes_to_the_recorded_task_with_no_event_lost_or_doubled(
    name: str, binding: str
) -> None:
    path = corpus(SDK, binding, "05-streaming")
    recorded = recorded_events(path)
    spec = "SendStreamingMessage:cut-after=2"
    with replay(path, spec) as replayer:
        run = client(name)(replayer.url + CARD, binding, "resume")
        assert journal(replayer) == [
            ("SendStreamingMessage", "adapted", (spec,)),
            ("SubscribeToTask", "synthesized", (spec,)),
        ]
        assert replayer.report.clean, replayer.report.as_json()
    recorded = as_sent(recorded, run.events)
    assert run.events == recorded[:2]
    assert run.error is not None and run.error.startswith(CUT_ERRORS[name, binding])
    assert run.resume_error is None and run.resumed is not None
    snapshot, rest = run.resumed[0], run.resumed[1:]
    assert snapshot.HasField("task") and snapshot.task == sdk_fold(recorded[:2])
    assert run.events + rest == recorded  # every recorded event, once, in order
    assert sdk_fold(run.events + run.resumed) == sdk_fold(recorded)


@pytest.mark.parametrize("binding", ["JSONRPC", "GRPC"])
def test_identical_clients_cut_at_once_each_resume_their_own_task(binding: str) -> None:
    path = corpus(SDK, binding, "05-streaming")
    recorded = recorded_events(path)
    with replay(path, "SendStreamingMessage:cut-after=3") as replayer:
        with ThreadPoolExecutor(4) as pool:
            runs = list(pool.map(lambda _: py(replayer.url + CARD, binding, "resume"), range(4)))
        assert replayer.report.clean, replayer.report.as_json()
    assert len({run.events[0].task.id for run in runs}) == 4  # a task each
    for run in runs:
        expected = as_sent(recorded, run.events)
        assert run.resumed is not None and run.resume_error is None
        assert run.events + run.resumed[1:] == expected  # its own events, none lost or doubled
        assert sdk_fold(run.events + run.resumed) == sdk_fold(expected)


# -- an error status, then the retry ----------------------------------------------------------

STATUSES = [
    ("JSONRPC", "SendMessage:status=429"),
    ("HTTP+JSON", "SendMessage:status=503"),
    ("GRPC", "SendMessage:status=UNAVAILABLE"),
    ("GRPC", "SendMessage:status=RESOURCE_EXHAUSTED"),
    ("GRPC", "SendMessage:status=429"),
]
STATUS_ERRORS = {
    ("py", "SendMessage:status=429"): "A2AClientError: HTTP Error 429: Client error '429 Too "
    "Many Requests'",
    ("py", "SendMessage:status=503"): "A2AClientError: HTTP Error 503: Server error '503 "
    "Service Unavailable'",
    ("py", "SendMessage:status=UNAVAILABLE"): "A2AClientError: gRPC Error UNAVAILABLE",
    ("py", "SendMessage:status=RESOURCE_EXHAUSTED"): "A2AClientError: gRPC Error "
    "RESOURCE_EXHAUSTED",
    ("js", "SendMessage:status=429"): "Error: HTTP error for SendMessage! Status: 429 Too Many "
    "Requests.",
    ("js", "SendMessage:status=503"): "RestA2AErrorImpl: HTTP error for /message:send: 503 "
    "Service Unavailable",
    ("js", "SendMessage:status=UNAVAILABLE"): "GrpcA2AErrorImpl: gRPC error for sendMessage: 14",
    ("js", "SendMessage:status=RESOURCE_EXHAUSTED"): "GrpcA2AErrorImpl: gRPC error for "
    "sendMessage: 8",
}
# A gRPC client reads an HTTP 429 as UNAVAILABLE (grpc's http-grpc-status-mapping.md).
GRPC_429 = {
    "py": "A2AClientError: gRPC Error UNAVAILABLE: UNAVAILABLE (as a gRPC client reads HTTP 429)",
    "js": "GrpcA2AErrorImpl: gRPC error for sendMessage: 14 UNAVAILABLE (as a gRPC client "
    "reads HTTP 429)",
}


@pytest.mark.parametrize(("binding", "spec"), STATUSES)
@pytest.mark.parametrize("name", CLIENTS)
def test_an_error_status_comes_first_and_the_retry_gets_the_recorded_answer(
    name: str, binding: str, spec: str
) -> None:
    path = corpus(SDK, binding, "03-blocking-task")
    recorded = recorded_events(path, "SendMessage")
    with replay(path, spec) as replayer:
        run = client(name)(replayer.url + CARD, binding, "send")
        assert journal(replayer) == [
            ("SendMessage", "synthesized", (spec,)),
            ("SendMessage", "recorded", ()),
        ]
        assert replayer.report.clean and replayer.report.synthesized_answers == []
    expected = (
        GRPC_429[name]
        if binding == "GRPC" and spec.endswith("429")
        else (STATUS_ERRORS[name, spec])
    )
    assert run.events == [] and run.error is not None and run.error.startswith(expected)
    assert run.retry == as_sent(recorded, run.retry or []) and run.retry_error is None


def test_a_429_carries_retry_after_on_the_wire() -> None:
    path = corpus(SDK, "JSONRPC", "03-blocking-task")
    exchange = read_capture(path).exchanges[1]
    with replay(path, "#2:status=429", "#2:delay=0.01") as replayer:
        url = replayer.url + exchange.request.target
        headers = dict(exchange.request.headers)
        first = httpx.post(url, content=exchange.request.body, headers=headers, timeout=10)
        again = httpx.post(url, content=exchange.request.body, headers=headers, timeout=10)
    assert (first.status_code, first.headers["retry-after"]) == (429, "1")
    assert "fault '#2:status=429' asked of the replayer" in first.text
    assert again.status_code == 200 and again.json()["result"]["task"]["status"]["state"]


# -- a reset, then the retry ------------------------------------------------------------------

RESET_ERRORS = {
    # httpx's ReadError on a reset has no text of its own: the SDK's message ends in ": ".
    ("py", "JSONRPC"): "A2AClientError: Network communication error",
    ("py", "HTTP+JSON"): "A2AClientError: Network communication error",
    ("py", "GRPC"): "A2AClientError: gRPC Error UNAVAILABLE: connection reset",
    ("js", "JSONRPC"): "TypeError: fetch failed",
    ("js", "HTTP+JSON"): "TypeError: fetch failed",
    ("js", "GRPC"): "GrpcA2AErrorImpl: gRPC error for sendMessage: 14 connection reset",
}


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("name", CLIENTS)
def test_a_reset_connection_then_the_retry_gets_the_recorded_answer(
    name: str, binding: str
) -> None:
    path = corpus(SDK, binding, "03-blocking-task")
    recorded = recorded_events(path, "SendMessage")
    with replay(path, "SendMessage:reset") as replayer:
        run = client(name)(replayer.url + CARD, binding, "send")
        assert replayer.journal.requests[1].status == (14 if binding == "GRPC" else None)
        assert journal(replayer) == [
            ("SendMessage", "synthesized", ("SendMessage:reset",)),
            ("SendMessage", "recorded", ()),
        ]
    assert run.error is not None and run.error.startswith(RESET_ERRORS[name, binding])
    assert run.retry == as_sent(recorded, run.retry or []) and run.retry_error is None


# -- delays -----------------------------------------------------------------------------------

# What a client that gives up after 0.2 s raises (a2a-sdk: a ClientCallContext timeout;
# @a2a-js/sdk: an AbortSignal.timeout, the only deadline its client takes).
DELAY_ERRORS = {
    "py": "A2AClientTimeoutError: Client Request timed out",
    ("js", "JSONRPC"): "DOMException: The operation was aborted due to timeout",
    ("js", "HTTP+JSON"): "DOMException: The operation was aborted due to timeout",
    ("js", "GRPC"): "GrpcA2AErrorImpl: gRPC error for sendMessage: 1 Cancelled on client",
}


def hurried_and_patient(name: str, card: str, binding: str) -> tuple[Run, Run]:
    if name == "py":
        return py(card, binding, "send", timeout=0.2), py(card, binding, "send")
    hurried, patient = js(binding, [Job(card, "send", timeout=0.2), Job(card, "send")])
    return hurried, patient


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("name", CLIENTS)
def test_a_slow_answer_times_out_a_client_with_a_deadline_and_reaches_one_without(
    name: str, binding: str
) -> None:
    path = corpus(SDK, binding, "03-blocking-task")
    recorded = recorded_events(path, "SendMessage")
    with replay(path, "SendMessage:delay=0.8") as replayer:
        hurried, patient = hurried_and_patient(name, replayer.url + CARD, binding)
        delayed = [e.faults for e in replayer.journal.requests if e.faults]
    assert delayed and set(delayed) == {("SendMessage:delay=0.8",)}
    expected = DELAY_ERRORS.get(name) or DELAY_ERRORS[name, binding]
    assert hurried.error is not None and hurried.error.startswith(expected)
    assert patient.events == as_sent(recorded, patient.events) and patient.error is None
    assert patient.times[0] >= 0.8  # the answer came no sooner than asked


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("name", CLIENTS)
def test_events_come_apart_as_asked_and_unchanged(name: str, binding: str) -> None:
    path = corpus(SDK, binding, "05-streaming")
    recorded = recorded_events(path)
    with replay(path, "SendStreamingMessage:delay-events=0.15") as replayer:
        run = client(name)(replayer.url + CARD, binding, "stream")
    assert run.events == as_sent(recorded, run.events) and run.error is None
    gaps = sorted(b - a for a, b in zip(run.times, run.times[1:], strict=False))
    # No sooner than asked; the median, since a client that reads its first event before it
    # hands it over (@a2a-js/sdk does) shows that event late and the first gap short.
    assert len(gaps) == len(recorded) - 1 and gaps[len(gaps) // 2] >= 0.14


# -- framings ---------------------------------------------------------------------------------

# (SDK, variant): what it gets instead of the recorded events.
FRAMING_KNOWN = {
    # @a2a-js/sdk 1.3.0 splits lines on LF only (src/sse_utils.ts parseSseStream): a stream of
    # lone-CR line endings, which the SSE grammar allows, is one unfinished line to it.
    ("js", "cr"): "no events, no error",
}


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_every_framing_gives_both_clients_the_recorded_events(binding: str) -> None:
    path = corpus(SDK, binding, "05-streaming")
    recorded = recorded_events(path)
    variants = list(FRAMINGS)
    replayers = [replay(path, f"SendStreamingMessage:framing={v}").start() for v in variants]
    try:
        got = {
            ("py", v): py(r.url + CARD, binding, "stream")
            for v, r in zip(variants, replayers, strict=True)
        }
        if JS_BUILT:
            runs = js(binding, [Job(r.url + CARD, "stream") for r in replayers])
            got.update({("js", v): run for v, run in zip(variants, runs, strict=True)})
    finally:
        for replayer in replayers:
            replayer.stop()
    for (name, variant), run in got.items():
        known = FRAMING_KNOWN.get((name, variant))
        outcome = (
            "the recorded events"
            if run.events == as_sent(recorded, run.events) and run.error is None
            else ("no events, no error" if not run.events and run.error is None else run.error)
        )
        assert outcome == (known or "the recorded events"), (name, variant, run.error)


# -- malformed envelopes ----------------------------------------------------------------------

ENVELOPES = [
    ("JSONRPC", "SendMessage", "no-jsonrpc"),
    ("JSONRPC", "SendMessage", "wrong-id"),
    ("JSONRPC", "SendMessage", "truncated"),
    ("HTTP+JSON", "SendMessage", "truncated"),
    ("JSONRPC", "SendStreamingMessage", "no-jsonrpc"),
    ("JSONRPC", "SendStreamingMessage", "wrong-id"),
    ("JSONRPC", "SendStreamingMessage", "truncated"),
    ("HTTP+JSON", "SendStreamingMessage", "truncated"),
]
# What each client does with the malformed answer: "accepted" (it took it for its answer), or
# the start of what it raised.
ENVELOPE_KNOWN = {
    ("py", "SendMessage", "no-jsonrpc"): "accepted",  # a2a-sdk 1.3.0 does not check
    ("py", "SendMessage", "wrong-id"): "accepted",  # a2a-sdk 1.3.0 does not check
    ("py", "SendMessage", "truncated"): "A2AClientError: JSON Decode Error",
    ("py", "SendStreamingMessage", "no-jsonrpc"): "accepted",  # a2a-sdk 1.3.0 does not check
    ("py", "SendStreamingMessage", "wrong-id"): "accepted",  # a2a-sdk 1.3.0 does not check
    ("py", "SendStreamingMessage", "truncated", "JSONRPC"): "A2AClientError: Invalid JSON-RPC "
    "response in SSE stream",
    # a2a-sdk 1.3.0's HTTP+JSON stream lets protobuf's ParseError out, not an A2AClientError.
    ("py", "SendStreamingMessage", "truncated", "HTTP+JSON"): "ParseError: Failed to load JSON",
    ("js", "SendMessage", "no-jsonrpc"): "Error: Invalid JSON-RPC response for SendMessage: "
    "expected 'jsonrpc' to be exactly '2.0', got undefined.",
    ("js", "SendMessage", "wrong-id"): "Error: JSON-RPC response ID mismatch for method "
    "SendMessage.",
    ("js", "SendMessage", "truncated"): "SyntaxError: Unterminated string in JSON",
    ("js", "SendStreamingMessage", "no-jsonrpc"): "Error: Invalid JSON-RPC response for SSE "
    "event: expected 'jsonrpc' to be exactly '2.0', got undefined.",
    ("js", "SendStreamingMessage", "wrong-id"): "Error: JSON-RPC response ID mismatch in SSE "
    "event.",
    ("js", "SendStreamingMessage", "truncated"): "Error: Failed to parse SSE event data",
}


@pytest.mark.parametrize(("binding", "operation", "how"), ENVELOPES)
@pytest.mark.parametrize("name", CLIENTS)
def test_a_malformed_envelope_is_refused_or_the_sdk_is_known_not_to(
    name: str, binding: str, operation: str, how: str
) -> None:
    scenario = "03-blocking-task" if operation == "SendMessage" else "05-streaming"
    path = corpus(SDK, binding, scenario)
    recorded = recorded_events(path, operation)
    spec = f"{operation}:envelope={how}"
    with replay(path, spec) as replayer:
        action = "send" if operation == "SendMessage" else "stream"
        run = client(name)(replayer.url + CARD, binding, action)
        kinds = journal(replayer)
    known = (
        ENVELOPE_KNOWN.get((name, operation, how, binding)) or ENVELOPE_KNOWN[name, operation, how]
    )
    assert kinds[0] == (operation, "adapted", (spec,))
    if known == "accepted":  # taken for its own answer
        assert run.error is None and run.events == as_sent(recorded, run.events)
        return
    assert run.error is not None and run.error.startswith(known)
    if operation == "SendMessage":  # refused, it tries again: the recorded answer this time
        assert run.retry == as_sent(recorded, run.retry or [])
        assert kinds[1] == ("SendMessage", "recorded", ())
