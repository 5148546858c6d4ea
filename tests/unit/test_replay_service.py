"""The replay service, driven with no sockets: what each client sees is what a live agent shows.

A pure model agent (`_agent_model`) records a session; the `ReplayService` serves it to
clients that send fresh ids on every request and come on a new connection each time; a
fresh model agent per client is the oracle.  Ids are compared by first appearance, so "the
same answer" means: the same states, errors and texts, with the client's own ids where the
agent would have put them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from _agent_model import (
    Client,
    Json,
    ModelAgent,
    Op,
    Recording,
    as_live,
)

from recorder.capture import Exchange, Request, Response, read_capture
from recorder.protocol import classify
from recorder.replay import Client as Conn
from recorder.replay import HttpAnswer, IdFactory, Miss, Refused, ReplayService, Served


def record(ops: Sequence[Op], name: str = "recorder", **agent: object) -> ReplayService:
    recording = Recording(ModelAgent(**agent))  # type: ignore[arg-type]
    recording.run(Client(name), list(ops))
    return ReplayService([recording.capture()], ids=IdFactory(7))


def serve(service: ReplayService, client: Client, op: Op) -> Json:
    outcome = service.handle(client.request(op), Conn(client.connection()))
    assert isinstance(outcome.answer, HttpAnswer)
    answer = json.loads(outcome.answer.body)
    if isinstance(outcome, Miss):
        answer = {"miss": outcome.describe()}
    client.saw(op, answer)
    return answer


def live(ops: Sequence[Op], name: str, agent: ModelAgent | None = None) -> list[Json]:
    """What a live agent of its own shows a client running `ops`."""
    recording = Recording(agent or ModelAgent())
    return recording.run(Client(name), list(ops))


def replayed(service: ReplayService, ops: Sequence[Op], name: str) -> list[Json]:
    client = Client(name)
    return [serve(service, client, op) for op in ops]


def synthesized(service: ReplayService) -> list[str]:
    return [e.detail or "" for e in service.journal.requests if e.answer == "synthesized"]


SEND, WAIT, SLOW = ("send", "echo a"), ("send", "wait"), ("send", "slow 2")

# (name, recorded operations, live operations): the live client must see what a live agent
# would show it, on a new connection per request.
SAME_AS_LIVE = [
    ("own reads", [SEND, ("get", 0)], [SEND, ("get", 0)]),
    (
        "probes repeat freely and in any order",
        [SEND, ("get", 0), ("probe-get", "nonexistent-1")],
        [("probe-get", None), SEND, ("probe-get", None), ("get", 0), ("probe-get", "x")],
    ),
    (
        "a bogus continuation is not found",
        [SEND, ("get", 0), ("bogus", None)],
        [("bogus", None), SEND, ("bogus", None), ("get", 0)],
    ),
    (
        "an id-less list names the client's own tasks",
        [SEND, WAIT, ("list", None)],
        [SEND, WAIT, ("list", None), ("list", None)],
    ),
    (
        "reads in any order after all creates",
        [SEND, ("get", 0), WAIT, ("cancel", 1), ("get", 1)],
        [SEND, WAIT, ("cancel", 1), ("get", 0), ("get", 1)],
    ),
    (
        "repeated identical reads repeat the last",
        [SEND, ("get", 0), ("get", 0)],
        [SEND, ("get", 0), ("get", 0), ("get", 0), ("get", 0)],
    ),
    (
        "a poll reaches the recorded terminal state and stays there",
        [SLOW, ("get", 0), ("get", 0)],
        [SLOW, ("get", 0), ("get", 0), ("get", 0)],
    ),
    ("cancel then read", [WAIT, ("cancel", 0), ("get", 0)], [WAIT, ("cancel", 0), ("get", 0)]),
    (
        "a second cancel is refused as recorded",
        [WAIT, ("cancel", 0), ("cancel", 0)],
        [WAIT, ("cancel", 0), ("cancel", 0)],
    ),
]


@pytest.mark.parametrize(
    ("recorded", "ops"), [pytest.param(r, o, id=n) for n, r, o in SAME_AS_LIVE]
)
def test_a_client_sees_what_a_live_agent_shows(recorded: list[Op], ops: list[Op]) -> None:
    service = record(recorded)
    for name in ("alice", "bob"):  # one after the other, each with its own ids
        assert as_live(ops, replayed(service, ops, name), live(ops, name)) == []
    assert synthesized(service) == []


# (name, recorded, live, index of the live request that must miss)
MISSES = [
    (
        "an id never issued, where the capture never probed",
        [SEND, ("get", 0)],
        [SEND, ("probe-get", None)],
        1,
    ),
    ("a bogus continuation the capture never sent", [SEND, ("get", 0)], [("bogus", None)], 0),
    (
        "a task id the capture holds but this replay never issued",
        [SEND, ("get", 0)],
        [("probe-get", "RECORDED")],
        0,
    ),
]


@pytest.mark.parametrize(
    ("recorded", "ops", "index"), [pytest.param(r, o, i, id=n) for n, r, o, i in MISSES]
)
def test_an_id_never_issued_is_never_answered_with_a_success(
    recorded: list[Op], ops: list[Op], index: int
) -> None:
    service = record(recorded)
    recorded_task = service.script.steps[0].response_ids[0]
    ops = [("probe-get", recorded_task) if op == ("probe-get", "RECORDED") else op for op in ops]
    answers = replayed(service, ops, "alice")
    assert "miss" in answers[index], answers[index]
    assert all("result" not in a for a in answers[index : index + 1])
    assert "nearest is #" in answers[index]["miss"]


def test_a_miss_names_the_nearest_of_the_same_binding_and_operation() -> None:
    service = record([SEND, ("get", 0)])
    answers = replayed(service, [("probe-get", None)], "alice")
    text = answers[0]["miss"]
    assert "nearest is #2 GetTask" in text
    assert "an id never issued" in text and "handed out earlier" in text


def test_the_journal_keeps_each_request_with_its_provenance_and_answer() -> None:
    service = record([SEND, ("get", 0), ("probe-get", "nonexistent-1")])
    client = Client("alice")
    for op in (SEND, ("get", 0), ("probe-get", None), ("list", None)):
        serve(service, client, op)
    entries = service.journal.requests
    assert [e.outcome for e in entries] == ["served", "served", "served", "miss"]
    assert [e.exchange for e in entries] == [1, 2, 3, None]
    assert [[i.provenance.value for i in e.ids] for e in entries] == [
        ["fresh"],
        ["issued"],
        ["unknown"],
        [],
    ]
    assert entries[1].ids[0].value == client.tasks[0]
    assert entries[1].ids[0].recorded == service.script.steps[0].response_ids[0]
    assert entries[0].request.header("authorization") == "Bearer alice"
    assert entries[0].session == entries[1].session is not None and entries[2].session is None
    as_json = service.journal.as_json()
    assert as_json["requests"][1]["ids"][0]["provenance"] == "issued"


def test_sessions_are_bounded_and_a_forgotten_session_s_ids_become_unknown() -> None:
    recording = Recording()
    recording.run(Client("recorder"), [SEND, ("get", 0), ("probe-get", "nonexistent-1")])
    service = ReplayService([recording.capture()], max_sessions=8)
    first = Client("first")
    serve(service, first, SEND)
    for n in range(50):
        serve(service, Client(f"c{n}"), SEND)
    assert len(service.sessions) == 8 and service.sessions.forgotten == 43
    # The first client's task is forgotten: reading it is a probe now, answered not-found.
    answer = serve(service, first, ("get", 0))
    assert answer["error"]["code"] == -32001


def test_a_forgotten_session_is_not_found_again_by_a_connection_it_used() -> None:
    recording = Recording()
    recording.run(Client("recorder"), [SEND, ("get", 0), WAIT])
    service = ReplayService([recording.capture()], max_sessions=2)
    first = Client("first", ports=iter([30001, 30002]))
    serve(service, first, SEND)  # its session is last served on port 30001 ...
    serve(service, first, ("get", 0))  # ... and then on 30002
    for n in range(3):
        serve(service, Client(f"c{n}"), SEND)  # the first session is forgotten
    again = Client("first", ports=iter([30001]))  # the same headers, on the port it used
    assert "result" in serve(service, again, WAIT)
    assert len(service.sessions) == 2


def card_exchange(number: int) -> Exchange:
    request = Request("GET", "/.well-known/agent-card.json", (("a2a-version", "1.0"),))
    card = {
        "name": "a",
        "supportedInterfaces": [
            {
                "url": "http://127.0.0.1:9/a2a/jsonrpc",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            }
        ],
    }
    response = Response(
        200, "OK", (("content-type", "application/json"),), json.dumps(card).encode()
    )
    return Exchange(
        number, classify(request, response), request, response, started_us=number * 1000
    )


def test_identical_recorded_exchanges_count_as_one_in_the_report() -> None:
    recording = Recording()
    recording.exchanges.extend(card_exchange(n) for n in range(1, 15))
    recording.run(Client("recorder"), [SEND, ("get", 0), ("get", 0)])
    service = ReplayService([recording.capture()])
    assert [e.number for e in service.report.unserved] == [1, 15, 16]  # card, send, reads
    client = Client("alice")
    card = service.handle(card_exchange(1).request, Conn("127.0.0.1:1"))
    assert isinstance(card, Served)
    serve(service, client, SEND)
    serve(service, client, ("get", 0))  # once: the two identical recorded reads count as one
    assert service.report.unserved == [] and service.report.clean


def jsonrpc_post(body: bytes) -> Request:
    return Request("POST", "/a2a/jsonrpc", (("content-type", "application/json"),), body)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"not json{", -32700),
        (b"", -32700),
        (b'[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}]', -32600),
        (b'"a string"', -32600),
        (b'{"id": 1, "method": "GetTask"}', -32600),
    ],
)
def test_unreadable_jsonrpc_gets_the_error_a_real_agent_gives(body: bytes, code: int) -> None:
    service = record([SEND])
    outcome = service.handle(jsonrpc_post(body), Conn())
    assert isinstance(outcome, Refused) and isinstance(outcome.answer, HttpAnswer)
    error = json.loads(outcome.answer.body)["error"]
    assert error["code"] == code and outcome.answer.status == 200
    assert service.report.misses == []


def test_lone_surrogates_load_and_are_answered_from_the_capture() -> None:
    # "\ud800" is valid JSON text; ids holding lone surrogates must not crash anything.
    body = b'{"jsonrpc":"2.0","id":"\\ud800","method":"GetTask","params":{"id":"\\udfff"}}'
    reply = Response(
        200,
        "OK",
        (("content-type", "application/json"),),
        b'{"jsonrpc":"2.0","id":"\\ud800","error":{"code":-32001,'
        b'"message":"Task \\udfff not found"}}',
    )
    request = jsonrpc_post(body)
    odd_path = Request("GET", "/a2a/rest/tasks/%FF\udcff?x=\ud800", (("h", "\ud800"),))
    not_found = Response(404, "Not Found", (("x-odd", "\udcff"),), b'{"error":{"code":404}}')
    exchanges = [
        Exchange(1, classify(request, reply), request, reply),
        Exchange(2, classify(odd_path, not_found), odd_path, not_found, started_us=5),
    ]
    service = ReplayService([Recording(exchanges=exchanges).capture()])
    outcome = service.handle(request, Conn())
    assert isinstance(outcome, Served) and isinstance(outcome.answer, HttpAnswer)
    assert b"\\udfff" in outcome.answer.body  # the escape, as the agent sent it
    other = service.handle(odd_path, Conn())
    assert isinstance(other, Served) and other.step.number == 2


def test_a_miss_in_another_binding_names_no_jsonrpc_exchange_as_nearest() -> None:
    service = record([SEND, ("get", 0)])
    client = Client("alice")
    serve(service, client, SEND)
    rest = Request("GET", f"/a2a/rest/tasks/{client.tasks[0]}", (("a2a-version", "1.0"),))
    outcome = service.handle(rest, Conn("127.0.0.1:9"))
    assert isinstance(outcome, Miss) and outcome.report.nearest is None
    text = outcome.describe()
    assert "GetTask (HTTP+JSON)" in text and "only over JSONRPC" in text
    assert isinstance(outcome.answer, HttpAnswer) and outcome.answer.status == 500
    assert outcome.answer.reason.startswith("Replay miss: ")


def _rest_get(target: str) -> tuple[Request, Response]:
    body = json.dumps(
        {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}}
    ).encode()
    headers = (("content-type", "application/json"), ("a2a-version", "1.0"))
    return Request("GET", target, headers), Response(200, "OK", headers, body)


def test_a_redacted_api_key_in_the_query_matches_any_live_key() -> None:
    # t-1 was read with success but never issued in the capture: it existed before (FIXED),
    # and a live read of the same id is answered; the API key the recording redacted is not
    # compared, since a live client sends its own.
    request, response = _rest_get("/tasks/t-1?key=<redacted:1>&historyLength=2")
    recorded = Exchange(1, classify(request, response), request, response)
    service = ReplayService([Recording(exchanges=[recorded]).capture()])
    live, _ = _rest_get("/tasks/t-1?historyLength=2&key=the-real-key")
    assert isinstance(service.handle(live, Conn()), Served)
    other, _ = _rest_get("/tasks/t-1?historyLength=5&key=the-real-key")
    assert isinstance(service.handle(other, Conn()), Miss)
    probe, _ = _rest_get("/tasks/t-2?historyLength=2&key=the-real-key")
    assert isinstance(service.handle(probe, Conn()), Miss)  # an id that never existed


def test_a_long_session_answers_each_create_from_its_recorded_step() -> None:
    service = record([SEND] * 200)
    client = Client("alice")
    numbers = []
    for _ in range(200):
        outcome = service.handle(client.request(SEND), Conn(client.connection()))
        assert isinstance(outcome, Served) and outcome.kind == "recorded"
        numbers.append(outcome.step.number)
    # A capture replayed as written gets the recorded ids, answered in recorded order.
    assert numbers == list(range(1, 201))


@pytest.mark.parametrize("body", [b"", b"{}"], ids=["no-body", "empty-object"])
def test_a_rest_cancel_that_does_not_restate_the_path_id_matches_one_that_does(
    body: bytes,
) -> None:
    """a2a-sdk's REST client sends `{"id": ...}` with POST /tasks/{id}:cancel; a2a-go and
    @a2a-js/sdk send no body.  The message is the path fields plus the body, so both say the
    same, and an agent answers both alike (found by the cross-SDK replay matrix)."""
    path = Path(__file__).parents[2] / "captures/a2a-python-1.3.0/http-json/07-cancel.http"
    capture = read_capture(path)
    service = ReplayService([capture])
    outcomes = []
    for exchange in capture.exchanges:
        request = exchange.request
        if exchange.classification.operation == "CancelTask":
            assert json.loads(request.body) == {"id": exchange.classification.task_id}
            headers = tuple((k, v) for k, v in request.headers if k.lower() != "content-length")
            request = Request(request.method, request.target, headers, body)
        outcomes.append(service.handle(request))
    assert all(isinstance(o, Served) for o in outcomes), [type(o).__name__ for o in outcomes]


def test_a_rest_cancel_naming_another_id_in_its_body_is_another_request() -> None:
    path = Path(__file__).parents[2] / "captures/a2a-python-1.3.0/http-json/07-cancel.http"
    capture = read_capture(path)
    service = ReplayService([capture])
    for exchange in capture.exchanges:
        request = exchange.request
        if exchange.classification.operation == "CancelTask":
            body = json.dumps({"id": "some-other-task"}).encode()
            request = Request(request.method, request.target, request.headers, body)
            assert isinstance(service.handle(request), Miss)
            return
        service.handle(request)
    raise AssertionError("no CancelTask in the capture")
