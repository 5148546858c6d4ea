"""Faults on replay: which requests a profile hits, and what their answers become (pure).

`Faults.check` refuses a spec that can never hit (`FaultSpecError`); `hit` (or `fire`, for an
answer no step holds) gives the specs that hit a request, and `apply` the answer as the faces
send it (`Faulted`).  A `once` kind never hits a request identical to one it hit already, and a
request is carried out only when the client got some of the answer: a retry gets exactly what
the recording holds.  A stream cut after N events is a `Cut`; a `SubscribeToTask` of its task
then gets the task as it stood at the cut, then the events it missed (spec §3.1.6).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from recorder._errors import FaultSpecError
from recorder.capture import Exchange, GrpcMessage, Request, Response, SseEvent
from recorder.protocol import (
    GRPC_STATUS_CODES,
    Binding,
    FaultSpec,
    FaultStatus,
    FaultTarget,
    SseFramer,
    Version,
    event_data,
    fault_kinds_text,
    fold_task,
    grpc_status_for_http,
    parse_json,
    reframe,
    render_events,
    stream_payload,
    with_task,
)
from recorder.replay.core._answer import HttpAnswer, standard_reason
from recorder.replay.core._grpcanswer import GrpcAnswer
from recorder.script import Json, Script, Step, Swap, dumps_like

Answer = HttpAnswer | GrpcAnswer
MEMORY = 4096
SPLIT_PAUSE = 0.02  # seconds between the writes of a split event: separate TCP segments
RETRY_AFTER = (("retry-after", "1"),)  # what 429 and 503 come with unless headers are given
UNAVAILABLE = GRPC_STATUS_CODES["UNAVAILABLE"]
REPLACING = ("status", "reset")
ORDER = ("envelope", "cut-after", "framing", "status", "reset", "delay", "delay-events")


@dataclass(frozen=True, slots=True)
class Shape:
    """How the faces send an answer, beyond its bytes."""

    delay: float = 0.0  # seconds before the first byte
    gap: float = 0.0  # seconds between events, besides the recorded pacing
    drop: bool = False  # HTTP: the connection closes after the events, the answer unfinished
    reset: bool = False  # HTTP: the connection is reset before any byte of the answer
    splits: tuple[tuple[int, ...], ...] = ()  # per event: where its bytes are cut in writes
    pause: float = 0.0  # seconds between the writes of one event

    def writes(self, event: int, data: bytes) -> list[bytes]:
        """The writes event number `event` goes out in (one, unless it is split)."""
        cuts = self.splits[event] if event < len(self.splits) else ()
        return [data[a:b] for a, b in zip((0, *cuts), (*cuts, len(data)), strict=True)]


NO_SHAPE = Shape()


@dataclass(frozen=True, slots=True)
class Form:
    """What an answer is, as the kinds' targets see it."""

    grpc: bool
    stream: bool
    jsonrpc: bool

    @classmethod
    def of(cls, exchange: Exchange) -> Form:
        response = exchange.response
        grpc = exchange.classification.binding is Binding.GRPC
        stream = response is not None and bool(
            response.events or (grpc and exchange.classification.streaming)
        )
        return cls(grpc, stream, exchange.classification.binding is Binding.JSONRPC)

    def fits(self, target: FaultTarget) -> bool:
        return {
            FaultTarget.ANY: True,
            FaultTarget.STREAM: self.stream,
            FaultTarget.SSE: self.stream and not self.grpc,
            FaultTarget.HTTP: not self.grpc,
            FaultTarget.JSONRPC: self.jsonrpc,
        }[target]


@dataclass(frozen=True, slots=True)
class Faulted:
    """An answer as a fault profile changed it."""

    answer: Answer
    shape: Shape
    changes: tuple[str, ...]
    specs: tuple[str, ...]  # as the user wrote them
    synthesized: bool  # the replayer's own answer, not the agent's changed
    cut: int | None = None  # a stream cut after this many events


@dataclass(frozen=True, slots=True)
class Cut:
    """A stream cut after `sent` of its recorded events, and what continues it."""

    step: Step
    response: Response
    sent: int
    swap: Swap  # how the stream's recorded values read as live ones
    spec: str
    form: Form
    version: Version | None
    task: str  # the live id of its task

    def fits(self, binding: Binding | None, version: str | None) -> bool:
        """Whether a SubscribeToTask on this binding and version continues it."""
        return (
            self.form.grpc == (binding is Binding.GRPC)
            and self.form.jsonrpc == (binding is Binding.JSONRPC)
            and self.version == version
        )


@dataclass
class Faults:
    """One profile at work on one replay (see the module docstring)."""

    specs: tuple[FaultSpec, ...]
    _seen: dict[str, OrderedDict[bytes, None]] = field(default_factory=dict)

    @classmethod
    def check(cls, specs: Sequence[FaultSpec], script: Script) -> Faults:
        """The profile, checked against the captures' exchanges (see the module docstring)."""
        cuts = any(spec.kind == "cut-after" for spec in specs)  # SubscribeToTask continues one
        for spec in specs:
            problem = _problem(spec, script.steps, cuts)
            if problem is not None:
                raise FaultSpecError(f"fault {spec.text!r}: {problem}; {fault_kinds_text()}")
        return cls(tuple(specs))

    # -- which specs hit ------------------------------------------------------------------

    def hit(self, step: Step, request: Request) -> tuple[FaultSpec, ...]:
        """The specs that hit `request`, answered by `step` (see `fire`)."""
        if not self.specs:
            return ()
        exchange = step.exchange
        operation = exchange.classification.operation
        return self.fire(step.number, operation, request, Form.of(exchange), exchange.response)

    def fire(
        self,
        exchange: int | None,
        operation: str | None,
        request: Request,
        form: Form,
        answer: Response | None = None,
    ) -> tuple[FaultSpec, ...]:
        """The specs that hit this request, answered with `answer` (remembered for `once` kinds)."""
        if not self.specs:
            return ()
        length = _count(answer) if answer is not None else None
        found = [
            s
            for s in self.specs
            if s.selects(exchange, operation) and form.fits(s.target) and _cuts(s, length)
        ]
        if not found:
            return ()
        identity = _identity(request)
        fired = [s for s in found if not (s.row.once and identity in self._seen.get(s.text, {}))]
        replacing = next((s for s in fired if s.kind in REPLACING), None)
        if replacing is not None:
            fired = [replacing, *(s for s in fired if s.kind.startswith("delay"))]
        for spec in fired:
            if spec.row.once:
                seen = self._seen.setdefault(spec.text, OrderedDict())
                seen[identity] = None
                if len(seen) > MEMORY:
                    seen.popitem(last=False)
        return tuple(sorted(fired, key=lambda s: ORDER.index(s.kind)))

    # -- what they do ---------------------------------------------------------------------

    def apply(self, fired: Sequence[FaultSpec], answer: Answer) -> Faulted:
        faulted = Faulted(answer, NO_SHAPE, (), (), False)
        for spec in fired:  # each kind gives the answer changed, and the change in words
            faulted, change = _APPLY[spec.kind](spec, faulted)
            changes, specs = (*faulted.changes, change), (*faulted.specs, spec.text)
            faulted = replace(faulted, changes=changes, specs=specs)
        return faulted


def cut_of(step: Step, sent: int, swap: Swap, fired: Iterable[FaultSpec]) -> Cut | None:
    """`step`'s stream cut after `sent` events, for a SubscribeToTask to continue (None: none)."""
    response = step.exchange.response
    spec = next((s.text for s in fired if s.kind == "cut-after"), None)
    if response is None or spec is None or sent == 0:
        return None
    task = fold_task(_documents(response, sent))
    recorded = task.get("id") if task else None
    if not isinstance(recorded, str):
        return None
    form, version = Form.of(step.exchange), step.exchange.classification.version
    live = swap.text(recorded)
    return Cut(step, response, sent, swap, spec, form, version, live)


def moved_on(cut: Cut, faulted: Faulted) -> Cut | None:
    """The cut after its continuation went out: None when whole, else moved on by what was got."""
    if faulted.cut is None:
        return None
    more = max(faulted.cut - 1, 0)  # the snapshot was the first event
    return replace(cut, sent=min(cut.sent + more, _count(cut.response)))


def continuation(cut: Cut) -> tuple[Response, str]:
    """A SubscribeToTask's answer after `cut`: the task as it stood, then the rest; and in words."""
    response, total = cut.response, _count(cut.response)
    task = fold_task(_documents(response, cut.sent)) or {}
    start = _offsets(response)[cut.sent - 1]
    if response.events:
        first = next(e for e in response.events if _is_task(event_data(e.lines)))
        text = dumps_like(
            event_data(first.lines), with_task(parse_json(event_data(first.lines)), task)
        )
        events = (SseEvent(0, _with_data(first.lines, text)),)
        rest = tuple(
            replace(e, offset_us=max(e.offset_us - start, 0)) for e in response.events[cut.sent :]
        )
        response = replace(response, events=events + rest)
    else:
        head = next(m for m in response.messages if _is_task(m.json))
        assert head.json is not None
        snapshot = GrpcMessage(
            0,
            json=dumps_like(head.json, with_task(parse_json(head.json), task)),
            type_name=head.type_name,
        )
        rest_messages = tuple(
            replace(m, offset_us=max(m.offset_us - start, 0)) for m in response.messages[cut.sent :]
        )
        response = replace(response, messages=(snapshot, *rest_messages))
    after = f", then its recorded events {cut.sent + 1} to {total}" if cut.sent < total else ""
    what = (
        f"the task as it stood when the stream of exchange #{cut.step.number} was cut "
        f"(fault {cut.spec!r}), synthesized from its recorded events 1 to {cut.sent}{after}, "
        "then the end"
    )
    return response, what


# -- each kind ------------------------------------------------------------------------------


def _status(spec: FaultSpec, faulted: Faulted) -> tuple[Faulted, str]:
    status = spec.value
    assert isinstance(status, FaultStatus)
    if isinstance(faulted.answer, GrpcAnswer):
        name = status.grpc or grpc_status_for_http(status.http or 500)
        how = "" if status.grpc else f" (as a gRPC client reads HTTP {status.http})"
        text = f"{name}{how}: fault {spec.text!r} asked of the replayer"
        answer: Answer = GrpcAnswer((), (), GRPC_STATUS_CODES[name], text, status.headers)
        said = f"gRPC {name}{how}"
    else:
        code = status.http_status
        phrase = standard_reason(code)
        headers = status.headers or (RETRY_AFTER if code in (429, 503) else ())
        body = f"{code} {phrase}: fault {spec.text!r} asked of the replayer\n".encode()
        content = (("content-type", "text/plain; charset=utf-8"),)
        answer = HttpAnswer(code, phrase, (*content, *headers), body)
        said = f"HTTP {code} {phrase}" + "".join(f", {k}: {v}" for k, v in headers)
    change = (
        f"{said} instead of the recorded answer (fault {spec.text!r}); the request was not "
        "carried out: an identical request next is answered as recorded"
    )
    return replace(faulted, answer=answer, synthesized=True), change


def _reset(spec: FaultSpec, faulted: Faulted) -> tuple[Faulted, str]:
    if isinstance(faulted.answer, GrpcAnswer):
        text = f"connection reset: fault {spec.text!r} asked of the replayer"
        answer: Answer = GrpcAnswer((), (), UNAVAILABLE, text, ())
        change = "the call ended UNAVAILABLE before any message (grpcio cannot reset a connection)"
        shape = faulted.shape
    else:
        answer, shape = faulted.answer, replace(faulted.shape, reset=True)
        change = "the connection reset before any byte of the answer"
    change += f" (fault {spec.text!r}); the request was not carried out"
    return replace(faulted, answer=answer, shape=shape, synthesized=True), change


def _cut(spec: FaultSpec, faulted: Faulted) -> tuple[Faulted, str]:
    count = spec.value
    assert isinstance(count, int)
    answer = faulted.answer
    if isinstance(answer, GrpcAnswer):
        total = len(answer.messages)
        text = f"connection dropped: fault {spec.text!r} asked of the replayer"
        answer = GrpcAnswer(answer.initial, answer.messages[:count], UNAVAILABLE, text, ())
        how, shape = "the call ended UNAVAILABLE", faulted.shape
    else:
        total = len(answer.events)
        answer = replace(answer, events=answer.events[:count])
        how, shape = "the connection dropped", replace(faulted.shape, drop=True)
    sent = min(count, total)
    change = f"the stream cut after {sent} of its {total} events: {how} (fault {spec.text!r})"
    return replace(faulted, answer=answer, shape=shape, cut=sent), change


def _delay(spec: FaultSpec, faulted: Faulted) -> tuple[Faulted, str]:
    seconds = spec.value
    assert isinstance(seconds, float)
    between = spec.kind == "delay-events"
    shape = (
        replace(faulted.shape, gap=faulted.shape.gap + seconds)
        if between
        else replace(faulted.shape, delay=faulted.shape.delay + seconds)
    )
    where = "between events" if between else "before the first byte"
    change = f"{seconds:g} s {where} (fault {spec.text!r})"
    return replace(faulted, shape=shape), change


def _framing(spec: FaultSpec, faulted: Faulted) -> tuple[Faulted, str]:
    variants = spec.value
    answer = faulted.answer
    assert isinstance(variants, tuple) and isinstance(answer, HttpAnswer)
    writes = reframe([data for _, data in answer.events], variants)
    events = tuple(
        (offset, b"".join(pieces))
        for (offset, _), pieces in zip(answer.events, writes, strict=True)
    )
    shape = faulted.shape
    if "split" in variants:
        splits = tuple(
            tuple(itertools.accumulate(len(p) for p in pieces[:-1])) for pieces in writes
        )
        shape = replace(shape, splits=splits, pause=SPLIT_PAUSE)
    change = f"the same events framed {'+'.join(variants)} (fault {spec.text!r})"
    return replace(faulted, answer=replace(answer, events=events), shape=shape), change


def _envelope(spec: FaultSpec, faulted: Faulted) -> tuple[Faulted, str]:
    answer = faulted.answer
    assert isinstance(answer, HttpAnswer)
    how = str(spec.value)
    if answer.events:
        events = tuple(
            (offset, _event_changed(data, how, first=n == 0))
            for n, (offset, data) in enumerate(answer.events)
        )
        answer = replace(answer, events=events)
    else:
        answer = replace(answer, body=_body_changed(answer.body, how))
    where = "its first event's data" if how == "truncated" and answer.events else None
    what = {
        "no-jsonrpc": "the `jsonrpc` member left out",
        "wrong-id": "the JSON-RPC `id` changed to one the client did not send",
        "truncated": f"{where or 'the JSON body'} cut in half",
    }[how]
    change = f"{what} (fault {spec.text!r}); the request was not carried out"
    return replace(faulted, answer=answer), change


_APPLY: dict[str, Callable[[FaultSpec, Faulted], tuple[Faulted, str]]] = {
    "status": _status,
    "reset": _reset,
    "cut-after": _cut,
    "delay": _delay,
    "delay-events": _delay,
    "framing": _framing,
    "envelope": _envelope,
}


# -- small pure helpers ---------------------------------------------------------------------


def _problem(spec: FaultSpec, steps: Sequence[Step], cuts: bool) -> str | None:
    """Why `spec` can never do what it says to these exchanges (None: it can)."""
    number = spec.exchange
    chosen = [s for s in steps if spec.selects(s.number, s.exchange.classification.operation)]
    if number is not None:
        if not chosen:
            numbers = sorted(s.number for s in steps)
            held = f"#{numbers[0]} to #{numbers[-1]}" if numbers else "none"
            return f"the captures hold no exchange #{number} (they hold {held})"
        if len(chosen) > 1:
            return f"#{number} names an exchange of several captures: replay it alone"
    fitting = [s for s in chosen if Form.of(s.exchange).fits(spec.target)]
    if number is not None and not fitting:
        return f"{spec.kind} applies to {spec.target.value}, and exchange #{number} is not one"
    if not fitting:  # but a cut stream's continuation, which no capture holds
        if cuts and spec.operation == "SubscribeToTask":
            return None
        return (
            f"the captures hold no {spec.operation} exchange it applies to ({spec.kind} "
            f"applies to {spec.target.value})"
        )
    if spec.kind != "cut-after" or any(_cuts(spec, _count(_answer(s))) for s in fitting):
        return None
    if number is not None:
        return f"exchange #{number} has {_count(_answer(fitting[0]))} events: nothing to cut"
    return f"the captures hold no {spec.operation} exchange of more than {spec.value} events"


def _cuts(spec: FaultSpec, length: int | None) -> bool:
    """Whether `spec` does anything to an answer of `length` events (a cut: only a longer one)."""
    if spec.kind != "cut-after" or length is None:
        return True
    assert isinstance(spec.value, int)
    return spec.value < length


def _answer(step: Step) -> Response:
    assert step.exchange.response is not None  # a step is an exchange with an answer
    return step.exchange.response


def _body_changed(body: bytes, how: str) -> bytes:
    if how == "truncated":
        return body[: len(body) // 2]
    text = body.decode("utf-8", "surrogateescape")
    changed = _json_changed(text, how)
    return changed.encode("utf-8", "surrogateescape") if changed is not None else body


def _event_changed(data: bytes, how: str, first: bool) -> bytes:
    framer = SseFramer()
    blocks = framer.feed(data)
    if not blocks or (how == "truncated" and not first):
        return data
    text = event_data(blocks[0])
    changed = text[: len(text) // 2] if how == "truncated" else _json_changed(text, how)
    if changed is None:
        return data
    return render_events([_with_data(blocks[0], changed), *blocks[1:]], framer.newline)


def _json_changed(text: str, how: str) -> str | None:
    document = parse_json(text)
    if not isinstance(document, dict) or "jsonrpc" not in document:
        return None
    value = document.get("id")
    if how == "no-jsonrpc":
        del document["jsonrpc"]
    elif isinstance(value, bool) or not isinstance(value, int | str):
        document["id"] = "not-the-request-id"
    else:
        document["id"] = value + 1000 if isinstance(value, int) else f"{value}-not-yours"
    return dumps_like(text, document)


def _with_data(lines: Iterable[str], text: str) -> tuple[str, ...]:
    """An event block with its data lines replaced by `text`, without `id:` lines and comments."""
    out: list[str] = []
    placed = False
    for line in lines:
        name = line.partition(":")[0]
        if line.startswith(":") or name == "id":
            continue
        if name != "data":
            out.append(line)
        elif not placed:
            out.extend(f"data: {part}" for part in text.split("\n"))
            placed = True
    return tuple(out)


def _documents(response: Response, count: int) -> list[Json]:
    texts = [event_data(e.lines) for e in response.events[:count]]
    texts += [m.json or "" for m in response.messages[:count]]
    return [parse_json(text) for text in texts]


def _is_task(text: str | None) -> bool:
    found = stream_payload(parse_json(text or ""))
    return found is not None and found[0] == "task"


def _count(response: Response) -> int:
    return len(response.events) or len(response.messages)


def _offsets(response: Response) -> list[int]:
    return [e.offset_us for e in response.events] or [m.offset_us for m in response.messages]


def _identity(request: Request) -> bytes:
    """What makes two requests the same request (a retry): all but a JSON-RPC `id`."""
    document = parse_json(request.body) if request.body else None
    if isinstance(document, dict) and "jsonrpc" in document:
        document = {k: v for k, v in document.items() if k != "id"}
        body = json.dumps(document, sort_keys=True).encode()
    else:
        body = request.body
    digest = hashlib.sha256()
    for part in (request.method, request.target, *(m.json or "" for m in request.messages)):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    for message in request.messages:
        digest.update(message.raw or b"")
    digest.update(body)
    return digest.digest()
