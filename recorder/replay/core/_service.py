"""The replay service: one transport-neutral answer to "what would the agent say?" (pure).

`ReplayService.handle` returns `Served`, `Miss` or `Refused`, the answer as a value; the faces
only translate bytes.  Decide late: a session keeps every reading (world) its clients' requests
still allow, and nothing is chosen by connection, headers or recency.  Every answer says what
it is (`recorded`, `adapted` or `synthesized`), and everything kept is bounded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from recorder.capture import Capture, Request
from recorder.protocol import Binding, FaultSpec, Version
from recorder.redaction import NO_RULES, Masker, Rules
from recorder.replay.core._building import Builder
from recorder.replay.core._cards import Cards, interfaces
from recorder.replay.core._carry import Carrier, seen
from recorder.replay.core._fallback import id_fits
from recorder.replay.core._faults import (
    NO_SHAPE,
    Cut,
    Faulted,
    Faults,
    continuation,
    cut_of,
    moved_on,
)
from recorder.replay.core._journal import MAX_BYTES, AnswerKind, Journal, replay_rules
from recorder.replay.core._outcomes import (
    NOBODY,
    Answer,
    Client,
    Ledger,
    Logged,
    Miss,
    Outcomes,
    Refused,
    Served,
)
from recorder.replay.core._pushes import PlannedDelivery, Webhooks, webhook_slots
from recorder.replay.core._reader import Reading, RequestReader
from recorder.replay.core._refusals import Refusals
from recorder.replay.core._report import Report
from recorder.replay.core._resolve import Decision, Kind, Resolver, Unanswered
from recorder.replay.core._state import MAX_SESSIONS, LiveState
from recorder.replay.core._versions import Crossing, Refusal, ServeVersion, Versions
from recorder.script import IdFactory, Script, Step, load_script

__all__ = ["Answer", "Client", "Miss", "Outcomes", "Refused", "ReplayService", "Served"]


class ReplayService:
    """Answers live requests from captures (see the module docstring)."""

    def __init__(
        self,
        captures: Sequence[Capture],
        *,
        max_sessions: int = MAX_SESSIONS,
        journal_limit: int = 10_000,
        journal_bytes: int = MAX_BYTES,
        redaction: Rules = NO_RULES,
        deliver: bool = True,
        ids: IdFactory | None = None,
        faults: Sequence[FaultSpec] = (),
        serve_version: ServeVersion | None = None,
        credentials: bool = True,
    ) -> None:
        exchanges = [e for capture in captures for e in capture.exchanges]
        self.script: Script = load_script(captures, credentials=credentials)
        self.state = LiveState(self.script, ids or IdFactory(), max_sessions)
        self.resolver = Resolver(self.script, self.state)
        self.carrier = Carrier(self.script, self.state)
        self.faults = Faults.check(faults, self.script)
        rules = replay_rules(captures, redaction)
        self.journal = Journal(journal_limit, max_bytes=journal_bytes, rules=rules)
        self.report = Report(self.script, self.journal.shown, (spec.text for spec in faults))
        self.ledger = Ledger(self.journal, self.report)
        self.webhooks = Webhooks()
        self.report.expect(self.webhooks.unreached)
        self.deliver = deliver
        recorded = (e.classification.version for e in exchanges if e.classification.is_known)
        self.versions = Versions(serve_version, recorded)
        upstreams = list(dict.fromkeys(u for c in captures for u in c.upstreams))
        self.cards = Cards(upstreams, self.versions.card_bytes)
        self.builder = Builder(
            self.script, self.state, self.resolver, self.versions, self.cards, self.report
        )
        jsonrpc_paths = frozenset(
            e.request.target.partition("?")[0]
            for e in exchanges
            if e.classification.binding is Binding.JSONRPC
        )
        self.refusals = Refusals(self.script, self.builder, self.ledger, jsonrpc_paths)
        self.interfaces = interfaces(exchanges)
        masker = Masker(rules) if self.script.masker is not None else None
        self.reader = RequestReader(self.interfaces, self.script, masker, credentials)

    @property
    def forwarding(self) -> bool:
        """Whether misses go to a live agent (`--on-miss forward`): not reported synthesized."""
        return self.refusals.forwarding

    @forwarding.setter
    def forwarding(self, value: bool) -> None:
        self.refusals.forwarding = value

    @property
    def sessions(self) -> LiveState:
        return self.state

    def serve_at(self, base_url: str, grpc_target: str | None = None) -> None:
        """Where the replayer listens, for served cards to point at (`""`: served as recorded)."""
        self.cards.serve_at(base_url, grpc_target)

    # -- the one entry point ------------------------------------------------------------

    def handle(self, request: Request, client: Client = NOBODY) -> Outcomes:
        """The answer to one live request, and what to deliver after it."""
        if self.versions.serve is None:
            return self._handle(request, client)
        reading = self._read(request)
        crossing = self.versions.incoming(request, reading.classification)
        if isinstance(crossing, Refusal):
            return self.refusals.unserved_version(request, client, reading, crossing)
        if crossing is None:
            return self._handle(request, client)
        outcome = self._handle(crossing.request, client, crossing.client, request)
        return self._crossed(outcome, request, reading, crossing)

    def _read(self, request: Request) -> Reading:
        return self.reader.read(request, self.state.holds)

    def _handle(
        self,
        request: Request,
        client: Client,
        version: Version | None = None,
        received: Request | None = None,
    ) -> Outcomes:
        reading = self._read(request)
        if not id_fits(reading.jsonrpc_id) and self.refusals.invalid(
            request, reading.classification
        ):
            troubled = self.refusals.troubled(request, client, replace(reading, jsonrpc_id=None))
            if troubled is not None:  # answered with id null, as JSON-RPC 2.0 §5 says
                return troubled
        resumed = self._resumption(reading)
        if resumed is not None:
            return self._resume(request, client, reading, resumed)
        found = self.resolver.resolve(reading.live)
        if isinstance(found, Unanswered):
            return self.refusals.unanswered(request, client, reading, found, received or request)
        return self._serve(request, client, reading, found, version)

    def delivered(
        self,
        planned: PlannedDelivery,
        request: int | None,
        status: int | None,
        response: bytes = b"",
        error: str | None = None,
    ) -> None:
        """A transport made (or failed to make) a planned delivery."""
        if status is not None:
            self.report.delivered(planned.exchange.number)
            self.webhooks.reached(planned.url)
        self.journal.add_delivery(
            request=request,
            exchange=planned.exchange.number,
            url=planned.url,
            headers=planned.headers,
            body=planned.body,
            status=status,
            response=response,
            error=error,
        )

    def forwarded(self, miss: Miss, status: int | None, error: str | None = None) -> None:
        """The runner answered a miss from `--on-miss forward`'s target (`status` None: the forward
        failed and the synthesized miss went out)."""
        if status is not None:
            detail = f"{miss.describe()}; forwarded: HTTP {status}"
            self.journal.update(
                miss.journal, outcome="forwarded", answer="forwarded", changes=(), detail=detail
            )
            return
        self.journal.update(miss.journal, detail=f"{miss.describe()}; forward failed: {error}")
        self.ledger.synthesized(miss.journal, miss.report.describe())

    # -- serving ------------------------------------------------------------------------

    def _serve(
        self,
        request: Request,
        client: Client,
        reading: Reading,
        decision: Decision,
        version: Version | None = None,
    ) -> Served:
        fired = self.faults.hit(decision.step, request)
        if fired and not all(spec.carried for spec in fired):
            return self._withheld(request, client, reading, decision, fired)
        applied = self.carrier.carry(decision)
        step: Step = decision.step
        changes: tuple[str, ...] = ()
        if decision.kind is Kind.LIST:
            answer, step, changes = self.builder.listing(decision, applied, reading)
        else:
            answer = self.builder.answer(step, applied.lookup, reading, version)
        changes = (
            *changes,
            *self.builder.changed(step, applied, answer),
            *self.builder.translated(step, version),
        )
        self.report.served(step.key)
        deliveries = self.builder.plan(step, applied, version) if self.deliver else ()
        if step.binding is Binding.GRPC:
            webhooks = [decision.slots[n].value for n in webhook_slots(step)]
            self.webhooks.served(step, webhooks, bool(self.script.deliveries.get(step.index)))
        kind: AnswerKind = "adapted" if changes else "recorded"
        session = applied.session.number if applied.session else None
        shape, specs = NO_SHAPE, tuple[str, ...]()
        if fired:
            faulted = self.faults.apply(fired, answer)
            cut = cut_of(step, faulted.cut, applied.swap, fired) if faulted.cut else None
            if cut is not None and applied.session is not None:
                self.state.cut(applied.session, cut.task, cut)
            changes, kind = (*changes, *faulted.changes), _faulted_kind(faulted)
            answer, shape, specs = faulted.answer, faulted.shape, faulted.specs
        logged = Logged(
            "served",
            kind,
            changes,
            step,
            session,
            seen=seen(decision, decision.slots, applied.world),
            faults=specs,
        )
        number = self.ledger.log(request, client, reading, logged, answer, shape)
        if fired:
            self.ledger.faulted(number, request, specs, faulted.changes)
        return Served(answer, step, session, deliveries, number, kind, changes, shape)

    # -- faults -------------------------------------------------------------------------

    def _withheld(
        self,
        request: Request,
        client: Client,
        reading: Reading,
        decision: Decision,
        fired: Sequence[FaultSpec],
    ) -> Served:
        """A fault answered instead: the state stays, so a retry gets what was recorded."""
        step = decision.step
        answer = self.builder.answer(step, self.carrier.preview(decision).lookup, reading)
        faulted = self.faults.apply(fired, answer)
        kind = _faulted_kind(faulted)
        logged = Logged(
            "served",
            kind,
            faulted.changes,
            step,
            seen=seen(decision, decision.slots, decision.world),
            faults=faulted.specs,
        )
        number = self.ledger.log(request, client, reading, logged, faulted.answer, faulted.shape)
        self.ledger.faulted(number, request, faulted.specs, faulted.changes)
        return Served(faulted.answer, step, None, (), number, kind, faulted.changes, faulted.shape)

    def _resumption(self, reading: Reading) -> Cut | None:
        """The cut stream a SubscribeToTask asks to continue, if any."""
        c = reading.classification
        if c.operation != "SubscribeToTask":
            return None
        for slot in reading.live.readings[0]:
            found = self.state.cut_of(slot.value)
            if found is not None and found[1].fits(c.binding, c.version):
                cut: Cut = found[1]
                return cut
        return None

    def _resume(self, request: Request, client: Client, reading: Reading, cut: Cut) -> Served:
        """A SubscribeToTask of a task whose stream a fault cut (`_faults.continuation`)."""
        response, what = continuation(cut)
        answer = self.builder.build(cut.step, cut.swap.lookup, response, reading.jsonrpc_id)
        fired = self.faults.fire(None, "SubscribeToTask", request, cut.form, response)
        faulted = self.faults.apply(fired, answer)
        found = self.state.cut_of(cut.task)
        if found is not None and all(spec.carried for spec in fired):
            self.state.cut(found[0], cut.task, moved_on(cut, faulted))
        changes = (what, *faulted.changes)
        specs = (cut.spec, *faulted.specs)
        logged = Logged(
            "served",
            "synthesized",
            changes,
            cut.step,
            seen=seen(None, reading.live.readings[0], None),
            faults=specs,
        )
        number = self.ledger.log(request, client, reading, logged, faulted.answer, faulted.shape)
        self.ledger.faulted(number, request, specs, changes)
        return Served(
            faulted.answer, cut.step, None, (), number, "synthesized", changes, faulted.shape
        )

    # -- versions ---------------------------------------------------------------------

    def _crossed(
        self, outcome: Outcomes, received: Request, reading: Reading, crossing: Crossing
    ) -> Outcomes:
        """`outcome` for the request as received, saying how it was translated."""
        for lost in crossing.lost:
            self.report.not_carried(f"a v{crossing.client} request: {lost.describe()}")
        changes = (*crossing.changes, *(outcome.changes if isinstance(outcome, Served) else ()))
        fields: dict[str, object] = {
            "request": received,
            "classification": reading.classification,
            "changes": changes,
        }
        if isinstance(outcome, Served):
            fields["answer"] = "adapted"
            outcome = replace(outcome, kind="adapted", changes=changes)
        self.journal.update(outcome.journal, **fields)
        return outcome


# ---- small pure helpers ---------------------------------------------------------------------


def _faulted_kind(faulted: Faulted) -> AnswerKind:
    return "synthesized" if faulted.synthesized else "adapted"
