"""Diff fixes found on the real corpus: empty defaults, percent-encoded grpc-message, poll runs."""

from __future__ import annotations

import json
from dataclasses import replace

from test_diff_factory import capture, card_exchange, get_task_exchange, send_exchange

from recorder.capture import Exchange, Response
from recorder.diff import DiffKind, Normaliser, PairKind, describe, diff_captures, render_text


def _with_body(x: Exchange, edit: dict[str, object]) -> Exchange:
    assert x.response is not None
    value = json.loads(x.response.body)
    value["result"].update(edit)
    return replace(x, response=replace(x.response, body=json.dumps(value).encode()))


def test_empty_defaults_are_one_note_that_does_not_count() -> None:
    a = capture(card_exchange(1, "a", 8080), get_task_exchange(2, "a", 8080), seed="a")
    b_poll = _with_body(get_task_exchange(2, "b", 8081), {"metadata": {}, "tags": []})
    b = capture(card_exchange(1, "b", 8081), b_poll, seed="b")
    result = diff_captures(a, b)
    assert result.same
    (note,) = [d for d in result.exchanges[1].differences if d.kind is DiffKind.EMPTY_DEFAULT]
    assert note.new == {"metadata": 1, "tags": 1} and note.old == {}
    assert "only B sends metadata, tags" in describe(note)


def test_a_non_empty_added_field_still_counts_next_to_empty_defaults() -> None:
    a = capture(get_task_exchange(1, "a", 8080), seed="a")
    b = capture(
        _with_body(get_task_exchange(1, "b", 8080), {"metadata": {}, "name": "x"}), seed="b"
    )
    (pair,) = diff_captures(a, b).exchanges
    assert pair.kind is PairKind.CHANGED
    kinds = [d.kind for d in pair.differences]
    assert kinds.count(DiffKind.EMPTY_DEFAULT) == 1 and DiffKind.ADDED in kinds


def test_false_and_zero_are_not_treated_as_empty_defaults() -> None:
    a = capture(get_task_exchange(1, "a", 8080), seed="a")
    b = capture(_with_body(get_task_exchange(1, "b", 8080), {"final": False}), seed="b")
    assert not diff_captures(a, b).same


def test_grpc_message_is_percent_decoded_before_ids_are_replaced() -> None:
    n = Normaliser()
    task = "f5314c49-fed9-4777-bb89-6de84b124157"
    n.observe_json({"id": task, "status": {"state": "TASK_STATE_WORKING"}})
    headers = n.headers((("grpc-message", f"Task%20not%20found:%20{task}"),))
    assert headers == (("grpc-message", "Task not found: <task-1>"),)


def _polls(seed: str, count: int) -> list[Exchange]:
    return [get_task_exchange(3 + i, seed, 8080) for i in range(count)]


def _with_state(x: Exchange, state: str) -> Exchange:
    assert x.response is not None
    value = json.loads(x.response.body)
    value["result"]["status"]["state"] = state
    body = json.dumps(value).encode()
    return replace(x, response=Response(200, "OK", x.response.headers, body))


def test_collapse_polls_compares_only_the_last_poll_of_a_run() -> None:
    # A polls 4 times, seeing WORKING, WORKING, WORKING, COMPLETED; B polls twice.
    a_polls = [_with_state(x, "TASK_STATE_WORKING") for x in _polls("a", 3)]
    a = capture(send_exchange(1, "a", 8080), *a_polls, get_task_exchange(6, "a", 8080), seed="a")
    b_first = _with_state(get_task_exchange(3, "b", 8080), "TASK_STATE_WORKING")
    b = capture(send_exchange(1, "b", 8080), b_first, get_task_exchange(4, "b", 8080), seed="b")
    plain = diff_captures(a, b)
    assert not plain.same and plain.count(PairKind.REMOVED) == 2
    collapsed = diff_captures(a, b, collapse_polls=True)
    assert collapsed.same, render_text([collapsed])
    last = collapsed.exchanges[-1]
    (note,) = [d for d in last.differences if d.kind is DiffKind.POLLS]
    assert (note.old, note.new, last.a, last.b) == (4, 2, 5, 3)  # capture() renumbers from 1
    quiet = diff_captures(a, b, collapse_polls=True, ignore=["polls"])
    assert quiet.same and all(not e.differences for e in quiet.exchanges)


def test_collapse_polls_still_reports_a_different_final_state() -> None:
    a = capture(send_exchange(1, "a", 8080), *_polls("a", 3), seed="a")
    b_last = _with_state(get_task_exchange(4, "b", 8080), "TASK_STATE_FAILED")
    b = capture(send_exchange(1, "b", 8080), get_task_exchange(3, "b", 8080), b_last, seed="b")
    result = diff_captures(a, b, collapse_polls=True)
    assert not result.same
    paths = [d.path for e in result.exchanges for d in e.differences if d.counts]
    assert "body.result.status.state" in paths
