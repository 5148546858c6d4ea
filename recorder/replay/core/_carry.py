"""Carrying out a replay decision on the live state, and the values its answer needs (pure).

`Carrier.carry` updates the session `_state` owns as the decision says and returns `Applied`:
the swap from recorded to live values for this answer, the ids shown mapped (what makes it
`adapted`), and the session.  `preview` gives the same swap without touching the state (for a
request a fault answered instead).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from recorder.replay.core._resolve import Decision, Kind
from recorder.replay.core._state import Family, LiveState, Session, World
from recorder.script import Lookup, Provenance, Script, Slot, Step, Swap, embedded_pairs, provenance

Seen = tuple[tuple[Slot, Provenance, str | None], ...]


@dataclass(slots=True)  # made per request: not frozen, which costs
class Applied:
    """What answering a decision did: its recorded -> live values (`lookup`), and who it touched."""

    lookup: Lookup
    step: Step
    agent_ids: tuple[tuple[str, str], ...]  # (recorded, live) ids of the agent's shown mapped
    session: Session | None
    world: World | None
    created: Family | None = None

    @property
    def swap(self) -> Swap:
        """`lookup`, with the step's long ids swapped inside longer strings too."""
        ids = (*self.step.response_ids, *(r.slot.value for r in self.step.slots))
        pairs = [(r, v) for r in ids if (v := self.lookup(r)) is not None]
        return Swap(self.lookup, embedded_pairs(pairs))


class Carrier:
    """Carries out decisions on one live state (see the module docstring)."""

    def __init__(self, script: Script, state: LiveState) -> None:
        self.script = script
        self.state = state

    def carry(self, decision: Decision) -> Applied:
        state = self.state
        session, worlds = decision.session, list(decision.worlds)
        if decision.moved is not None:
            session = state.move(decision.moved, decision.members)
            worlds = list(session.worlds)
        elif decision.merged:
            session = state.merge(decision.merged, worlds)
        elif session is not None and decision.kind in (Kind.READ, Kind.CREATE):
            state.narrow(session, worlds)
            worlds = list(session.worlds)
        for world, pick in zip(worlds, decision.picks, strict=False):
            state.advance(world, self._named(decision, world), pick)
        kept = [s.value for s in decision.hypothesis if s.value and s.family is None]
        if kept and any(s.provenance is Provenance.ISSUED for s in decision.hypothesis):
            state.keep(kept, decision.step.index)
        created = self._create(decision, session)
        if created is not None:
            session = created.session
            worlds = session.worlds
        self._echo(decision, worlds)
        if len(worlds) > 1 and decision.kind in (Kind.READ, Kind.CREATE):
            self._alias(decision, worlds)
        shown = self.script.shown_as_recorded.get(decision.step.index, ())
        if shown:
            state.keep(shown, decision.step.index)
        if session is not None:
            state.touch(session)
        return self._applied(decision, session, worlds[0] if worlds else None, created)

    def preview(self, decision: Decision) -> Applied:
        """The swap an answer to `decision` would get, the state untouched (no id minted)."""
        return self._applied(decision, decision.session, decision.world, None)

    # -- the answer's values ---------------------------------------------------------------

    def _applied(
        self,
        decision: Decision,
        session: Session | None,
        world: World | None,
        created: Family | None,
    ) -> Applied:
        step = decision.step
        echoes = {  # the request's own values (fresh, new, probes) for the step's
            recorded.slot.value: slot.value
            for sense, slot, recorded in zip(
                decision.hypothesis, decision.slots, step.slots, strict=False
            )
            if sense.family is None and recorded.slot.value != slot.value
        }
        lookup = _lookup(world, echoes)
        own = world.own if world is not None else ()
        agent = tuple(
            (r, v)
            for r in step.response_ids
            if (v := lookup(r)) is not None and v != r and r not in own and r not in echoes
        )
        return Applied(lookup, step, agent, session, world, created)

    # -- changes to the state -----------------------------------------------------------

    def _named(self, decision: Decision, world: World) -> list[str]:
        """The recorded ids the request names in `world` (its families' ids)."""
        recorded = world.recorded
        return [
            found
            for sense, slot in zip(decision.hypothesis, decision.slots, strict=True)
            if sense.family is not None and (found := recorded.get(slot.value)) is not None
        ]

    def _given(self, decision: Decision, member: Step) -> dict[str, str]:
        """The member's own recorded ids -> the live ids the client chose at the same places."""
        return {
            recorded.slot.value: slot.value
            for sense, slot, recorded in zip(
                decision.hypothesis, decision.slots, member.slots, strict=False
            )
            if sense.provenance is Provenance.OWN
        }

    def _create(self, decision: Decision, session: Session | None) -> Family | None:
        if decision.members and decision.moved is None:
            first = self.script.steps[decision.members[0]]
            return self.state.open(decision.members, self._given(decision, first))
        if decision.step.creating and session is not None and decision.kind is Kind.CREATE:
            return self.state.join(session, decision.picks, self._given(decision, decision.step))
        return None

    def _echo(self, decision: Decision, worlds: Sequence[World]) -> None:
        """The client's fresh values (a webhook URL, a token) stand for the recorded ones."""
        fresh = [i for i, s in enumerate(decision.hypothesis) if s.provenance is Provenance.FRESH]
        if not fresh:
            return
        picks = decision.picks or decision.members or (decision.step.index,)
        for world, pick in zip(worlds, picks, strict=False):
            step = self.script.steps[pick]
            for i in fresh:
                if i < len(step.slots):
                    self.state.echo(world, step.slots[i].slot.value, decision.slots[i].value)

    def _alias(self, decision: Decision, worlds: Sequence[World]) -> None:
        """Ids served as recorded stand, in each other world, for its step's ids at those places."""
        picks = decision.picks or decision.members
        if not picks or all(p == picks[0] for p in picks):
            return  # every world answered from one step: nothing to line up
        script = self.script
        shown = script.shown_as_recorded.get(picks[0], ())
        first = worlds[0].values
        for world, pick in zip(worlds[1:], picks[1:], strict=False):
            for recorded, value in zip(script.shown_as_recorded.get(pick, ()), shown, strict=False):
                self.state.alias(world, recorded, first.get(value, value))


def _lookup(world: World | None, echoes: dict[str, str]) -> Lookup:
    """A world's recorded -> live values, then the request's own values for the step's."""
    if world is None:
        return echoes.get
    values = world.values
    if not echoes:
        return values.get

    def lookup(value: str) -> str | None:
        found = values.get(value)
        return found if found is not None else echoes.get(value)

    return lookup


def seen(decision: Decision | None, slots: Sequence[Slot], world: World | None) -> Seen:
    """(slot, provenance, the recorded id it named) for the journal."""
    if decision is None:
        return tuple((s, provenance(s, False, False), None) for s in slots)
    named = decision.step.named
    return tuple(
        (slot, sense.provenance, recorded if sense.provenance is not Provenance.OWN else None)
        for slot, sense, recorded in zip(decision.slots, decision.hypothesis, named, strict=False)
    )
