"""What a noisy agent varies: the paths that differ between runs of one capture (pure).

`verify --learn N` diffs every pair of its N new captures (never the recording: what differs
from it may be a regression); each counted difference's path becomes an ignore pattern in the
recording's own indexes (`events[3~4]` -> `events[3]`).  A list whose length or members vary is
learnt as `tasks[*]`, and a pattern under a broader one is left out.  What no pattern can name
(a one-sided exchange, a rename) is `Learning.unlearnt`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from recorder.capture import Capture
from recorder.diff import (
    CaptureDiff,
    DiffKind,
    IgnorePattern,
    PairKind,
    diff_captures,
    segments,
    side_path,
)

Runs = tuple[int, int]  # two runs, numbered from 1
_INDEX = re.compile(r"\[\d+\]")
_LAST_INDEX = re.compile(r"\[\d+\]$")


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
    learnt = tuple(Learnt(p, tuple(runs)) for p, runs in _generalised(found).items())
    return Learning(len(captures), learnt, tuple(dict.fromkeys(unlearnt)))


def _generalised(found: dict[str, list[Runs]]) -> dict[str, list[Runs]]:
    """`found` with each index that varies as `[*]`, less the patterns a broader one covers."""
    wide: dict[str, list[Runs]] = {}
    for pattern, runs in found.items():
        for other in _INDEX.finditer(pattern):
            starred = pattern[: other.start()] + "[*]" + pattern[other.end() :]
            if any(p != pattern and _starred(p, other.start()) == starred for p in found):
                pattern = starred
        merged = wide.setdefault(pattern, [])
        merged += [r for r in runs if r not in merged]
    return {
        p: sorted(runs)
        for p, runs in wide.items()
        if not any(q != p and covers(q, p) for q in wide)
    }


def _starred(pattern: str, at: int) -> str | None:
    found = _INDEX.match(pattern, at)
    return None if found is None else pattern[:at] + "[*]" + pattern[found.end() :]


def covers(broad: str, narrow: str) -> bool:
    """Whether `broad` drops everything `narrow` drops (`tasks[*]` covers `tasks[3].id`)."""
    wide, small = segments(broad), segments(narrow)
    return len(wide) <= len(small) and all(
        w == s or (w == "[*]" and s.startswith("[")) for w, s in zip(wide, small, strict=False)
    )


def _patterns(diff: CaptureDiff, unlearnt: list[str], runs: Runs) -> list[str]:
    out = []
    for pair in diff.exchanges:
        where = f"runs {runs[0]} and {runs[1]}: {pair.label} {pair.operation}"
        if pair.kind in (PairKind.INSERTED, PairKind.REMOVED):
            unlearnt.append(f"{where} {pair.kind.value}")
        unlearnt += [f"{where}: {r.text}" for r in pair.renames]
        for d in pair.differences:
            pattern = pattern_of(d.path, d.kind) if d.counts else None
            if pattern is not None and pattern not in out:
                out.append(pattern)
            elif d.counts and pattern is None:
                unlearnt.append(f"{where}: {d.path}")
    return out


def pattern_of(path: str, kind: DiffKind = DiffKind.CHANGED) -> str | None:
    """The ignore pattern naming a difference's `path` (an element added or removed: any of its
    list's), or None when none can."""
    text = side_path(path, "A")
    if kind in (DiffKind.ADDED, DiffKind.REMOVED):
        text = _LAST_INDEX.sub("[*]", text)
    try:
        IgnorePattern.parse(text)
    except ValueError:
        return None
    return text
