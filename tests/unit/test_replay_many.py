"""Many clients at once against one replay: each sees what a live agent would show it.

The recording: two different clients (`alice` and `bob`) against one agent that already held
tasks, interleaved.  On replay, K clients (1 to 20) each run one of the two scripts with
probes and bogus continuations thrown in, some alike in every header and some told apart by
them, in a random interleaving, on a new connection per request from a small cycle of
ports.  Each must see what a live agent of its own (holding the same tasks from before)
shows it: the same answers, ids aside; its own tasks among the listed ones, and the tasks from
before; not-found for ids never issued; its own ids (context `conv-1`, push config `cfg-1`)
never refused.  No answer may be synthesized, and the session state's invariants hold.

The property runs with random seeds (see tests/conftest.py); ids come from seeded sources
(`IdFactory`, `_agent_model.seed_ids`), so a failing example replays byte for byte.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator

from _agent_model import Client, Json, ModelAgent, Op, Recording, as_live, seed_ids
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from recorder.replay import Client as Conn
from recorder.replay import HttpAnswer, IdFactory, Miss, ReplayService

SEND, WAIT = ("send", "echo a"), ("send", "wait")
BEFORE = 2  # tasks the agent held before the recording
SCRIPTS: dict[str, list[Op]] = {
    "alice": [
        SEND,
        ("get", 0),
        WAIT,
        ("cancel", 1),
        ("get", 1),
        ("list", None),
        ("probe-get", "nonexistent-1"),
        ("probe-cancel", "nonexistent-2"),
        ("bogus", None),
        ("get", 0),
    ],
    "bob": [
        ("send-ctx", "echo b"),
        ("config", 0),
        ("get-config", 0),
        ("send-ctx", "wait"),
        ("follow", 1),
        ("list-ctx", None),
        ("get", 1),
        ("list", None),
    ],
}
EXTRAS: list[Op] = [("probe-get", None), ("probe-cancel", None), ("bogus", None)]


def recorded_service(seed: int) -> ReplayService:
    """Alice and Bob recorded against one agent, their requests interleaved."""
    seed_ids(2 * seed)  # the clients' ids and the replay's from streams of their own
    recording = Recording(ModelAgent.holding(BEFORE))
    clients = {name: Client(name) for name in SCRIPTS}
    turns = [name for name, ops in SCRIPTS.items() for _ in ops]
    random.Random(seed).shuffle(turns)
    position = dict.fromkeys(SCRIPTS, 0)
    for name in turns:
        recording.step(clients[name], SCRIPTS[name][position[name]])
        position[name] += 1
    # The model agent asks for no credentials: clients without an Authorization header are
    # answered as the others, so the replay is told not to check for them.
    return ReplayService([recording.capture()], ids=IdFactory(2 * seed + 1), credentials=False)


def serve(service: ReplayService, client: Client, op: Op) -> Json:
    outcome = service.handle(client.request(op), Conn(client.connection()))
    assert isinstance(outcome.answer, HttpAnswer)
    answer = json.loads(outcome.answer.body)
    if isinstance(outcome, Miss):
        answer = {"miss": outcome.describe()}
    client.saw(op, answer)
    return answer


def live(ops: list[Op], name: str) -> list[Json]:
    return Recording(ModelAgent.holding(BEFORE)).run(Client(name), list(ops))


def synthesized(service: ReplayService) -> list[str]:
    return [
        f"{e.number}: {e.detail}" for e in service.journal.requests if e.answer == "synthesized"
    ]


@st.composite
def schedules(draw: st.DrawFn) -> tuple[list[tuple[str, str, bool]], list[list[Op]], list[int]]:
    """K clients (role, name, identity), each one's operations, and an interleaving."""
    count = draw(st.integers(1, 20))
    clients, runs = [], []
    for n in range(count):
        role = draw(st.sampled_from(sorted(SCRIPTS)))
        alike = draw(st.booleans())  # alike in every header to the others of its role
        clients.append((role, role if alike else f"{role}-{n}", not alike or draw(st.booleans())))
        ops = list(SCRIPTS[role])
        for extra in draw(st.lists(st.sampled_from(EXTRAS), max_size=3)):
            ops.insert(draw(st.integers(0, len(ops))), extra)
        runs.append(ops)
    turns = [i for i, ops in enumerate(runs) for _ in ops]
    random.Random(draw(st.integers(0, 2**32 - 1))).shuffle(turns)
    return clients, runs, turns


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schedules(), st.integers(0, 2**32 - 1))
def test_k_clients_each_see_what_a_live_agent_shows_them(
    schedule: tuple[list[tuple[str, str, bool]], list[list[Op]], list[int]], seed: int
) -> None:
    who, runs, turns = schedule
    service = recorded_service(seed)
    ports = itertools.cycle(range(20000, 20007))  # one host's ports, reused across clients
    clients = [Client(name, identity=identity, ports=ports) for _, name, identity in who]
    seen: list[list[Json]] = [[] for _ in runs]
    position = [0] * len(runs)
    for i in turns:
        seen[i].append(serve(service, clients[i], runs[i][position[i]]))
        position[i] += 1
    for i, ops in enumerate(runs):
        assert as_live(ops, seen[i], live(ops, who[i][1])) == [], (i, who[i], ops)
    assert synthesized(service) == []
    assert service.state.problems() == []


# ---- the session state, step by step -----------------------------------------------------------


class Replaying(RuleBasedStateMachine):
    """Clients come and go at random against one replay; after every request the session
    state's invariants hold and every client has seen what a live agent shows it."""

    def __init__(self) -> None:
        super().__init__()
        self.service: ReplayService | None = None
        self.clients: list[tuple[Client, list[Op], list[Json], Iterator[Op]]] = []

    @initialize(seed=st.integers(0, 2**32 - 1), limit=st.sampled_from([3, 4096]))
    def record(self, seed: int, limit: int) -> None:
        self.service = recorded_service(seed)
        self.service.state.limit = limit  # a few sessions: forgetting happens too
        self.limit = limit

    @rule(role=st.sampled_from(sorted(SCRIPTS)), alike=st.booleans())
    def arrive(self, role: str, alike: bool) -> None:
        name = role if alike else f"{role}-{len(self.clients)}"
        self.clients.append((Client(name, identity=not alike), [], [], iter(SCRIPTS[role])))

    @precondition(lambda self: self.clients)
    @rule(data=st.data())
    def request(self, data: st.DataObject) -> None:
        client, ops, seen, script = data.draw(st.sampled_from(self.clients))
        op = next(script, None)
        if op is None or (isinstance(op[1], int) and op[1] >= len(client.tasks)):
            return  # done, or its task was never handed out (its session was forgotten)
        assert self.service is not None
        ops.append(op)
        seen.append(serve(self.service, client, op))

    @precondition(lambda self: self.clients)
    @rule(data=st.data(), extra=st.sampled_from(EXTRAS))
    def probe(self, data: st.DataObject, extra: Op) -> None:
        client, ops, seen, _ = data.draw(st.sampled_from(self.clients))
        assert self.service is not None
        ops.append(extra)
        seen.append(serve(self.service, client, extra))

    @invariant()
    def state_holds(self) -> None:
        if self.service is not None:
            assert self.service.state.problems() == []

    @invariant()
    def clients_see_what_live_shows(self) -> None:
        if self.service is None or self.limit < 4096:
            return  # a forgotten session's ids are unknown for good: not what live shows
        for client, ops, seen, _ in self.clients:
            assert as_live(ops, seen, live(ops, client.name)) == [], (client.name, ops)
        assert synthesized(self.service) == []


Replaying.TestCase.settings = settings(
    max_examples=30,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_replay_state = Replaying.TestCase
