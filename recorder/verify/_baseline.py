"""Verify against a baseline: the drift a project has accepted, so CI fails on new drift only.

Each drift is a baseline entry (`recorder.ci`, tool "verify"): a counted difference, a rename,
a one-sided exchange, a request not sent; exchanges named as the diff names them.  Timing is
not baselined (`--max-slowdown` is its knob).  Pure.
"""

from __future__ import annotations

from dataclasses import replace

from recorder.ci import BaselineOutcome, Entry
from recorder.diff import ExchangeDiff, PairKind, describe
from recorder.verify._result import VerifyResult

# What an entry points at: ("pair", i), ("diff", i, j), ("rename", i, j), ("not-sent", k).
Place = tuple[str, int] | tuple[str, int, int]


def baseline_items(result: VerifyResult) -> list[tuple[Entry, Place]]:
    """Every drift of `result` as a baseline entry, with where it is."""
    out: list[tuple[Entry, Place]] = []
    for i, pair in enumerate(result.diff.exchanges):
        name = f"A#{pair.a}" if pair.a is not None else f"B#{pair.b}"
        base = {"capture": result.capture, "exchange": name, "operation": pair.operation}
        if pair.kind in (PairKind.INSERTED, PairKind.REMOVED):
            out.append(({**base, "kind": pair.kind.value, "path": ""}, ("pair", i)))
            continue
        for j, rename in enumerate(pair.renames):
            entry = {**base, "kind": "rename", "path": f"rename:{rename.rule}", "what": rename.text}
            out.append((entry, ("rename", i, j)))
        for j, d in enumerate(pair.differences):
            if d.counts:
                entry = {**base, "kind": d.kind.value, "path": d.path, "what": describe(d)}
                out.append((entry, ("diff", i, j)))
    for k, item in enumerate(result.not_sent):
        entry = {"capture": result.capture, "exchange": f"A#{item.number}"}
        entry |= {"operation": item.operation, "kind": "not-sent", "path": "", "what": item.reason}
        out.append((entry, ("not-sent", k)))
    return out


def accept(result: VerifyResult, accepted: set[Place], outcome: BaselineOutcome) -> VerifyResult:
    """`result` less what the baseline accepted; a pair left with nothing is the same."""
    pairs = [
        _pair_less(i, pair, accepted)
        for i, pair in enumerate(result.diff.exchanges)
        if ("pair", i) not in accepted
    ]
    not_sent = tuple(n for k, n in enumerate(result.not_sent) if ("not-sent", k) not in accepted)
    diff = replace(result.diff, exchanges=tuple(pairs))
    return replace(result, diff=diff, not_sent=not_sent, baseline=outcome)


def _pair_less(i: int, pair: ExchangeDiff, accepted: set[Place]) -> ExchangeDiff:
    if pair.kind is not PairKind.CHANGED:
        return pair
    differences = tuple(d for j, d in enumerate(pair.differences) if ("diff", i, j) not in accepted)
    renames = tuple(r for j, r in enumerate(pair.renames) if ("rename", i, j) not in accepted)
    changed = bool(renames) or any(d.counts for d in differences)
    kind = PairKind.CHANGED if changed else PairKind.SAME
    return replace(pair, kind=kind, differences=differences, renames=renames)
