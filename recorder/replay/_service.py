"""The replay service: one transport-neutral answer to "what would the agent say?" (pure).

`ReplayService.handle(request, client)` takes a live request as a capture `Request` (HTTP or
gRPC alike) and returns `Served`, `Miss` or `Refused`, each holding the answer to send as a
value (`HttpAnswer` or `GrpcAnswer`) and, for `Served`, the push deliveries to make.  The
transports only translate bytes (`_runner` does the rest); nothing here does I/O.

**The model.**

1. *The capture is a script* (`recorder.script`): every exchange a step, every id in a
   request with its origin (ISSUED, OWN, FRESH, UNKNOWN, FIXED), found by the id table, the
   field's name, its value, or what the capture shows fresh; interchangeable creating steps
   in classes.
2. *A live request is read by the same rules* (`_reader`), with the ids the live sessions hold
   in place of the capture's, so the two sides classify alike.
3. *Decide late* (`_resolve`): a session keeps every reading (world) still consistent with
   what its clients did; each request is looked up by its key and the recorded ids its live
   ids stand for, per world, and narrows them.  Nothing is chosen by connection, headers or
   recency.  The work is bounded by the request, not the capture.
4. *Answer as the agent's store would* (`_listing`) for ListTasks.
5. *Mint only what a client can name back* (`_state`): task, context and push-config ids.
6. *Say what was not recorded*: every answer is `recorded`, `adapted` (with the changes) or
   `synthesized` (a miss in the binding's error shape naming the nearest step, or a request
   no agent could read answered as a2a-sdk would when the capture holds no such answer).  The
   journal keeps each, the report lists the synthesized ones, `--strict` fails on them.
7. *Push deliveries* recorded after a step are planned with the live webhook and ids
   (`_pushes`); the runner makes them and reports back (`delivered`).

Everything it keeps is bounded: sessions on an LRU and within a byte budget, the journal and
the report's notes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from recorder.capture import Capture, Request, Response
from recorder.protocol import (
    AGENT_CARD,
    Binding,
    Classification,
    FaultSpec,
    Version,
    card_location,
    parse_json,
)
from recorder.redaction import NO_RULES, Masker, Rules
from recorder.replay._answer import Answers, HttpAnswer, revalidated, rewrite_card_answer
from recorder.replay._cards import Cards, interfaces, is_card
from recorder.replay._carry import Applied, Carrier, Seen, seen
from recorder.replay._fallback import WORDS, Troubles, describe, id_fits, trouble
from recorder.replay._faults import (
    NO_SHAPE,
    Cut,
    Faulted,
    Faults,
    Shape,
    continuation,
    cut_of,
    moved_on,
)
from recorder.replay._grpcanswer import GrpcAnswer, grpc_answer
from recorder.replay._journal import (
    MAX_BYTES,
    AnswerKind,
    Journal,
    JournalRequest,
    Outcome,
    now,
    replay_rules,
)
from recorder.replay._listing import Lister
from recorder.replay._misses import (
    NEAREST_SCAN,
    MissReport,
    miss_answer,
    nearest,
    refusal,
    unserved_version,
)
from recorder.replay._pushes import PlannedDelivery, Webhooks, plan, webhook_slots
from recorder.replay._reader import Reading, RequestReader
from recorder.replay._report import Report
from recorder.replay._resolve import Decision, Kind, Resolver, Unanswered
from recorder.replay._state import MAX_SESSIONS, LiveState, Session
from recorder.replay._versions import Crossing, Refusal, ServeVersion, Versions
from recorder.script import (
    CARD_OPERATIONS,
    IdFactory,
    Json,
    Lookup,
    Script,
    Step,
    Swap,
    embedded_pairs,
    load_script,
)

Answer = HttpAnswer | GrpcAnswer


@dataclass(frozen=True, slots=True)
class Client:
    """Who sent a request, as far as the transport knows: the peer (`host:port`)."""

    connection: str | None = None

    @classmethod
    def at(cls, address: tuple[str, int] | None) -> Client:
        """The client on the connection from `address` (None: unknown)."""
        if not address:
            return cls(None)
        host = f"[{address[0]}]" if ":" in address[0] else address[0]
        return cls(f"{host}:{address[1]}")

    @classmethod
    def peer(cls, text: str | None) -> Client:
        """The client a gRPC peer string names (`ipv4:127.0.0.1:5000`, `ipv6:[::1]:5000`),
        named as the HTTP face names it."""
        if not text:
            return cls(None)
        scheme, _, rest = text.partition(":")
        return cls(rest if scheme in ("ipv4", "ipv6") else text)


@dataclass(slots=True)  # made per request: not frozen, which costs
class Served:
    answer: Answer
    step: Step
    session: int | None
    deliveries: tuple[PlannedDelivery, ...]
    journal: int
    kind: AnswerKind = "recorded"
    changes: tuple[str, ...] = ()
    shape: Shape = NO_SHAPE  # how to send it, as a fault profile asks


@dataclass(frozen=True, slots=True)
class Miss:
    answer: Answer
    report: MissReport
    journal: int

    def describe(self) -> str:
        return self.report.describe()


@dataclass(frozen=True, slots=True)
class Refused:
    answer: Answer
    reason: str
    journal: int


Outcomes = Served | Miss | Refused


@dataclass(slots=True)  # made per request: not frozen, which costs
class _Logged:
    """What the journal says of a request besides the request itself."""

    outcome: Outcome
    kind: AnswerKind
    changes: tuple[str, ...] = ()
    step: Step | None = None
    session: int | None = None
    detail: str | None = None
    seen: Seen | None = None
    faults: tuple[str, ...] = ()  # the fault specs that made the answer what it is


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
        self.lister = Lister(self.script, self.state)
        self.answers = Answers()
        self.faults = Faults.check(faults, self.script)
        rules = replay_rules(captures, redaction)
        self.journal = Journal(journal_limit, max_bytes=journal_bytes, rules=rules)
        self.report = Report(self.script, self.journal.shown)
        self.report.expect_faults(spec.text for spec in faults)
        self.webhooks = Webhooks()
        self.report.expect(self.webhooks.unreached)
        self.deliver = deliver
        recorded = (e.classification.version for e in exchanges if e.classification.is_known)
        self.versions = Versions(serve_version, recorded)
        upstreams = list(dict.fromkeys(u for c in captures for u in c.upstreams))
        self.cards = Cards(upstreams, self.versions.card_bytes)
        self.interfaces = interfaces(exchanges)
        self.jsonrpc_paths = frozenset(
            e.request.target.partition("?")[0]
            for e in exchanges
            if e.classification.binding is Binding.JSONRPC
        )
        self.troubles = Troubles(self.script.steps, self.jsonrpc_paths)
        self.forwarding = False  # misses go to a live agent (`--on-miss forward`)
        self._card_steps = frozenset(  # steps whose answers hold a card
            s.index
            for s in self.script.steps
            if is_card(s.exchange) or s.exchange.classification.operation in CARD_OPERATIONS
        )
        self._redirects = frozenset(  # steps whose answers name a URL in `Location`
            s.index for s in self.script.steps if _location(s.exchange.response) is not None
        )
        masker = Masker(rules) if self.script.masker is not None else None
        self.reader = RequestReader(self.interfaces, self.script, masker, credentials)

    @property
    def sessions(self) -> LiveState:
        return self.state

    @property
    def base_url(self) -> str:
        return self.cards.base_url

    @property
    def grpc_target(self) -> str | None:
        return self.cards.grpc_target

    def serve_at(self, base_url: str, grpc_target: str | None = None) -> None:
        """Where the replayer listens: served cards point their interfaces here (`""` and
        no `grpc_target`, as before the first call: the cards are served as recorded)."""
        self.cards.serve_at(base_url, grpc_target)

    # -- the one entry point ------------------------------------------------------------

    def handle(self, request: Request, client: Client = Client()) -> Outcomes:
        """The answer to one live request, and what to deliver after it."""
        if self.versions.serve is None:
            return self._handle(request, client)
        reading = self._read(request)
        crossing = self.versions.incoming(request, reading.classification)
        if isinstance(crossing, Refusal):
            return self._refuse_version(request, client, reading, crossing)
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
        if not id_fits(reading.jsonrpc_id) and self._invalid(request, reading.classification):
            troubled = self._troubled(request, client, replace(reading, jsonrpc_id=None))
            if troubled is not None:  # answered with id null, as JSON-RPC 2.0 §5 says
                return troubled
        resumed = self._resumption(reading)
        if resumed is not None:
            return self._resume(request, client, reading, resumed)
        found = self.resolver.resolve(reading.live)
        if isinstance(found, Unanswered):
            return self._unanswered(request, client, reading, found, received or request)
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
        """The runner answered a miss from the forward target (`--on-miss forward`): its
        answer is a live agent's, or (`status` None) the forward failed and the miss answer
        went out, synthesized."""
        if status is not None:
            detail = f"{miss.describe()}; forwarded: HTTP {status}"
            self.journal.update(
                miss.journal, outcome="forwarded", answer="forwarded", changes=(), detail=detail
            )
            return
        self.journal.update(miss.journal, detail=f"{miss.describe()}; forward failed: {error}")
        self._synthesized_note(miss.journal, miss.report.describe())

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
        if not all(spec.carried for spec in fired):
            return self._withheld(request, client, reading, decision, fired)
        applied = self.carrier.carry(decision)
        step: Step = decision.step
        changes: tuple[str, ...] = ()
        if decision.kind is Kind.LIST:
            answer, step, changes = self._listing(decision, applied, reading)
        else:
            answer = self._answer(step, applied.lookup, reading, version)
        changes = (
            *changes,
            *self._changed(step, applied, answer),
            *self._translated(step, version),
        )
        self.report.served(step.key)
        deliveries = self._plan(step, applied, version) if self.deliver else ()
        if step.binding is Binding.GRPC:
            webhooks = [decision.slots[n].value for n in webhook_slots(step)]
            self.webhooks.served(step, webhooks, bool(self.script.deliveries.get(step.index)))
        kind: AnswerKind = "adapted" if changes else "recorded"
        session = applied.session.number if applied.session else None
        shape, specs = NO_SHAPE, tuple[str, ...]()
        if fired:
            faulted = self.faults.apply(fired, answer)
            if faulted.cut is not None:
                self._remember_cut(step, faulted, applied, fired)
            changes, kind = (*changes, *faulted.changes), _faulted_kind(faulted)
            answer, shape, specs = faulted.answer, faulted.shape, faulted.specs
        logged = _Logged(
            "served",
            kind,
            changes,
            step,
            session,
            seen=seen(decision, decision.slots, applied.world),
            faults=specs,
        )
        number = self._log(request, client, reading, logged, answer, shape)
        if fired:
            self._faulted_note(number, request, specs, faulted.changes)
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
        """A fault answered instead of the agent, and the request is not carried out: the
        state stays as it was, so that a retry gets what the recording holds."""
        step = decision.step
        answer = self._answer(step, self.carrier.preview(decision).lookup, reading)
        faulted = self.faults.apply(fired, answer)
        kind = _faulted_kind(faulted)
        logged = _Logged(
            "served",
            kind,
            faulted.changes,
            step,
            seen=seen(decision, decision.slots, decision.world),
            faults=faulted.specs,
        )
        number = self._log(request, client, reading, logged, faulted.answer, faulted.shape)
        self._faulted_note(number, request, faulted.specs, faulted.changes)
        return Served(faulted.answer, step, None, (), number, kind, faulted.changes, faulted.shape)

    def _remember_cut(
        self, step: Step, faulted: Faulted, applied: Applied, fired: Sequence[FaultSpec]
    ) -> None:
        cut = cut_of(step, faulted.cut or 0, applied.swap, fired)
        if cut is not None and applied.session is not None:
            self.state.cut(applied.session, cut.task, cut)

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
        """A SubscribeToTask of a task whose stream a fault cut: the task as it stood at the
        cut, then the recorded events the client did not get (see `_faults`)."""
        response, what = continuation(cut)
        answer = self._build(cut.step, cut.swap.lookup, response, reading.jsonrpc_id)
        fired = self.faults.fire(None, "SubscribeToTask", request, cut.form, response)
        faulted = self.faults.apply(fired, answer)
        found = self.state.cut_of(cut.task)
        if found is not None and all(spec.carried for spec in fired):
            session = found[0]
            moved = moved_on(cut, faulted)
            if moved is None:
                self.state.uncut(session, cut.task)
            else:
                self.state.cut(session, cut.task, moved)
        changes = (what, *faulted.changes)
        specs = (cut.spec, *faulted.specs)
        logged = _Logged(
            "served",
            "synthesized",
            changes,
            cut.step,
            seen=seen(None, reading.live.readings[0], None),
            faults=specs,
        )
        number = self._log(request, client, reading, logged, faulted.answer, faulted.shape)
        self._faulted_note(number, request, specs, changes)
        return Served(
            faulted.answer, cut.step, None, (), number, "synthesized", changes, faulted.shape
        )

    def _faulted_note(
        self, number: int, request: Request, specs: Sequence[str], changes: Sequence[str]
    ) -> None:
        if specs:
            line = self.journal.line(request, "; ".join(changes))
            self.report.faulted(f"request {number}, {line}", specs)

    # -- answers ------------------------------------------------------------------------

    def _answer(
        self, step: Step, lookup: Lookup, reading: Reading, version: Version | None = None
    ) -> Answer:
        recorded = step.exchange.response
        assert recorded is not None
        if version is not None:  # a client of the other version
            c = step.exchange.classification
            recorded = self.versions.answer(step.index, recorded, c, version).response
        answer = self._build(step, lookup, recorded, reading.jsonrpc_id)
        if isinstance(answer, HttpAnswer) and is_card(step.exchange):
            # A card's validator is answered here, for the card the replayer serves.
            answer = revalidated(answer, reading.headers.get("if-none-match"))
        return answer

    def _build(self, step: Step, lookup: Lookup, response: Response, jsonrpc_id: Json) -> Answer:
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

    def _listing(
        self, decision: Decision, applied: Applied, reading: Reading
    ) -> tuple[Answer, Step, tuple[str, ...]]:
        steps = self.resolver.listing_steps(decision, reading.live.version)
        scope = self._scope(decision, applied)
        c = decision.step.exchange.classification
        listing = self.lister.answer(steps, scope, applied.lookup, c.binding)
        answer = self._build(listing.step, _nothing, listing.response, reading.jsonrpc_id)
        return answer, listing.step, listing.changes

    def _scope(self, decision: Decision, applied: Applied) -> list[Session] | None:
        """The sessions a listing shows: every session holding an id it names (a context
        two clients chose alike is one context, as live), and one it starts; None: all (also
        when the agent did not filter the recorded listing by what its request named)."""
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

    def _changed(self, step: Step, applied: Applied, answer: Answer) -> list[str]:
        """What of the agent's answer was changed, and why (nothing: it is as recorded)."""
        if not applied.agent_ids and step.index not in self._card_steps | self._redirects:
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
        recorded = _location(step.exchange.response)
        if (
            recorded is not None
            and isinstance(answer, HttpAnswer)
            and _location(answer) != recorded
        ):
            found.append("location: it points at the replayer")
        return found

    def _card_changed(self, step: Step, answer: Answer) -> bool:
        response = step.exchange.response
        if response is None:
            return False
        if isinstance(answer, HttpAnswer):
            return is_card(step.exchange) and answer.status != 304 and answer.body != response.body
        return self.cards.changed_grpc(response)

    def _translated(self, step: Step, version: Version | None) -> tuple[str, ...]:
        """What was translated of a recorded answer for a client of `version` (the card: for
        the versions served), the fields it could not carry going to the report."""
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

    def _plan(
        self, step: Step, applied: Applied, version: Version | None = None
    ) -> tuple[PlannedDelivery, ...]:
        deliveries = self.script.deliveries.get(step.index, ())
        if not deliveries:
            return ()
        if version is not None:
            deliveries = tuple(self.versions.delivery(d, version) for d in deliveries)
        return plan(step, deliveries, applied.swap)

    # -- misses and refusals ------------------------------------------------------------

    def _unanswered(
        self,
        request: Request,
        client: Client,
        reading: Reading,
        found: Unanswered,
        received: Request | None = None,
    ) -> Outcomes:
        """A request nothing recorded answers; `received` is what the client sent, where the
        request was translated into the recorded version."""
        unauthorized = self._refused_for_credentials(reading)
        if unauthorized is not None:
            why = "that lacked the same credentials"
            return self._instead(request, client, reading, unauthorized, why)
        troubled = self._troubled(request, client, reading)
        if troubled is not None:
            return troubled
        report = self._nearest(found, reading)
        answer = miss_answer(report, reading.jsonrpc_id, grpc=bool(request.messages))
        text = report.describe()
        self.report.missed(self.journal.line(received or request, text))
        logged = _Logged("miss", "synthesized", (text,), detail=text)
        number = self._log(request, client, reading, logged, answer)
        if not self.forwarding or request.messages:
            self._synthesized_note(number, text, received or request)
        return Miss(answer, report, number)

    def _invalid(self, request: Request, c: Classification) -> bool:
        return trouble(request, c, self.jsonrpc_paths) == "jsonrpc:invalid"

    def _troubled(self, request: Request, client: Client, reading: Reading) -> Outcomes | None:
        """A request no agent route serves, answered as the agent answered another like it,
        or refused as an a2a-sdk agent refuses it; None: it is an A2A request."""
        c = reading.classification
        kind = trouble(request, c, self.jsonrpc_paths)
        if kind is None:
            return None
        instead = self.troubles.answer(kind, request)
        if instead is not None:
            return self._instead(request, client, reading, instead)
        refused = refusal(request, c, kind.startswith("jsonrpc"))
        if refused is None:
            return None
        reason = WORDS[kind]
        why = f"refused as an a2a-sdk agent refuses it: {reason}"
        logged = _Logged("refused", "synthesized", (why,), detail=reason)
        number = self._log(request, client, reading, logged, refused)
        self._synthesized_note(number, why, request)
        return Refused(refused, reason, number)

    def _refuse_version(
        self, request: Request, client: Client, reading: Reading, refused: Refusal
    ) -> Refused:
        """A request in a version the replay does not serve, refused as such an agent does."""
        c = reading.classification
        why = refused.describe()
        answer = unserved_version(c, why, reading.jsonrpc_id, grpc=bool(request.messages))
        logged = _Logged("refused", "synthesized", (why,), detail=why)
        number = self._log(request, client, reading, logged, answer)
        self._synthesized_note(number, why, request)
        return Refused(answer, why, number)

    def _crossed(
        self, outcome: Outcomes, received: Request, reading: Reading, crossing: Crossing
    ) -> Outcomes:
        """`outcome` for the request as received: the journal holds it, and says how it was
        translated into the recorded version."""
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

    def _refused_for_credentials(self, reading: Reading) -> Step | None:
        """The agent's refusal of another request that carried the same credentials as this
        one, where this one lacks some a recorded request like it carried."""
        value = reading.live.value
        held = value.get("credentials", []) if isinstance(value, dict) else []
        c = reading.classification
        if not self.script.credentials or c.binding is None:
            return None
        like = self.script.by_operation.get((c.binding.value, c.operation or "-"), [])
        if not any(set(s.credentials) > set(held) for s in like[:NEAREST_SCAN]):
            return None  # it lacks nothing a recorded request like it carried
        return self.script.refusal(c.binding.value, held)

    def _instead(
        self,
        request: Request,
        client: Client,
        reading: Reading,
        step: Step,
        why: str = "it could not serve",
    ) -> Served:
        """The agent's refusal of another request of the same trouble (or credentials)."""
        answer = self._answer(step, _nothing, reading)
        self.report.served(step.key)
        change = f"the agent's answer to another request {why}: {describe(step)}"
        logged = _Logged("served", "adapted", (change,), step=step)
        number = self._log(request, client, reading, logged, answer)
        return Served(answer, step, None, (), number, "adapted", (change,))

    def _nearest(self, found: Unanswered, reading: Reading) -> MissReport:
        classification = reading.classification
        binding, operation = found.key[0], found.key[1]
        if found.fitting:
            return MissReport(
                classification, found.fitting[0].exchange, _misfit(found, self.script.issuer)
            )
        same = self.script.by_operation.get((binding, operation), [])
        others = [b for b, op in self.script.by_operation if op == operation and b != binding]
        return nearest(classification, parse_json(found.key[2]), same, others)

    def _synthesized_note(self, number: int, why: str, request: Request | None = None) -> None:
        """A report line for an answer the replayer wrote (redacted, as the journal's)."""
        if request is None:
            entry = next((e for e in self.journal.requests if e.number == number), None)
            request = entry.request if entry else None
        where = self.journal.line(request, why) if request else why
        self.report.synthesized(f"request {number}, {where}")

    def _log(
        self,
        request: Request,
        client: Client,
        reading: Reading,
        logged: _Logged,
        answer: Answer,
        shape: Shape = NO_SHAPE,
    ) -> int:
        number = self.journal.next_number()
        status: int | None = answer.code if isinstance(answer, GrpcAnswer) else answer.status
        if shape.reset:
            status = None  # nothing was answered
        self.journal.add_request(
            JournalRequest(
                number,
                now(),
                client.connection,
                request,
                reading.classification,
                logged.outcome,
                logged.step.number if logged.step else None,
                logged.session,
                logged.detail,
                status,
                logged.seen
                if logged.seen is not None
                else seen(None, reading.live.readings[0], None),
                logged.kind,
                logged.changes,
                faults=logged.faults,
            )
        )
        return number


# ---- small pure helpers ---------------------------------------------------------------------


def _nothing(value: str) -> str | None:
    """A lookup that swaps nothing: the answer as recorded."""
    return None


def _faulted_kind(faulted: Faulted) -> AnswerKind:
    return "synthesized" if faulted.synthesized else "adapted"


def _enveloped(step: Step) -> bool:
    document: Json = parse_json(step.exchange.response.body) if step.exchange.response else None
    return isinstance(document, dict) and "jsonrpc" in document


def _misfit(found: Unanswered, issuer: dict[str, int]) -> tuple[str, ...]:
    named = sorted({v for s in found.fitting for v in s.names})
    ids = ", ".join(_issued_by(v, issuer) for v in named[:4])
    return (
        "the same request, about other recorded ids than the live ones stand for (it names "
        f"{ids or 'none'}): no recorded story of the live ids holds such a request at this point",
    )


def _issued_by(recorded: str, issuer: dict[str, int]) -> str:
    number = issuer.get(recorded)
    return f"{recorded} (handed out by #{number})" if number is not None else recorded


def _location(answer: Response | HttpAnswer | None) -> str | None:
    """An answer's `Location` header (a redirect's target), if it has one."""
    if answer is None:
        return None
    return next((v for k, v in answer.headers if k.lower() == "location"), None)
