"""The replay service: one transport-neutral answer to "what would the agent say?" (pure).

`ReplayService.handle(request, client)` takes a live request as a capture `Request` (HTTP or
gRPC alike) and returns `Served`, `Miss` or `Refused`, each holding the answer to send as a
value (`HttpAnswer` or `GrpcAnswer`) and, for `Served`, the push deliveries to make.  The
ASGI and gRPC servers only translate bytes to and from these values; nothing here does I/O.

**The model.**

1. *The capture is a script* (`_script`).  Each recorded exchange is a step, in the order the
   exchanges started, and every id a recorded request names has a provenance: ISSUED (handed
   out by an earlier step, or the client's own id named again), OWN (the client's own, new
   here), FRESH (new on every request: messageId, webhook URL, secrets), UNKNOWN (a reference
   to an id never issued: a probe) or FIXED (an id that existed before the capture began).
   Which request positions are references and which are the client's to choose is protocol
   knowledge: `IdPosition` tables in `recorder.protocol`.
2. *Live ids get the same provenance* against what this replay has issued (`_sessions`): an
   id some session was handed is ISSUED and stands for one recorded id; an id never issued is
   UNKNOWN at a reference position and OWN at a chosen one.
3. *Matching is by key* (`_ids`): the request with each id replaced by its provenance (and,
   for an issued id, the recorded id it stands for).  A recorded exchange answers only when
   the keys are equal, so provenances agree position by position.  An id never issued thus
   only ever matches a recorded probe, which was answered with an error: it is never answered
   with a success.  Probes and other stateless steps (card fetches) are answered to anyone,
   repeat freely and bind nothing.
4. *Sessions, not connections*: a request naming an issued id belongs to that id's session; a
   request naming none joins a session by where it fits in the script, ties broken by the
   connection, then the client's identifying headers (see `_sessions`).  Every creating answer
   mints fresh ids in its session, so parallel clients never share ids.
5. *The answer* is the recorded response with the session's live values swapped in, the live
   JSON-RPC id, the card's URLs pointing at the replayer (`serve_at`), and a ListTasks trimmed
   to the tasks of the session.  Answers are cached per (step, session state).
6. *Push deliveries* recorded after a step are planned with the live webhook URL, token and
   ids; the transport makes them and reports back (`delivered`).
7. *What nothing answers*: a `Miss`, in the binding's error shape, naming the nearest step of
   the same binding and operation (`_misses`); a request no agent could read (not JSON, a
   JSON-RPC batch) is `Refused` as an agent refuses it.  Every request, with its ids'
   provenance and what answered it, goes to the `journal`.

Everything it keeps is bounded: sessions on an LRU, the answer and classification caches,
the journal and the report's notes.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from recorder.capture import Capture, Exchange, Headers, Request
from recorder.protocol import (
    AGENT_CARD,
    LISTINGS,
    Binding,
    Classification,
    IdRole,
    Interface,
    card_location,
    find_card,
    interfaces_from_card,
    parse_json,
    rewrite_card,
    rewrite_grpc_interfaces,
)
from recorder.redaction import NO_RULES, Masker, Rules
from recorder.replay._grpcanswer import GrpcAnswer, grpc_answer
from recorder.replay._ids import (
    Json,
    Key,
    Provenance,
    Slot,
    make_key,
    shape,
    token,
)
from recorder.replay._journal import (
    MAX_BYTES,
    Journal,
    JournalRequest,
    Outcome,
    now,
    replay_rules,
)
from recorder.replay._misses import MissReport, miss_answer, nearest, refusal
from recorder.replay._reader import Parsed, RequestReader
from recorder.replay._report import Report
from recorder.replay._respond import (
    HttpAnswer,
    HttpTemplate,
    revalidated,
    substitute_body,
    substitute_headers,
    template,
    trim_listing,
)
from recorder.replay._script import Script, Step, load_script
from recorder.replay._sessions import MAX_SESSIONS, Session, Sessions, identity_of

ANSWER_CACHE_SIZE = 4096
DELIVERY_HEADERS_DROPPED = frozenset({"host", "content-length", "transfer-encoding", "connection"})

Answer = HttpAnswer | GrpcAnswer


@dataclass(frozen=True, slots=True)
class Client:
    """Who sent a request, as far as the transport knows: the connection (`host:port`)."""

    connection: str | None = None

    @classmethod
    def at(cls, address: tuple[str, int] | None) -> Client:
        """The client on the connection from `address` (None: unknown)."""
        return cls(f"{address[0]}:{address[1]}" if address else None)


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


@dataclass(frozen=True, slots=True)
class _Live:
    """A live request read once: its value, ids, their provenance and the key."""

    classification: Classification
    value: Json
    slots: tuple[Slot, ...]
    provenance: tuple[Provenance, ...]
    recorded: tuple[str | None, ...]  # the recorded id an issued id stands for
    key: Key
    session: Session | None  # the session of the first issued id
    jsonrpc_id: Json
    headers: Mapping[str, str]


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
    ) -> None:
        exchanges = [e for capture in captures for e in capture.exchanges]
        self.script: Script = load_script(captures)
        self.sessions = Sessions(max_sessions)
        self.report = Report(self.script)
        rules = replay_rules(captures, redaction)
        self.journal = Journal(journal_limit, max_bytes=journal_bytes, rules=rules)
        self.deliver = deliver
        self.interfaces = _interfaces(exchanges)
        self.upstreams = list(dict.fromkeys(u for c in captures for u in c.upstreams))
        self.jsonrpc_paths = frozenset(
            e.request.target.partition("?")[0]
            for e in exchanges
            if e.classification.binding is Binding.JSONRPC
        )
        self.base_url = ""
        self.grpc_target: str | None = None
        self._answers: OrderedDict[tuple[object, ...], HttpTemplate | GrpcAnswer] = OrderedDict()
        masker = Masker(rules) if self.script.masker is not None else None
        self.reader = RequestReader(self.interfaces, self.script.secret_params, masker)
        self._keys: OrderedDict[tuple[object, ...], Key] = OrderedDict()

    def serve_at(self, base_url: str, grpc_target: str | None = None) -> None:
        """Where the replayer listens: served cards point their interfaces here."""
        self.base_url, self.grpc_target = base_url, grpc_target
        self._answers.clear()

    # -- the one entry point ------------------------------------------------------------

    def closed(self, client: Client) -> None:
        """The client's connection is gone: a later one given the same port is another."""
        if client.connection is not None:
            self.sessions.closed(client.connection)

    def handle(self, request: Request, client: Client = Client()) -> Outcomes:
        """The answer to one live request, and what to deliver after it."""
        live = self._read(request)
        candidates = self.script.candidates(live.key, live.headers.get("a2a-version"))
        if not candidates:
            return self._unanswered(request, client, live)
        step, session = self._choose(live, candidates, client, request)
        answer = self._answer(step, session, live)
        deliveries = self._plan(step, session, live) if self.deliver else ()
        number = self._log(request, client, live, "served", step, session, answer)
        return Served(answer, step, session.number if session else None, deliveries, number)

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

    # -- reading ------------------------------------------------------------------------

    def _read(self, request: Request) -> _Live:
        reading = self.reader.read(request)
        parsed = reading.parsed
        c, value, slots = parsed.classification, parsed.value, parsed.slots
        provenance: list[Provenance] = []
        recorded: list[str | None] = []
        session: Session | None = None
        for slot in slots:
            kind, stands_for, owner = self._provenance(slot)
            provenance.append(kind)
            recorded.append(stands_for)
            session = session or owner
        key = self._key(parsed, tuple(zip(provenance, recorded, strict=True)))
        return _Live(
            c,
            value,
            slots,
            tuple(provenance),
            tuple(recorded),
            key,
            session,
            reading.jsonrpc_id,
            reading.headers,
        )

    def _key(self, parsed: Parsed, ids: tuple[tuple[Provenance, str | None], ...]) -> Key:
        """The matching key of what a request says, given its ids' provenance (cached: a poll
        says the same thing with the same provenance again and again)."""
        cache_key = (parsed, ids)
        key = self._keys.get(cache_key)
        if key is None:
            tokens = [token(p, r) for p, r in ids]
            key = make_key(parsed.classification, shape(parsed.value, parsed.slots, tokens))
            self._keys[cache_key] = key
            if len(self._keys) > ANSWER_CACHE_SIZE:
                self._keys.popitem(last=False)
        return key

    def _provenance(self, slot: Slot) -> tuple[Provenance, str | None, Session | None]:
        if slot.role is IdRole.FRESH:
            return Provenance.FRESH, None, None
        owner = self.sessions.owner(slot.value)
        if owner is not None:
            return Provenance.ISSUED, owner.to_recorded[slot.value], owner
        if slot.value in self.script.fixed:
            return Provenance.FIXED, slot.value, None
        if slot.role is IdRole.REFERENCE:
            return Provenance.UNKNOWN, None, None
        return Provenance.OWN, None, None

    # -- choosing -----------------------------------------------------------------------

    def _choose(
        self, live: _Live, candidates: list[Step], client: Client, request: Request
    ) -> tuple[Step, Session | None]:
        first = candidates[0]
        if first.stateless:
            return first, live.session
        identity = identity_of(live.headers)
        if live.session is not None:
            session = live.session
            step = self.sessions.within(session, candidates)
        else:
            choice = self.sessions.join(candidates, client.connection, identity)
            step, session = choice.step, choice.session or self.sessions.open()
            if choice.tie:
                self.report.tied(
                    f"#{step.number} {step.exchange.classification.operation}: "
                    f"{choice.tie + 1} sessions fitted equally (script, connection "
                    f"and headers alike); session {session.number} was chosen"
                )
        self._bind(session, step, live)
        self.sessions.served(session, step, client.connection, identity)
        self.report.served(step.key)
        return step, session

    def _bind(self, session: Session, step: Step, live: _Live) -> None:
        for slot, kind, recorded in zip(live.slots, live.provenance, step.slots, strict=True):
            if kind in (Provenance.OWN, Provenance.FRESH):
                self.sessions.bind(
                    session, slot.value, recorded.slot.value, indexed=kind is Provenance.OWN
                )
        # A listing names tasks of whoever asked: those of other sessions are left out of the
        # answer (`trim_listing`), not minted.
        listed = self.script.listed.get(step.index, frozenset())
        for found in step.response_ids:
            if (
                found not in session.to_live
                and found not in self.script.fixed
                and found not in listed
            ):
                self.sessions.mint(session, found)

    # -- answering ----------------------------------------------------------------------

    def _answer(self, step: Step, session: Session | None, live: _Live) -> Answer:
        if step.stateless:
            self.report.served(step.key)
        extra = _extras(session, live, step)
        cache_key = (
            step.index,
            session.number if session else 0,
            session.version if session else 0,
            extra,
        )
        built = self._answers.get(cache_key)
        if built is None:
            mapping = dict(session.to_live) if session else {}
            mapping.update(extra)
            built = self._build(step, session, mapping)
            self._answers[cache_key] = built
            if len(self._answers) > ANSWER_CACHE_SIZE:
                self._answers.popitem(last=False)
        if isinstance(built, GrpcAnswer):
            return built
        answer = built.render(live.jsonrpc_id)
        if card_location(step.exchange.classification) is not None:
            # A card's validator is answered here, for the card the replayer serves.
            answer = revalidated(answer, live.headers.get("if-none-match"))
        return answer

    def _build(
        self, step: Step, session: Session | None, mapping: Mapping[str, str]
    ) -> HttpTemplate | GrpcAnswer:
        c = step.exchange.classification
        response = step.exchange.response
        assert response is not None
        listing = LISTINGS.get(c.operation or "")
        if listing is not None:
            known = session.to_live if session else {}
            response = trim_listing(response, c.binding, *listing, keep=known.__contains__)
        if c.binding is Binding.GRPC:
            return grpc_answer(response, mapping, self._card_rewrite(()))
        location = card_location(c)
        rewrite = self._card_rewrite(location, step.exchange) if location is not None else None
        return template(response, mapping, jsonrpc=c.binding is Binding.JSONRPC, rewrite=rewrite)

    def _card_rewrite(
        self, location: tuple[str, ...] | None, exchange: Exchange | None = None
    ) -> Callable[[bytes], bytes]:
        at = location or ()
        upstreams = self.upstreams or (_host_origin(exchange.request) if exchange else [])

        def rewrite(body: bytes) -> bytes:
            for upstream in upstreams:
                body = rewrite_card(body, upstream, self.base_url, at=at).body
            if self.grpc_target:
                body = rewrite_grpc_interfaces(body, self.grpc_target, at=at).body
            return body

        return rewrite

    def _plan(
        self, step: Step, session: Session | None, live: _Live
    ) -> tuple[PlannedDelivery, ...]:
        deliveries = self.script.deliveries.get(step.index, ())
        if not deliveries:
            return ()
        mapping = dict(session.to_live) if session else {}
        mapping.update(_extras(session, live, step))
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

    def _unanswered(self, request: Request, client: Client, live: _Live) -> Miss | Refused:
        c = live.classification
        jsonrpc = c.binding is Binding.JSONRPC or (
            c.operation is None and request.target.partition("?")[0] in self.jsonrpc_paths
        )
        refused = refusal(request, c, jsonrpc)
        if refused is not None:
            reason = c.reason or "the request cannot be read"
            number = self._log(request, client, live, "refused", None, None, refused, reason)
            return Refused(refused, reason, number)
        binding, operation = live.key[0], live.key[1]
        same = self.script.by_operation.get((binding, operation), [])
        others = [b for b, op in self.script.by_operation if op == operation and b != binding]
        found = nearest(c, _shape_of(live.key), same, others)
        answer = miss_answer(found, live.jsonrpc_id, grpc=bool(request.messages))
        text = found.describe()
        self.report.missed(self.journal.line(request, text))
        number = self._log(request, client, live, "miss", None, live.session, answer, text)
        return Miss(answer, found, number)

    def _log(
        self,
        request: Request,
        client: Client,
        live: _Live,
        outcome: Outcome,
        step: Step | None,
        session: Session | None,
        answer: Answer,
        detail: str | None = None,
    ) -> int:
        number = self.journal.next_number()
        status = answer.code if isinstance(answer, GrpcAnswer) else answer.status
        self.journal.add_request(
            JournalRequest(
                number,
                now(),
                client.connection,
                request,
                live.classification,
                outcome,
                step.number if step else None,
                session.number if session else None,
                detail,
                status,
                tuple(zip(live.slots, live.provenance, live.recorded, strict=True)),
            )
        )
        return number


# ---- small pure helpers ---------------------------------------------------------------------


def _extras(session: Session | None, live: _Live, step: Step) -> tuple[tuple[str, str], ...]:
    """(recorded, live) pairs of this request that the session's mapping does not hold."""
    known = session.to_live if session else {}
    found = []
    for slot, recorded in zip(live.slots, step.slots, strict=True):
        if slot.value != recorded.slot.value and known.get(recorded.slot.value) != slot.value:
            found.append((recorded.slot.value, slot.value))
    return tuple(found)


def _shape_of(key: Key) -> Json:
    return parse_json(key[2])


def _delivery_url(request: Request) -> str:
    host = request.header("host") or ""
    return f"http://{host}{request.target}"


def _host_origin(request: Request) -> list[str]:
    host = request.header("host")
    return [f"http://{host}"] if host else []


def _interfaces(exchanges: Sequence[Exchange]) -> tuple[Interface, ...]:
    found: list[Interface] = []
    for exchange in exchanges:
        if exchange.classification.operation != AGENT_CARD or exchange.response is None:
            continue
        card = find_card(exchange.response.body, exchange.classification)
        found.extend(interfaces_from_card(card) if card is not None else ())
    return tuple(dict.fromkeys(found))
