"""Where a request names ids, and what it does with each (pure).

A request value is read for *slots*: the strings in it that are ids, each with its `IdRole`.
The first of four readings that speaks for a string decides: the operation's `IdPosition`s
(`recorder.protocol`'s id table), the field's name (`ID_FIELDS`), a value equal to an id
already known, and a field the capture shows fresh (`_learn`).  Recording and replay read slots
the same way, each with what it knows.  User data (`USER_CONTENT_KEYS`) holds no ids, and
dictionaries are read in key order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass

from recorder.protocol import (
    ID_FIELDS,
    PATH_POSITIONS,
    USER_CONTENT_KEYS,
    Classification,
    IdKind,
    IdPosition,
    IdRole,
    Version,
    bare_task_id,
    id_owner,
    operation,
    resource_ids,
)
from recorder.script._values import Json, Location

Known = Callable[[str], bool]

# What a request does with an id a field's name alone tells the kind of (reading 2).
ROLE_OF_KIND: Mapping[IdKind, IdRole] = {
    IdKind.TASK: IdRole.REFERENCE,
    IdKind.CONTEXT: IdRole.CHOSEN,
    IdKind.CONFIG: IdRole.CHOSEN,
    IdKind.MESSAGE: IdRole.FRESH,
    IdKind.ARTIFACT: IdRole.REFERENCE,
}
_SNAKE = re.compile(r"(?<!^)([A-Z])")
_SNAKE_NAMES: dict[str, str] = {}


def snake_case(key: str) -> str:
    """The snake_case spelling proto-JSON readers also accept (`taskId` -> `task_id`)."""
    name = _SNAKE_NAMES.get(key)
    if name is None:
        name = _SNAKE_NAMES[key] = _SNAKE.sub(r"_\1", key).lower()
    return name


# Id field names in both spellings -> their kind.
ID_NAMES: Mapping[str, IdKind] = {**{snake_case(k): v for k, v in ID_FIELDS.items()}, **ID_FIELDS}


@dataclass(frozen=True, slots=True)
class Slot:
    """One id in a request value: where it is, what it is, and what the request does with it.  A
    v0.3 resource name has a slot per id segment (`segment`: its index in the name split at `/`)."""

    location: Location
    value: str
    role: IdRole
    kind: IdKind | None
    segment: int | None = None
    learnt: bool = False


def positions_of(classification: Classification) -> tuple[IdPosition, ...]:
    if classification.operation is None:
        return ()
    row = operation(classification.operation, classification.version or Version.V1_0)
    return row.positions if row is not None else ()


def find_slots(
    value: Json,
    positions: Sequence[IdPosition],
    known: Known | None = None,
    learnt: Collection[Location] = (),
    strings: list[tuple[Location, str]] | None = None,
) -> list[Slot]:
    """Every id the value holds, in a stable order; `strings` gets each string a slot could be."""
    found: list[Slot] = []
    if not isinstance(value, dict):
        return found
    for section, table in (("body", positions), ("query", positions), ("path", PATH_POSITIONS)):
        document = value.get(section)
        if document is not None:
            for position in table:
                _walk(document, position.path, (section,), position, found)
    taken = {s.location for s in found}
    scan = _Scan(found, taken, known, learnt, strings)
    for section in ("body", "query", "route"):
        if value.get(section) is not None:
            scan.node(value[section], None, None, (section,))
    return found


def _walk(
    node: Json, path: tuple[str, ...], where: Location, position: IdPosition, found: list[Slot]
) -> None:
    if not path:
        items = enumerate(node) if isinstance(node, list) else ((None, node),)
        for index, item in items:
            if isinstance(item, str) and item:
                here = where if index is None else (*where, index)
                found.extend(_slots_at(here, item, position))
        return
    head, rest = path[0], path[1:]
    if head == "*":
        if isinstance(node, list):
            for index, item in enumerate(node):
                _walk(item, rest, (*where, index), position, found)
        return
    if isinstance(node, dict):
        name = head if head in node else snake_case(head)
        if name in node:
            _walk(node[name], rest, (*where, name), position, found)


def _slots_at(where: Location, value: str, position: IdPosition) -> Iterator[Slot]:
    if not position.resource:
        yield Slot(where, value, position.role, position.kind)
        return
    found = resource_ids(value)
    if found is None:
        task = bare_task_id(value, position.kind)  # a2a-java's draft: a bare task id
        if task is not None:
            yield Slot(where, task, IdRole.REFERENCE, IdKind.TASK)
        return  # else no resource name: compared as it is
    task, config = found
    yield Slot(where, task, IdRole.REFERENCE, IdKind.TASK, 1)
    if config:
        yield Slot(where, config, position.role, IdKind.CONFIG, 3)


class _Scan:
    """Readings 2 to 4 over every string the table left alone."""

    def __init__(
        self,
        found: list[Slot],
        taken: set[Location],
        known: Known | None,
        learnt: Collection[Location],
        strings: list[tuple[Location, str]] | None = None,
    ) -> None:
        self.found, self.taken, self.known, self.learnt = found, taken, known, learnt
        self.strings = strings

    def node(self, node: Json, key: str | None, owner: Json, where: Location) -> None:
        kind = type(node)
        if kind is dict:
            for k in sorted(node):
                if k not in USER_CONTENT_KEYS:
                    self.node(node[k], k, node, (*where, k))
        elif kind is list:
            for index, item in enumerate(node):
                self.node(item, key, owner, (*where, index))
        elif kind is str and node:
            if self.strings is not None:
                self.strings.append((where, node))
            if where not in self.taken:
                slot = self.slot(node, key, owner, where)
                if slot is not None:
                    self.found.append(slot)

    def slot(self, value: str, key: str | None, owner: Json, where: Location) -> Slot | None:
        kind = ID_NAMES.get(key) if key is not None else None
        if kind is None and key == "id" and isinstance(owner, dict):
            kind = id_owner(owner)
        role = ROLE_OF_KIND.get(kind) if kind is not None else None
        if role is not None:
            return Slot(where, value, role, kind)
        if self.known is not None and self.known(value):
            return Slot(where, value, IdRole.REFERENCE, None)
        if where in self.learnt:
            return Slot(where, value, IdRole.FRESH, None, learnt=True)
        return None


def leaves(value: Json) -> Iterator[tuple[Location, str]]:
    """(location, string) for every string of a value that a slot could hold."""
    if not isinstance(value, dict):
        return
    for section in ("body", "query", "route"):
        if value.get(section) is not None:
            yield from _leaves(value[section], (section,))


def _leaves(node: Json, where: Location) -> Iterator[tuple[Location, str]]:
    if isinstance(node, dict):
        for k in sorted(node):
            if k not in USER_CONTENT_KEYS:
                yield from _leaves(node[k], (*where, k))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _leaves(item, (*where, index))
    elif isinstance(node, str) and node:
        yield where, node
