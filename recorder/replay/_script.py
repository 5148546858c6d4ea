"""The recorded captures as a script: every exchange a step, every id with its provenance (pure).

Loading walks each capture once, in the order its exchanges started (a request can only name
what an exchange that started before it handed out), and keeps one set of *known* values:

- an id at a request position (`IdPosition`) is ISSUED when it is known, FRESH when the
  position is one of a fresh value (messageId, webhook, secrets); otherwise, at a reference
  position it is UNKNOWN (a probe) when the agent answered with an error, and FIXED (it existed
  before the capture began) when it answered with success; at a chosen position it is the
  client's OWN, and known from then on;
- ids in a successful answer that are not known yet are handed out by that step, and known
  from then on.

Each step gets its *key* (`_ids.make_key`): the request with every id replaced by its
provenance, ISSUED ids without their value (`named` holds the recorded id at each slot), so
that the same request about two different recorded tasks has one key and the live side can
decide later which of them a live id stands for.

A step *introduces* ids (`introduced`): the client's OWN ids, then the ids a client can name
back that its answer hands out first (`MINTED_KEYS`: task, context and push-config ids, not
message or artifact ids, which are served as recorded).  Such a step is *creating*, and the
live side makes a family of live ids for it (`_state`).  A step that cannot create (a probe, a
read of a task that existed before, a listing) hands out nothing: ids first seen in its answer
existed before the capture began (`fixed`), as the tasks a ListTasks shows that no exchange
created.  `origin` says which creating step introduced each recorded id, and where.

Push deliveries are attached to the step that set them off: the latest step that started
before the delivery and named the task it is about, or failing that the latest step before
it.  Everything is one pass (dictionaries, no search), so loading grows with the capture's
size; the answer shapes that tell creating steps apart are computed on demand (`shape_of`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from recorder.capture import Capture, Exchange, Request, Response
from recorder.protocol import (
    AGENT_CARD,
    CURSOR_FIELDS,
    ID_FIELDS,
    LISTINGS,
    NOT_JSON,
    PUSH_DELIVERY,
    RESPONSE_ID_KEYS,
    SERVED_AS_RECORDED,
    TIMESTAMP_FIELDS,
    USER_CONTENT_KEYS,
    Binding,
    IdKind,
    IdRole,
    event_data,
    parse_json,
    resource_ids,
)
from recorder.redaction import Masker
from recorder.replay._ids import (
    Json,
    Key,
    Location,
    Provenance,
    Slot,
    find_slots,
    make_key,
    positions_of,
    redacted_params,
    request_value,
    shape,
    token,
)
from recorder.replay._respond import MIN_EMBEDDED

# Operations whose answers hold no session ids (a card's `id`s and `name`s are skills').
CARD_OPERATIONS = frozenset({AGENT_CARD, "GetExtendedAgentCard"})
# Ids an answer hands out that are served as recorded, never minted (`recorder.protocol`'s id
# model): those a client never names back, and page cursors, which it names back as they are.
UNMINTED_KEYS = SERVED_AS_RECORDED | CURSOR_FIELDS
# Keys whose ids are tasks (a listing's item `id`s are too).
TASK_KEYS = frozenset(name for name, kind in ID_FIELDS.items() if kind is IdKind.TASK)
_NAMED = (Provenance.ISSUED, Provenance.OWN, Provenance.FIXED)


@dataclass(frozen=True, slots=True)
class RecordedSlot:
    slot: Slot
    provenance: Provenance


@dataclass(frozen=True, slots=True)
class Step:
    """One recorded exchange, ready to answer.

    `stateless` steps (probes, card fetches, anything naming and answering no session id) are
    served to anyone, repeat freely and bind nothing.  `listing` steps (ListTasks) are answered
    from the live store (`_listing`).  The others belong to the live families whose ids they
    name, and `creating` ones (`introduced` non-empty) make a new family.
    """

    index: int
    exchange: Exchange
    key: Key
    version: str | None  # the request's A2A-Version header (some agents answer by it)
    slots: tuple[RecordedSlot, ...]
    response_ids: tuple[str, ...]  # ids in the successful answer, first seen first
    stateless: bool
    named: tuple[str | None, ...] = ()  # per slot: the recorded id (ISSUED, OWN, FIXED)
    introduced: tuple[str, ...] = ()  # the ids this step brings into the world, in order
    listing: bool = False
    owned: int = 0  # how many of `introduced` (the first ones) are the client's own

    @property
    def number(self) -> int:
        return self.exchange.number

    @property
    def creating(self) -> bool:
        return bool(self.introduced)

    @property
    def names(self) -> tuple[str, ...]:
        """The issued ids the request names (recorded values)."""
        return tuple(r.slot.value for r in self.slots if r.provenance is Provenance.ISSUED)


@dataclass
class Script:
    """Every servable recorded exchange as a `Step`, indexed by key."""

    steps: list[Step] = field(default_factory=list)
    by_key: dict[Key, list[Step]] = field(default_factory=dict)
    by_lane: dict[tuple[Key, str | None], list[Step]] = field(default_factory=dict)
    by_operation: dict[tuple[str, str], list[Step]] = field(default_factory=dict)
    fixed: set[str] = field(default_factory=set)  # ids that existed before a capture began
    known: set[str] = field(default_factory=set)  # every id any capture names
    issuer: dict[str, int] = field(default_factory=dict)  # recorded id -> exchange number
    origin: dict[str, tuple[int, int]] = field(default_factory=dict)  # id -> (step, position)
    deliveries: dict[int, tuple[Exchange, ...]] = field(default_factory=dict)  # by step index
    cursors: dict[int, tuple[str, ...]] = field(default_factory=dict)  # page tokens, by step
    task_ids: set[str] = field(default_factory=set)  # recorded ids known to be tasks
    secret_params: frozenset[str] = frozenset()
    # Set when a recorded request holds a redaction placeholder: values are then compared
    # masked (`recorder.redaction.Masker`), so a live client's own secret matches it.
    masker: Masker | None = None
    _named: dict[int, dict[tuple[str | None, ...], list[Step]]] = field(default_factory=dict)
    _shapes: dict[int, str] = field(default_factory=dict)

    def candidates(self, key: Key, version: str | None) -> list[Step]:
        """Steps with this key, in script order; those recorded with the same A2A-Version first.

        Some agents answer by the header (the JS SDK's card): prefer what was recorded for the
        same header, and fall back to any version rather than miss.
        """
        return self.by_lane.get((key, version)) or self.by_key.get(key, [])

    def naming(self, steps: list[Step]) -> dict[tuple[str | None, ...], list[Step]]:
        """`steps` (one key's candidates) by the recorded ids they name (built once per list)."""
        found = self._named.get(id(steps))
        if found is None:
            found = {}
            for step in steps:
                found.setdefault(step.named, []).append(step)
            self._named[id(steps)] = found
        return found

    def shape_of(self, step: Step) -> str:
        """What a client sees of a step's answer, ids aside (`answer_shape`), computed once."""
        found = self._shapes.get(step.index)
        if found is None:
            found = self._shapes[step.index] = answer_shape(step)
        return found

    def add(self, step: Step) -> None:
        self.steps.append(step)
        self.by_key.setdefault(step.key, []).append(step)
        self.by_lane.setdefault((step.key, step.version), []).append(step)
        binding, operation, _ = step.key
        self.by_operation.setdefault((binding, operation), []).append(step)
        for position, value in enumerate(step.introduced):
            self.origin.setdefault(value, (step.index, position))


def load_script(captures: Sequence[Capture]) -> Script:
    exchanges = [e for capture in captures for e in capture.exchanges]
    script = Script(
        secret_params=redacted_params(e.request for e in exchanges),
        masker=Masker() if any(_holds_placeholder(e.request) for e in exchanges) else None,
    )
    for capture in captures:
        _Loader(script).load(capture.exchanges)
    return script


class _Loader:
    """One capture's pass: its known values, its triggers for deliveries."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.known: dict[str, int] = {}  # value -> number of the exchange that introduced it
        self.last_naming: dict[str, int] = {}  # id -> index of the latest step naming it
        self.pending: dict[int, list[Exchange]] = {}  # step index -> deliveries it set off

    def load(self, exchanges: Iterable[Exchange]) -> None:
        start = len(self.script.steps)
        for exchange in sorted(exchanges, key=lambda e: (e.started_us, e.number)):
            if exchange.classification.operation == PUSH_DELIVERY:
                self._attach(exchange, start)
            elif exchange.response is not None:
                self.script.add(self._step(exchange))
        for index, found in self.pending.items():
            self.script.deliveries[index] = tuple(found)
        self.script.known.update(self.known)

    def _attach(self, delivery: Exchange, start: int) -> None:
        if len(self.script.steps) == start:
            return  # nothing started before it in this capture
        task = delivery.classification.task_id
        trigger = self.last_naming.get(task or "", len(self.script.steps) - 1)
        self.pending.setdefault(trigger, []).append(delivery)

    def _step(self, exchange: Exchange) -> Step:
        c = exchange.classification
        index = len(self.script.steps)
        documents = _documents(exchange)
        success = _succeeded(exchange, documents)
        recorded, key = self._request(exchange, success, index)
        found = _answer_id_keys(exchange, documents) if success else []
        kinds = {r.provenance for r in recorded}
        listing = c.operation in LISTINGS
        probe = bool(kinds & {Provenance.UNKNOWN, Provenance.FIXED})
        new = self._learn(found, exchange.number, index)
        self.script.task_ids.update(
            v for k, v in found if k in TASK_KEYS or (listing and k == "id")
        )
        cursors = tuple(v for k, v in found if k in CURSOR_FIELDS and v)
        if cursors:
            self.script.cursors[index] = cursors
        if probe or listing or c.operation in CARD_OPERATIONS:
            self.script.fixed.update(new)  # shown, not handed out: they existed before
            new = []
        own = tuple(dict.fromkeys(r.slot.value for r in recorded if r.provenance is Provenance.OWN))
        introduced = tuple(dict.fromkeys([*own, *new]))
        ids = tuple(dict.fromkeys(value for _, value in found))
        stateless = not listing and (
            probe or not (kinds & {Provenance.ISSUED, Provenance.OWN} or introduced)
        )
        named = tuple(r.slot.value if r.provenance in _NAMED else None for r in recorded)
        return Step(
            index,
            exchange,
            key,
            exchange.request.header("a2a-version"),
            tuple(recorded),
            ids,
            stateless,
            named,
            () if stateless else introduced,
            listing,
            0 if stateless else len(own),
        )

    def _request(
        self, exchange: Exchange, success: bool, index: int
    ) -> tuple[list[RecordedSlot], Key]:
        """The request's ids with their provenance (learning the client's own), and its key."""
        c = exchange.classification
        value = request_value(exchange.request, c, self.script.secret_params)
        slots = find_slots(value, positions_of(c))
        if self.script.masker is not None:  # after the slots: they keep their own values
            value = self.script.masker.value(value)
        recorded = [RecordedSlot(s, self._provenance(s, success)) for s in slots]
        for r in recorded:
            self.last_naming[r.slot.value] = index
            if r.provenance is Provenance.OWN:
                self.known.setdefault(r.slot.value, exchange.number)
            elif r.provenance is Provenance.FIXED:
                self.script.fixed.add(r.slot.value)
        shaped = shape(value, slots, [token(r.provenance, r.slot.value) for r in recorded])
        return recorded, make_key(c, shaped)

    def _learn(self, found: list[tuple[str, str]], number: int, index: int) -> list[str]:
        """Know the ids an answer names; the new ones a client can name back, in order."""
        new: list[str] = []
        for key, value in found:
            self.last_naming[value] = index
            if value not in self.known:
                self.known[value] = number
                self.script.issuer.setdefault(value, number)
                if key not in UNMINTED_KEYS:
                    new.append(value)
        return new

    def _provenance(self, slot: Slot, success: bool) -> Provenance:
        if slot.role is IdRole.FRESH:
            return Provenance.FRESH
        if slot.value in self.known:
            return Provenance.ISSUED
        if slot.role is IdRole.REFERENCE:
            return Provenance.FIXED if success else Provenance.UNKNOWN
        return Provenance.OWN


def _holds_placeholder(request: Request) -> bool:
    """Whether a recorded request's body or gRPC messages hold a redaction placeholder."""
    return b"<redacted:" in request.body or any(
        "<redacted:" in (m.json or "") for m in request.messages
    )


def _succeeded(exchange: Exchange, documents: list[Json]) -> bool:
    """Whether the agent answered with success (read from the documents already parsed)."""
    if exchange.classification.error is not None:
        return False
    return answer_succeeded(exchange.classification.binding, exchange.response, documents)


def answer_succeeded(
    binding: Binding | None, response: Response | None, documents: Sequence[Json]
) -> bool:
    """Whether a response is a success: gRPC status 0, else an HTTP status below 400 and no
    error document (`documents` are `answer_documents(response)`)."""
    if response is None:
        return False
    if binding is Binding.GRPC:
        fields = {k.lower(): v for k, v in (*response.headers, *response.trailers)}
        return fields.get("grpc-status", "0").strip() == "0"
    return response.status < 400 and not any(_is_error(d) for d in documents)


# ---- what a client sees of an answer, ids aside ----------------------------------------------


def answer_shape(step: Step) -> str:
    """A step's answer with its ids replaced by what they are, for telling answers apart.

    Two creating steps with the same key answer alike when their shapes are equal: the same
    status, documents and events, with the ids the request named at the same places, the new
    ids at the same places, and any timestamps.  Ids a client never names back (message and
    artifact ids) are served as recorded and do not count.
    """
    response = step.exchange.response
    if response is None:
        return ""
    named = {r.slot.value: f"<slot {n}>" for n, r in enumerate(step.slots)}
    placed = {value: f"<new {n}>" for n, value in enumerate(step.introduced)}
    known = {**dict.fromkeys(step.response_ids, "<id>"), **named, **placed}
    documents = [_shaped(d, known, None) for d in answer_documents(response)]
    status = answer_succeeded(step.exchange.classification.binding, response, ())
    head = [response.status, status, len(response.events), len(response.messages)]
    return json.dumps([head, documents], sort_keys=True, default=str)


def _shaped(value: Json, ids: dict[str, str], key: str | None) -> Json:
    if isinstance(value, dict):
        envelope = "jsonrpc" in value
        return {
            k: "<ts>" if k in TIMESTAMP_FIELDS else _shaped(v, ids, k)
            for k, v in value.items()
            if not (envelope and k == "id")
        }
    if isinstance(value, list):
        return [_shaped(v, ids, key) for v in value]
    if isinstance(value, str):
        if key in UNMINTED_KEYS:
            return "<kept>"
        found = ids.get(value)
        if found is not None:
            return found
        for recorded, placeholder in ids.items():  # an id quoted in a text ("Task t-1 ...")
            if len(recorded) >= MIN_EMBEDDED and recorded in value:
                value = value.replace(recorded, placeholder)
        return value
    return value


# ---- the ids an answer hands out ------------------------------------------------------------


def _documents(exchange: Exchange) -> list[Json]:
    return answer_documents(exchange.response)


def answer_documents(response: Response | None) -> list[Json]:
    """The JSON documents of an answer, in order: body, SSE event data, gRPC messages."""
    if response is None:
        return []
    texts: list[str | bytes] = [response.body] if response.body else []
    texts += [event_data(e.lines) for e in response.events]
    texts += [m.json for m in response.messages if m.json]
    return [d for d in (parse_json(t) for t in texts) if d is not NOT_JSON]


def _answer_id_keys(exchange: Exchange, documents: list[Json]) -> list[tuple[str, str]]:
    """(key, id) for every id in a successful answer's documents, in order."""
    found: list[tuple[str, str]] = []
    if exchange.classification.operation not in CARD_OPERATIONS:
        for document in documents:
            if not _is_error(document):
                _ids_in(document, None, found)
    return found


def _listed(documents: list[Json], list_key: str, id_key: str) -> Iterator[str]:
    for document in documents:
        holder = document.get("result", document) if isinstance(document, dict) else None
        items = holder.get(list_key) if isinstance(holder, dict) else None
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict) and isinstance(item.get(id_key), str):
                yield item[id_key]


def _is_error(document: Json) -> bool:
    """A JSON-RPC or HTTP+JSON error document (a gRPC error lives in trailers, not messages)."""
    return isinstance(document, dict) and isinstance(document.get("error"), dict)


def located_ids(document: Json) -> list[tuple[Location, str, str]]:
    """(where, key, id) for every id an answer document hands out, by the rules `_ids_in`
    follows; `where` is the path of the string in the document (a resource name's ids share
    it, told apart by their key).  For tools that pair a live answer's ids with a recorded
    answer's (verify)."""
    found: list[tuple[Location, str, str]] = []
    if not _is_error(document):
        _located(document, None, (), found)
    return found


def _located(
    value: Json, key: str | None, where: Location, out: list[tuple[Location, str, str]]
) -> None:
    if isinstance(value, dict):
        envelope = "jsonrpc" in value
        for k, v in value.items():
            if not (k in USER_CONTENT_KEYS or k == "jsonrpc" or (envelope and k == "id")):
                _located(v, k, (*where, k), out)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _located(item, key, (*where, index), out)
    elif isinstance(value, str):
        found: list[tuple[str, str]] = []
        _id_at(key, value, found)
        out.extend((where, k, v) for k, v in found)


def _ids_in(value: Json, key: str | None, out: list[tuple[str, str]]) -> None:
    """Append (key, id) for each id in `value` (a list, not a generator: loading is hot)."""
    kind = type(value)
    if kind is dict:
        envelope = "jsonrpc" in value
        for k, v in value.items():
            if k in USER_CONTENT_KEYS or k == "jsonrpc" or (envelope and k == "id"):
                continue
            if type(v) is str:
                if k in RESPONSE_ID_KEYS:  # checked here: most strings are not ids
                    _id_at(k, v, out)
            elif type(v) in (dict, list):
                _ids_in(v, k, out)
    elif kind is list:
        holds_ids = key in RESPONSE_ID_KEYS
        for item in value:
            if type(item) is str:
                if holds_ids:
                    _id_at(key, item, out)
            elif type(item) in (dict, list):
                _ids_in(item, key, out)


def _id_at(key: str | None, value: str, out: list[tuple[str, str]]) -> None:
    if value and key in RESPONSE_ID_KEYS:
        if key == "name":
            out.extend(_resource_ids(value))
        else:
            assert key is not None
            out.append((key, value))


def _resource_ids(name: str) -> Iterator[tuple[str, str]]:
    found = resource_ids(name)
    if found is not None:
        yield "taskId", found[0]
        if found[1]:
            yield "configId", found[1]
