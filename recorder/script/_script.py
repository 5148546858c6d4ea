"""The recorded captures as a script: every exchange a step, every id with its origin (pure).

**Provenance is origin.**  Each capture is walked in the order its exchanges started, and each
id a request holds (`_slots`) gets its provenance by one rule, the replay's too (`provenance`):

    FRESH    the request fills it afresh (a messageId, a webhook, a field learnt fresh)
    ISSUED   known already: handed out earlier, or the client's own named again
    OWN      new, where the client chooses ids: known from then on
    FIXED    new, where it must name something that exists, answered with success
    UNKNOWN  the same, answered with an error: a probe of an id nobody issued

A *creating* step brings ids into the world (`introduced`: the client's OWN ones, then those
its answer first hands out that a client can name back).  Creating steps whose requests,
answers and later steps look alike form one `Class` (2,000 identical sends are one class), so
the work of one request does not grow with the capture.  A push delivery belongs to the latest
step before it that named its task, else the latest step before it.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from recorder.capture import Capture, Exchange, Request
from recorder.protocol import (
    CURSOR_FIELDS,
    ID_FIELDS,
    LISTINGS,
    PUSH_DELIVERY,
    SERVED_AS_RECORDED,
    Binding,
    IdKind,
    IdRole,
)
from recorder.redaction import Masker, api_key_names
from recorder.script._answers import (
    CARD_OPERATIONS,
    answer_documents,
    answer_shape,
    exchange_succeeded,
    handed_out,
    recorded_cards,
)
from recorder.script._learn import Learning, Skeleton, skeleton
from recorder.script._slots import Slot, find_slots, positions_of
from recorder.script._values import (
    Json,
    Key,
    Location,
    Provenance,
    credential_names,
    make_key,
    redacted_params,
    request_value,
    shape,
    token,
)

# Ids an answer hands out that are served as recorded, never minted (`recorder.protocol`'s id
# model): those a client never names back, and page cursors, which it names back as they are.
UNMINTED_KEYS = SERVED_AS_RECORDED | CURSOR_FIELDS
# Keys whose ids are tasks (a listing's item `id`s are too).
TASK_KEYS = frozenset(name for name, kind in ID_FIELDS.items() if kind is IdKind.TASK)
Named = tuple[Key, tuple[str | None, ...]]  # a key, and the recorded ids a request names


@dataclass(frozen=True, slots=True)
class RecordedSlot:
    slot: Slot
    provenance: Provenance


@dataclass(frozen=True, slots=True)
class Step:
    """One recorded exchange, ready to answer: `stateless` steps (probes, cards) are served to
    anyone and bind nothing, `listing` ones are answered from the live store, the others belong to
    the live ids they name, and `creating` ones (`introduced`) bring new ones."""

    index: int
    exchange: Exchange
    key: Key
    version: str | None  # the request's A2A-Version header (some agents answer by it)
    slots: tuple[RecordedSlot, ...]
    response_ids: tuple[str, ...]  # ids in the successful answer, first seen first
    stateless: bool
    named: tuple[str | None, ...] = ()  # per slot: the recorded id an ISSUED slot names
    introduced: tuple[str, ...] = ()  # the ids this step brings into the world, in order
    listing: bool = False
    owned: int = 0  # how many of `introduced` (the first ones) are the client's own
    literal_key: Key | None = None
    fresh: bool = True  # names no id an earlier step of its capture introduced
    credentials: tuple[str, ...] = ()  # what the request carried (`credential_names`)

    @property
    def number(self) -> int:
        return self.exchange.number

    @property
    def creating(self) -> bool:
        return bool(self.introduced)

    @property
    def binding(self) -> Binding | None:
        return self.exchange.classification.binding

    @property
    def names(self) -> tuple[str, ...]:
        """The issued ids the request names (recorded values)."""
        return tuple(r.slot.value for r in self.slots if r.provenance is Provenance.ISSUED)

    @property
    def keys(self) -> tuple[Key, ...]:
        """Every key the step answers under: the literal one first."""
        return (self.literal_key, self.key) if self.literal_key else (self.key,)


@dataclass(frozen=True, slots=True)
class Class:
    """Interchangeable creating steps (see the module docstring): `members` in script order."""

    number: int
    members: tuple[int, ...]
    by_own: Mapping[tuple[str, ...], tuple[int, ...]]  # members by their own recorded ids


@dataclass
class Script:
    """Every servable recorded exchange as a `Step`, indexed (see the module docstring)."""

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
    classes: list[Class] = field(default_factory=list)
    class_of: dict[int, int] = field(default_factory=dict)  # creating step -> its class
    secret_params: frozenset[str] = frozenset()
    # The credentials the card names, besides Authorization: API-key headers and parameters.
    credential_headers: frozenset[str] = frozenset()
    credential_params: frozenset[str] = frozenset()
    credentials: bool = True  # whether requests are compared by the credentials they carry
    # Skeleton -> the fields learnt fresh there (`_learn`).
    learnt: Mapping[Skeleton, frozenset[Location]] = field(default_factory=dict)
    # Set when a recorded request holds a redaction placeholder: values are then compared
    # masked (`recorder.redaction.Masker`), so a live client's own secret matches it.  Only
    # the recorded requests that hold one are masked: on the others masking changes nothing.
    masker: Masker | None = None
    # (key, the recorded ids the request names) -> the steps with that key naming exactly these
    # ids, in script order; those that create nothing; the creating ones by class.
    named_steps: dict[Named, list[Step]] = field(default_factory=dict)
    named_reads: dict[Named, list[Step]] = field(default_factory=dict)
    named_creates: dict[Named, dict[int, list[Step]]] = field(default_factory=dict)
    # Key -> the classes of the creating steps with this key that name no known id.
    fresh_classes: dict[Key, list[Class]] = field(default_factory=dict)
    # (binding, credentials) -> a recorded 401, 403, UNAUTHENTICATED or PERMISSION_DENIED.
    refusals: dict[tuple[str, tuple[str, ...]], Step] = field(default_factory=dict)
    # Step index -> the ids its answer shows as recorded: no step introduced them, it names none.
    shown_as_recorded: dict[int, tuple[str, ...]] = field(default_factory=dict)
    _shapes: dict[int, str] = field(default_factory=dict)

    def candidates(self, key: Key, version: str | None) -> list[Step]:
        """Steps with this key, in script order, those recorded with the same A2A-Version first (the
        JS SDK's card answers by the header); any version rather than a miss."""
        return self.by_lane.get((key, version)) or self.by_key.get(key, [])

    def shape_of(self, step: Step) -> str:
        """What a client sees of a step's answer, ids aside, computed once."""
        found = self._shapes.get(step.index)
        if found is None:
            named = {r.slot.value: f"<slot {n}>" for n, r in enumerate(step.slots)}
            placed = {value: f"<new {n}>" for n, value in enumerate(step.introduced)}
            ids = {**dict.fromkeys(step.response_ids, "<id>"), **named, **placed}
            c = step.exchange.classification
            found = self._shapes[step.index] = answer_shape(step.exchange.response, c.binding, ids)
        return found

    def add(self, step: Step) -> None:
        self.steps.append(step)
        for key in step.keys:
            self.by_key.setdefault(key, []).append(step)
            self.by_lane.setdefault((key, step.version), []).append(step)
            self.named_steps.setdefault((key, step.named), []).append(step)
            if not step.creating:
                self.named_reads.setdefault((key, step.named), []).append(step)
        binding, operation, _ = step.key
        self.by_operation.setdefault((binding, operation), []).append(step)
        if _refused(step.exchange):
            self.refusals.setdefault((binding, step.credentials), step)
        for position, value in enumerate(step.introduced):
            self.origin.setdefault(value, (step.index, position))


def provenance(slot: Slot, known: bool, success: bool) -> Provenance:
    """The one rule of the module docstring: `known` already, or else `success`: FIXED when the
    agent answered with success, a probe when it did not."""
    if slot.role is IdRole.FRESH:
        return Provenance.FRESH
    if known:
        return Provenance.ISSUED
    if slot.role is IdRole.REFERENCE:
        return Provenance.FIXED if success else Provenance.UNKNOWN
    return Provenance.OWN


def delivery_url(request: Request) -> str:
    """Where a recorded push delivery was sent: its webhook's URL (its `Host` and target)."""
    return f"http://{request.header('host') or ''}{request.target}"


def load_script(captures: Sequence[Capture], *, credentials: bool = True) -> Script:
    """The captures as a script; `credentials`: whether a request's credentials are compared."""
    exchanges = [e for capture in captures for e in capture.exchanges]
    headers: set[str] = set()  # the credentials the cards name, besides Authorization
    params: set[str] = set()
    for card in recorded_cards(exchanges):
        headers.update(n.lower() for n in api_key_names(card, "header"))
        params.update(api_key_names(card, "query"))
    script = Script(
        secret_params=redacted_params(e.request for e in exchanges),
        masker=Masker() if any(_holds_placeholder(e.request) for e in exchanges) else None,
        credential_headers=frozenset(headers),
        credential_params=frozenset(params),
        credentials=credentials,
    )
    learning = Learning()
    loaders = [_Loader(script, capture.exchanges, learning) for capture in captures]
    script.learnt = learning.learnt()
    for loader in loaders:
        loader.finish()
    _classify(script, loaders)
    return script


@dataclass
class _Reading:
    """One recorded exchange read in the first pass, before what the capture teaches."""

    exchange: Exchange
    value: Json
    slots: list[Slot]
    provenances: dict[tuple[Location, int | None], Provenance]
    success: bool
    found: list[tuple[str, str]]  # (key, id) the answer hands out
    skeleton: Skeleton
    by_value: frozenset[str]  # values read as ids because they were known
    credentials: tuple[str, ...]


class _Loader:
    """One capture: its known values, its readings, its steps and its threads."""

    def __init__(self, script: Script, exchanges: Iterable[Exchange], learning: Learning) -> None:
        self.script = script
        self.known: dict[str, int] = {}  # value -> number of the exchange that introduced it
        self.origin: dict[str, tuple[int, int]] = {}  # this capture's, for its threads
        self.readings: list[_Reading] = []
        self.deliveries: list[Exchange] = []
        self.steps: list[Step] = []
        for exchange in sorted(exchanges, key=lambda e: (e.started_us, e.number)):
            if exchange.classification.operation == PUSH_DELIVERY:
                self.deliveries.append(exchange)
            elif exchange.response is not None:
                reading, strings = self._read(exchange)
                self.readings.append(reading)
                taken = {s.location for s in reading.slots}
                learning.add(reading.skeleton, (x for x in strings if x[0] not in taken))

    # -- the first pass: what each request holds, known by what came before ------------------

    def _read(self, exchange: Exchange) -> tuple[_Reading, list[tuple[Location, str]]]:
        c = exchange.classification
        script = self.script
        names = (
            credential_names(exchange.request, script.credential_headers, script.credential_params)
            if script.credentials
            else None
        )
        value = request_value(exchange.request, c, script.secret_params, credentials=names)
        seen: set[str] = set()

        def known(text: str) -> bool:
            if text in self.known:
                seen.add(text)
                return True
            return False

        strings: list[tuple[Location, str]] = []
        slots = find_slots(value, positions_of(c), known, strings=strings)
        documents = answer_documents(exchange.response)
        success = exchange_succeeded(exchange, documents)
        provenances = {
            (slot.location, slot.segment): provenance(slot, slot.value in self.known, success)
            for slot in slots
        }  # all read before any is known: an id a request names twice is new at both places
        for slot in slots:
            if provenances[(slot.location, slot.segment)] is Provenance.OWN:
                self.known.setdefault(slot.value, exchange.number)
        found_ids = handed_out(exchange, documents) if success else []
        for _, value_id in found_ids:
            self.known.setdefault(value_id, exchange.number)
        reading = _Reading(
            exchange,
            value,
            slots,
            provenances,
            success,
            found_ids,
            skeleton(c, value, strings),
            frozenset(seen),
            tuple(names or ()),
        )
        return reading, strings

    # -- the second pass: steps, with what the capture taught ------------------------------

    def finish(self) -> None:
        self.known = {}
        for reading in self.readings:
            step = self._step(reading, len(self.script.steps))
            self.script.add(step)
            self.steps.append(step)
        self._attach_deliveries()
        self.script.known.update(self.known)

    def _step(self, reading: _Reading, index: int) -> Step:
        exchange = reading.exchange
        c = exchange.classification
        script = self.script
        learnt = script.learnt.get(reading.skeleton, frozenset())
        slots = reading.slots
        if learnt:
            slots = find_slots(
                reading.value, positions_of(c), reading.by_value.__contains__, learnt
            )
        recorded = [
            RecordedSlot(s, reading.provenances.get((s.location, s.segment), Provenance.FRESH))
            for s in slots
        ]
        value = reading.value
        if script.masker is not None and _holds_placeholder(exchange.request):
            value = script.masker.value(value)  # (masking a value with none changes nothing)
        key = _key(c, value, recorded)
        literal = _key(c, value, [r for r in recorded if not r.slot.learnt]) if learnt else None
        for r in recorded:
            if r.provenance is Provenance.OWN:
                self.known.setdefault(r.slot.value, exchange.number)
            elif r.provenance is Provenance.FIXED:
                script.fixed.add(r.slot.value)
        kinds = {r.provenance for r in recorded}
        listing = c.operation in LISTINGS
        probe = bool(kinds & {Provenance.UNKNOWN, Provenance.FIXED})
        new = self._learn(reading.found, exchange.number)
        script.task_ids.update(
            v for k, v in reading.found if k in TASK_KEYS or (listing and k == "id")
        )
        cursors = tuple(v for k, v in reading.found if k in CURSOR_FIELDS and v)
        if cursors:
            script.cursors[index] = cursors
        if probe or listing or c.operation in CARD_OPERATIONS:
            script.fixed.update(new)  # shown, not handed out: they existed before
            new = []
        own = tuple(dict.fromkeys(r.slot.value for r in recorded if r.provenance is Provenance.OWN))
        introduced = tuple(dict.fromkeys([*own, *new]))
        stateless = not listing and (
            probe or not (kinds & {Provenance.ISSUED, Provenance.OWN} or introduced)
        )
        named = tuple(r.slot.value if r.provenance is Provenance.ISSUED else None for r in recorded)
        fresh = not any(v in self.origin for v in named if v is not None)
        step = Step(
            index,
            exchange,
            key,
            exchange.request.header("a2a-version"),
            tuple(recorded),
            tuple(dict.fromkeys(v for _, v in reading.found)),
            stateless,
            named,
            () if stateless else introduced,
            listing,
            0 if stateless else len(own),
            literal if literal != key else None,
            fresh,
            reading.credentials,
        )
        for position, value_id in enumerate(step.introduced):
            self.origin.setdefault(value_id, (index, position))
        return step

    def _learn(self, found: list[tuple[str, str]], number: int) -> list[str]:
        """Know the ids an answer names; the new ones a client can name back, in order."""
        new: list[str] = []
        for key, value in found:
            if value not in self.known:
                self.known[value] = number
                self.script.issuer.setdefault(value, number)
                if key not in UNMINTED_KEYS:
                    new.append(value)
        return new

    def _attach_deliveries(self) -> None:
        if not self.steps:
            return
        pending: dict[int, list[Exchange]] = {}
        order = sorted(self.deliveries, key=lambda e: (e.started_us, e.number))
        starts = [(s.exchange.started_us, s.number) for s in self.steps]
        naming = _LastNaming(self.steps)
        for delivery in order:
            # A delivery never precedes its trigger: a step that started at the same instant
            # (a capture's offsets clamped at 0) is before it.
            before = bisect.bisect_right(starts, (delivery.started_us, math.inf))
            if before == 0:
                continue  # nothing started before it in this capture
            trigger = naming.latest(delivery.classification.task_id, before)
            pending.setdefault(trigger, []).append(delivery)
        for index, found in pending.items():
            self.script.deliveries[index] = tuple(found)


class _LastNaming:
    """For each id, the indexes of the steps whose request names it or whose answer brings it in (a
    listing only shows it: no delivery of that task follows from it)."""

    def __init__(self, steps: Sequence[Step]) -> None:
        self.steps = steps
        self._by_id: dict[str, list[int]] = {}
        for step in steps:
            for value in {*(r.slot.value for r in step.slots), *step.introduced}:
                self._by_id.setdefault(value, []).append(step.index)

    def latest(self, task: str | None, before: int) -> int:
        """The latest step of the first `before` that names `task`, else the last of them."""
        limit = self.steps[before - 1].index
        found = [i for i in self._by_id.get(task or "", ()) if i <= limit]
        return found[-1] if found else limit


def _key(c: object, value: Json, recorded: Sequence[RecordedSlot]) -> Key:
    shaped = shape(
        value,
        [(r.slot.location, r.slot.segment) for r in recorded],
        [token(r.provenance, r.slot.value) for r in recorded],
    )
    return make_key(c, shaped)  # type: ignore[arg-type]


_REFUSED_HTTP = frozenset({401, 403})
_REFUSED_GRPC = frozenset({"16", "7"})  # UNAUTHENTICATED, PERMISSION_DENIED


def _refused(exchange: Exchange) -> bool:
    """Whether the agent refused the request for its credentials."""
    response = exchange.response
    if response is None:
        return False
    if response.status in _REFUSED_HTTP:
        return True
    if exchange.classification.binding is not Binding.GRPC:
        return False
    fields = {k.lower(): v.strip() for k, v in (*response.headers, *response.trailers)}
    return fields.get("grpc-status") in _REFUSED_GRPC


def _holds_placeholder(request: Request) -> bool:
    """Whether a recorded request's body or gRPC messages hold a redaction placeholder."""
    return b"<redacted:" in request.body or any(
        "<redacted:" in (m.json or "") for m in request.messages
    )


# ---- classes of interchangeable creating steps -------------------------------------------


def _classify(script: Script, loaders: Sequence[_Loader]) -> None:
    """Group each capture's creating steps into classes, latest first (so threads are summed)."""
    signatures: dict[tuple[object, ...], int] = {}
    members: dict[int, list[int]] = {}
    for loader in loaders:
        threads = _threads(loader)
        for step in reversed(loader.steps):
            if not step.creating:
                continue
            shape = script.shape_of(step)  # members answer alike: a class's first speaks for all
            signature = (shape, *_signature(step, threads.get(step.index, []), script.class_of))
            number = signatures.setdefault(signature, len(signatures))
            script.class_of[step.index] = number
            members.setdefault(number, []).append(step.index)
    for number in range(len(signatures)):
        found = sorted(members[number])
        by_own: dict[tuple[str, ...], list[int]] = {}
        for index in found:
            step = script.steps[index]
            by_own.setdefault(step.introduced[: step.owned], []).append(index)
        script.classes.append(Class(number, tuple(found), {k: tuple(v) for k, v in by_own.items()}))
    for step in script.steps:
        named = {r.slot.value for r in step.slots}
        shown = tuple(v for v in step.response_ids if v not in script.origin and v not in named)
        if shown:
            script.shown_as_recorded[step.index] = shown
        if not step.creating:
            continue
        cls = script.classes[script.class_of[step.index]]
        for key in step.keys:
            by_class = script.named_creates.setdefault((key, step.named), {})
            by_class.setdefault(cls.number, []).append(step)
        if step.fresh:
            found_classes = script.fresh_classes.setdefault(step.key, [])
            if cls not in found_classes:
                found_classes.append(cls)


def _threads(loader: _Loader) -> dict[int, list[Step]]:
    """Creating step index -> the later steps of the capture naming an id it introduced."""
    threads: dict[int, list[Step]] = {}
    for step in loader.steps:
        origins = {loader.origin[v][0] for v in step.named if v is not None and v in loader.origin}
        for origin in sorted(origins):
            if origin != step.index:
                threads.setdefault(origin, []).append(step)
    return threads


def _signature(
    step: Step, thread: Sequence[Step], class_of: Mapping[int, int]
) -> tuple[object, ...]:
    ids = {value: position for position, value in enumerate(step.introduced)}
    summed: list[tuple[object, ...]] = []
    for later in thread:
        pattern = tuple(ids.get(named, -1) if named is not None else None for named in later.named)
        entry = (later.key, pattern, class_of.get(later.index, -1))
        if not summed or summed[-1] != entry:  # polls repeat: their count tells nothing
            summed.append(entry)
    return (step.key, len(step.introduced), step.owned, tuple(summed))
