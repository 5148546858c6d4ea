"""The answer to a decided request, built from its recorded step with the live values (pure)."""

from __future__ import annotations

from recorder.capture import Response
from recorder.protocol import AGENT_CARD, Binding, Version, card_location, parse_json
from recorder.replay.core._answer import Answers, HttpAnswer, revalidated, rewrite_card_answer
from recorder.replay.core._cards import Cards, is_card
from recorder.replay.core._carry import Applied
from recorder.replay.core._grpcanswer import grpc_answer
from recorder.replay.core._listing import Lister
from recorder.replay.core._outcomes import Answer
from recorder.replay.core._pushes import PlannedDelivery, plan
from recorder.replay.core._reader import Reading
from recorder.replay.core._report import Report
from recorder.replay.core._resolve import Decision, Resolver
from recorder.replay.core._state import LiveState, Session
from recorder.replay.core._versions import Versions
from recorder.script import CARD_OPERATIONS, Json, Lookup, Script, Step, Swap, embedded_pairs


class Builder:
    def __init__(
        self,
        script: Script,
        state: LiveState,
        resolver: Resolver,
        versions: Versions,
        cards: Cards,
        report: Report,
    ) -> None:
        self.script = script
        self.state = state
        self.resolver = resolver
        self.versions = versions
        self.cards = cards
        self.report = report
        self.lister = Lister(script, state)
        self.answers = Answers(swappable(script))
        self._cards = frozenset(  # steps whose answers hold a card
            s.index
            for s in script.steps
            if is_card(s.exchange) or s.exchange.classification.operation in CARD_OPERATIONS
        )
        self._redirects = frozenset(  # steps whose answers name a URL in `Location`
            s.index for s in script.steps if _location(s.exchange.response) is not None
        )
        self._rewritten = self._cards | self._redirects  # answers changed besides their ids

    def answer(
        self, step: Step, lookup: Lookup, reading: Reading, version: Version | None = None
    ) -> Answer:
        """A step's answer to a live request, for a client of `version` if given."""
        recorded = step.exchange.response
        assert recorded is not None
        if version is not None:  # a client of the other version
            c = step.exchange.classification
            recorded = self.versions.answer(step.index, recorded, c, version).response
        answer = self.build(step, lookup, recorded, reading.jsonrpc_id)
        if isinstance(answer, HttpAnswer) and is_card(step.exchange):
            # A card's validator is answered here, for the card the replayer serves.
            answer = revalidated(answer, reading.headers.get("if-none-match"))
        return answer

    def build(self, step: Step, lookup: Lookup, response: Response, jsonrpc_id: Json) -> Answer:
        """`response` (a step's, or one made from it) with live values in."""
        c = step.exchange.classification
        if c.binding is Binding.GRPC:
            templates = self.answers.grpc_messages(step, response.messages)
            ids = (*step.response_ids, *(r.slot.value for r in step.slots))
            pairs = [(r, v) for r in ids if (v := lookup(r)) is not None]
            swap = Swap(lookup, embedded_pairs(pairs))
            return grpc_answer(response, swap, self.cards.rewrite(()), templates)
        jsonrpc = c.binding is Binding.JSONRPC or (c.binding is None and _enveloped(step))
        answer = self.answers.http(step, response, lookup, jsonrpc, jsonrpc_id)
        location = card_location(c)
        if location is not None:
            answer = rewrite_card_answer(answer, self.cards.rewrite(location, step.exchange))
        if step.index in self._redirects:
            answer = self.cards.relocated(answer, step.exchange)
        return answer

    def listing(
        self, decision: Decision, applied: Applied, reading: Reading
    ) -> tuple[Answer, Step, tuple[str, ...]]:
        """A listing's answer, the step it was made from, and what it changed."""
        steps = self.resolver.listing_steps(decision, reading.live.version)
        scope = self._scope(decision, applied)
        c = decision.step.exchange.classification
        listing = self.lister.answer(steps, scope, applied.lookup, c.binding)
        answer = self.build(listing.step, nothing, listing.response, reading.jsonrpc_id)
        return answer, listing.step, listing.changes

    def _scope(self, decision: Decision, applied: Applied) -> list[Session] | None:
        """The sessions a listing shows: each holding an id it names, and one it starts; None: all
        (also when the agent did not filter the recorded listing by what its request named)."""
        if not self.lister.filtered(decision.step):
            return None
        found = {
            family.session: None
            for sense, slot in zip(decision.hypothesis, decision.slots, strict=True)
            if sense.family is not None
            for family in self.state.families_of(slot.value)
        }
        if applied.session is not None and (found or decision.members):
            found[applied.session] = None
        return list(found) if found or decision.members else None

    def changed(self, step: Step, applied: Applied, answer: Answer) -> list[str]:
        """What of the agent's answer was changed, and why (nothing: it is as recorded)."""
        if not applied.agent_ids and step.index not in self._rewritten:
            return []
        found = []
        if applied.agent_ids:
            pairs = ", ".join(f"{r} -> {v}" for r, v in applied.agent_ids[:3])
            more = f" and {len(applied.agent_ids) - 3} more" if len(applied.agent_ids) > 3 else ""
            found.append(f"ids mapped to the ones this client was handed: {pairs}{more}")
        if self._card_changed(step, answer):
            found.append("card: its interfaces point at the replayer")
        if isinstance(answer, HttpAnswer) and answer.status == 304:
            found.append("304: the client's If-None-Match names the card served")
        if step.index in self._redirects and isinstance(answer, HttpAnswer):
            recorded = _location(step.exchange.response)
            if _location(answer) != recorded:
                found.append("location: it points at the replayer")
        return found

    def _card_changed(self, step: Step, answer: Answer) -> bool:
        response = step.exchange.response
        if response is None:
            return False
        if isinstance(answer, HttpAnswer):
            card = step.index in self._cards and is_card(step.exchange)
            return card and answer.status != 304 and answer.body != response.body
        return self.cards.changed_grpc(response)

    def translated(self, step: Step, version: Version | None) -> tuple[str, ...]:
        """What was translated of a recorded answer for a client of `version`, and what it lost."""
        exchange = step.exchange
        if exchange.classification.operation == AGENT_CARD and exchange.response is not None:
            return self.versions.card_changes(exchange.response.body)
        if version is None or exchange.response is None:
            return ()
        found = self.versions.answer(
            step.index, exchange.response, exchange.classification, version
        )
        for lost in found.lost:
            what = f"#{exchange.number} {exchange.classification.operation}"
            self.report.not_carried(f"{what} to a v{version} client: {lost.describe()}")
        return found.changes

    def plan(
        self, step: Step, applied: Applied, version: Version | None = None
    ) -> tuple[PlannedDelivery, ...]:
        """The deliveries recorded after `step`, for the live client."""
        deliveries = self.script.deliveries.get(step.index, ())
        if not deliveries:
            return ()
        if version is not None:
            deliveries = tuple(self.versions.delivery(d, version) for d in deliveries)
        return plan(step, deliveries, applied.swap)


def swappable(script: Script) -> frozenset[str]:
    """Every recorded value a live lookup may map (`_state`, `_carry`): the ids steps introduce,
    those requests name, and those answers show as recorded.  No other string ever changes."""
    found = {v for step in script.steps for v in step.introduced}
    found.update(r.slot.value for step in script.steps for r in step.slots)
    found.update(v for values in script.shown_as_recorded.values() for v in values)
    return frozenset(found)


def nothing(value: str) -> str | None:
    """A lookup that swaps nothing: the answer as recorded."""
    return None


def _enveloped(step: Step) -> bool:
    document: Json = parse_json(step.exchange.response.body) if step.exchange.response else None
    return isinstance(document, dict) and "jsonrpc" in document


def _location(answer: Response | HttpAnswer | None) -> str | None:
    """An answer's `Location` header (a redirect's target), if it has one."""
    if answer is None:
        return None
    return next((v for k, v in answer.headers if k.lower() == "location"), None)
