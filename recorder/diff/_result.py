"""The diff result model: raw differences, rename summaries, compared pairs, capture diffs.

Plain frozen values, built by `_compare` and read by `_report`; `ABSENT` marks a missing side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from recorder.capture import Capture


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "(absent)"


ABSENT: Any = _Absent()


class DiffKind(StrEnum):
    CHANGED = "changed"
    ADDED = "added"
    REMOVED = "removed"
    KEY_ORDER = "key-order"  # only compared with strict_order, and then a difference
    # A note: a field one side sends as its empty default ({}, [], "") and the other omits;
    # proto-JSON reads both the same.  Grouped per exchange (old/new: {field name: count}).
    EMPTY_DEFAULT = "empty-default"
    FRAMING = "framing"
    TIMING = "timing"
    # A note (collapse_polls only): a run of identical polls has a different length (old/new).
    POLLS = "polls"


NOTES = frozenset({DiffKind.EMPTY_DEFAULT, DiffKind.POLLS})  # never count
EMPTY_DEFAULTS_PATH = "empty-defaults"


@dataclass(frozen=True, slots=True)
class Difference:
    """One raw difference: where, what kind, the old (A) and new (B) values.  `json_path` is
    the part of `path` inside a JSON document ("" its root, None outside one), for `$.PATH`."""

    kind: DiffKind
    path: str
    old: Any = ABSENT
    new: Any = ABSENT
    json_path: str | None = None

    @property
    def counts(self) -> bool:
        return self.kind not in NOTES


@dataclass(frozen=True, slots=True)
class RenameSummary:
    """A group of raw differences explained by one v0.3 <-> v1.0 rename."""

    rule: str
    text: str
    old: str
    new: str
    count: int
    reverse: bool  # True when B is the v0.3 side
    raw: tuple[Difference, ...] = ()


class PairKind(StrEnum):
    SAME = "same"
    CHANGED = "changed"
    INSERTED = "inserted"  # only in B
    REMOVED = "removed"  # only in A


@dataclass(frozen=True, slots=True)
class ExchangeDiff:
    """One step of the alignment: a compared pair, or an exchange on one side only."""

    kind: PairKind
    operation: str
    a: int | None  # exchange number in A
    b: int | None
    differences: tuple[Difference, ...] = ()  # what remains after renames (notes included)
    renames: tuple[RenameSummary, ...] = ()
    raw: tuple[Difference, ...] = ()  # everything, before renames were recognised
    binding: str | None = None  # "JSONRPC", or "JSONRPC / GRPC" when the two sides differ

    @property
    def label(self) -> str:
        a = f"A#{self.a}" if self.a is not None else "A#-"
        b = f"B#{self.b}" if self.b is not None else "B#-"
        return f"{a} ~ {b}"


@dataclass(frozen=True, slots=True)
class CaptureDiff:
    """The diff of two captures, with the captures when known (reports show their exchanges)."""

    a_name: str
    b_name: str
    exchanges: tuple[ExchangeDiff, ...]
    approximate: bool = False  # alignment fell back to positional pairing somewhere
    a_capture: Capture | None = field(default=None, compare=False, repr=False)
    b_capture: Capture | None = field(default=None, compare=False, repr=False)

    def count(self, kind: PairKind) -> int:
        return sum(1 for e in self.exchanges if e.kind is kind)

    @property
    def compared(self) -> int:
        return self.count(PairKind.SAME) + self.count(PairKind.CHANGED)

    @property
    def renames(self) -> int:
        return sum(len(e.renames) for e in self.exchanges)

    @property
    def same(self) -> bool:
        return all(e.kind is PairKind.SAME for e in self.exchanges)

    def summary(self) -> str:
        return (
            f"{self.compared} exchanges compared, {self.count(PairKind.CHANGED)} differ, "
            f"{self.count(PairKind.INSERTED)} inserted, {self.count(PairKind.REMOVED)} removed, "
            f"{self.renames} renames"
        )
