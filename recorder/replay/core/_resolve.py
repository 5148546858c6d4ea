"""Which recorded exchange answers a live request: decided as late as the requests allow (pure).

Each id of the request is read in every sense it can have (issued in a family, kept, fixed,
unknown, the client's own, fresh); each *hypothesis* (one sense per id) gives a key, hence
recorded steps.  In each world of the session (`_state`) the steps answering are those naming
what the live ids stand for there: the first after the world's frontier, else the latest.
Worlds a client cannot tell apart form a group; answering keeps one group's worlds, which is
how a session narrows.  A fresh creating request opens a session, a world per class of
creating steps.  The work is the request's, never a walk over the capture; nothing found is
`Unanswered`.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from recorder.protocol import Classification, IdRole
from recorder.replay.core._state import MAX_WORLDS, Family, LiveState, Session, World
from recorder.script import (
    Json,
    Key,
    Provenance,
    Script,
    Slot,
    Step,
    make_key,
    provenance,
    shape,
    token,
)

MAX_HYPOTHESES = 32
_NO_WORLD = World()  # outside a session: no family's ids are known (never changed)


@dataclass(slots=True)  # made per request: not frozen, which costs
class Sense:
    """One reading of one id of a live request."""

    provenance: Provenance
    family: Family | None = None  # ISSUED: the family that holds it
    value: str | None = None  # FIXED, or ISSUED and kept: the recorded value it is


Hypothesis = tuple[Sense, ...]


class Kind(StrEnum):
    STATELESS = "stateless"
    READ = "read"
    CREATE = "create"
    LIST = "list"


@dataclass(slots=True)  # made per request: not frozen, which costs
class Decision:
    """What answers a request (`step`), and what answering it does to the live state: in a session,
    the `worlds` kept (the first answers) with each one's step (`picks`) and the sessions `merged`;
    for a fresh create, each new world's member (`members`)."""

    kind: Kind
    hypothesis: Hypothesis
    key: Key
    step: Step
    slots: tuple[Slot, ...]
    session: Session | None = None
    worlds: tuple[World, ...] = ()
    picks: tuple[int, ...] = ()
    members: tuple[int, ...] = ()
    merged: tuple[Session, ...] = ()
    moved: Family | None = None  # a family that leaves its session for one of its own

    @property
    def world(self) -> World | None:
        return self.worlds[0] if self.worlds else None

    @property
    def creates(self) -> bool:
        return self.step.creating or bool(self.members)


@dataclass(frozen=True, slots=True)
class Unanswered:
    key: Key  # the key of the most likely reading
    fitting: tuple[Step, ...]  # steps of that key, which named other recorded ids


@dataclass(slots=True)  # made per request: not frozen, which costs
class LiveRequest:
    classification: Classification
    value: Json
    readings: tuple[tuple[Slot, ...], ...]  # its slots: fields learnt fresh compared as they
    # are first, then (when the capture learnt some for its skeleton) read as fresh
    version: str | None  # the A2A-Version header


@dataclass(slots=True)  # made per request: not frozen, which costs
class _Option:
    world: World | None
    step: Step
    ahead: bool
    literal: bool
    member: int = -1  # a fresh create: the member (its step) of a class


class Resolver:
    """Resolves live requests against one script and one live state."""

    def __init__(self, script: Script, state: LiveState) -> None:
        self.script = script
        self.state = state

    def resolve(self, live: LiveRequest) -> Decision | Unanswered:
        missed: tuple[Key, list[Step]] | None = None  # the first key tried, else one with steps
        variants = _credential_variants(live.value)
        for slots in live.readings:
            for hypothesis in self.hypotheses(slots):
                for value in variants:
                    key = key_of(live.classification, value, slots, hypothesis)
                    steps = self.script.candidates(key, live.version)
                    if missed is None or (steps and not missed[1]):
                        missed = key, steps
                    if not steps:
                        continue
                    decision = self._decide(hypothesis, key, steps, slots)
                    if decision is not None:
                        return decision
        moved = self._moved(live)
        if moved is not None:
            return moved
        if missed is None:
            slots = live.readings[0]
            return Unanswered(key_of(live.classification, live.value, slots, ()), ())
        return Unanswered(missed[0], tuple(missed[1][:8]))

    def _moved(self, live: LiveRequest) -> Decision | None:
        """A request about one family that no reading of its session fits, answered in a session of
        the family's own, one world per class its creating request could have been."""
        slots = live.readings[0]
        hypothesis = self.hypotheses(slots)[0]
        families = {s.family for s in hypothesis if s.family is not None}
        if len(families) != 1 or any(s.provenance is Provenance.OWN for s in hypothesis):
            return None
        family = families.pop()
        member = self.script.steps[family.session.worlds[0].steps[family]]
        classes = self.script.named_creates.get((member.key, member.named), {})
        trials = [
            (self.state.bind(World(), family, steps[0].index), steps[0].index)
            for steps in classes.values()
        ]
        key = key_of(live.classification, live.value, slots, hypothesis)
        options = self._options(hypothesis, key, slots, [w for w, _ in trials])
        if not options:
            return None
        group = self._group(options)
        chosen = [next(m for w, m in trials if w is o.world) for o in group]
        return _grouped(hypothesis, key, slots, group, members=tuple(chosen), moved=family)

    # -- senses and hypotheses ------------------------------------------------------------

    def senses(self, slot: Slot) -> list[Sense]:
        if slot.role is IdRole.FRESH:
            return [Sense(Provenance.FRESH)]
        found = [Sense(Provenance.ISSUED, f) for f in self.state.families_of(slot.value)]
        if self.state.kept(slot.value):
            found.append(Sense(Provenance.ISSUED, value=slot.value))
        if not found:
            if slot.value in self.script.fixed:
                return [Sense(Provenance.FIXED, value=slot.value)]
            role = Provenance.UNKNOWN if slot.role is IdRole.REFERENCE else Provenance.OWN
            return [Sense(role)]
        if slot.role is IdRole.CHOSEN:
            found.append(Sense(Provenance.OWN))
        return found

    def hypotheses(self, slots: Sequence[Slot]) -> list[Hypothesis]:
        choices = [self.senses(s) for s in slots]
        if all(len(found) == 1 for found in choices):  # most requests: one reading
            return [tuple(found[0] for found in choices)]
        found = list(itertools.islice(itertools.product(*choices), MAX_HYPOTHESES))

        def rank(hypothesis: Hypothesis) -> tuple[bool, int]:
            sessions = {s.family.session for s in hypothesis if s.family is not None}
            own = sum(
                1
                for sense, options in zip(hypothesis, choices, strict=True)
                if sense.provenance is Provenance.OWN and len(options) > 1
            )
            return len(sessions) > 1, own

        return sorted(found, key=rank)

    # -- deciding ---------------------------------------------------------------------------

    def _decide(
        self, hypothesis: Hypothesis, key: Key, steps: list[Step], slots: tuple[Slot, ...]
    ) -> Decision | None:
        sessions = tuple(dict.fromkeys(s.family.session for s in hypothesis if s.family))
        worlds = self._worlds(sessions)
        first = steps[0]
        if first.listing:
            return self._listing(hypothesis, key, steps, slots, sessions, worlds)
        if first.stateless:
            return self._stateless(hypothesis, key, steps, slots, worlds)
        if not sessions:
            if self.script.fresh_classes.get(steps[0].key):
                return self._fresh(hypothesis, key, steps, slots, Kind.CREATE)
            return self._kept(hypothesis, key, slots)
        options = self._options(hypothesis, key, slots, worlds)
        if not options:
            return None
        merged = sessions if len(sessions) > 1 else ()
        group = self._group(options)
        return _grouped(hypothesis, key, slots, group, session=sessions[0], merged=merged)

    def _worlds(self, sessions: Sequence[Session]) -> list[World]:
        """The joint readings of the sessions a request names (one session: its worlds)."""
        if len(sessions) <= 1:
            return list(sessions[0].worlds) if sessions else []
        found: list[World] = []
        for combination in itertools.product(*(s.worlds for s in sessions)):
            joint = combination[0].copy()
            members = set(joint.steps.values())
            clash = False
            for other in combination[1:]:
                if members & set(other.steps.values()):
                    clash = True
                    break
                members |= set(other.steps.values())
                joint.update(other)
            if not clash:
                found.append(joint)
            if len(found) >= MAX_WORLDS:
                break
        return found

    def _named(
        self, hypothesis: Hypothesis, slots: Sequence[Slot], world: World | None
    ) -> tuple[str | None, ...] | None:
        """Per slot, the recorded id an ISSUED slot names in `world` (None: unknown there)."""
        named: list[str | None] = []
        for sense, slot in zip(hypothesis, slots, strict=True):
            if sense.provenance is not Provenance.ISSUED:
                named.append(None)
            elif sense.family is None:
                named.append(sense.value)
            else:
                recorded = world.recorded.get(slot.value) if world is not None else None
                if recorded is None:
                    return None
                named.append(recorded)
        return tuple(named)

    def _in_world(
        self, hypothesis: Hypothesis, slots: Sequence[Slot], world: World | None
    ) -> tuple[tuple[str | None, ...], int, bool] | None:
        """`_named` in `world`, the latest step of the story of what it names (the frontier), and
        whether all are as recorded, in one pass."""
        named: list[str | None] = []
        frontier, literal = -1, True
        known = world if world is not None else _NO_WORLD
        recorded_of, frontier_of = known.recorded.get, known.frontier.get
        for sense, slot in zip(hypothesis, slots, strict=True):
            if sense.provenance is not Provenance.ISSUED:
                named.append(None)
                continue
            if sense.family is None:
                recorded = sense.value
                if recorded is not None:
                    frontier = max(frontier, self.state.kept_frontier(recorded))
            else:
                recorded = recorded_of(slot.value)
                if recorded is None:
                    return None
                frontier = max(frontier, frontier_of(recorded, -1))
            literal = literal and (recorded is None or recorded == slot.value)
            named.append(recorded)
        return tuple(named), frontier, literal

    def _along(self, steps: list[Step], frontier: int) -> tuple[Step, bool]:
        """The first step after the frontier, else the latest (a poll repeats its end)."""
        at = bisect.bisect_right(steps, frontier, key=lambda s: s.index)
        return (steps[at], True) if at < len(steps) else (steps[-1], False)

    def _options(
        self, hypothesis: Hypothesis, key: Key, slots: Sequence[Slot], worlds: Sequence[World]
    ) -> list[_Option]:
        """Per world, the step that answers there: a read's next step in the story of the ids it
        names, a creating request's next step of each class that could be it."""
        options: list[_Option] = []
        for world in worlds:
            found = self._in_world(hypothesis, slots, world)
            if found is None:
                continue
            named, frontier, literal = found
            reads = self.script.named_reads.get((key, named), [])
            if reads:
                step, ahead = self._along(reads, frontier)
                options.append(_Option(world, step, ahead, literal))
            creates = self.script.named_creates.get((key, named))
            if creates:
                taken = set(world.steps.values())
                for steps in creates.values():
                    free = _first_free(steps, frontier, taken)
                    if free is not None:
                        options.append(_Option(world, free, free.index > frontier, literal))
        return options

    def _group(self, options: list[_Option]) -> list[_Option]:
        """The options answered together: the best one and those a client cannot tell from it."""
        if all(o.step is options[0].step for o in options) and options[0].member < 0:
            return options  # one step answers in every world: nothing to rank
        ranked = sorted(options, key=self._preference)
        best = ranked[0]
        if all(o.step is best.step for o in ranked):
            return ranked
        shape = self._shape(best)
        return [
            o for o in ranked if o.step.creating == best.step.creating and self._shape(o) == shape
        ]

    def _shape(self, option: _Option) -> str:
        """What a client sees of an option's answer (a class's first member speaks for all)."""
        script = self.script
        if option.member >= 0:
            return script.shape_of(
                script.steps[script.classes[script.class_of[option.member]].members[0]]
            )
        return script.shape_of(option.step)

    def _preference(self, option: _Option) -> tuple[bool, bool, bool, int]:
        step = self.script.steps[option.member] if option.member >= 0 else option.step
        return not option.literal, self.state.spent(step.index), not option.ahead, step.index

    def _fresh(
        self, hypothesis: Hypothesis, key: Key, steps: list[Step], slots: Sequence[Slot], kind: Kind
    ) -> Decision | None:
        """A creating request naming no live id: a new session, a world per class."""
        classes = self.script.fresh_classes.get(steps[0].key, [])
        if not classes:
            return None
        own = tuple(
            dict.fromkeys(
                slot.value
                for sense, slot in zip(hypothesis, slots, strict=True)
                if sense.provenance is Provenance.OWN
            )
        )
        # Looked up by the key that compares fields learnt fresh as they are: these very steps.
        literal = [s.index for s in steps] if steps[0].literal_key == key else None
        options = []
        for cls in classes:
            if literal is not None:
                pool = [m for m in literal if self.script.class_of.get(m) == cls.number]
                exact = next((m for m in pool if not self.state.spent(m)), None)
            elif own:  # the member whose own ids the client chose again, if any is left
                exact = self.state.unspent((cls.number, own), cls.by_own.get(own, ()))
            else:
                exact = None
            # Else the first member not spent (none took it, no id of it went out), else the first.
            member = exact if exact is not None else self.state.unspent(cls.number, cls.members)
            member = cls.members[0] if member is None else member
            step = self.script.steps[member]
            options.append(_Option(None, step, True, exact is not None, member))
        group = self._group(options)
        return Decision(
            kind,
            hypothesis,
            key,
            group[0].step,
            tuple(slots),
            members=tuple(o.member for o in group),
        )

    def _kept(self, hypothesis: Hypothesis, key: Key, slots: Sequence[Slot]) -> Decision | None:
        """A read that names no live family, only values served as recorded (or none)."""
        named = self._in_world(hypothesis, slots, None)
        found = self.script.named_steps.get((key, named[0]), []) if named is not None else []
        if named is None or not found:
            return None
        step, _ = self._along(found, named[1])
        return Decision(Kind.READ, hypothesis, key, step, tuple(slots))

    def _stateless(
        self,
        hypothesis: Hypothesis,
        key: Key,
        steps: list[Step],
        slots: Sequence[Slot],
        worlds: Sequence[World],
    ) -> Decision:
        """A stateless step: the first naming what the live ids stand for, else the first."""
        step, kept = steps[0], tuple(worlds[:1])
        readings: list[World | None] = [*worlds] or [None]
        for world in readings:
            named = self._named(hypothesis, slots, world)
            found = self.script.named_steps.get((key, named), []) if named is not None else []
            if found:
                step, kept = found[0], (world,) if world else ()
                break
        return Decision(Kind.STATELESS, hypothesis, key, step, tuple(slots), worlds=kept)

    def _listing(
        self,
        hypothesis: Hypothesis,
        key: Key,
        steps: list[Step],
        slots: Sequence[Slot],
        sessions: Sequence[Session],
        worlds: Sequence[World],
    ) -> Decision:
        """A listing: found as a read is, answered as the lister chooses (`_listing`); the client's
        own ids it names first make a family, as a creating request's do."""
        fresh = self._fresh(hypothesis, key, steps, slots, Kind.LIST) if not sessions else None
        if fresh is not None:
            return fresh
        world = worlds[0] if worlds else None
        named = self._named(hypothesis, slots, world)
        found = self.script.named_steps.get((key, named), []) if named is not None else []
        return Decision(
            Kind.LIST,
            hypothesis,
            key,
            (found or steps)[0],
            tuple(slots),
            sessions[0] if sessions else None,
            tuple(worlds[:1]),
            merged=tuple(sessions) if len(sessions) > 1 else (),
        )

    def listing_steps(self, decision: Decision, version: str | None) -> list[Step]:
        """The recorded listings a listing decision may be answered from."""
        named = self._named(decision.hypothesis, decision.slots, decision.world)
        found = self.script.named_steps.get((decision.key, named), []) if named is not None else []
        return found or self.script.candidates(decision.key, version)


def _credential_variants(value: Json) -> list[Json]:
    """The value as sent, then with fewer credentials (never more: lacking one, it is not it)."""
    held = value.get("credentials") if isinstance(value, dict) else None
    if not held:
        return [value]
    found = [value]
    for size in range(len(held) - 1, -1, -1):
        for kept in itertools.combinations(held, size):
            variant = {k: v for k, v in value.items() if k != "credentials"}
            if kept:
                variant["credentials"] = list(kept)
            found.append(variant)
    return found


def _first_free(steps: list[Step], frontier: int, taken: set[int]) -> Step | None:
    """The first step after the frontier not yet a member of the world, else the first before it."""
    at = bisect.bisect_right(steps, frontier, key=lambda s: s.index)
    for step in itertools.chain(steps[at:], steps[:at]):
        if step.index not in taken:
            return step
    return None


def key_of(
    classification: Classification, value: Json, slots: Sequence[Slot], hypothesis: Hypothesis
) -> Key:
    tokens = (
        [_token(s) for s in hypothesis]
        if hypothesis
        else [token(provenance(s, False, False)) for s in slots]
    )
    shaped = shape(value, [(s.location, s.segment) for s in slots], tokens)
    return make_key(classification, shaped)


def _token(sense: Sense) -> Json:
    if sense.provenance is Provenance.FIXED:
        return token(sense.provenance, sense.value)
    return token(sense.provenance)


def _grouped(
    hypothesis: Hypothesis,
    key: Key,
    slots: tuple[Slot, ...],
    group: list[_Option],
    session: Session | None = None,
    *,
    members: tuple[int, ...] = (),
    merged: tuple[Session, ...] = (),
    moved: Family | None = None,
) -> Decision:
    """The decision to answer in the worlds of `group`, its first option's step answering."""
    step = group[0].step
    return Decision(
        Kind.CREATE if step.creating else Kind.READ,
        hypothesis,
        key,
        step,
        slots,
        session,
        tuple(o.world for o in group if o.world is not None),
        tuple(o.step.index for o in group),
        members,
        merged,
        moved,
    )
