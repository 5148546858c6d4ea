"""Fields a capture shows fresh in every request of their shape: volatile by what it shows (pure).

No table lists every field a client fills afresh (an older dialect's `message_id`, a nonce).  A
field is *learnt fresh* for a skeleton when at least two requests of it hold there pairwise
distinct token-like strings no slot reads already.  Replay reads it FRESH only for a request no
recorded one matches with the field compared as it is (`Script.candidates`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from recorder.protocol import Classification
from recorder.script._values import DEFAULT_MEMBERS, Json, Location

MIN_LENGTH = 8
Skeleton = tuple[object, ...]


def skeleton(
    classification: Classification, value: Json, strings: Iterable[tuple[Location, str]]
) -> Skeleton:
    """What requests of one shape share: binding, operation, an unknown method's name and the places
    of their strings (a default spelled out is no string: leaving it out is the same request)."""
    method = value.get("method") if isinstance(value, dict) else None
    places = tuple(
        where
        for where, text in strings
        if not (where and DEFAULT_MEMBERS.get(str(where[-1]), (None,))[0] == text)
    )
    return (classification.binding, classification.operation, method, places)


def token_like(text: str) -> bool:
    return len(text) >= MIN_LENGTH and not any(c.isspace() for c in text)


@dataclass
class _Group:
    requests: int = 0
    values: dict[Location, list[str]] = field(default_factory=dict)


class Learning:
    """Collects the unread strings of each request, by skeleton; says which fields are fresh."""

    def __init__(self) -> None:
        self._groups: dict[Skeleton, _Group] = {}

    def add(self, name: Skeleton, unread: Iterable[tuple[Location, str]]) -> None:
        group = self._groups.setdefault(name, _Group())
        group.requests += 1
        for location, text in unread:
            group.values.setdefault(location, []).append(text)

    def learnt(self) -> Mapping[Skeleton, frozenset[Location]]:
        """Skeleton -> the locations learnt fresh there (skeletons with none left out)."""
        found: dict[Skeleton, frozenset[Location]] = {}
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
