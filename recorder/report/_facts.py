"""What the report says about each exchange: its lanes, label, outcome, ticks and flags (pure).

Outcome, first rule that applies: no response; the A2A error the classifier named; a gRPC
status other than OK; an HTTP status of 400 or more; an error the answer carried; then what
`a2a-recorder show` says the answer carried, else its status.  A push delivery's outcome is
what it delivered, unless the webhook refused it.  Flags are the notes a reader must not miss,
found by their first words (`FLAGS`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from recorder.capture import Exchange, GrpcMessage, Response, SseEvent
from recorder.protocol import (
    GRPC_STATUS_NAMES,
    NOTE_CLIENT_CLOSED,
    NOTE_RECORDER_CUT,
    NOTE_STREAM_RESET,
    NOTE_STREAM_TRUNCATED,
    NOTHING,
    PUSH_DELIVERY,
    Answer,
    event_data,
    event_type,
    read_answer,
)
from recorder.show import outcome_cells


class Lane(StrEnum):
    """The diagram's lanes, left to right."""

    CLIENT = "client"
    RECORDER = "recorder"
    AGENT = "agent"
    WEBHOOK = "webhook"


class Tone(StrEnum):
    OK = "ok"
    WARN = "warn"  # worth a look: a failed task, a cut stream
    ERROR = "error"  # an error answer or no answer
    MUTED = "muted"  # not A2A, keep-alive comments


@dataclass(frozen=True, slots=True)
class Flag:
    word: str  # the badge: "secret", "cut", ...
    text: str  # the note or error in full
    tone: Tone


# Note prefix -> badge word and tone.  Order matters only for display.
FLAGS: tuple[tuple[str, str, Tone], ...] = (
    ("possible secret:", "secret?", Tone.ERROR),
    (NOTE_STREAM_TRUNCATED, "cut", Tone.WARN),
    (NOTE_STREAM_RESET, "cut", Tone.WARN),
    (NOTE_RECORDER_CUT, "cut", Tone.WARN),
    (NOTE_CLIENT_CLOSED, "closed", Tone.WARN),
    ("card signature no longer verifies", "signature", Tone.WARN),
    ("compressed event stream not framed", "unframed", Tone.WARN),
    ("card rewritten", "rewritten", Tone.MUTED),
)
REDACTED_NOTE = "redacted:"
# Task states shown as a warning (the task ended badly, but the protocol worked).
BAD_STATES = frozenset({"FAILED", "REJECTED"})


@dataclass(frozen=True, slots=True)
class Tick:
    """One stream event or gRPC message of a response, at its recorded offset."""

    index: int  # 0-based, in the response's order
    offset_us: int
    label: str
    tone: Tone


@dataclass(frozen=True, slots=True)
class ExchangeFacts:
    number: int
    source: Lane
    target: Lane
    binding: str  # "JSONRPC", "HTTP+JSON", "GRPC", "HTTP" or "-"
    operation: str  # the A2A operation, or "not A2A"
    task_id: str | None
    outcome: str
    tone: Tone
    started_us: int
    duration_us: int
    ticks: tuple[Tick, ...]
    flags: tuple[Flag, ...]
    redacted: bool

    @property
    def is_push(self) -> bool:
        return self.target is Lane.WEBHOOK


def exchange_facts(exchange: Exchange) -> ExchangeFacts:
    c = exchange.classification
    push = c.operation == PUSH_DELIVERY
    answers = _answers(exchange, push)
    outcome, tone = _outcome(exchange, answers)
    ticks = _ticks(exchange.response) if exchange.response is not None else ()
    return ExchangeFacts(
        number=exchange.number,
        source=Lane.AGENT if push else Lane.CLIENT,
        target=Lane.WEBHOOK if push else Lane.AGENT,
        binding=c.binding_name or "-",
        operation=c.operation or "not A2A",
        task_id=c.task_id or next((a.task_id for a in answers if a.task_id), None),
        outcome=outcome,
        tone=Tone.MUTED if c.operation is None and tone is Tone.OK else tone,
        started_us=exchange.started_us,
        duration_us=exchange.duration_us,
        ticks=ticks,
        flags=_flags(exchange),
        redacted=any(note.startswith(REDACTED_NOTE) for note in exchange.notes),
    )


def short_id(task_id: str | None, width: int = 8) -> str:
    if not task_id:
        return ""
    return task_id if len(task_id) <= width else task_id[:width] + "…"


def _answers(exchange: Exchange, push: bool) -> list[Answer]:
    """The A2A objects the exchange carried, in order: a delivery's body, else the response's."""
    if push:
        return [read_answer(exchange.request.body)]
    response = exchange.response
    if response is None:
        return []
    if response.events:
        return [read_answer(event_data(e.lines)) for e in response.events]
    if response.messages:
        return [read_answer(m.json) for m in response.messages]
    return [read_answer(response.body)]


def _outcome(exchange: Exchange, answers: Sequence[Answer]) -> tuple[str, Tone]:
    response = exchange.response
    if response is None:
        return "no response", Tone.ERROR
    failure = exchange.classification.error or _status_failure(response)
    if failure is not None:
        return failure, Tone.ERROR
    said = _last_said(answers)
    if said.kind == "error":
        return "error", Tone.ERROR
    tone = Tone.WARN if exchange.error else Tone.OK
    status, carried = outcome_cells(exchange)  # the same words as `show`'s columns
    if carried:
        return carried, Tone.WARN if said.state in BAD_STATES else tone
    return status, tone


def _last_said(answers: Sequence[Answer]) -> Answer:
    """The last answer with a state, else the last A2A one: a stream ends in its final word."""
    named = [a for a in answers if a.kind is not None]
    with_state = [a for a in named if a.state is not None or a.kind == "error"]
    return (with_state or named or [NOTHING])[-1]


def grpc_status(response: Response) -> str | None:
    """`grpc-status` from the trailers, or from the headers of a trailers-only response."""
    for name, value in (*response.trailers, *response.headers):
        if name.lower() == "grpc-status":
            return value.strip()
    return None


def _status_failure(response: Response) -> str | None:
    status = grpc_status(response)
    if status is not None and status != "0":
        code = int(status) if status.isdigit() else -1
        return GRPC_STATUS_NAMES.get(code, f"grpc-status {status}")
    return str(response.status) if response.status >= 400 else None


def _ticks(response: Response) -> tuple[Tick, ...]:
    if response.events:
        return tuple(_event_tick(i, e) for i, e in enumerate(response.events))
    return tuple(_message_tick(i, m) for i, m in enumerate(response.messages))


def _event_tick(index: int, event: SseEvent) -> Tick:
    if all(line.startswith(":") for line in event.lines):
        return Tick(index, event.offset_us, event.lines[0] if event.lines else "", Tone.MUTED)
    kind = event_type(event.lines)
    answer = read_answer(event_data(event.lines))
    tone = Tone.ERROR if kind == "error" or answer.kind == "error" else Tone.OK
    return Tick(index, event.offset_us, _answer_label(answer, f"event: {kind}"), tone)


def _message_tick(index: int, message: GrpcMessage) -> Tick:
    if message.json is None:
        size = len(message.raw or b"")
        return Tick(index, message.offset_us, f"undecoded, {size} bytes", Tone.MUTED)
    label = _answer_label(read_answer(message.json), message.type_name or "message")
    return Tick(index, message.offset_us, label, Tone.OK)


def _answer_label(answer: Answer, fallback: str) -> str:
    words = [answer.kind or fallback, answer.state, answer.detail]
    return " ".join(word for word in words if word)


def _flags(exchange: Exchange) -> tuple[Flag, ...]:
    flags = [
        Flag(word, note, tone)
        for note in exchange.notes
        for prefix, word, tone in FLAGS
        if note.startswith(prefix)
    ]
    if exchange.response is None:
        why = f": {exchange.error}" if exchange.error else ""
        flags.insert(0, Flag("no response", f"no response{why}", Tone.ERROR))
    elif exchange.error:
        flags.insert(0, Flag("error", f"error: {exchange.error}", Tone.WARN))
    return tuple(flags)
