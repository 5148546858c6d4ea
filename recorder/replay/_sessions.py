"""Replay sessions: what each live client has been handed, and where it is in the script.

A `Session` is one client's run through the recorded script: its bindings (recorded id <->
live id), the creating steps it has served, for each recorded id the furthest step it has
served that named that id (`frontier`), and `progress` (how many creating steps it has got
through: the rank of the last creating step it served, plus one).  `Sessions` holds them on
a bounded LRU, with an index from every live id a session was handed (or chose) to it.

Which session a request belongs to:

1. A request naming an id this replay issued (or a client's own id it named before) belongs
   to that id's session, whatever connection it came on.
2. A request naming none (a send that creates a task, a ListTasks without filter) joins the
   session whose place in the script fits it: cost = how many creating steps lie between the
   session's progress and the candidate step's rank.  A creating request joins only a session
   that has done exactly the creating steps recorded before it (cost 0, "waiting" there), else
   starts a new session at the first candidate; a creating step a session has served is never
   served again in it, so a client that creates more tasks than recorded gets a new session.
   An id-less read (ListTasks) goes to the existing session that fits best.
3. Ties are broken by the connection (the session last served on it, while it is open and if
   the headers agree), then the client's identifying headers (`IDENTITY_HEADERS`), then
   recency.  A tie none of these breaks is reported (`Choice.tie`).

Only sessions that could win are looked at: for a creating request, the connection's and
those of the same identity waiting exactly at a candidate (an index by place and identity);
for a read, the connection's, those at a candidate's place and the recent ones.  So choosing
costs a bounded number of steps whatever the number of sessions or recorded steps.
"""

from __future__ import annotations

import bisect
import itertools
import re
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from recorder.replay._script import Step

# Headers that tell one client from another (the same for every request it sends).
IDENTITY_HEADERS = (
    "user-agent",
    "authorization",
    "proxy-authorization",
    "cookie",
    "x-api-key",
    "api-key",
    "x-client-id",
    "a2a-extensions",
)
MAX_SESSIONS = 4096
SCAN = 16  # sessions looked at per source when choosing
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)

Identity = tuple[str | None, ...]
Score = tuple[int, int, int, int]
_NEW: Score = (0, 1, 1, 0)  # a new session: no distance, no connection, no identity to match


@dataclass(eq=False)  # compared and hashed by identity
class Session:
    number: int
    to_live: dict[str, str] = field(default_factory=dict)  # recorded -> live
    to_recorded: dict[str, str] = field(default_factory=dict)  # live -> recorded (ids)
    version: int = 0  # bumps whenever to_live changes (answers are cached per version)
    frontier: dict[str, int] = field(default_factory=dict)  # recorded id -> furthest index
    progress: int = 0
    created: set[int] = field(default_factory=set)  # indices of creating steps served
    connection: str | None = None
    identity: Identity = ()
    active: int = 0  # the table's clock when last used


Option = tuple[Score, "Session | None", Step]


@dataclass(frozen=True, slots=True)
class Choice:
    """The step to serve and the session it joins (None: a new one); `tie` when ambiguous."""

    step: Step
    session: Session | None
    tie: int = 0  # how many other sessions were as likely


def identity_of(headers: Mapping[str, str]) -> Identity:
    """What tells a client apart, from its lower-cased headers (None where it sent none)."""
    return tuple(map(headers.get, IDENTITY_HEADERS))


class Sessions:
    """The live sessions, on an LRU of `limit` sessions; the least recently used is forgotten."""

    def __init__(self, limit: int = MAX_SESSIONS) -> None:
        self.limit = limit
        self._lru: OrderedDict[Session, None] = OrderedDict()
        self._by_live: dict[str, Session] = {}
        self._recorded_handed_out: set[str] = set()  # recorded ids minted as themselves
        self._by_connection: OrderedDict[str, Session] = OrderedDict()
        self._by_progress: dict[int, OrderedDict[Session, None]] = {}
        self._by_identity: dict[Identity, OrderedDict[Session, None]] = {}
        self._by_place: dict[tuple[int, Identity], OrderedDict[Session, None]] = {}
        self._places: dict[Identity, set[int]] = {}  # the progresses in _by_place, by identity
        self._ranks: dict[int, tuple[Sequence[Step], dict[int, Step]]] = {}
        self._numbers = itertools.count(1)
        self._clock = itertools.count(1)
        self.forgotten = 0

    def __len__(self) -> int:
        return len(self._lru)

    def owner(self, live: str) -> Session | None:
        """The session that was handed (or chose) this live id."""
        return self._by_live.get(live)

    # -- choosing -------------------------------------------------------------------------

    def within(self, session: Session, candidates: Sequence[Step]) -> Step:
        """The step a known session serves among same-key candidates (script order).

        The candidates name the same recorded ids; how far the session has come with those
        ids is their frontier.  Creating steps: the first this session has not served, after
        the frontier if any is.  Others (polls): the first after the frontier, else the latest
        before it, which repeats.  So a poll of a task follows that task's recorded story,
        whatever else the session does meanwhile.
        """
        frontier = max((session.frontier.get(v, -1) for v in candidates[0].names), default=-1)
        if candidates[0].creates:
            fresh = [s for s in candidates if s.index not in session.created]
            later = [s for s in fresh if s.index > frontier]
            return (later or fresh or [candidates[-1]])[0]
        ahead = next((s for s in candidates if s.index > frontier), None)
        return ahead if ahead is not None else candidates[-1]

    def join(
        self, candidates: Sequence[Step], connection: str | None, identity: Identity
    ) -> Choice:
        """The session a request naming none of its ids belongs to (see the module docstring)."""
        on = self._on(connection)
        if candidates[0].creates:
            options = list(self._waiting(candidates, on, identity))
            options.append((_NEW, None, candidates[0]))
        else:
            options = list(self._fitting(candidates, on, identity)) or [(_NEW, None, candidates[0])]
        best = min(options, key=lambda option: option[0])
        tie = sum(
            1
            for score, session, _ in options
            if session is not None and session is not best[1] and score[:3] == best[0][:3]
        )
        return Choice(best[2], best[1], tie)

    def _waiting(
        self, candidates: Sequence[Step], on: Session | None, identity: Identity
    ) -> Iterator[Option]:
        """Sessions waiting at one of these creating steps (cost 0) that could beat a new
        session: the connection's (`on`), and those of the same identity."""
        at = self._ranked(candidates)
        sessions = [on] if on is not None else []
        for progress in self._places.get(identity, ()):
            if progress in at:
                sessions.extend(_recent(self._by_place[(progress, identity)]))
        for session in dict.fromkeys(sessions):
            step = at.get(session.progress)
            if step is not None and step.index not in session.created:
                yield self._score(session, step, on, identity), session, step

    def _fitting(
        self, candidates: Sequence[Step], on: Session | None, identity: Identity
    ) -> Iterator[Option]:
        """Sessions that an id-less read could belong to, each with its nearest candidate:
        the connection's (`on`), those at a candidate's place, the recent ones."""
        ranks = [s.rank for s in candidates]
        sources: list[Iterable[Session]] = [(on,)] if on is not None else []
        places = dict.fromkeys(ranks[:SCAN])
        sources += [_recent(self._by_place.get((rank, identity))) for rank in places]
        sources += [_recent(self._by_progress.get(rank)) for rank in places]
        sources += [_recent(self._by_identity.get(identity)), _recent(self._lru)]
        seen: set[int] = set()
        for session in itertools.chain.from_iterable(sources):
            if session.number in seen:
                continue
            seen.add(session.number)
            step = _nearest(session, candidates, ranks)
            if step is not None:
                yield self._score(session, step, on, identity), session, step

    @staticmethod
    def _score(session: Session, step: Step, on: Session | None, identity: Identity) -> Score:
        """(script distance, other connection, identity 0 same / 2 other, least recent);
        `on` is the session last served on the request's connection.

        A connection is the same client only if its headers agree: the OS gives a closed
        connection's port to the next one, and one pool may carry several users."""
        same = session.identity == identity
        other_connection = not same or session is not on
        return (
            abs(step.rank - session.progress),
            int(other_connection),
            0 if same else 2,
            -session.active,
        )

    def _on(self, connection: str | None) -> Session | None:
        """The session last served on `connection`, if it is still remembered (a session
        forgotten on the LRU leaves the other connections it used behind)."""
        session = self._by_connection.get(connection) if connection is not None else None
        return session if session is not None and session in self._lru else None

    def _ranked(self, candidates: Sequence[Step]) -> dict[int, Step]:
        """Creating candidates by rank (cached per candidate list: the script's lists last)."""
        found = self._ranks.get(id(candidates))
        if found is None or found[0] is not candidates:
            found = self._ranks[id(candidates)] = (candidates, {s.rank: s for s in candidates})
        return found[1]

    # -- changing ------------------------------------------------------------------------

    def open(self) -> Session:
        session = Session(next(self._numbers))
        self._lru[session] = None
        self._index(session)
        while len(self._lru) > self.limit:
            self._forget(next(iter(self._lru)))
        return session

    def served(
        self, session: Session, step: Step, connection: str | None, identity: Identity
    ) -> None:
        """Move the session on past `step`, and remember who was served."""
        for value in (*step.names, *step.response_ids):
            if session.frontier.get(value, -1) < step.index:
                session.frontier[value] = step.index
        progress = max(session.progress, step.rank + 1) if step.creates else session.progress
        if step.creates:
            session.created.add(step.index)
        if (progress, identity) != (session.progress, session.identity):
            self._unindex(session)
            session.progress, session.identity = progress, identity
            self._index(session)
        else:  # the same buckets: most recent last
            for bucket in self._buckets(session):
                bucket.move_to_end(session)
        session.connection = connection
        session.active = next(self._clock)
        self._lru.move_to_end(session)
        if connection is not None:
            self._by_connection[connection] = session
            self._by_connection.move_to_end(connection)
            while len(self._by_connection) > 4 * self.limit:
                self._by_connection.popitem(last=False)

    def closed(self, connection: str) -> None:
        """A closed connection says nothing of who comes next on its port."""
        self._by_connection.pop(connection, None)

    def bind(self, session: Session, live: str, recorded: str, *, indexed: bool) -> None:
        """`live` stands for `recorded` in this session; `indexed` ids find the session again."""
        if session.to_live.get(recorded) != live:
            if indexed and recorded in session.to_live:
                return  # an id keeps the first live value it was bound to
            session.to_live[recorded] = live
            session.version += 1
        if indexed:
            session.to_recorded.setdefault(live, recorded)
            self._by_live.setdefault(live, session)

    def mint(self, session: Session | None, recorded: str) -> str:
        """A live id for a recorded one, bound in `session` when there is one.

        The recorded id itself, the first time it is minted: the first client to run a part
        of the script gets the recorded ids, so a capture sent back as written (an editor's
        HTTP client, `curl` on its requests) names ids this replay issued.  Every other
        session gets fresh ones, so parallel clients never share a task, and a forgotten
        session's ids stay unknown for good.
        """
        if recorded in self._recorded_handed_out:
            fresh = fresh_id(recorded)
        else:
            self._recorded_handed_out.add(recorded)
            fresh = recorded
        if session is not None:
            self.bind(session, fresh, recorded, indexed=True)
        return fresh

    def _index(self, session: Session) -> None:
        self._by_progress.setdefault(session.progress, OrderedDict())[session] = None
        self._by_identity.setdefault(session.identity, OrderedDict())[session] = None
        place = (session.progress, session.identity)
        self._by_place.setdefault(place, OrderedDict())[session] = None
        self._places.setdefault(session.identity, set()).add(session.progress)

    def _buckets(self, session: Session) -> Iterator[OrderedDict[Session, None]]:
        yield self._by_progress[session.progress]
        yield self._by_identity[session.identity]
        yield self._by_place[(session.progress, session.identity)]

    def _unindex(self, session: Session) -> None:
        _drop(self._by_progress, session.progress, session)
        _drop(self._by_identity, session.identity, session)
        _drop(self._by_place, (session.progress, session.identity), session)
        if (session.progress, session.identity) not in self._by_place:
            places = self._places.get(session.identity)
            if places is not None:
                places.discard(session.progress)
                if not places:
                    del self._places[session.identity]

    def _forget(self, session: Session) -> None:
        del self._lru[session]
        self._unindex(session)
        for live in session.to_recorded:
            if self._by_live.get(live) is session:
                del self._by_live[live]
        if session.connection and self._by_connection.get(session.connection) is session:
            del self._by_connection[session.connection]
        self.forgotten += 1


def _drop[K](table: dict[K, OrderedDict[Session, None]], key: K, session: Session) -> None:
    bucket = table.get(key)
    if bucket is not None:
        bucket.pop(session, None)
        if not bucket:
            del table[key]


def _recent(bucket: Mapping[Session, None] | None) -> Iterator[Session]:
    """Up to SCAN sessions of a bucket, most recently used first."""
    if not bucket:
        return iter(())
    return itertools.islice(reversed(bucket.keys()), SCAN)  # type: ignore[call-overload]


def _nearest(session: Session, candidates: Sequence[Step], ranks: list[int]) -> Step | None:
    """The candidate whose rank is nearest the session's progress, forward first.

    A creating step the session already served is not a candidate for it.
    """
    start = bisect.bisect_left(ranks, session.progress)
    forward = (candidates[i] for i in range(start, len(candidates)))
    backward = (candidates[i] for i in range(start - 1, -1, -1))
    ahead = next((s for s in forward if s.index not in session.created), None)
    behind = next((s for s in backward if s.index not in session.created), None)
    if ahead is None or behind is None:
        return ahead or behind
    return ahead if ahead.rank - session.progress <= session.progress - behind.rank else behind


def fresh_id(recorded: str) -> str:
    """A new id that looks like `recorded`: a UUID for a UUID, else a suffixed copy (replay
    mints these for the ids it hands out, verify for the client's own)."""
    if _UUID.fullmatch(recorded):
        return str(uuid.uuid4())
    return f"{recorded}-{uuid.uuid4().hex[:8]}"
