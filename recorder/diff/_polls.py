"""Polls: runs of identical GetTask/ListTasks requests, whose length depends on timing alone."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from recorder.diff._ignore import IgnorePattern, kept
from recorder.diff._normal import NormalExchange
from recorder.diff._result import Difference, DiffKind, ExchangeDiff

# Read-only operations a client repeats while it waits on a task: a run of them is a poll.
POLL_OPERATIONS = frozenset({"GetTask", "ListTasks"})


def _poll_signature(x: NormalExchange) -> str | None:
    """What two polls share: operation and request, the JSON-RPC envelope id left out."""
    if x.key not in POLL_OPERATIONS:
        return None
    value = x.request.body.value
    if x.request.body.kind == "json" and isinstance(value, dict) and "jsonrpc" in value:
        value = {k: v for k, v in value.items() if k != "id"}
    messages = [(m.body.kind, m.body.value) for m in x.request.messages]
    return repr((x.key, x.request.method, x.request.target, value, messages))


def last_polls(exchanges: Sequence[NormalExchange]) -> tuple[list[NormalExchange], dict[int, int]]:
    """The exchanges with only the last of each run of identical polls (it shows the state the
    client waited for), and each kept last poll's run length, by number."""
    kept: list[NormalExchange] = []
    runs: dict[int, int] = {}
    signature: str | None = None
    for x in exchanges:
        current = _poll_signature(x)
        if current is not None and current == signature and kept:
            runs[x.number] = runs.pop(kept[-1].number, 1) + 1
            kept[-1] = x
        else:
            kept.append(x)
        signature = current
    return kept, runs


def with_polls(
    pair: ExchangeDiff, old: int, new: int, ignores: Sequence[IgnorePattern] = ()
) -> ExchangeDiff:
    """`pair` with a note when its poll runs differ in length (unless `ignores` drop it)."""
    note = Difference(DiffKind.POLLS, "polls", old, new)
    if old == new or not kept((note,), ignores):
        return pair
    return replace(pair, differences=(*pair.differences, note))
