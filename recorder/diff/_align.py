"""Sequence alignment of two sequences of keys (exchanges' operations, events' contents).

Myers' O((N+M)·D) algorithm in its linear-space form (middle snake, split, an explicit stack),
after trimming the common prefix and suffix: memory O(N+M), time near-linear when the captures
are nearly the same (one extra poll costs D=1).  A sub-problem needing more than `max_edits`
is paired by position instead (`approximate`), bounding the worst case.  `align_levels` aligns
on keys of decreasing precision, each level looking again only at what the finer one left.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from enum import StrEnum

DEFAULT_MAX_EDITS = 2000


class StepKind(StrEnum):
    PAIR = "pair"  # same key on both sides
    REMOVED = "removed"  # only in A
    INSERTED = "inserted"  # only in B


@dataclass(frozen=True, slots=True)
class Step:
    kind: StepKind
    a: int | None
    b: int | None


@dataclass(frozen=True, slots=True)
class Alignment:
    steps: tuple[Step, ...]
    approximate: bool = False  # some stretch exceeded the edit budget and was paired by position


def align(
    a: Sequence[Hashable], b: Sequence[Hashable], *, max_edits: int = DEFAULT_MAX_EDITS
) -> Alignment:
    """Align two key sequences, minimising inserted plus removed items."""
    steps: list[Step] = []
    approximate = False
    # Work items: a box (a_lo, a_hi, b_lo, b_hi) still to solve, or steps ready to emit.
    # Boxes are solved left to right, so items are pushed in reverse.
    stack: list[tuple[int, int, int, int] | list[Step]] = [(0, len(a), 0, len(b))]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            steps.extend(item)
            continue
        a_lo, a_hi, b_lo, b_hi, prefix, suffix = _trim(a, b, *item)
        steps.extend(Step(StepKind.PAIR, i, j) for i, j in prefix)
        tail = [Step(StepKind.PAIR, i, j) for i, j in suffix]
        if a_lo == a_hi or b_lo == b_hi:
            steps.extend(_one_sided(a_lo, a_hi, b_lo, b_hi) + tail)
            continue
        split = _middle_snake(a, b, a_lo, a_hi, b_lo, b_hi, max_edits)
        if split is None or split in ((a_lo, b_lo), (a_hi, b_hi)):
            approximate = approximate or split is None
            steps.extend(_by_position(a, b, a_lo, a_hi, b_lo, b_hi) + tail)
            continue
        x, y = split
        stack += [tail, (x, a_hi, y, b_hi), (a_lo, x, b_lo, y)]
    return Alignment(tuple(steps), approximate)


def align_levels(
    a_levels: Sequence[Sequence[Hashable]],
    b_levels: Sequence[Sequence[Hashable]],
    *,
    pair_rest: bool = False,
    max_edits: int = DEFAULT_MAX_EDITS,
) -> Alignment:
    """Align on the first level's keys (`a_levels[k][i]`: item i's at level k), then each
    unpaired stretch on the next level's; with `pair_rest`, what the last leaves is paired by
    position from the stretch's end (a stream's last event is its outcome)."""
    n = len(a_levels[0]) if a_levels else 0
    m = len(b_levels[0]) if b_levels else 0
    levels = list(zip(a_levels, b_levels, strict=True))
    solver = _Levels(levels, pair_rest, max_edits)
    steps = solver.solve(0, 0, n, 0, m)
    return Alignment(tuple(steps), solver.approximate)


@dataclass(slots=True)
class _Levels:
    levels: list[tuple[Sequence[Hashable], Sequence[Hashable]]]
    pair_rest: bool
    max_edits: int
    approximate: bool = False  # some level paired a stretch by position

    def solve(self, level: int, a_lo: int, a_hi: int, b_lo: int, b_hi: int) -> list[Step]:
        if level == len(self.levels):
            return self._rest(a_lo, a_hi, b_lo, b_hi)
        keys_a, keys_b = self.levels[level]
        found = align(keys_a[a_lo:a_hi], keys_b[b_lo:b_hi], max_edits=self.max_edits)
        self.approximate = self.approximate or found.approximate
        out: list[Step] = []
        gap: list[Step] = []
        for step in (*_shifted(found.steps, a_lo, b_lo), None):
            if step is not None and step.kind is not StepKind.PAIR:
                gap.append(step)
                continue
            out += self._gap(level, gap)
            gap = []
            if step is not None:
                out.append(step)
        return out

    def _gap(self, level: int, gap: list[Step]) -> list[Step]:
        a_side = [s.a for s in gap if s.a is not None]
        b_side = [s.b for s in gap if s.b is not None]
        if not a_side or not b_side:
            return gap
        return self.solve(level + 1, a_side[0], a_side[-1] + 1, b_side[0], b_side[-1] + 1)

    def _rest(self, a_lo: int, a_hi: int, b_lo: int, b_hi: int) -> list[Step]:
        if not self.pair_rest:
            return _one_sided(a_lo, a_hi, b_lo, b_hi)
        surplus = (a_hi - a_lo) - (b_hi - b_lo)
        a_start, b_start = a_lo + max(surplus, 0), b_lo + max(-surplus, 0)
        pairs = [
            Step(StepKind.PAIR, i, j)
            for i, j in zip(range(a_start, a_hi), range(b_start, b_hi), strict=True)
        ]
        return _one_sided(a_lo, a_start, b_lo, b_start) + pairs


def _shifted(steps: Sequence[Step], a_lo: int, b_lo: int) -> Sequence[Step]:
    if a_lo == 0 and b_lo == 0:
        return steps  # the whole sequences: nothing to shift, and no copies of every step
    return [
        Step(s.kind, None if s.a is None else s.a + a_lo, None if s.b is None else s.b + b_lo)
        for s in steps
    ]


def _trim(
    a: Sequence[Hashable], b: Sequence[Hashable], a_lo: int, a_hi: int, b_lo: int, b_hi: int
) -> tuple[int, int, int, int, list[tuple[int, int]], list[tuple[int, int]]]:
    prefix = []
    while a_lo < a_hi and b_lo < b_hi and a[a_lo] == b[b_lo]:
        prefix.append((a_lo, b_lo))
        a_lo, b_lo = a_lo + 1, b_lo + 1
    suffix = []
    while a_lo < a_hi and b_lo < b_hi and a[a_hi - 1] == b[b_hi - 1]:
        a_hi, b_hi = a_hi - 1, b_hi - 1
        suffix.append((a_hi, b_hi))
    suffix.reverse()
    return a_lo, a_hi, b_lo, b_hi, prefix, suffix


def _one_sided(a_lo: int, a_hi: int, b_lo: int, b_hi: int) -> list[Step]:
    removed = [Step(StepKind.REMOVED, i, None) for i in range(a_lo, a_hi)]
    return removed + [Step(StepKind.INSERTED, None, j) for j in range(b_lo, b_hi)]


def _by_position(
    a: Sequence[Hashable], b: Sequence[Hashable], a_lo: int, a_hi: int, b_lo: int, b_hi: int
) -> list[Step]:
    """Fallback: walk both sides together, pairing equal keys and splitting unequal ones."""
    steps = []
    i, j = a_lo, b_lo
    while i < a_hi and j < b_hi:
        if a[i] == b[j]:
            steps.append(Step(StepKind.PAIR, i, j))
        else:
            steps += [Step(StepKind.REMOVED, i, None), Step(StepKind.INSERTED, None, j)]
        i, j = i + 1, j + 1
    return steps + _one_sided(i, a_hi, j, b_hi)


def _middle_snake(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    a_lo: int,
    a_hi: int,
    b_lo: int,
    b_hi: int,
    max_edits: int,
) -> tuple[int, int] | None:
    """A split point (x, y) on some shortest edit path through the box (Myers 1986, §4b)."""
    n, m = a_hi - a_lo, b_hi - b_lo
    delta = n - m
    odd = delta % 2 != 0
    limit = (n + m + 1) // 2
    offset = limit + 1
    forward = [0] * (2 * offset + 1)  # furthest x reached on diagonal k, forward
    backward = [0] * (2 * offset + 1)  # furthest x reached on diagonal k, from the end
    for d in range(min(limit, max_edits) + 1):
        for k in range(-d, d + 1, 2):
            x = _forward_x(forward, offset, k, d)
            y = x - k
            while x < n and y < m and a[a_lo + x] == b[b_lo + y]:
                x, y = x + 1, y + 1
            forward[offset + k] = x
            if odd and abs(delta - k) <= d - 1 and x + backward[offset + delta - k] >= n:
                return a_lo + x, b_lo + y
        for k in range(-d, d + 1, 2):
            x = _forward_x(backward, offset, k, d)
            y = x - k
            while x < n and y < m and a[a_hi - 1 - x] == b[b_hi - 1 - y]:
                x, y = x + 1, y + 1
            backward[offset + k] = x
            if not odd and abs(delta - k) <= d and x + forward[offset + delta - k] >= n:
                return a_hi - x, b_hi - y
    return None  # over budget


def _forward_x(v: list[int], offset: int, k: int, d: int) -> int:
    if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
        return v[offset + k + 1]  # step down: an insertion
    return v[offset + k - 1] + 1  # step right: a removal
