"""What a noisy agent varies: the paths that differ between runs of one capture (pure).

`verify --learn N` plays a capture N times against the agent and hands the N new captures
here.  Every pair of runs is diffed (with the patterns already in force, so nothing is
learnt twice); every counted difference names a path, which becomes an ignore pattern in
the recording's own indexes (`events[3~4]` -> `events[3]`, which `--ignore` matches
against either side).  Each pattern remembers the pairs of runs it differed between.

The recording itself takes no part: what differs between it and the agent may be a real
regression, and learning must not hide one.  What a pattern cannot name (an exchange only
one run has, a v0.3/v1.0 rename) is not learnt; `Learning.unlearnt` says what it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from recorder.capture import Capture
from recorder.diff import CaptureDiff, IgnorePattern, PairKind, diff_captures, side_path

Runs = tuple[int, int]  # two runs, numbered from 1


@dataclass(frozen=True, slots=True)
class Learnt:
    pattern: str
    runs: tuple[Runs, ...]  # the pairs of runs it differed between

    def comment(self) -> str:
        return "differed between runs " + ", ".join(f"{a} and {b}" for a, b in self.runs)


@dataclass(frozen=True, slots=True)
class Learning:
    runs: int
    learnt: tuple[Learnt, ...]
    unlearnt: tuple[str, ...] = ()  # what differed but no pattern can name


def learn(
    captures: Sequence[Capture], *, ignore: Sequence[str] = (), compare: Sequence[str] = ()
) -> Learning:
    """The paths that differ between any two of `captures` (runs of one recording)."""
    found: dict[str, list[Runs]] = {}
    unlearnt: list[str] = []
    for (i, a), (j, b) in combinations(enumerate(captures, 1), 2):
        diff = diff_captures(a, b, ignore=ignore, compare=compare, collapse_polls=True)
        for pattern in _patterns(diff, unlearnt, (i, j)):
            found.setdefault(pattern, []).append((i, j))
    learnt = tuple(Learnt(p, tuple(runs)) for p, runs in found.items())
    return Learning(len(captures), learnt, tuple(dict.fromkeys(unlearnt)))


def _patterns(diff: CaptureDiff, unlearnt: list[str], runs: Runs) -> list[str]:
    out = []
    for pair in diff.exchanges:
        where = f"runs {runs[0]} and {runs[1]}: {pair.label} {pair.operation}"
        if pair.kind in (PairKind.INSERTED, PairKind.REMOVED):
            unlearnt.append(f"{where} {pair.kind.value}")
        unlearnt += [f"{where}: {r.text}" for r in pair.renames]
        for d in pair.differences:
            pattern = pattern_of(d.path) if d.counts else None
            if pattern is not None and pattern not in out:
                out.append(pattern)
            elif d.counts and pattern is None:
                unlearnt.append(f"{where}: {d.path}")
    return out


def pattern_of(path: str) -> str | None:
    """The ignore pattern naming a difference's `path`, or None when none can."""
    text = side_path(path, "A")
    try:
        IgnorePattern.parse(text)
    except ValueError:
        return None
    return text
