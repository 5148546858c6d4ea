"""The recorded captures as a script: every exchange a step, every id with its provenance (pure).

Loading walks each capture once, in the order its exchanges started (a request can only name
what an exchange that started before it handed out), and keeps one set of *known* values:

- an id at a request position (`IdPosition`) is ISSUED when it is known, FRESH when the
  position is one of a fresh value (messageId, webhook, secrets); otherwise, at a reference
  position it is UNKNOWN (a probe) when the agent answered with an error, and FIXED (it existed
  before the capture began) when it answered with success; at a chosen position it is the
  client's OWN, and known from then on;
- ids in a successful answer that are not known yet are *issued* by that step, and known from
  then on.

Each step gets its key (`_ids.make_key`), and its place in the script: `index` (position in
the whole script, captures one after the other) and `rank` (how many creating steps, those
that bring new ids into the world, come before it).  Push deliveries are attached to the step
that set them off: the latest step that started before the delivery and named the task it is
about, or failing that the latest step before it.  Everything is one pass (dictionaries, no
search), so loading grows with the capture's size.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from recorder.capture import Capture, Exchange, Request, Response
from recorder.protocol import (
    AGENT_CARD,
    LISTINGS,
    NOT_JSON,
    PUSH_DELIVERY,
    RESPONSE_ID_KEYS,
    Binding,
    IdRole,
    event_data,
    parse_json,
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

# Operations whose answers hold no session ids (a card's `id`s and `name`s are skills').
CARD_OPERATIONS = frozenset({AGENT_CARD, "GetExtendedAgentCard"})
# Subtrees of an answer that hold the agent's or the user's data, never ids to swap.
OPAQUE_KEYS = frozenset({"metadata", "data"})
# Ids an answer hands out that do not make a step *creating*: every poll may show new ones.
MINOR_KEYS = frozenset({"messageId", "message_id", "artifactId", "artifact_id"})


@dataclass(frozen=True, slots=True)
class RecordedSlot:
    slot: Slot
    provenance: Provenance


@dataclass(frozen=True, slots=True)
class Step:
    """One recorded exchange, ready to answer.

    `stateless` steps (probes, card fetches, anything naming and answering no session id) are
    served to anyone, repeat freely and bind nothing.  The others belong to a session: by the
    issued ids they name, else (`joins`) by where the session is in the script.
    """

    index: int
    exchange: Exchange
    key: Key
    version: str | None  # the request's A2A-Version header (some agents answer by it)
    slots: tuple[RecordedSlot, ...]
    response_ids: tuple[str, ...]  # ids in the successful answer, first seen first
    creates: bool  # the answer (or the client's own ids) brings new ids into the world
    stateless: bool
    rank: int  # creating steps before this one
    names: tuple[str, ...] = ()  # the issued ids the request names (recorded values)

    @property
    def number(self) -> int:
        return self.exchange.number

    @property
    def joins(self) -> bool:
        """Needs a session but names none of its ids: it joins one by the script."""
        return not self.stateless and not any(s.provenance is Provenance.ISSUED for s in self.slots)


@dataclass
class Script:
    """Every servable recorded exchange as a `Step`, indexed by key."""

    steps: list[Step] = field(default_factory=list)
    by_key: dict[Key, list[Step]] = field(default_factory=dict)
    by_lane: dict[tuple[Key, str | None], list[Step]] = field(default_factory=dict)
    by_operation: dict[tuple[str, str], list[Step]] = field(default_factory=dict)
    fixed: set[str] = field(default_factory=set)  # ids that existed before a capture began
    issuer: dict[str, int] = field(default_factory=dict)  # recorded id -> exchange number
    deliveries: dict[int, tuple[Exchange, ...]] = field(default_factory=dict)  # by step index
    listed: dict[int, frozenset[str]] = field(default_factory=dict)  # ids a listing names
    secret_params: frozenset[str] = frozenset()
    # Set when a recorded request holds a redaction placeholder: values are then compared
    # masked (`recorder.redaction.Masker`), so a live client's own secret matches it.
    masker: Masker | None = None

    def candidates(self, key: Key, version: str | None) -> list[Step]:
        """Steps with this key, in script order; those recorded with the same A2A-Version first.

        Some agents answer by the header (the JS SDK's card): prefer what was recorded for the
        same header, and fall back to any version rather than miss.
        """
        return self.by_lane.get((key, version)) or self.by_key.get(key, [])

    def add(self, step: Step) -> None:
        self.steps.append(step)
        self.by_key.setdefault(step.key, []).append(step)
        self.by_lane.setdefault((step.key, step.version), []).append(step)
        binding, operation, _ = step.key
        self.by_operation.setdefault((binding, operation), []).append(step)


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
        creates = self._learn(found, exchange.number, index) or any(
            r.provenance is Provenance.OWN for r in recorded
        )
        listing = LISTINGS.get(c.operation or "")
        if listing is not None and success:
            self.script.listed[index] = frozenset(_listed(documents, *listing))
        ids = tuple(dict.fromkeys(value for _, value in found))
        kinds = {r.provenance for r in recorded}
        stateless = bool(kinds & {Provenance.UNKNOWN, Provenance.FIXED}) or not (
            kinds & {Provenance.ISSUED, Provenance.OWN} or ids
        )
        names = tuple(r.slot.value for r in recorded if r.provenance is Provenance.ISSUED)
        return Step(
            index,
            exchange,
            key,
            exchange.request.header("a2a-version"),
            tuple(recorded),
            ids,
            creates,
            stateless,
            _next_rank(self.script),
            names,
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

    def _learn(self, found: list[tuple[str, str]], number: int, index: int) -> bool:
        """Know the ids an answer names; whether it handed out new ones that count."""
        creates = False
        for key, value in found:
            self.last_naming[value] = index
            if value not in self.known:
                self.known[value] = number
                self.script.issuer.setdefault(value, number)
                creates = creates or key not in MINOR_KEYS
        return creates

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


def _next_rank(script: Script) -> int:
    if not script.steps:
        return 0
    last = script.steps[-1]
    return last.rank + (1 if last.creates else 0)


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
            if not (k in OPAQUE_KEYS or k == "jsonrpc" or (envelope and k == "id")):
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
            if k in OPAQUE_KEYS or k == "jsonrpc" or (envelope and k == "id"):
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
    parts = name.split("/")
    if len(parts) in (2, 4) and parts[0] == "tasks" and all(parts):
        yield "taskId", parts[1]
        if len(parts) == 4:
            yield "configId", parts[3]
