"""Alignment of exchange keys: minimal insertions and removals, linear memory."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recorder.diff import StepKind, align

CASES = [
    ("identical", "ABC", "ABC", "PPP"),
    ("one extra poll in B", "SGC", "SGGC", "PPIP"),
    ("one poll missing in B", "SGGC", "SGC", "PPRP"),
    ("empty A", "", "AB", "II"),
    ("empty B", "AB", "", "RR"),
    ("both empty", "", "", ""),
    ("nothing in common", "AB", "CD", "RRII"),
]
LETTERS = {StepKind.PAIR: "P", StepKind.INSERTED: "I", StepKind.REMOVED: "R"}


@pytest.mark.parametrize(("a", "b", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_alignment_table(a: str, b: str, expected: str) -> None:
    got = align(list(a), list(b))
    assert "".join(LETTERS[s.kind] for s in got.steps) == expected
    assert not got.approximate


def _lcs(a: list[str], b: list[str]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b):
            prev, row[j + 1] = row[j + 1], prev + 1 if x == y else max(row[j + 1], row[j])
    return row[-1]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from("ABC"), max_size=25), st.lists(st.sampled_from("ABC"), max_size=25))
def test_alignment_is_a_longest_common_subsequence(a: list[str], b: list[str]) -> None:
    steps = align(a, b).steps
    pairs = [s for s in steps if s.kind is StepKind.PAIR]
    assert all(s.a is not None and s.b is not None and a[s.a] == b[s.b] for s in pairs)
    assert [s.a for s in steps if s.a is not None] == list(range(len(a)))
    assert [s.b for s in steps if s.b is not None] == list(range(len(b)))
    assert len(pairs) == _lcs(a, b)


def test_large_nearly_equal_sequences_align_exactly() -> None:
    a = ["Send", "Get", "Get", "Cancel"] * 2500
    b = list(a)
    b.insert(5000, "Get")
    del b[100]
    got = align(a, b)
    kinds = [s.kind for s in got.steps]
    assert kinds.count(StepKind.INSERTED) == 1 and kinds.count(StepKind.REMOVED) == 1
    assert kinds.count(StepKind.PAIR) == 9999


def test_over_budget_falls_back_to_position_and_says_so() -> None:
    a = list("AB" * 50)
    b = list("BA" * 10 + "C" * 80)
    got = align(a, b, max_edits=3)
    assert got.approximate
    assert [s.a for s in got.steps if s.a is not None] == list(range(len(a)))
    assert [s.b for s in got.steps if s.b is not None] == list(range(len(b)))
