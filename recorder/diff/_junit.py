"""The diff as JUnit XML (`--format junit`): a case per pair of captures, a failure per counted
difference, rename and one-sided exchange; notes and the summary are the case's output.
"""

from __future__ import annotations

from collections.abc import Sequence

from recorder.ci import Case, Failure, Suite, render_junit
from recorder.diff._result import CaptureDiff, ExchangeDiff, PairKind
from recorder.diff._shown import Unpaired, describe

CLASSNAME = "a2a-recorder.diff"


def diff_failures(diff: CaptureDiff) -> tuple[Failure, ...]:
    return tuple(f for pair in diff.exchanges for f in _pair_failures(pair))


def _pair_failures(pair: ExchangeDiff) -> list[Failure]:
    where = f"{pair.label} {pair.operation}"
    if pair.kind in (PairKind.INSERTED, PairKind.REMOVED):
        return [Failure(f"{where}: {pair.kind.value}", pair.kind.value)]
    if pair.kind is PairKind.SAME:
        return []
    out = [Failure(f"{where}: {r.text}", "rename") for r in pair.renames]
    out += [Failure(f"{where}: {describe(d)}", d.kind.value) for d in pair.differences if d.counts]
    return out


def diff_notes(diff: CaptureDiff) -> str:
    """The notes (differences that do not count) and the summary, for a case's output."""
    notes = [
        f"{pair.label} {pair.operation}: {describe(d)}"
        for pair in diff.exchanges
        for d in pair.differences
        if not d.counts
    ]
    if diff.approximate:
        notes.insert(0, "the captures differ too much to align exactly; paired by position")
    return "\n".join([*notes, f"Summary: {diff.summary()}"]) + "\n"


def diff_case(diff: CaptureDiff, classname: str = CLASSNAME) -> Case:
    return Case(
        f"{diff.a_name} ~ {diff.b_name}", classname, diff_failures(diff), output=diff_notes(diff)
    )


def render_junit_report(
    diffs: Sequence[CaptureDiff], *, unpaired: Unpaired = (), color: bool = False
) -> str:
    cases = [diff_case(d) for d in diffs]
    cases += [
        Case(name, CLASSNAME, (Failure(f"only in {side}: {name}", "unpaired"),))
        for side, name in unpaired
    ]
    return render_junit([Suite("diff", tuple(cases))], "a2a-recorder diff")
