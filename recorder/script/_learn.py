"""Fields a capture shows fresh in every request of their shape: volatile by what it shows (pure).

No table lists every field a client fills afresh: an older dialect's `message_id`, a
framework's nonce, a request id of a client's own.  The capture tells them: a field is
*learnt fresh* in requests of one *skeleton* (binding, operation, and the request value with
every string emptied) when

- the capture holds at least two requests of that skeleton,
- in each of them the field holds a string no slot reads already (the id table, the field's
  name, or an id known by value), that looks like a token (`MIN_LENGTH` characters or more,
  no whitespace: ids, nonces, stamps, never words of a message), and
- those strings are pairwise distinct.

The replay reads such a field as FRESH, and names it learnt (the journal, `show`), but only for
a request no recorded one matches with the field compared as it is (`Script.candidates`): a
recorded request that holds the same value still answers first.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from recorder.protocol import Classification
from recorder.script._values import Json, Location

MIN_LENGTH = 8
_EMPTIED = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str)


def skeleton(classification: Classification, value: Json) -> str:
    """What requests of one shape share: the binding, the operation, the value's structure."""
    binding = classification.binding.value if classification.binding else "-"
    return f"{binding} {classification.operation or '-'} {_EMPTIED.encode(_emptied(value))}"


def _emptied(value: Json) -> Json:
    if isinstance(value, dict):
        return {k: _emptied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_emptied(v) for v in value]
    return "" if isinstance(value, str) else value


def token_like(text: str) -> bool:
    return len(text) >= MIN_LENGTH and not any(c.isspace() for c in text)


@dataclass
class _Group:
    requests: int = 0
    values: dict[Location, list[str]] = field(default_factory=dict)


class Learning:
    """Collects the unread strings of each request, by skeleton; says which fields are fresh."""

    def __init__(self) -> None:
        self._groups: dict[str, _Group] = {}

    def add(self, name: str, unread: Iterable[tuple[Location, str]]) -> None:
        group = self._groups.setdefault(name, _Group())
        group.requests += 1
        for location, text in unread:
            group.values.setdefault(location, []).append(text)

    def learnt(self) -> Mapping[str, frozenset[Location]]:
        """Skeleton -> the locations learnt fresh there (skeletons with none left out)."""
        found: dict[str, frozenset[Location]] = {}
        for name, group in self._groups.items():
            if group.requests < 2:
                continue
            fresh = frozenset(
                location
                for location, texts in group.values.items()
                if len(texts) == group.requests
                and len(set(texts)) == len(texts)
                and all(token_like(t) for t in texts)
            )
            if fresh:
                found[name] = fresh
        return found
