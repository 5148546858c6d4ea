"""Carrying out a replay decision on the live state, and the values its answer needs (pure).

`Carrier.carry(decision, reading)` narrows the families the decision keeps, moves their
branches' frontiers, makes the family a create brings (`_state`), lines up the ids served as
recorded and the client's fresh values across the branches kept (aliases and echoes), and
returns `Applied`: the recorded-to-live mapping the answer is built with, the part of it that
maps ids the agent handed out (what makes an answer `adapted`), and the session.

A read or a stateless answer whose carrying out changed nothing is decided the same way again
while nothing it depends on changes: `recall(reading)` gives it back as long as the state's
and its sessions' generations stand (a poll at the end of its recorded story, a probe, a card
fetch cost no resolving).
"""

from __future__ import annotations

from dataclasses import dataclass

from recorder.replay._ids import Provenance, Slot
from recorder.replay._reader import Reading
from recorder.replay._resolve import Decision, Kind, Option
from recorder.replay._script import Script, Step
from recorder.replay._state import Family, LiveState, Session

CACHE_SIZE = 4096


@dataclass(slots=True)
class Applied:
    """What answering a decision did: the values to put in the answer and who it touched."""

    mapping: dict[str, str]
    agent_ids: dict[str, str]  # the part of `mapping` that maps ids the agent handed out
    session: Session | None
    changes: tuple[str, ...] | None = None  # what of the answer is not as recorded
    seen: tuple[tuple[Slot, Provenance, str | None], ...] | None = None  # for the journal


@dataclass(frozen=True, slots=True)
class Decided:
    """A decision and what carrying it out gave, for as long as its sessions stay as they
    were (`holds`)."""

    decision: Decision
    applied: Applied
    families: tuple[Family, ...]
    sessions: tuple[tuple[Session, int], ...]  # and their generations then

    def holds(self) -> bool:
        """Nothing in its sessions changed (a family moving away changes the one it left)."""
        return all(session.generation == then for session, then in self.sessions)


class Carrier:
    """Carries out decisions on one live state (see the module docstring)."""

    def __init__(self, script: Script, state: LiveState) -> None:
        self.script = script
        self.state = state
        self._decided: dict[tuple[object, ...], Decided] = {}
        self._unminted: dict[int, list[str]] = {}

    def recall(self, reading: Reading) -> Decided | None:
        """The decision remembered for this request, if nothing it depends on changed."""
        key = (reading.parsed, reading.headers.get("a2a-version"), self.state.generation)
        found = self._decided.get(key)
        if found is None or not found.holds():
            return None
        for family in found.families:
            self.state.touch(family)
        return found

    def carry(self, decision: Decision, reading: Reading) -> Applied:
        before = self.state.generation, _generations(decision)
        applied = self._apply(decision, reading)
        if before == (self.state.generation, _generations(decision)):
            self._remember(decision, applied, reading)
        return applied

    def preview(self, decision: Decision) -> dict[str, str]:
        """The recorded-to-live mapping an answer to `decision` would be built with, the
        state left as it is (a request not carried out: a fault answered it).  A create's
        ids are not minted: its answer shows the recorded ones."""
        mapping: dict[str, str] = {}
        agent: dict[str, str] = {}
        for family, root in decision.options[0].branches if decision.options else ():
            self._map(family, root, mapping, agent)
            for other, at in family.session.matching.items():
                self._map(other, at, mapping, agent)
        return mapping

    def _remember(self, decision: Decision, applied: Applied, reading: Reading) -> None:
        """A read or a stateless answer that changed nothing is decided the same way again
        while nothing it depends on changes (the generations of `_state`): a poll that has
        reached the end of its recorded story costs no resolving."""
        if decision.kind not in (Kind.READ, Kind.STATELESS) or not reading.parsed.small:
            return
        families = tuple(dict.fromkeys(f for o in decision.options for f, _ in o.branches))
        sessions = _generations(decision)
        key = (reading.parsed, reading.headers.get("a2a-version"), self.state.generation)
        if len(self._decided) >= CACHE_SIZE:
            self._decided.clear()
        self._decided[key] = Decided(decision, applied, families, sessions)

    def _apply(self, decision: Decision, reading: Reading) -> Applied:
        """Carry out a decision on the live state; the values its answer needs."""
        state = self.state
        narrowing = decision.kind in (Kind.READ, Kind.CREATE)
        session: Session | None = None
        for family, roots in _kept(decision).items():
            if narrowing:
                state.narrow(family, roots)
            session = family.session
        for option in decision.options if narrowing else ():
            for family, root in option.branches:
                named = self._named_in(decision, family, root, reading)
                state.advance(family, root, named, option.step.index)
        created = self._create(decision, reading) if decision.kind is Kind.CREATE else None
        if narrowing and (len(decision.options) > 1 or _fresh(decision)):
            self._alias(decision, reading, created)
        mapping: dict[str, str] = {}
        agent: dict[str, str] = {}
        mapped: set[Family] = set()
        for family, root in decision.options[0].branches if decision.options else ():
            self._map(family, root, mapping, agent)
            mapped.add(family)
            state.touch(family)
        if created is not None:
            self._map(created, decision.step.index, mapping, agent)
            mapped.add(created)
            session = created.session
        self._echo(decision, reading, session, mapping)
        for family, root in session.matching.items() if session else ():
            if family not in mapped:  # the session's other ids (a context, a config)
                self._map(family, root, mapping, agent)
        return Applied(mapping, agent, session)

    def _alias(self, decision: Decision, reading: Reading, created: Family | None) -> None:
        """In every branch kept, the ids the step answered from showed as recorded, and the
        client's fresh values, stand for the same at the same places (see `_state`)."""
        rep = decision.options[0]
        shown = self._shown_ids(rep, created) if len(decision.options) > 1 else []
        for option in decision.options:
            # The fresh values of a create belong to what it created, of a read to what it read.
            branches = [(created, option.step.index)] if created else list(option.branches)
            pairs = [
                (recorded.slot.value, slot.value)
                for sense, slot, recorded in zip(
                    decision.hypothesis, reading.parsed.slots, option.step.slots, strict=True
                )
                if sense.provenance is Provenance.FRESH
            ]
            kept = list(zip(self._unminted_ids(option.step), shown, strict=False))
            for family, root in branches:
                self.state.alias(family, root, pairs, echo=True)
                if option is not rep:
                    self.state.alias(family, root, kept)

    def _shown_ids(self, option: Option, created: Family | None) -> list[str]:
        """The ids served as recorded in the answer of `option`, as the client sees them."""
        found = self._unminted_ids(option.step)
        if created is not None or not option.branches:
            return found
        family, root = option.branches[0]
        return [self.state.shown(family, root, v) for v in found]

    def _unminted_ids(self, step: Step) -> list[str]:
        """The ids a step's answer shows as recorded (not minted, not the request's own)."""
        found = self._unminted.get(step.index)
        if found is None:
            slots = {r.slot.value for r in step.slots}
            origin = self.script.origin
            found = [v for v in step.response_ids if v not in origin and v not in slots]
            self._unminted[step.index] = found
        return found

    def _create(self, decision: Decision, reading: Reading) -> Family:
        step = decision.step
        given = {
            recorded.slot.value: slot.value
            for sense, slot, recorded in zip(
                decision.hypothesis, reading.parsed.slots, step.slots, strict=True
            )
            if sense.provenance is Provenance.OWN
        }
        roots = [step.index, *(o.step.index for o in decision.options)]
        session = decision.session if decision.fits else None
        return self.state.create(session, roots, given)

    def _named_in(
        self, decision: Decision, family: Family, root: int, reading: Reading
    ) -> list[str]:
        return [
            self.state.recorded(family, root, slot.value)
            for sense, slot in zip(decision.hypothesis, reading.parsed.slots, strict=True)
            if sense.family is family
        ]

    def _map(
        self, family: Family, root: int, mapping: dict[str, str], agent: dict[str, str]
    ) -> None:
        owned = self.script.steps[root].owned
        for position, (recorded, live) in enumerate(self.state.mapping(family, root)):
            mapping.setdefault(recorded, live)
            if position >= owned and recorded != live:
                agent.setdefault(recorded, live)
        branch = family.branches[root]
        for recorded, shown in branch.aliases.items():
            mapping.setdefault(recorded, shown)
            agent.setdefault(recorded, shown)
        for recorded, shown in branch.echoes.items():
            mapping.setdefault(recorded, shown)
        mapping.update((k, v) for k, v in family.session.echoes.items() if k not in mapping)

    def _echo(
        self,
        decision: Decision,
        reading: Reading,
        session: Session | None,
        mapping: dict[str, str],
    ) -> None:
        """The request's own values for the recorded ones (a fresh messageId, a webhook URL
        and its token): in the answer, and kept by the session for later answers."""
        for sense, slot, recorded in zip(
            decision.hypothesis, reading.parsed.slots, decision.step.slots, strict=True
        ):
            old = recorded.slot.value
            if old != slot.value and (sense.family is None or old not in mapping):
                mapping.setdefault(old, slot.value)
            if session is not None and sense.provenance is Provenance.FRESH:
                self.state.echo(session, old, slot.value)


def _generations(decision: Decision) -> tuple[tuple[Session, int], ...]:
    """The sessions a decision's families are in, with their generations now."""
    sessions = {f.session: f.session.generation for o in decision.options for f, _ in o.branches}
    return tuple(sessions.items())


def _fresh(decision: Decision) -> bool:
    return any(s.provenance is Provenance.FRESH for s in decision.hypothesis)


def _kept(decision: Decision) -> dict[Family, list[int]]:
    kept: dict[Family, list[int]] = {}
    for option in decision.options:
        for family, root in option.branches:
            roots = kept.setdefault(family, [])
            if root not in roots:
                roots.append(root)
    return kept
