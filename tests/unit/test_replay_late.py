"""The five ways replay broke its promise (issue 21), each replayed against a live oracle.

1. An id-less listing was cut down (and the cut reported as clean).
2. Identical creates followed by different reads were bound to the wrong recorded create.
3. A client's own id (a context, a push config id) was refused in a second session.
4. Ids a client never names back (artifact ids) were rewritten.
5. Answers the capture did not hold were invented, worded like a2a-sdk's, and not said so.

A pure model agent (`_agent_model`) records, a fresh one per client is the oracle; every
client runs on a new connection per request and sends fresh JSON-RPC ids and messageIds.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence

import pytest
from _agent_model import (
    PARSE_ERROR,
    UNKNOWN_METHOD,
    Client,
    Json,
    ModelAgent,
    Op,
    Recording,
    as_live,
)

from recorder.capture import Exchange, Request, Response
from recorder.protocol import classify
from recorder.replay import Client as Conn
from recorder.replay import HttpAnswer, IdFactory, Miss, ReplayService, Served

SEND, WAIT = ("send", "echo a"), ("send", "wait")


def serve(service: ReplayService, client: Client, op: Op) -> Json:
    outcome = service.handle(client.request(op), Conn(client.connection()))
    assert isinstance(outcome.answer, HttpAnswer)
    answer = json.loads(outcome.answer.body) if outcome.answer.body else {}
    if isinstance(outcome, Miss):
        answer = {"miss": outcome.describe()}
    client.saw(op, answer)
    return answer


def replay(capture_of: Recording, seed: int = 1) -> ReplayService:
    return ReplayService([capture_of.capture()], ids=IdFactory(seed))


def oracle(ops: Sequence[Op], name: str, agent: ModelAgent) -> list[Json]:
    return Recording(agent).run(Client(name), list(ops))


def clean(service: ReplayService) -> bool:
    return not [e for e in service.journal.requests if e.answer == "synthesized"]


# ---- 1. an id-less listing, as the agent's store would answer it ----------------------------


def test_a_listing_keeps_the_tasks_from_before_the_recording() -> None:
    ops: list[Op] = [SEND, WAIT, ("list", None)]
    recording = Recording(ModelAgent.holding(4))
    recorded = recording.run(Client("alice"), ops)
    assert recorded[2]["result"]["totalSize"] == 6
    service = replay(recording)
    client = Client("alice")
    replayed = [serve(service, client, op) for op in ops]
    # One client replaying its own capture gets exactly the recorded answer (with the
    # message ids it sent itself, as the agent echoes them).
    assert as_live(ops, replayed, recorded) == []
    listed, want = replayed[2]["result"], recorded[2]["result"]
    assert [t["id"] for t in listed["tasks"]] == [t["id"] for t in want["tasks"]]
    assert listed["totalSize"] == 6 and listed["tasks"][2:] == want["tasks"][2:]
    assert service.journal.requests[-1].answer == "recorded"
    assert clean(service) and service.report.clean


def test_two_clients_recorded_against_one_agent_each_list_both_tasks() -> None:
    recording = Recording(ModelAgent())
    alice, bob = Client("alice"), Client("bob")
    recording.step(alice, SEND)
    recording.step(bob, WAIT)
    live_list = recording.step(alice, ("list", None))
    assert live_list["result"]["totalSize"] == 2
    service = replay(recording)
    alice, bob = Client("alice"), Client("bob")
    serve(service, alice, SEND)
    serve(service, bob, WAIT)
    listed = serve(service, alice, ("list", None))["result"]
    assert listed["totalSize"] == 2
    assert sorted(t["id"] for t in listed["tasks"]) == sorted(alice.tasks + bob.tasks)
    assert clean(service)


def test_five_identical_clients_at_once_each_see_their_own_task() -> None:
    ops: list[Op] = [SEND, ("list", None)]
    recording = Recording(ModelAgent.holding(4))
    recording.run(Client("anyone", identity=False), ops)
    service = replay(recording)
    clients = [Client("anyone", identity=False) for _ in range(5)]
    answers: list[list[Json]] = [[] for _ in clients]
    for step in range(2):
        for n in random.Random(step).sample(range(5), 5):  # interleaved
            answers[n].append(serve(service, clients[n], ops[step]))
    for n, client in enumerate(clients):
        listed = {t["id"] for t in answers[n][1]["result"]["tasks"]}
        assert client.tasks[0] in listed
        assert {"pre-1", "pre-2", "pre-3", "pre-4"} <= listed
        assert answers[n][1]["result"]["totalSize"] == len(listed)
        live = oracle(ops, "anyone", ModelAgent.holding(4))
        assert as_live(ops, answers[n], live) == []
    assert clean(service)
    merged = [e for e in service.journal.requests if e.answer == "adapted"]
    assert any("listing merged" in c for e in merged for c in e.changes)


# ---- 2. identical creates, different reads -----------------------------------------------------

READS: list[Op] = [("get", 0), ("cancel", 0), ("subscribe", 0), ("follow", 0)]


def conformance(count: int) -> list[list[Op]]:
    """`count` tests: one create with the same body, then a different read of its task."""
    return [[SEND, (READS[n % len(READS)][0], n)] for n in range(count)]


def run_tests(service: ReplayService | None, tests: list[list[Op]], order: list[tuple[int, int]]):
    """Runs (test, op) pairs in `order`; returns each test's answers (a live agent if no
    service)."""
    client = Client("suite")
    agent = Recording(ModelAgent())
    task_of: dict[int, int] = {}
    out: dict[int, list[Json]] = {n: [] for n in range(len(tests))}
    for test, index in order:
        kind, _ = tests[test][index]
        op: Op = (kind, task_of.get(test, 0)) if index else tests[test][index]
        answer = agent.step(client, op) if service is None else serve(service, client, op)
        if index == 0:
            task_of[test] = len(client.tasks) - 1
        out[test].append(answer)
    return out


ORDERS = {
    "as recorded": lambda n: [(t, i) for t in range(n) for i in (0, 1)],
    "all creates first": lambda n: [(t, 0) for t in range(n)] + [(t, 1) for t in range(n)],
    "some tests skipped": lambda n: [(t, i) for t in range(n) if t % 3 != 1 for i in (0, 1)],
    "reads reversed": lambda n: [(t, 0) for t in range(n)] + [(t, 1) for t in reversed(range(n))],
}


@pytest.mark.parametrize("order", list(ORDERS))
def test_identical_creates_then_different_reads_equal_live(order: str) -> None:
    tests = conformance(12)
    recording = Recording(ModelAgent())
    client = Client("suite")
    for test in tests:
        recording.step(client, test[0])
        recording.step(client, (test[1][0], len(client.tasks) - 1))
    service = replay(recording)
    schedule = ORDERS[order](len(tests))
    replayed, live = run_tests(service, tests, schedule), run_tests(None, tests, schedule)
    for test in replayed:
        ops = [tests[test][i] for t, i in schedule if t == test]
        assert as_live(ops, replayed[test], live[test]) == [], (test, ops)
    assert clean(service), [e.detail for e in service.journal.requests]
    assert service.state.problems() == []


# ---- 3. the client's own ids belong to its session ---------------------------------------------


def test_a_context_the_client_chose_is_its_own_in_every_session() -> None:
    ops: list[Op] = [("send-ctx", "echo a"), ("send-ctx", "wait"), ("list-ctx", None)]
    recording = Recording(ModelAgent())
    recording.run(Client("raw"), ops)
    service = replay(recording)
    for run in range(3):
        replayed = [serve(service, Client("raw"), op) for op in ops]
        assert as_live(ops, replayed, oracle(ops, "raw", ModelAgent())) == [], run
    assert clean(service)


def test_a_push_config_id_the_client_chose_is_its_own_in_every_session() -> None:
    ops: list[Op] = [SEND, ("config", 0), ("get-config", 0)]
    recording = Recording(ModelAgent())
    recording.run(Client("js"), ops)
    service = replay(recording)
    for run in range(2):
        client = Client("js")
        replayed = [serve(service, client, op) for op in ops]
        assert replayed[1]["result"]["id"] == "cfg-1", run
        assert replayed[2]["result"]["taskId"] == client.tasks[0]
        assert as_live(ops, replayed, oracle(ops, "js", ModelAgent())) == [], run
    assert clean(service)


# ---- 4. ids a client never names back stay as recorded -------------------------------------


def test_an_artifact_id_stays_as_the_agent_named_it_in_every_session() -> None:
    recording = Recording(ModelAgent(artifact_id="art-echo"))
    recording.run(Client("alice"), [SEND, ("get", 0)])
    service = replay(recording)
    for name in ("alice", "bob", "carol"):
        client = Client(name)
        sent, got = serve(service, client, SEND), serve(service, client, ("get", 0))
        assert sent["result"]["task"]["artifacts"][0]["artifactId"] == "art-echo"
        assert got["result"]["artifacts"][0]["artifactId"] == "art-echo"
    # The agent's message ids too: only what a client names back is minted.
    assert clean(service)


# ---- 5. answers the capture did not hold are said to be so -----------------------------------

BAD: list[tuple[str, Op, Json]] = [
    ("unknown method", ("unknown", "tasks/frobnicate"), UNKNOWN_METHOD),
    ("not JSON", ("raw", b"{not json"), PARSE_ERROR),
    ("batch", ("raw", b'[{"jsonrpc": "2.0", "id": 1, "method": "GetTask"}]'), PARSE_ERROR),
]


@pytest.mark.parametrize(("op", "agent_said"), [pytest.param(o, a, id=n) for n, o, a in BAD])
def test_the_agent_s_own_answer_to_a_bad_request_is_served(op: Op, agent_said: Json) -> None:
    recording = Recording(ModelAgent())
    recording.run(Client("a"), [SEND, op])
    service = replay(recording)
    answer = serve(service, Client("b"), op)
    assert answer["error"] == agent_said
    entry = service.journal.requests[-1]
    assert entry.answer == "recorded" and clean(service)


@pytest.mark.parametrize(
    ("recorded", "live", "agent_said"),
    [
        (("unknown", "tasks/frobnicate"), ("unknown", "other/method"), UNKNOWN_METHOD),
        (("raw", b"{not json"), ("raw", b"\xff\xfe garbage"), PARSE_ERROR),
    ],
)
def test_the_agent_s_answer_to_a_bad_request_serves_another_like_it_and_says_so(
    recorded: Op, live: Op, agent_said: Json
) -> None:
    recording = Recording(ModelAgent())
    recording.run(Client("a"), [SEND, recorded])
    service = replay(recording)
    assert serve(service, Client("b"), live)["error"] == agent_said
    entry = service.journal.requests[-1]
    assert entry.answer == "adapted" and "could not serve" in entry.changes[0]
    assert clean(service)


@pytest.mark.parametrize(
    "op", [("unknown", "tasks/frobnicate"), ("raw", b"{not json"), ("raw", b"[1]")]
)
def test_a_bad_request_the_capture_has_no_answer_for_is_synthesized_and_reported(op: Op) -> None:
    recording = Recording(ModelAgent())
    recording.run(Client("a"), [SEND, ("get", 0)])
    service = replay(recording)
    serve(service, Client("b"), op)
    entry = service.journal.requests[-1]
    assert entry.answer == "synthesized" and entry.changes
    assert not service.report.clean
    assert len(service.report.synthesized_answers) == 1
    assert service.report.as_json()["synthesized"] == service.report.synthesized_answers


def test_an_unknown_route_is_answered_only_by_its_own_recorded_answer() -> None:
    # What a framework answers an unknown route depends on the route (the fuzzer's
    # unknown-routes: a 404 for one path, a 307 to the slashed path for another), so another
    # route's refusal is never served for it: it is synthesized, and reported.
    request = Request("GET", "/favicon.ico", (("accept", "*/*"),))
    reply = Response(404, "Not Found", (("content-type", "text/plain"),), b"Not Found")
    recording = Recording(ModelAgent())
    recording.run(Client("a"), [SEND])
    recording.exchanges.append(Exchange(2, classify(request, reply), request, reply, 5000))
    service = replay(recording)
    other = Request("GET", "/robots.txt", (("accept", "*/*"),))
    outcome = service.handle(other, Conn())
    assert service.journal.requests[-1].answer == "synthesized"
    assert service.report.synthesized_answers and not service.report.clean
    assert not (isinstance(outcome, Served) and outcome.step.number == 2)
    same = service.handle(request, Conn())
    assert isinstance(same, Served) and same.kind == "recorded"
    assert isinstance(same.answer, HttpAnswer) and same.answer.body == b"Not Found"


def test_a_miss_is_synthesized_and_named() -> None:
    recording = Recording(ModelAgent())
    recording.run(Client("a"), [SEND, ("get", 0)])
    service = replay(recording)
    answer = serve(service, Client("b"), ("probe-get", None))
    assert "miss" in answer
    entry = service.journal.requests[-1]
    assert entry.answer == "synthesized" and entry.outcome == "miss"
    assert service.report.synthesized_answers[0].startswith("request 1, POST /a2a/jsonrpc")


def test_a_listing_s_next_page_is_served_for_the_cursor_it_handed_out() -> None:
    def listing(number: int, params: Json, result: Json) -> Exchange:
        body = {"jsonrpc": "2.0", "id": number, "method": "ListTasks", "params": params}
        request = Request(
            "POST",
            "/a2a/jsonrpc",
            (("content-type", "application/json"),),
            json.dumps(body).encode(),
        )
        reply = Response(
            200,
            "OK",
            (("content-type", "application/json"),),
            json.dumps({"jsonrpc": "2.0", "id": number, "result": result}).encode(),
        )
        return Exchange(number, classify(request, reply), request, reply, number * 1000)

    task = {"id": "pre-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}}
    first = listing(
        1, {"pageSize": 1}, {"tasks": [task], "nextPageToken": "page-2", "totalSize": 2}
    )
    second = listing(
        2,
        {"pageSize": 1, "pageToken": "page-2"},
        {"tasks": [{**task, "id": "pre-2"}], "totalSize": 2},
    )
    service = ReplayService([Recording(exchanges=[first, second]).capture()], ids=IdFactory(3))
    early = service.handle(second.request, Conn())
    assert isinstance(early, Miss)  # a cursor nobody handed out yet is unknown
    got = service.handle(first.request, Conn())
    assert isinstance(got, Served) and b'"page-2"' in got.answer.body  # type: ignore[union-attr]
    then = service.handle(second.request, Conn())
    assert isinstance(then, Served) and then.step.number == 2 and then.kind == "recorded"


@pytest.mark.parametrize("limit", [1, 2, 64])
def test_a_read_the_session_cannot_match_moves_its_task_to_a_session_of_its_own(
    limit: int,
) -> None:
    # Two waiting tasks in one context, only the first recorded with a cancel: a live client
    # that cancels both has its second task read a way the session has no second of.  The
    # task moves to a session of its own (Hall's condition holds where it was), and is still
    # answered as recorded, even when a new session pushes the old one out of the LRU.
    ops: list[Op] = [("send-ctx", "echo a"), ("send-ctx", "wait"), ("send-ctx", "wait")]
    recording = Recording(ModelAgent())
    client = Client("raw")
    recording.run(client, ops)
    recording.step(client, ("cancel", 1))
    recording.step(client, ("get", 2))
    service = ReplayService([recording.capture()], ids=IdFactory(5), max_sessions=limit)
    live = Client("raw")
    for op in ops:
        serve(service, live, op)
    first, second = serve(service, live, ("cancel", 1)), serve(service, live, ("cancel", 2))
    assert first["result"]["status"]["state"] == second["result"]["status"]["state"]
    assert service.state.problems() == []
    assert len(service.state) == min(2, limit)  # the second task's session, and the first's
    assert clean(service)


def test_live_tasks_a_recorded_listing_cannot_show_are_said_to_be_left_out() -> None:
    # Recorded: one task, a listing, a second task.  A client that creates both before it
    # lists gets the recorded listing, which has no item for its second task: it says so.
    recording = Recording(ModelAgent())
    recording.run(Client("a"), [SEND, ("list", None), WAIT])
    service = replay(recording)
    client = Client("a")
    for op in (SEND, WAIT):
        serve(service, client, op)
    listed = serve(service, client, ("list", None))["result"]["tasks"]
    assert [t["id"] for t in listed] == client.tasks[:1]
    entry = service.journal.requests[-1]
    assert entry.answer == "adapted"
    assert any("1 live task(s) this recorded listing has no item for" in c for c in entry.changes)
