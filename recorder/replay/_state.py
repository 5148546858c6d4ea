"""What the live clients have been handed: the one owner of replay session state (pure).

**Values.**

- A *family* is what one live creating request brought into the world: the live ids its
  answer handed out (a task and its context, a push config) and the client's own ids it
  chose, in the order of the recorded step's `introduced` ids.  Which recorded step it stands
  for is decided late: the family keeps a *branch* for every recorded creating step that is
  still consistent with everything its clients have done since.  A branch maps the family's
  live ids to that step's recorded ids (position by position) and keeps, for each recorded id,
  the furthest step served naming it there (its `frontier`: polls follow the recorded story).
  Ids served as recorded (artifact and message ids) were shown from the branch answered
  from; another branch's ids at the same places are *aliases* of those, so that a client
  sees one artifact id for its task whichever branch a later answer comes from.
- A *session* is a set of families that replay one run of the script: within it, every
  recorded creating step stands behind at most one family.  Families join a session only
  through ids: a creating request that names ids of a session's families joins it; one naming
  none starts a session of its own.  So clients are never told apart by guesses (connection,
  headers, recency), only by the ids they use.  The session also keeps the live values of the
  fresh ones its clients sent (webhook URLs, tokens: `echoes`), for answers and deliveries.

**Transitions** (all through `LiveState`):

    create(session?, roots, given)  a new family, one branch per root; ids minted for what
                                    the client did not give (the recorded id itself the first
                                    time it is handed out, else a fresh one from the factory)
    narrow(family, keep)            drop branches; a family that can no longer be matched in
                                    its session moves to a session of its own
    advance(family, root, ids, i)   the branch served step i naming those recorded ids
    alias(family, root, pairs)      ids of a branch stand for values already shown
    echo(session, recorded, live)   a fresh value the client sent stands for a recorded one
    keep(values)                    ids served as recorded (page tokens) are known from now on
    touch(family)                   used now (sessions live on an LRU of `limit`)

Every change bumps a `generation`: the session's for what happens within it, the state's for
families made and sessions forgotten (which change how any id reads).  Answering a request
whose generations have not moved since it was last answered the same way decides the same,
so the service may reuse that decision (`_service`, polls).

**Invariants** (`problems()` lists any that fail; a property test checks them after every
step):

1. Every family has at least one branch, each rooted at a creating step introducing as many
   ids as the family holds.
2. Within a session, the families can be given distinct roots among their branches (Hall's
   condition); `matching` holds one such assignment.
3. `families_of(v)` holds exactly the remembered families holding live id `v`; within one
   session no two families hold the same live id, and a minted id is held by one family only.
4. `by_root` holds exactly the families with a branch at each root.
5. At most `limit` sessions are remembered; the ids of a forgotten one are unknown for good.
6. A branch's frontier never points before its root.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from recorder.options import REPLAY
from recorder.replay._mint import IdFactory
from recorder.replay._script import Script

MAX_SESSIONS: int = REPLAY.by_name["max_sessions"].default


@dataclass(eq=False, slots=True)
class Branch:
    root: int
    frontier: dict[str, int] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)  # recorded -> the value shown
    echoes: dict[str, str] = field(default_factory=dict)  # recorded -> the client's own value


@dataclass(eq=False)  # compared and hashed by identity
class Family:
    number: int
    session: Session
    live: tuple[str, ...]
    branches: dict[int, Branch]

    def position(self, live: str) -> int:
        return self.live.index(live)


@dataclass(eq=False)
class Session:
    number: int
    families: dict[Family, None] = field(default_factory=dict)
    matching: dict[Family, int] = field(default_factory=dict)  # family -> its distinct root
    owner: dict[int, Family] = field(default_factory=dict)  # the inverse of `matching`
    echoes: dict[str, str] = field(default_factory=dict)  # recorded fresh value -> live
    generation: int = 0  # bumped by every change to the session or its families


class LiveState:
    """The families and sessions of one replay (see the module docstring)."""

    def __init__(self, script: Script, factory: IdFactory, limit: int = MAX_SESSIONS) -> None:
        self.script = script
        self.factory = factory
        self.limit = limit
        self.forgotten = 0
        self._sessions: OrderedDict[Session, None] = OrderedDict()
        self._by_live: dict[str, list[Family]] = {}
        self._by_root: dict[int, dict[Family, None]] = {}
        self._handed: set[str] = set()  # recorded ids handed out as themselves
        self._kept: set[str] = set()  # ids served as recorded that clients may name back
        self._numbers = itertools.count(1)
        self.generation = 0  # bumped by every family made or session forgotten

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

    def kept(self, value: str) -> bool:
        """Whether `value` was served as recorded and may be named back (a page token)."""
        return value in self._kept

    def handed(self, recorded: str) -> bool:
        """Whether the recorded id was handed out as itself already."""
        return recorded in self._handed

    def by_root(self, root: int) -> Iterable[Family]:
        return self._by_root.get(root, {}).keys()

    def recorded(self, family: Family, root: int, live: str) -> str:
        """The recorded id `live` stands for in `family`'s branch at `root`."""
        return self.script.steps[root].introduced[family.position(live)]

    def mapping(self, family: Family, root: int) -> Iterator[tuple[str, str]]:
        """(recorded, live) for each id of `family`, in its branch at `root`."""
        return zip(self.script.steps[root].introduced, family.live, strict=True)

    def session_mapping(self, session: Session) -> dict[str, str]:
        """(recorded -> live) for every family of a session, each in its matched branch, and
        the fresh values its clients sent."""
        found = dict(session.echoes)
        for family, root in session.matching.items():
            found.update(self.mapping(family, root))
        return found

    def shown(self, family: Family, root: int, recorded: str) -> str:
        """What a recorded id served as recorded has been shown as, in that branch."""
        branch = family.branches.get(root)
        return branch.aliases.get(recorded, recorded) if branch else recorded

    def fits(self, session: Session, roots: Iterable[int]) -> bool:
        """Whether a new family with these roots could join `session` (Hall's condition)."""
        probe = Family(0, session, (), {r: Branch(r) for r in roots})
        return _augment(dict(session.matching), dict(session.owner), probe, _roots) is not None

    def fits_narrowed(self, family: Family, keep: Iterable[int]) -> bool:
        """Whether `family` could keep only `keep` and still be matched in its session."""
        kept = set(keep)
        session = family.session
        if session.matching.get(family) in kept:
            return True
        matching, owner = dict(session.matching), dict(session.owner)
        owner.pop(matching.pop(family, -1), None)

        def roots(f: Family) -> Iterable[int]:
            return kept if f is family else f.branches

        return _augment(matching, owner, family, roots) is not None

    # -- transitions --------------------------------------------------------------------

    def create(
        self, session: Session | None, roots: Iterable[int], given: Mapping[str, str]
    ) -> Family:
        """A family for `roots` (the first is the one answered from); `given` maps recorded
        ids of that root to the live ids the client chose.  Joins `session` when it fits."""
        ordered = list(dict.fromkeys(roots))
        if session is not None and session in self._sessions:
            self._sessions.move_to_end(session)  # not the one a new session pushes out
        if session is None or not self.fits(session, ordered):
            session = self._open()
        live = tuple(
            given.get(recorded) or self._mint(recorded)
            for recorded in self.script.steps[ordered[0]].introduced
        )
        family = Family(next(self._numbers), session, live, {r: Branch(r) for r in ordered})
        self.generation += 1
        session.generation += 1
        session.families[family] = None
        self._match(session, family)
        self._index(family)
        self.touch(family)
        return family

    def narrow(self, family: Family, keep: Iterable[int]) -> None:
        kept = [r for r in keep if r in family.branches]
        if not kept or len(kept) == len(family.branches):
            return
        self.touch(family)  # not the session a new one would push out
        family.session.generation += 1
        if not self.fits_narrowed(family, kept):
            self._move(family, self._open())
            family.session.generation += 1
        for root in [r for r in family.branches if r not in kept]:
            del family.branches[root]
            found = self._by_root.get(root, {})
            found.pop(family, None)
            if not found:
                self._by_root.pop(root, None)
        if family.session.matching.get(family) not in family.branches:
            self._unmatch(family)
            self._match(family.session, family)

    def advance(self, family: Family, root: int, recorded: Iterable[str], index: int) -> None:
        branch = family.branches.get(root)
        if branch is None:
            return
        for value in recorded:
            if branch.frontier.get(value, -1) < index:
                branch.frontier[value] = index
                family.session.generation += 1

    def alias(
        self, family: Family, root: int, pairs: Iterable[tuple[str, str]], *, echo: bool = False
    ) -> None:
        """Recorded ids of a branch stand for values already shown (`echo`: for values the
        client sent itself, which the agent echoes)."""
        branch = family.branches.get(root)
        if branch is not None:
            found = branch.echoes if echo else branch.aliases
            for recorded, shown in pairs:
                value = shown if echo else found.get(recorded, shown)
                if recorded != shown and found.get(recorded) != value:
                    found[recorded] = value
                    family.session.generation += 1

    def echo(self, session: Session, recorded: str, live: str) -> None:
        if session.echoes.get(recorded) != live:
            session.echoes[recorded] = live
            session.generation += 1

    def keep(self, values: Iterable[str]) -> None:
        new = set(values) - self._kept
        if new:
            self._kept |= new
            self.generation += 1

    def touch(self, family: Family) -> None:
        if family.session in self._sessions:
            self._sessions.move_to_end(family.session)

    # -- inner workings -----------------------------------------------------------------

    def _mint(self, recorded: str) -> str:
        """The recorded id itself the first time, else a fresh one that names nothing else
        (fresh ids are random: a repeat is not looked for beyond what is held now)."""
        if recorded not in self._handed and recorded not in self._by_live:
            self._handed.add(recorded)
            return recorded
        live = self.factory.fresh(recorded)
        while live in self._by_live or live in self.script.known:
            live = self.factory.fresh(recorded)
        return live

    def _open(self) -> Session:
        session = Session(next(self._numbers))
        self._sessions[session] = None
        while len(self._sessions) > self.limit:
            self._forget(next(iter(self._sessions)))
        return session

    def _forget(self, session: Session) -> None:
        del self._sessions[session]
        self.forgotten += 1
        self.generation += 1
        for family in session.families:
            self._unindex(family)

    def _index(self, family: Family) -> None:
        for value in family.live:
            held = self._by_live.setdefault(value, [])
            if family not in held:
                held.append(family)
        for root in family.branches:
            self._by_root.setdefault(root, {})[family] = None

    def _unindex(self, family: Family) -> None:
        for value in family.live:
            held = self._by_live.get(value, [])
            if family in held:
                held.remove(family)
            if not held:
                self._by_live.pop(value, None)
        for root in family.branches:
            found = self._by_root.get(root, {})
            found.pop(family, None)
            if not found:
                self._by_root.pop(root, None)

    def _move(self, family: Family, session: Session) -> None:
        """`family` leaves its session for `session` (a new one: opening it may have pushed
        the old one out of the LRU, with this family's ids: they are indexed again)."""
        self._unmatch(family)
        family.session.families.pop(family, None)
        family.session = session
        session.families[family] = None
        first = next(iter(family.branches))
        session.matching[family], session.owner[first] = first, family
        self._index(family)

    def _match(self, session: Session, family: Family) -> None:
        found = _augment(session.matching, session.owner, family, _roots)
        if found is None:  # cannot happen after `fits`; keep the invariant anyway
            self._move(family, self._open())

    def _unmatch(self, family: Family) -> None:
        session = family.session
        root = session.matching.pop(family, None)
        if root is not None and session.owner.get(root) is family:
            del session.owner[root]

    # -- checking -----------------------------------------------------------------------

    def problems(self) -> list[str]:
        """Every invariant of the module docstring that does not hold, in words."""
        found: list[str] = []
        families = [f for s in self._sessions for f in s.families]
        found += _family_problems(self, families)
        found += _session_problems(self)
        found += _index_problems(self, families)
        if len(self._sessions) > self.limit:
            found.append(f"{len(self._sessions)} sessions remembered, limit {self.limit}")
        return found


def _roots(family: Family) -> Iterable[int]:
    return family.branches


def _root(family: Family) -> int:
    return next(iter(family.branches))


def _augment(
    matching: dict[Family, int],
    owner: dict[int, Family],
    start: Family,
    roots: Callable[[Family], Iterable[int]],
) -> dict[Family, int] | None:
    """Give `start` a root by an augmenting path (breadth first), changing `matching` and
    `owner` in place; None (and nothing changed) when there is none."""
    parent: dict[Family, Family | None] = {start: None}
    queue = deque([start])
    while queue:
        family = queue.popleft()
        for root in roots(family):
            holder = owner.get(root)
            if holder is None:
                _flip(matching, owner, parent, family, root)
                return matching
            if holder not in parent:
                parent[holder] = family
                queue.append(holder)
    return None


def _flip(
    matching: dict[Family, int],
    owner: dict[int, Family],
    parent: Mapping[Family, Family | None],
    family: Family | None,
    root: int,
) -> None:
    while family is not None:
        previous = matching.get(family)
        matching[family], owner[root] = root, family
        if previous is None:
            return
        root, family = previous, parent[family]


def _family_problems(state: LiveState, families: list[Family]) -> Iterator[str]:
    steps = state.script.steps
    for family in families:
        if not family.branches:
            yield f"family {family.number} has no branch"
        for root, branch in family.branches.items():
            if len(steps[root].introduced) != len(family.live):
                yield f"family {family.number}: root #{steps[root].number} does not align"
            if any(i < root for i in branch.frontier.values()):
                yield f"family {family.number}: a frontier before its root"


def _session_problems(state: LiveState) -> Iterator[str]:
    for session in state.sessions:
        if set(session.matching) != set(session.families):
            yield f"session {session.number}: matching and families differ"
        roots = list(session.matching.values())
        if len(roots) != len(set(roots)):
            yield f"session {session.number}: two families share a root"
        for family, root in session.matching.items():
            if root not in family.branches or session.owner.get(root) is not family:
                yield f"session {session.number}: family {family.number} badly matched"
            if family.session is not session:
                yield f"family {family.number} is in the wrong session"
        held = [v for f in session.families for v in f.live]
        if len(held) != len(set(held)):
            yield f"session {session.number}: two families hold the same live id"


def _index_problems(state: LiveState, families: list[Family]) -> Iterator[str]:
    expected: dict[str, set[int]] = {}
    for family in families:
        for value in family.live:
            expected.setdefault(value, set()).add(family.number)
    actual = {v: {f.number for f in found} for v, found in state._by_live.items()}
    if expected != actual:
        yield "the live-id index does not match the families"
    minted = [v for f in families for v in f.live[state.script.steps[_root(f)].owned :]]
    if len(minted) != len(set(minted)):
        yield "a minted id is held by two families"
    roots: dict[int, set[int]] = {}
    for family in families:
        for root in family.branches:
            roots.setdefault(root, set()).add(family.number)
    if roots != {r: {f.number for f in found} for r, found in state._by_root.items()}:
        yield "the root index does not match the branches"
