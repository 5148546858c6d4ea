"""What the live clients have been handed: the one owner of replay session state (pure).

A *family* is the live ids one creating request brought in (the recorded id the first time,
minted after).  A *session* is the families of one run of the script, joined only by the ids
requests name, never by guesses.  A *world* is one reading of a session its requests still
allow: each family's recorded *member*, recorded <-> live values, and how far each recorded
id's story was served (`frontier`); the first world answers.  All changes go through
`LiveState`; sessions live on an LRU of `limit` and within `max_bytes` of live ids.

Invariants, listed by `problems()` and checked by property tests after every step: every
session has a world giving each family a member with as many ids; no two families of a world
share a member; `values` and `recorded` are inverse; `families_of(v)` is exact and no live id
is held twice within a session.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from recorder.options import REPLAY
from recorder.script import IdFactory, Script

MAX_SESSIONS: int = REPLAY.by_name["max_sessions"].default
MAX_ID_BYTES = 64 * 1024 * 1024  # live ids the sessions hold, at most (the newest one aside)
MAX_WORLDS = 64  # readings of one session kept at most (a merge multiplies them)


@dataclass(eq=False)  # compared and hashed by identity
class Family:
    number: int
    session: Session
    live: tuple[str, ...]
    owned: int  # the first `owned` live ids are the client's own


@dataclass(eq=False)
class World:
    steps: dict[Family, int] = field(default_factory=dict)  # family -> its member
    values: dict[str, str] = field(default_factory=dict)  # recorded -> live (see above)
    recorded: dict[str, str] = field(default_factory=dict)  # live id -> recorded id
    frontier: dict[str, int] = field(default_factory=dict)  # recorded id -> step index
    own: set[str] = field(default_factory=set)  # recorded ids of the clients' own

    def copy(self) -> World:
        return World(
            dict(self.steps),
            dict(self.values),
            dict(self.recorded),
            dict(self.frontier),
            set(self.own),
        )

    def update(self, other: World) -> None:
        """Take in another session's world (a request names families of both)."""
        self.steps.update(other.steps)
        self.values.update(other.values)
        self.recorded.update(other.recorded)
        self.frontier.update(other.frontier)
        self.own |= other.own


@dataclass(eq=False)
class Session:
    number: int
    families: list[Family] = field(default_factory=list)
    worlds: list[World] = field(default_factory=list)
    cuts: dict[str, Any] = field(default_factory=dict)  # live task id -> a cut stream
    size: int = 0  # bytes of the live ids its families hold


class LiveState:
    """The sessions of one replay (see the module docstring)."""

    def __init__(
        self,
        script: Script,
        factory: IdFactory,
        limit: int = MAX_SESSIONS,
        max_bytes: int = MAX_ID_BYTES,
    ) -> None:
        self.script = script
        self.factory = factory
        self.limit = limit
        self.max_bytes = max_bytes
        self.forgotten = 0
        self.size = 0
        self._sessions: OrderedDict[Session, None] = OrderedDict()
        self._by_live: dict[str, list[Family]] = {}
        self._handed: set[str] = set()  # recorded ids handed out as themselves
        self._kept: dict[str, int] = {}  # values served as recorded -> their frontier
        self._settled: set[int] = set()  # members of sessions read one way only (`_settle`)
        self._next: dict[Hashable, int] = {}  # where a search for unspent members stopped
        self._numbers = itertools.count(1)

    def __len__(self) -> int:
        return len(self._sessions)

    # -- queries ------------------------------------------------------------------------

    @property
    def sessions(self) -> tuple[Session, ...]:
        return tuple(self._sessions)

    def families(self, sessions: Iterable[Session] | None = None) -> Iterator[Family]:
        """The families of `sessions` (None: of every session remembered)."""
        for session in self._sessions if sessions is None else sessions:
            yield from session.families

    def families_of(self, live: str) -> list[Family]:
        return self._by_live.get(live, [])

    def holds(self, value: str) -> bool:
        """Whether a live client may name `value` back: a live id, or a value kept."""
        return value in self._by_live or value in self._kept

    def kept(self, value: str) -> bool:
        """Whether `value` was served as recorded and may be named back (a page token)."""
        return value in self._kept

    def kept_frontier(self, value: str) -> int:
        return self._kept.get(value, -1)

    def handed(self, recorded: str) -> bool:
        """Whether the recorded id was handed out as itself already."""
        return recorded in self._handed

    def spent(self, member: int) -> bool:
        """Whether a recorded step already stands for a live family (`_settle`), or an id it
        handed out was handed out live: a later fresh request takes another member."""
        step = self.script.steps[member]
        return member in self._settled or any(
            v in self._handed for v in step.introduced[step.owned :]
        )

    def unspent(self, cursor: Hashable, members: Sequence[int]) -> int | None:
        """The first of `members` not `spent` (None: all were), searched on from `cursor`."""
        at = self._next.get(cursor, 0)
        while at < len(members) and self.spent(members[at]):
            at += 1
        self._next[cursor] = at
        return members[at] if at < len(members) else None

    def cut_of(self, live_task: str) -> tuple[Session, Any] | None:
        for family in self._by_live.get(live_task, ()):
            cut = family.session.cuts.get(live_task)
            if cut is not None:
                return family.session, cut
        return None

    # -- transitions --------------------------------------------------------------------

    def open(self, members: Sequence[int], given: Mapping[str, str]) -> Family:
        """A session for a fresh request, a world per member; `given`: the client's own live ids."""
        session = self._open()
        family = self._family(session, members[0], given)
        session.worlds.extend(self.bind(World(), family, member) for member in members)
        self._index(family)
        self._settle(session)
        return family

    def join(self, session: Session, picks: Sequence[int], given: Mapping[str, str]) -> Family:
        """A family in `session` whose member in world i is `picks[i]` (worlds already narrowed)."""
        family = self._family(session, picks[0], given)
        for world, member in zip(session.worlds, picks, strict=True):
            self.bind(world, family, member)
        if len(session.worlds) == 1:  # its other members were settled when it came to one
            self._settled.add(picks[0])
        self._index(family)
        self.touch(session)
        return family

    def narrow(self, session: Session, keep: Sequence[World]) -> None:
        """Keep these worlds (one kept twice is split in two: a request read it two ways)."""
        if not keep or (
            len(keep) == len(session.worlds)
            and all(a is b for a, b in zip(keep, session.worlds, strict=True))
        ):
            return
        seen: set[int] = set()
        worlds = []
        for world in keep:
            worlds.append(world.copy() if id(world) in seen else world)
            seen.add(id(world))
        session.worlds = worlds
        self._settle(session)

    def move(self, family: Family, members: Sequence[int]) -> Session:
        """`family` leaves its session for one of its own, a world per member."""
        old = family.session
        old.families.remove(family)
        for world in old.worlds:
            member = world.steps.pop(family, None)
            if member is not None:
                for recorded in self.script.steps[member].introduced:
                    live = world.values.pop(recorded, None)
                    world.recorded.pop(live or "", None)
        size = sum(len(v) for v in family.live)
        old.size -= size
        if not old.families:
            self._sessions.pop(old, None)
        session = self._open()
        session.size += size
        family.session = session
        session.families.append(family)
        session.worlds.extend(self.bind(World(), family, member) for member in members)
        self._settle(session)
        return session

    def merge(self, sessions: Sequence[Session], worlds: Sequence[World]) -> Session:
        """The first of `sessions`, with the families of all and the joint `worlds`."""
        into = sessions[0]
        for other in sessions[1:]:
            for family in other.families:
                family.session = into
                into.families.append(family)
            into.cuts.update(other.cuts)
            into.size += other.size
            self._sessions.pop(other, None)
        into.worlds = list(worlds[:MAX_WORLDS])
        self._settle(into)
        self.touch(into)
        return into

    def advance(self, world: World, recorded: Iterable[str], index: int) -> None:
        for value in recorded:
            if world.frontier.get(value, -1) < index:
                world.frontier[value] = index

    def echo(self, world: World, recorded: str, live: str) -> None:
        current = world.values.get(recorded)
        if recorded != live and (current is None or world.recorded.get(current) != recorded):
            world.values[recorded] = live  # a family's id stays the family's

    def alias(self, world: World, recorded: str, shown: str) -> None:
        if recorded != shown:
            world.values.setdefault(recorded, shown)

    def keep(self, values: Iterable[str], index: int) -> None:
        """Values served as recorded, that clients may name back (kept across sessions)."""
        for value in values:
            if self._kept.get(value, -1) < index:
                self._kept[value] = index

    def cut(self, session: Session, live_task: str, cut: Any) -> None:
        """`live_task`'s stream was cut (`cut` None: it went out whole at last)."""
        if cut is None:
            session.cuts.pop(live_task, None)
        else:
            session.cuts[live_task] = cut

    def touch(self, session: Session) -> None:
        if session in self._sessions:
            self._sessions.move_to_end(session)

    # -- inner workings -----------------------------------------------------------------

    def _family(self, session: Session, member: int, given: Mapping[str, str]) -> Family:
        """A family in `session` for `member`'s ids: the client's own (`given`), else minted."""
        first = self.script.steps[member]
        live = tuple(given.get(r) or self._mint(r) for r in first.introduced)
        family = Family(next(self._numbers), session, live, first.owned)
        session.families.append(family)
        added = sum(len(v) for v in live)
        session.size += added
        self.size += added
        self._trim(keep=session)
        return family

    def bind(self, world: World, family: Family, member: int) -> World:
        """`world`, in which `family` now stands for `member`."""
        world.steps[family] = member
        step = self.script.steps[member]
        for recorded, live in zip(step.introduced, family.live, strict=True):
            world.values[recorded] = live
            world.recorded[live] = recorded
        world.own.update(step.introduced[: step.owned])
        return world

    def _mint(self, recorded: str) -> str:
        """The recorded id itself the first time, else a fresh one that names nothing else."""
        if recorded not in self._handed and recorded not in self._by_live:
            self._handed.add(recorded)
            return recorded
        live = self.factory.fresh(recorded)
        while live in self._by_live or live in self.script.known:
            live = self.factory.fresh(recorded)
        return live

    def _settle(self, session: Session) -> None:
        """A session its requests read one way only: its members stand for its families, and a
        fresh request takes others (`spent`).  Called where its worlds change, never per read."""
        if len(session.worlds) == 1:
            self._settled.update(session.worlds[0].steps.values())

    def _open(self) -> Session:
        session = Session(next(self._numbers))
        self._sessions[session] = None
        self._trim(keep=session)
        return session

    def _trim(self, keep: Session) -> None:
        while len(self._sessions) > self.limit or (
            self.size > self.max_bytes and next(iter(self._sessions)) is not keep
        ):
            oldest = next(iter(self._sessions))
            if oldest is keep:
                break
            self._forget(oldest)

    def _forget(self, session: Session) -> None:
        del self._sessions[session]
        self.forgotten += 1
        self.size -= session.size
        for family in session.families:
            self._unindex(family)

    def _index(self, family: Family) -> None:
        for value in family.live:
            held = self._by_live.setdefault(value, [])
            if family not in held:
                held.append(family)

    def _unindex(self, family: Family) -> None:
        for value in family.live:
            held = self._by_live.get(value, [])
            if family in held:
                held.remove(family)
            if not held:
                self._by_live.pop(value, None)

    # -- checking -----------------------------------------------------------------------

    def problems(self) -> list[str]:
        """Every invariant of the module docstring that does not hold, in words."""
        found: list[str] = []
        for session in self._sessions:
            found += _session_problems(self, session)
        found += _index_problems(self)
        if len(self._sessions) > self.limit:
            found.append(f"{len(self._sessions)} sessions remembered, limit {self.limit}")
        return found


def _session_problems(state: LiveState, session: Session) -> Iterator[str]:
    steps = state.script.steps
    if not session.worlds:
        yield f"session {session.number} has no world"
    for n, world in enumerate(session.worlds):
        if set(world.steps) != set(session.families):
            yield f"session {session.number}, world {n}: not every family has a member"
        members = list(world.steps.values())
        if len(members) != len(set(members)):
            yield f"session {session.number}, world {n}: two families share a member"
        for family, member in world.steps.items():
            if len(steps[member].introduced) != len(family.live):
                yield f"family {family.number}: member #{steps[member].number} does not align"
            for recorded, live in zip(steps[member].introduced, family.live, strict=True):
                if world.values.get(recorded) != live or world.recorded.get(live) != recorded:
                    yield f"session {session.number}, world {n}: {recorded} is not {live}"
    held = [v for f in session.families for v in f.live]
    if len(held) != len(set(held)):
        yield f"session {session.number}: two families hold the same live id"
    for family in session.families:
        if family.session is not session:
            yield f"family {family.number} is in the wrong session"


def _index_problems(state: LiveState) -> Iterator[str]:
    families = [f for s in state._sessions for f in s.families]
    expected: dict[str, set[int]] = {}
    for family in families:
        for value in family.live:
            expected.setdefault(value, set()).add(family.number)
    actual = {v: {f.number for f in found} for v, found in state._by_live.items()}
    if expected != actual:
        yield "the live-id index does not match the families"
    minted = [v for f in families for v in f.live[f.owned :]]
    if len(minted) != len(set(minted)):
        yield "a minted id is held by two families"
