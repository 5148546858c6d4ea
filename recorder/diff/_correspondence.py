"""Placeholder correspondence: which placeholder of one capture stands for which of the other."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from recorder.protocol import IdKind

_PLACEHOLDER = re.compile(r"<(" + "|".join(k.value for k in IdKind) + r")-(\d+)>")


def erase_numbers(text: str) -> str:
    """`text` with each placeholder's number left out (`<task-3>` -> `<task>`)."""
    return _PLACEHOLDER.sub(_kind_only, text) if "<" in text else text


def _kind_only(match: re.Match[str]) -> str:
    return f"<{match.group(1)}>"


@dataclass
class Correspondence:
    """A one-to-one map of A's placeholders to B's, built up in alignment order: an extra id in
    B shifts every later number, so `<task-7>` in A may be `<task-8>` in B, but always."""

    _forward: dict[str, str] = field(default_factory=dict)
    _backward: dict[str, str] = field(default_factory=dict)

    def same(self, a: str, b: str) -> bool:
        """True when `a` and `b` are equal up to corresponding placeholders (then recorded)."""
        if "<" not in a and "<" not in b:
            return a == b
        parts_a, parts_b = _PLACEHOLDER.split(a), _PLACEHOLDER.split(b)
        if len(parts_a) != len(parts_b):
            return False
        pairs = []
        # split() gives text, kind, number, text, kind, number, ..., text.
        for i in range(0, len(parts_a), 3):
            if parts_a[i] != parts_b[i]:
                return False
            if i + 2 < len(parts_a):
                if parts_a[i + 1] != parts_b[i + 1]:
                    return False
                kind = parts_a[i + 1]
                pairs.append((f"{kind}-{parts_a[i + 2]}", f"{kind}-{parts_b[i + 2]}"))
        return self._unify(pairs)

    def _unify(self, pairs: list[tuple[str, str]]) -> bool:
        # Check every pair before recording any, so a failed comparison leaves no trace.
        new_forward: dict[str, str] = {}
        new_backward: dict[str, str] = {}
        for x, y in pairs:
            if self._forward.get(x, new_forward.setdefault(x, y)) != y:
                return False
            if self._backward.get(y, new_backward.setdefault(y, x)) != x:
                return False
        self._forward.update(new_forward)
        self._backward.update(new_backward)
        return True
