"""The replay fuzzer's judge and generator, without sockets (`scripts/fuzz-replay`, issue #33).

The judge must neither invent differences (two runs that differ only in the ids they were
handed or made up, and in timestamps, are the same) nor hide them (another task's id, a value
the other run's client made up, a state, an event, a field).  The generator must draw the same
program from the same seed, and only programs a live agent answers deterministically.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from replay_fuzz.judge import Names, compare, normalise, side_by_side
from replay_fuzz.program import REGRESSIONS, Program, Step, generate
from replay_fuzz.wire import spelled


def names(**bound: str) -> Names:
    found = Names()
    for name, value in bound.items():
        found.bind(value, f"<{name}>")
    return found


def task(task_id: str, context: str, message: str, stamp: str, artifact: str) -> dict[str, Any]:
    return {
        "id": task_id,
        "contextId": context,
        "status": {"state": "TASK_STATE_COMPLETED", "timestamp": stamp},
        "artifacts": [{"artifactId": artifact, "parts": [{"text": "echo a"}]}],
        "history": [{"messageId": message, "contextId": context, "taskId": task_id}],
    }


A = names(T0="7c0c5f3e-1111-4a4a-8b8b-000000000001", X0="ctx-a", m1="m-a")
B = names(T0="9d9d9d9d-2222-4b4b-8c8c-000000000002", X0="ctx-b", m1="m-b")
RUN_A = [
    {"reply": {"task": task(
        "7c0c5f3e-1111-4a4a-8b8b-000000000001", "ctx-a", "m-a",
        "2026-12-07T09:28:06.970414Z", "aaaaaaaa-0000-4000-8000-00000000000a")}},
    {"body": {"error": {"message": "Task 7c0c5f3e-1111-4a4a-8b8b-000000000001 is done"}}},
    {"reply": {"tasks": [], "nextPageToken": "eyJ0cyI6MX0"}},
]  # fmt: skip
RUN_B = [
    {"reply": {"task": task(
        "9d9d9d9d-2222-4b4b-8c8c-000000000002", "ctx-b", "m-b",
        "2026-12-07T10:00:00Z", "bbbbbbbb-0000-4000-8000-00000000000b")}},
    {"body": {"error": {"message": "Task 9d9d9d9d-2222-4b4b-8c8c-000000000002 is done"}}},
    {"reply": {"nextPageToken": "ZZZ", "tasks": []}},
]  # fmt: skip


def test_runs_that_differ_only_in_their_ids_and_times_are_the_same() -> None:
    live, replay = normalise(RUN_A, A), normalise(RUN_B, B)
    assert compare(live, replay) == []
    assert live[0]["reply"]["task"]["id"] == "<T0>"
    assert live[0]["reply"]["task"]["artifacts"][0]["artifactId"] == "<id1>"
    assert live[0]["reply"]["task"]["status"]["timestamp"] == "<time>"
    assert live[1]["body"]["error"]["message"] == "Task <T0> is done"
    assert live[2]["reply"]["nextPageToken"] == "<page1>"


def test_another_task_s_id_is_a_difference() -> None:
    both = names(T0="t-zero-0000", T1="t-one-11111")
    live = normalise([{"id": "t-zero-0000"}], both)
    replay = normalise([{"id": "t-one-11111"}], both)
    assert [d.step for d in compare(live, replay)] == [0]


def test_a_value_the_other_run_made_up_is_a_difference() -> None:
    # The replay shows the client the messageId the recording's client sent, not its own.
    live = normalise([{"messageId": "m-a"}], A)
    replay = normalise([{"messageId": "m-a"}], B)
    assert live == [{"messageId": "<m1>"}]
    assert [d.step for d in compare(live, replay)] == [0]


@pytest.mark.parametrize(
    "altered",
    [
        lambda o: o[0]["reply"]["task"]["status"].update(state="TASK_STATE_WORKING"),
        lambda o: o[0]["reply"]["task"]["history"].clear(),
        lambda o: o[0]["reply"]["task"].update(extra=1),
        lambda o: o[1]["body"]["error"].update(message="Task nope is done"),
        lambda o: o[2]["reply"].update(nextPageToken=""),
    ],
    ids=["state", "event lost", "field more", "message", "no next page"],
)
def test_an_altered_outcome_is_reported_at_its_step(altered: Any) -> None:
    import copy

    changed = copy.deepcopy(RUN_B)
    altered(changed)
    found = compare(normalise(RUN_A, A), normalise(changed, B))
    assert len(found) == 1
    shown = side_by_side(found[0].live, found[0].replay).splitlines()[1:]
    assert any(line[4 + 64 + 1] in "≠<>" for line in shown)  # a row marked changed


def test_numbered_ids_follow_the_outcome_not_the_server_s_key_order() -> None:
    first = normalise([{"a": "11111111-1111-4111-8111-111111111111", "b": "x"}], Names())
    second = normalise([{"b": "x", "a": "22222222-2222-4222-8222-222222222222"}], Names())
    assert compare(first, second) == []


def test_field_names_are_spelled_as_in_the_proto_on_request() -> None:
    request = {"message": {"contextId": "c", "parts": [{"mediaType": "t"}]}, "pageSize": 2}
    assert spelled(request, True) == {
        "message": {"context_id": "c", "parts": [{"media_type": "t"}]},
        "page_size": 2,
    }
    assert spelled(request, False) is request


# --- the generator ------------------------------------------------------------------------


def test_a_seed_draws_the_same_program_every_time() -> None:
    assert generate(1234, 7, 12) == generate(1234, 7, 12)
    assert generate(1234, 7, 12) != generate(1234, 8, 12)
    assert generate(1234, 7, 12).render() == generate(1234, 7, 12).render()


@pytest.mark.parametrize("seed", range(40))
def test_programs_are_deterministic_on_a_live_agent(seed: int) -> None:
    program = generate(seed, 0, 16)
    running: str | None = None
    working: set[str] = set()
    for step in program.steps:
        if running is not None:  # a task still running is polled by the very next step
            assert (step.op, step.arg("task")) == ("poll", running), program.render()
            running = None
        if step.op == "send" and step.arg("immediate") and step.arg("text") != "wait":
            running = step.arg("binds")
        if step.op == "send" and step.arg("text") == "wait":
            working.add(step.arg("binds"))
        if step.op in ("cancel", "subscribe") and step.arg("task") in working:
            working.discard(step.arg("task"))
    assert running is None and not working, program.render()  # nothing left going on


def test_a_program_whose_listing_shows_the_whole_store_is_told_apart() -> None:
    filtered = Step("list", args={"context": "X0"})
    assert not Program("p", (filtered,)).lists_the_store
    assert Program("p", (Step("list"),)).lists_the_store
    # a2a-sdk reads only lowerCamel query names: `context_id` filters nothing on HTTP+JSON.
    snake_query = Step("list", binding="HTTP+JSON", snake=True, args={"context": "X0"})
    assert Program("p", (snake_query,)).lists_the_store
    assert not Program("p", (Step("list", snake=True, args={"context": "X0"}),)).lists_the_store


def test_a_parallel_group_s_copies_cannot_see_each_other() -> None:
    """The copies' outcomes are compared as a set, whichever was served first: none may see
    another's task.  A listing of the whole store would, as their timing has it (seed
    722602468, program 16, step 11, differed live twice and on replay)."""
    send = Step("send", args={"text": "wait", "context": "X0", "immediate": True, "binds": "T0"})
    cancel = Step("cancel", args={"task": "T0"})
    own = Step("list", binding="HTTP+JSON", args={"context": "X0", "page_size": 1})
    Program("p", (Step("parallel", args={"copies": 3, "steps": (send, own, cancel)}),))
    store = Step("list", binding="HTTP+JSON", snake=True, args={"context": "X0"})
    with pytest.raises(ValueError, match="must not see each other"):
        Program("p", (Step("parallel", args={"copies": 3, "steps": (send, store, cancel)}),))


@pytest.mark.parametrize("seed", [722602468, *range(40)])
def test_the_generator_draws_no_parallel_listing_of_the_whole_store(seed: int) -> None:
    for index in range(40):
        program = generate(seed, index, 20)  # `Program` refuses one
        for step in program.steps:
            for inner in step.arg("steps", ()):
                if inner.op == "list":
                    assert not (inner.snake and inner.binding == "HTTP+JSON"), program.render()


def test_the_copies_of_seed_722602468_program_16_list_their_own_contexts() -> None:
    found = generate(722602468, 16, 20).steps[11]
    assert found.op == "parallel" and found.arg("copies") == 3
    assert [(s.op, s.binding, s.snake) for s in found.arg("steps")] == [
        ("send", "HTTP+JSON", True),
        ("list", "HTTP+JSON", False),  # drawn snake_case before, and so the whole store
        ("cancel", "JSONRPC", True),
    ]


def test_the_copies_listing_their_own_contexts_are_a_fixed_program() -> None:
    (before, group) = REGRESSIONS["parallel-own-listings"].steps
    assert before.op == "send" and group.op == "parallel" and group.arg("copies") == 3
    listing = group.arg("steps")[1]
    assert (listing.op, listing.binding, listing.snake) == ("list", "HTTP+JSON", False)
    assert listing.arg("context") == "X0" and listing.arg("page_size") == 1


def test_the_issue_s_shortest_failure_is_a_fixed_program() -> None:
    shortest = REGRESSIONS["issue-33-shortest"]
    assert [(s.op, s.binding) for s in shortest.steps] == [
        ("send", "JSONRPC"),
        ("list", "GRPC"),
        ("list", "HTTP+JSON"),
        ("send", "GRPC"),
    ]
    assert shortest.steps[1].arg("page_size") == 1
    assert shortest.steps[2].arg("context") == shortest.steps[3].arg("context") == "X0"
    assert all(s.conn == "new" for s in shortest.steps)
