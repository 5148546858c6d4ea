"""The judge: outcomes renamed, then compared step by step.

Two runs of a program are handed different ids and make up different ones, so their outcomes
are compared up to a consistent renaming:

- a value the run *named* is replaced by its name wherever it appears, whole or inside a
  string (an error message, a URL): the tasks and contexts the agent handed out (`<T0>`,
  `<C1>`, bound by the step that created them), everything the client made up (`<X0>`,
  `<P0>`, `<K0>`, `<H0>` webhook URLs, `<U2>` probes, `<m3>` messageIds) and the run's own
  addresses (`<http>`, `<grpc>`, `<webhook>`);
- any other UUID-shaped value (an artifact id, the agent's messageIds, another program's
  task) is numbered in the order the outcome shows it (`<id1>`), and each `nextPageToken`
  likewise (`<page1>`);
- an RFC 3339 timestamp is `<time>`.

Everything else must be equal.  The renaming cannot hide a difference: named values are
bound by *what the program did* (the id the step that created the task was answered with),
not by where they appear, so a replay that shows a client another task's id, a value the
recording's client made up, or a webhook URL of the recording shows as one.  Walking objects
in sorted key order makes the numbering independent of the order the server wrote keys in.
"""

from __future__ import annotations

import difflib
import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?")
TOKEN_KEYS = frozenset({"nextPageToken", "next_page_token"})


@dataclass
class Names:
    """A run's names for values: bound ones (by what the program did), then numbered ones."""

    bound: dict[str, str] = field(default_factory=dict)  # value -> "<T0>"
    _pattern: re.Pattern[str] | None = None

    def bind(self, value: str, name: str) -> None:
        if value and value not in self.bound:
            self.bound[value] = name
            self._pattern = None

    def constant(self, value: str, name: str) -> None:
        self.bind(value, name)

    def __contains__(self, value: object) -> bool:
        return value in self.bound

    def items(self) -> Iterator[tuple[str, str]]:
        return iter(list(self.bound.items()))

    def pattern(self) -> re.Pattern[str] | None:
        """Every bound value, longest first (a URL before the address it starts with)."""
        if self._pattern is None and self.bound:
            values = sorted(self.bound, key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(v) for v in values))
        return self._pattern


class _Renamer:
    def __init__(self, names: Names) -> None:
        self.names = names
        self.numbered: dict[str, str] = {}
        self.tokens: dict[str, str] = {}
        self.counter = itertools.count(1)
        self.token_counter = itertools.count(1)

    def text(self, text: str) -> str:
        if text in self.names.bound:
            return self.names.bound[text]
        pattern = self.names.pattern()
        if pattern is not None:
            text = pattern.sub(lambda m: self.names.bound[m.group(0)], text)
        text = TIMESTAMP.sub("<time>", text)
        return UUID.sub(self._number, text)

    def _number(self, match: re.Match[str]) -> str:
        value = match.group(0)
        if value not in self.numbered:
            self.numbered[value] = f"<id{next(self.counter)}>"
        return self.numbered[value]

    def token(self, value: str) -> str:
        if not value:
            return value
        if value not in self.tokens:
            self.tokens[value] = f"<page{next(self.token_counter)}>"
        return self.tokens[value]

    def walk(self, value: Any) -> Any:
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key in sorted(value):
                item = value[key]
                if key in TOKEN_KEYS and isinstance(item, str):
                    out[key] = self.token(item)
                else:
                    out[key] = self.walk(item)
            return out
        if isinstance(value, list):
            return [self.walk(v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        return value


def normalise(outcomes: Any, names: Names) -> Any:
    """`outcomes` renamed by `names`, then numbered, timestamps masked (see the module)."""
    return _Renamer(names).walk(outcomes)


# --- comparing --------------------------------------------------------------------------


@dataclass(frozen=True)
class Difference:
    step: int  # the step's index; len(program.steps) for the push deliveries
    live: Any
    replay: Any


def compare(live: list[Any], replay: list[Any]) -> list[Difference]:
    """The steps whose renamed outcomes differ (both lists end with the deliveries)."""
    found = []
    for step, (a, b) in enumerate(itertools.zip_longest(live, replay, fillvalue="<missing>")):
        if canonical(a) != canonical(b):
            found.append(Difference(step, a, b))
    return found


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


# --- showing ------------------------------------------------------------------------------

WIDTH = 64


def pretty(value: Any) -> list[str]:
    """An outcome as short JSON lines (long strings cut in the middle)."""

    def cut(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: cut(x) for k, x in v.items()}
        if isinstance(v, list):
            return [cut(x) for x in v]
        if isinstance(v, str) and len(v) > 120:
            return v[:80] + " … " + v[-30:]
        return v

    return json.dumps(cut(value), indent=1, sort_keys=True, ensure_ascii=False).splitlines()


def side_by_side(
    live: Any, replay: Any, labels: tuple[str, str] = ("live", "replay"), width: int = WIDTH
) -> str:
    """Both outcomes in two columns, aligned line by line (`|` the same, `≠` changed, `<`
    only live, `>` only replayed); one column when they are equal."""
    left, right = pretty(live), pretty(replay)
    if left == right:
        return "\n".join("    " + line for line in left)

    def row(a: str, mark: str, b: str) -> str:
        a = a if len(a) <= width else a[: width - 1] + "…"
        return f"    {a:<{width}} {mark} {b}".rstrip()

    rows = [row(labels[0], " ", labels[1])]
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            rows += [row(a, "|", a) for a in left[i1:i2]]
            continue
        a_part, b_part = left[i1:i2], right[j1:j2]
        for a, b in itertools.zip_longest(a_part, b_part):
            mark = "≠" if a is not None and b is not None else ("<" if b is None else ">")
            rows.append(row(a or "", mark, b or ""))
    return "\n".join(rows)
