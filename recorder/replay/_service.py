"""The replay service: one transport-neutral answer to "what would the agent say?" (pure).

`ReplayService.handle(request, client)` takes a live request as a capture `Request` (HTTP or
gRPC alike) and returns `Served`, `Miss` or `Refused`, each holding the answer to send as a
value (`HttpAnswer` or `GrpcAnswer`) and, for `Served`, the push deliveries to make.  The
transports only translate bytes (`_runner` does the rest); nothing here does I/O.

**The model.**

1. *The capture is a script* (`_script`): every exchange a step, every id in a request with
   its provenance (ISSUED, OWN, FRESH, UNKNOWN, FIXED), every creating step with the ids it
   introduces.  Where requests hold ids, and which, is protocol knowledge (`IdPosition`).
2. *A live id stands for a set of recorded ids* (`_state`): the family a creating answer
   made keeps a branch for every recorded creating step still consistent with everything its
   clients have done.  Families join a session only through the ids they name, and within a
   session each recorded creating step stands behind one family at most (Hall's condition).
3. *Decide late* (`_resolve`): a request is read every way its ids allow; a recorded step
   answers when its key is the request's and the ids it names are what the live ids may
   stand for.  Answering keeps the branches whose answers the client cannot tell from the one
   served; only when nothing fits is it a miss.  Nothing is chosen by connection, headers or
   recency.
4. *Answer as the agent's store would* (`_listing`): a ListTasks shows the recorded tasks
   for every live family that stands for them, tasks that existed before the recording, and
   leaves out what no live client created.
5. *Mint only what a client can name back*: task, context and push-config ids (the recorded
   id the first time, a fresh one from the injectable `IdFactory` after); message and
   artifact ids are served as recorded; the client's own ids are its own.
6. *Say what was not recorded*: every answer is `recorded`, `adapted` (with the changes: ids
   mapped, a listing merged, the card's URLs, the agent's answer to another bad request) or
   `synthesized` (a miss in the binding's error shape naming the nearest step, or a request
   no agent could read answered as a2a-sdk would when the capture holds no such answer).  The
   journal keeps each, the report lists the synthesized ones, `--strict` fails on them.
7. *Push deliveries* recorded after a step are planned with the live webhook URL, token and
   ids; the runner makes them, before or after the answer as recorded, and reports back
   (`delivered`).

Everything it keeps is bounded: sessions on an LRU, the answer and key caches, the journal
and the report's notes.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from recorder.capture import Capture, Exchange, Headers, Request
from recorder.protocol import (
    AGENT_CARD,
    Binding,
    Classification,
    FaultSpec,
    IdRole,
    Interface,
    Version,
    card_location,
    find_card,
    interfaces_from_card,
    parse_json,
    rewrite_card,
    rewrite_grpc_interfaces,
)
from recorder.redaction import NO_RULES, Masker, Rules
from recorder.replay._carry import Applied, Carrier
from recorder.replay._fallback import WORDS, Troubles, describe, id_fits, trouble
from recorder.replay._faults import NO_SHAPE, Cut, Faulted, Faults, Shape, continuation
from recorder.replay._grpcanswer import CARD_TYPE_SUFFIX, GrpcAnswer, grpc_answer
from recorder.replay._ids import Json, Provenance, Slot
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
from recorder.replay._mint import IdFactory
from recorder.replay._misses import (
    MissReport,
    miss_answer,
    nearest,
    refusal,
    unserved_version,
)
from recorder.replay._reader import Reading, RequestReader
from recorder.replay._report import Report
from recorder.replay._resolve import (
    Decision,
    Kind,
    LiveRequest,
    Resolver,
    Unanswered,
)
from recorder.replay._respond import (
    HttpAnswer,
    HttpTemplate,
    revalidated,
    substitute_body,
    substitute_headers,
    template,
)
from recorder.replay._script import Script, Step, load_script
from recorder.replay._state import MAX_SESSIONS, LiveState, Session
from recorder.replay._versions import Crossing, Refusal, ServeVersion, Versions

ANSWER_CACHE_SIZE = 4096
DELIVERY_HEADERS_DROPPED = frozenset({"host", "content-length", "transfer-encoding", "connection"})

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


@dataclass(frozen=True, slots=True)
class PlannedDelivery:
    """A recorded push delivery to make, with the live webhook and values."""

    exchange: Exchange
    url: str | None  # None: the client registered no webhook for it
    headers: Headers
    body: bytes
    offset_us: int  # from the start of the request that set it off, as recorded
    before: bool  # it completed before that request's answer did, in the recording


@dataclass(frozen=True, slots=True)
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
    ) -> None:
        exchanges = [e for capture in captures for e in capture.exchanges]
        self.script: Script = load_script(captures)
        self.state = LiveState(self.script, ids or IdFactory(), max_sessions)
        self.resolver = Resolver(self.script, self.state)
        self.lister = Lister(self.script, self.state)
        self.carrier = Carrier(self.script, self.state)
        self.faults = Faults.check(faults, self.script)
        rules = replay_rules(captures, redaction)
        self.journal = Journal(journal_limit, max_bytes=journal_bytes, rules=rules)
        self.report = Report(self.script, self.journal.shown)
        self.report.expect_faults(spec.text for spec in faults)
        self.deliver = deliver
        self.interfaces = _interfaces(exchanges)
        self.upstreams = list(dict.fromkeys(u for c in captures for u in c.upstreams))
        self.jsonrpc_paths = frozenset(
            e.request.target.partition("?")[0]
            for e in exchanges
            if e.classification.binding is Binding.JSONRPC
        )
        self.troubles = Troubles(self.script.steps, self.jsonrpc_paths)
        self.base_url = ""
        self.grpc_target: str | None = None
        self.forwarding = False  # misses go to a live agent (`--on-miss forward`)
        self._answers: OrderedDict[tuple[object, ...], HttpTemplate | GrpcAnswer] = OrderedDict()
        masker = Masker(rules) if self.script.masker is not None else None
        self.reader = RequestReader(self.interfaces, self.script.secret_params, masker)
        self._shown: dict[int, frozenset[str]] = {}  # ids an answer or its request shows
        recorded = (e.classification.version for e in exchanges if e.classification.is_known)
        self.versions = Versions(serve_version, recorded)

    @property
    def sessions(self) -> LiveState:
        return self.state

    def serve_at(self, base_url: str, grpc_target: str | None = None) -> None:
        """Where the replayer listens: served cards point their interfaces here (`""` and
        no `grpc_target`, as before the first call: the cards are served as recorded)."""
        self.base_url, self.grpc_target = base_url, grpc_target
        self._answers.clear()

    # -- the one entry point ------------------------------------------------------------

    def handle(self, request: Request, client: Client = Client()) -> Outcomes:
        """The answer to one live request, and what to deliver after it."""
        if self.versions.serve is None:
            return self._handle(request, client)
        reading = self.reader.read(request)
        crossing = self.versions.incoming(request, reading.parsed.classification)
        if isinstance(crossing, Refusal):
            return self._refuse_version(request, client, reading, crossing)
        if crossing is None:
            return self._handle(request, client)
        outcome = self._handle(crossing.request, client, crossing.client, request)
        return self._crossed(outcome, request, reading, crossing)

    def _handle(
        self,
        request: Request,
        client: Client,
        version: Version | None = None,
        received: Request | None = None,
    ) -> Outcomes:
        reading = self.reader.read(request)
        parsed = reading.parsed
        if not id_fits(reading.jsonrpc_id) and self._invalid(request, parsed.classification):
            troubled = self._troubled(request, client, replace(reading, jsonrpc_id=None))
            if troubled is not None:  # answered with id null, as JSON-RPC 2.0 §5 says
                return troubled
        resumed = self.faults.resumption(reading, parsed.classification.binding)
        if resumed is not None:
            return self._resume(request, client, reading, *resumed)
        cached = self.carrier.recall(reading)
        if cached is not None:
            return self._serve(request, client, reading, cached.decision, cached.applied, version)
        live = LiveRequest(
            parsed,
            parsed.classification,
            parsed.value,
            parsed.slots,
            reading.headers.get("a2a-version"),
            parsed.small,
        )
        found = self.resolver.resolve(live)
        if isinstance(found, Unanswered):
            return self._unanswered(request, client, reading, found, received or request)
        return self._serve(request, client, reading, found, None, version)

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
        applied: Applied | None = None,
        version: Version | None = None,
    ) -> Served:
        step = decision.step
        fired = self.faults.hit(step, request)
        if not all(spec.carried for spec in fired):
            return self._withheld(request, client, reading, decision, fired)
        if applied is None:
            applied = self.carrier.carry(decision, reading)
        changes: tuple[str, ...] = ()
        if decision.kind is Kind.LIST:
            answer, step, changes = self._listing(decision, applied, reading)
        else:
            answer = self._answer(step, applied.mapping, reading, version)
        if applied.changes is None or card_location(step.exchange.classification) is not None:
            applied.changes = (*changes, *self._changed(step, applied, answer, reading))
        changes = (*applied.changes, *self._translated(step, version))
        self.report.served(step.key)
        deliveries = self._plan(step, applied.mapping, version) if self.deliver else ()
        kind: AnswerKind = "adapted" if changes else "recorded"
        if step.index in self.script.cursors:
            self.state.keep(self.script.cursors[step.index])
        session = applied.session.number if applied.session else None
        if applied.seen is None:
            applied.seen = _seen(reading, decision)
        faulted = self.faults.apply(fired, answer)
        if faulted.cut is not None:
            self.faults.remember_cut(step, faulted.cut, applied.mapping, fired)
        if fired:
            changes, kind = (*changes, *faulted.changes), _faulted_kind(faulted)
        logged = _Logged(
            "served", kind, changes, step, session, seen=applied.seen, faults=faulted.specs
        )
        number = self._log(request, client, reading, logged, faulted.answer, faulted.shape)
        self._faulted_note(number, request, faulted.specs, faulted.changes)
        answer = faulted.answer
        return Served(answer, step, session, deliveries, number, kind, changes, faulted.shape)

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
        answer = self._answer(step, self.carrier.preview(decision), reading)
        faulted = self.faults.apply(fired, answer)
        kind = _faulted_kind(faulted)
        seen = _seen(reading, decision)
        logged = _Logged("served", kind, faulted.changes, step, seen=seen, faults=faulted.specs)
        number = self._log(request, client, reading, logged, faulted.answer, faulted.shape)
        self._faulted_note(number, request, faulted.specs, faulted.changes)
        return Served(faulted.answer, step, None, (), number, kind, faulted.changes, faulted.shape)

    def _resume(
        self, request: Request, client: Client, reading: Reading, task: str, cut: Cut
    ) -> Served:
        """A SubscribeToTask of a task whose stream a fault cut: the task as it stood at the
        cut, then the recorded events the client did not get (see `_faults`)."""
        response, what = continuation(cut)
        built = self._build(cut.step, cut.mapping, response)
        answer = built if isinstance(built, GrpcAnswer) else built.render(reading.jsonrpc_id)
        fired = self.faults.fire(None, "SubscribeToTask", request, cut.form, response)
        faulted = self.faults.apply(fired, answer)
        self.faults.resumed(task, cut, faulted, all(spec.carried for spec in fired))
        changes = (what, *faulted.changes)
        specs = (cut.spec, *faulted.specs)
        seen = _seen(reading, None)
        logged = _Logged("served", "synthesized", changes, cut.step, seen=seen, faults=specs)
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
        self,
        step: Step,
        mapping: Mapping[str, str],
        reading: Reading,
        version: Version | None = None,
    ) -> Answer:
        cache_key = (step.index, tuple(mapping.items()), version)
        built = self._answers.get(cache_key)
        if built is None:
            built = self._build(step, mapping, version=version)
            self._answers[cache_key] = built
            if len(self._answers) > ANSWER_CACHE_SIZE:
                self._answers.popitem(last=False)
        if isinstance(built, GrpcAnswer):
            return built
        answer = built.render(reading.jsonrpc_id)
        if card_location(step.exchange.classification) is not None:
            # A card's validator is answered here, for the card the replayer serves.
            answer = revalidated(answer, reading.headers.get("if-none-match"))
        return answer

    def _build(
        self,
        step: Step,
        mapping: Mapping[str, str],
        response: object = None,
        *,
        version: Version | None = None,
    ) -> HttpTemplate | GrpcAnswer:
        c = step.exchange.classification
        recorded = response if response is not None else step.exchange.response
        assert recorded is not None
        if version is not None and response is None:  # a client of the other version
            recorded = self.versions.answer(step.index, recorded, c, version).response  # type: ignore[arg-type]
        if c.binding is Binding.GRPC:
            return grpc_answer(recorded, mapping, self._card_rewrite(()))  # type: ignore[arg-type]
        location = card_location(c)
        rewrite = self._card_rewrite(location, step.exchange) if location is not None else None
        jsonrpc = c.binding is Binding.JSONRPC or (c.binding is None and _enveloped(step))
        return template(recorded, mapping, jsonrpc=jsonrpc, rewrite=rewrite)  # type: ignore[arg-type]

    def _listing(
        self, decision: Decision, applied: Applied, reading: Reading
    ) -> tuple[Answer, Step, tuple[str, ...]]:
        steps = self.script.candidates(decision.key, reading.headers.get("a2a-version"))
        scope = _scope(decision, self.state, reading)
        c = decision.step.exchange.classification
        listing = self.lister.answer(steps, scope, applied.mapping, c.binding)
        built = self._build(listing.step, {}, listing.response)
        answer = built if isinstance(built, GrpcAnswer) else built.render(reading.jsonrpc_id)
        return answer, listing.step, listing.changes

    def _changed(self, step: Step, applied: Applied, answer: Answer, reading: Reading) -> list[str]:
        """What of the agent's answer was changed, and why (nothing: it is as recorded)."""
        found = []
        shown = self._shown.get(step.index)
        if shown is None:
            shown = self._shown[step.index] = frozenset(
                (*step.response_ids, *(r.slot.value for r in step.slots))
            )
        mapped = [(r, v) for r, v in applied.agent_ids.items() if r in shown]
        if mapped:
            pairs = ", ".join(f"{r} -> {v}" for r, v in mapped[:3])
            more = f" and {len(mapped) - 3} more" if len(mapped) > 3 else ""
            found.append(f"ids mapped to the ones this client was handed: {pairs}{more}")
        if self._card_changed(step, answer):
            found.append("card: its interfaces point at the replayer")
        if isinstance(answer, HttpAnswer) and answer.status == 304:
            found.append("304: the client's If-None-Match names the card served")
        return found

    def _card_changed(self, step: Step, answer: Answer) -> bool:
        response = step.exchange.response
        if response is None:
            return False
        if isinstance(answer, HttpAnswer):
            located = card_location(step.exchange.classification) is not None
            return located and answer.status != 304 and answer.body != response.body
        rewrite = self._card_rewrite(())
        cards = (
            m.json.encode("utf-8", "surrogatepass")
            for m in response.messages
            if m.json is not None and (m.type_name or "").endswith(CARD_TYPE_SUFFIX)
        )
        return any(rewrite(card) != card for card in cards)

    def _card_rewrite(
        self, location: tuple[str, ...] | None, exchange: Exchange | None = None
    ) -> Callable[[bytes], bytes]:
        at = location or ()
        upstreams = self.upstreams or (_host_origin(exchange.request) if exchange else [])
        if not self.base_url:  # served nowhere in particular: the cards as recorded
            upstreams = []

        fetched = exchange is not None and exchange.classification.operation == AGENT_CARD

        def rewrite(body: bytes) -> bytes:
            for upstream in upstreams:
                body = rewrite_card(body, upstream, self.base_url, at=at).body
            if self.grpc_target:
                body = rewrite_grpc_interfaces(body, self.grpc_target, at=at).body
            return self.versions.card_bytes(body) if fetched and not at else body

        return rewrite

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
        self, step: Step, mapping: Mapping[str, str], version: Version | None = None
    ) -> tuple[PlannedDelivery, ...]:
        deliveries = self.script.deliveries.get(step.index, ())
        if not deliveries:
            return ()
        if version is not None:
            deliveries = tuple(self.versions.delivery(d, version) for d in deliveries)
        trigger = step.exchange
        end = trigger.started_us + trigger.duration_us
        return tuple(
            PlannedDelivery(
                d,
                mapping.get(_delivery_url(d.request)),
                substitute_headers(
                    (
                        (k, v)
                        for k, v in d.request.headers
                        if k.lower() not in DELIVERY_HEADERS_DROPPED
                    ),
                    mapping,
                ),
                substitute_body(d.request.body, mapping),
                d.started_us - trigger.started_us,
                d.started_us + d.duration_us <= end,
            )
            for d in deliveries
        )

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
        c = reading.parsed.classification
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
        c = reading.parsed.classification
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
            "classification": reading.parsed.classification,
            "changes": changes,
        }
        if isinstance(outcome, Served):
            fields["answer"] = "adapted"
            outcome = replace(outcome, kind="adapted", changes=changes)
        self.journal.update(outcome.journal, **fields)
        return outcome

    def _instead(self, request: Request, client: Client, reading: Reading, step: Step) -> Served:
        """The agent's answer to another request of the same trouble."""
        answer = self._answer(step, {}, reading)
        self.report.served(step.key)
        change = f"the agent's answer to another request it could not serve: {describe(step)}"
        logged = _Logged("served", "adapted", (change,), step=step)
        number = self._log(request, client, reading, logged, answer)
        return Served(answer, step, None, (), number, "adapted", (change,))

    def _nearest(self, found: Unanswered, reading: Reading) -> MissReport:
        classification = reading.parsed.classification
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
                reading.parsed.classification,
                logged.outcome,
                logged.step.number if logged.step else None,
                logged.session,
                logged.detail,
                status,
                logged.seen if logged.seen is not None else _seen(reading, None),
                logged.kind,
                logged.changes,
                faults=logged.faults,
            )
        )
        return number


@dataclass(frozen=True, slots=True)
class _Logged:
    """What the journal says of a request besides the request itself."""

    outcome: Outcome
    kind: AnswerKind
    changes: tuple[str, ...] = ()
    step: Step | None = None
    session: int | None = None
    detail: str | None = None
    seen: tuple[tuple[Slot, Provenance, str | None], ...] | None = None
    faults: tuple[str, ...] = ()  # the fault specs that made the answer what it is


# ---- small pure helpers ---------------------------------------------------------------------


def _scope(decision: Decision, state: LiveState, reading: Reading) -> frozenset[Session] | None:
    """The sessions a listing shows: those its ids belong to, or (none named) all."""
    named = [s for s in decision.hypothesis if s.provenance is Provenance.ISSUED]
    if not named:
        return None
    return frozenset(
        f.session
        for sense, slot in zip(decision.hypothesis, reading.parsed.slots, strict=True)
        if sense.provenance is Provenance.ISSUED
        for f in state.families_of(slot.value)
    )


def _seen(
    reading: Reading, decision: Decision | None
) -> tuple[tuple[Slot, Provenance, str | None], ...]:
    slots = reading.parsed.slots
    if decision is None:
        return tuple((s, _plain_provenance(s), None) for s in slots)
    named = decision.step.named
    return tuple(
        (slot, sense.provenance, recorded if sense.provenance is not Provenance.OWN else None)
        for slot, sense, recorded in zip(slots, decision.hypothesis, named, strict=True)
    )


def _plain_provenance(slot: Slot) -> Provenance:
    if slot.role is IdRole.FRESH:
        return Provenance.FRESH
    return Provenance.UNKNOWN if slot.role is IdRole.REFERENCE else Provenance.OWN


def _faulted_kind(faulted: Faulted) -> AnswerKind:
    return "synthesized" if faulted.synthesized else "adapted"


def _enveloped(step: Step) -> bool:
    document: Json = parse_json(step.exchange.response.body) if step.exchange.response else None
    return isinstance(document, dict) and "jsonrpc" in document


def _misfit(found: Unanswered, issuer: Mapping[str, int]) -> tuple[str, ...]:
    named = sorted({v for s in found.fitting for v in s.names})
    ids = ", ".join(_issued_by(v, issuer) for v in named[:4])
    return (
        "the same request, about other recorded ids than the live ones stand for (it names "
        f"{ids or 'none'}): no recorded story of the live ids holds such a request at this point",
    )


def _issued_by(recorded: str, issuer: Mapping[str, int]) -> str:
    number = issuer.get(recorded)
    return f"{recorded} (handed out by #{number})" if number is not None else recorded


def _delivery_url(request: Request) -> str:
    host = request.header("host") or ""
    return f"http://{host}{request.target}"


def _host_origin(request: Request) -> list[str]:
    host = request.header("host")
    return [f"http://{host}"] if host else []


def _interfaces(exchanges: Iterable[Exchange]) -> tuple[Interface, ...]:
    """The interfaces the recorded cards list, and, as the recorder learns them, every path
    that carried a known JSON-RPC operation: a live request is read as it was recorded."""
    found: list[Interface] = []
    learned: list[Interface] = []  # after the cards': theirs say tenants and versions
    for exchange in exchanges:
        c = exchange.classification
        if c.binding is Binding.JSONRPC and c.is_known:
            path = exchange.request.target.partition("?")[0]
            learned.append(Interface(f"http://replay{path}", Binding.JSONRPC, c.version))
        if c.operation == AGENT_CARD and exchange.response is not None:
            card = find_card(exchange.response.body, c)
            found.extend(interfaces_from_card(card) if card is not None else ())
    return tuple(dict.fromkeys([*found, *learned]))
