"""Baselines: the findings a project has accepted, so that CI fails on new ones only.

A baseline file is JSON (`format` "a2a-recorder-baseline", `version` 1, `tool`, `entries`),
sorted, an entry per accepted finding: the fields that identify it (`KEYS`) and a `reason`.
Checking is a multiset match on those fields: a matched finding is *accepted*, an unmatched one
*new*, an entry nothing matches *stale*; new findings and stale entries both fail the run (a
stale entry would hide what it listed coming back).  `updated` keeps the reasons that still
match.  Pure; a file that cannot be used is a `BaselineError` naming it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recorder._errors import BaselineError

BASELINE_FORMAT = "a2a-recorder-baseline"
BASELINE_VERSION = 1
REASON = "reason"
# The fields that identify a finding, per tool.  An exchange number, not a line: a capture's
# lines move when it is re-recorded, its exchange numbers do not.
KEYS: Mapping[str, tuple[str, ...]] = {
    "lint": ("file", "exchange", "rule", "where"),
    "verify": ("capture", "exchange", "operation", "kind", "path"),
    "matrix": ("sdk", "kind", "finding", "scenarios"),  # recorder.diff's SDK matrix
}

Entry = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class BaselineCheck:
    """How the current findings (by index) stand against a baseline."""

    accepted: tuple[int, ...]
    new: tuple[int, ...]
    stale: tuple[Entry, ...]

    @property
    def clean(self) -> bool:
        return not self.new and not self.stale


@dataclass(frozen=True, slots=True)
class BaselineOutcome:
    """What a run did with its baseline, for its report."""

    path: str
    accepted: int = 0
    stale: tuple[str, ...] = ()  # each stale entry, described
    written: int | None = None  # entries written, when the file was (re)written

    def summary(self) -> str:
        if self.written is not None:
            return f"baseline {self.path}: written with {self.written} entries"
        stale = f", {len(self.stale)} stale" if self.stale else ""
        return f"baseline {self.path}: {self.accepted} accepted{stale}"


def key_of(entry: Entry, tool: str) -> tuple[Any, ...]:
    return tuple(entry.get(name) for name in KEYS[tool])


def check(entries: Sequence[Entry], current: Sequence[Entry], tool: str) -> BaselineCheck:
    """Match `current` findings against baseline `entries` (see the module docstring)."""
    waiting: dict[tuple[Any, ...], list[Entry]] = defaultdict(list)
    for entry in entries:
        waiting[key_of(entry, tool)].append(entry)
    accepted, new = [], []
    for index, finding in enumerate(current):
        pool = waiting.get(key_of(finding, tool))
        if pool:
            pool.pop(0)
            accepted.append(index)
        else:
            new.append(index)
    stale = tuple(e for pool in waiting.values() for e in pool)
    return BaselineCheck(tuple(accepted), tuple(new), stale)


def updated(entries: Sequence[Entry], current: Sequence[Entry], tool: str) -> list[Entry]:
    """The current findings as baseline entries, each keeping its matched entry's reason."""
    reasons: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    for entry in entries:
        reasons[key_of(entry, tool)].append(str(entry.get(REASON, "")))
    out = []
    for finding in current:
        pool = reasons.get(key_of(finding, tool))
        out.append({**finding, REASON: pool.pop(0) if pool else ""})
    return sorted(out, key=lambda e: json.dumps(key_of(e, tool), default=str))


def describe(entry: Entry, tool: str) -> str:
    """One line naming a baseline entry by its identifying fields."""
    words = [
        f"{name}={entry.get(name)!s}" for name in KEYS[tool] if entry.get(name) not in ("", None)
    ]
    return " ".join(words)


def render_baseline(entries: Sequence[Entry], tool: str) -> str:
    """The baseline file's text."""
    document = {
        "format": BASELINE_FORMAT,
        "version": BASELINE_VERSION,
        "tool": tool,
        "entries": list(entries),
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def parse_baseline(text: str, where: str, tool: str) -> list[Entry]:
    """The entries of a baseline file's text; `BaselineError` naming `where` if unusable."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{where}: not JSON (line {exc.lineno}: {exc.msg})") from exc
    if not isinstance(document, Mapping) or document.get("format") != BASELINE_FORMAT:
        raise BaselineError(
            f"{where}: not an a2a-recorder baseline (no format {BASELINE_FORMAT!r})"
        )
    if document.get("version") != BASELINE_VERSION:
        raise BaselineError(f"{where}: baseline version {document.get('version')!r} is unknown")
    if document.get("tool") != tool:
        raise BaselineError(f"{where}: a baseline of {document.get('tool')!r}, not of {tool!r}")
    entries = document.get("entries")
    if not isinstance(entries, list) or not all(isinstance(e, Mapping) for e in entries):
        raise BaselineError(f"{where}: 'entries' must be a list of objects")
    return entries
