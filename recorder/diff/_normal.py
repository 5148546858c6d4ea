"""The normalised model (exchanges, requests, responses, events, bodies) and how a capture
becomes it: `normalise_capture` runs both passes of a `Normaliser` over a capture, discovery
over every exchange first, in start order, then substitution.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from recorder.capture import Capture, Exchange, GrpcMessage, Headers, Request, Response, SseEvent
from recorder.diff._normalise import Normaliser
from recorder.protocol import NOT_JSON, UNKNOWN, Json, event_data, event_fields, parse_json


@dataclass(frozen=True, slots=True)
class Body:
    """A body (or event data, or gRPC message) after normalisation."""

    kind: str  # "json", "text", "bytes" (value: `<N bytes sha256:…>`) or "empty" (value: None)
    value: Json = None


EMPTY = Body("empty")


@dataclass(frozen=True, slots=True)
class NormalEvent:
    """One SSE event: `event` type ("message" when absent), data, `id:` field, comment lines."""

    event: str
    data: Body
    id: str | None = None
    comments: tuple[str, ...] = ()
    offset_us: int = 0


@dataclass(frozen=True, slots=True)
class NormalGrpc:
    body: Body
    type_name: str | None = None
    compressed: bool = False
    offset_us: int = 0


@dataclass(frozen=True, slots=True)
class NormalRequest:
    method: str
    target: str
    headers: Headers  # lower-case names, volatile ones removed, values normalised
    body: Body = EMPTY
    messages: tuple[NormalGrpc, ...] = ()


@dataclass(frozen=True, slots=True)
class NormalResponse:
    status: int
    headers: Headers
    body: Body = EMPTY
    events: tuple[NormalEvent, ...] = ()  # comment-only blocks (`: ping`) are counted apart
    comment_blocks: int = 0
    newline: str = "\n"
    messages: tuple[NormalGrpc, ...] = ()
    trailers: Headers = ()


@dataclass(frozen=True, slots=True)
class NormalExchange:
    """An exchange with its volatile values replaced; `key` is what alignment compares."""

    number: int
    key: str
    binding: str | None
    version: str | None
    request: NormalRequest
    response: NormalResponse | None
    error: str | None = None
    started_us: int = 0
    duration_us: int = 0


# SSE event ids are the transport's (Go: a fresh uuid per event; Java: a counter): volatile.
EVENT_ID = "<event-id>"


def exchange_key(exchange: Exchange) -> str:
    """What alignment compares: the A2A operation (v1.0 name), else what the wire named."""
    c = exchange.classification
    if c.operation == UNKNOWN and c.method:
        return f"{UNKNOWN} {c.method}"
    if c.operation is not None:
        return c.operation
    return f"(not A2A) {exchange.request.method}"


def normalise_body(data: bytes | str, normaliser: Normaliser) -> Body:
    """Parse and normalise wire bytes or decoded text: JSON if it parses (lone surrogates kept),
    else text, else (not UTF-8) a byte summary."""
    if not data:
        return EMPTY
    parsed = parse_json(data)
    if parsed is not NOT_JSON:
        return Body("json", normaliser.json(parsed))
    if isinstance(data, str):
        return Body("text", normaliser.text(data))
    try:
        return Body("text", normaliser.text(data.decode("utf-8")))
    except UnicodeDecodeError:
        digest = hashlib.sha256(data).hexdigest()[:12]
        return Body("bytes", f"<{len(data)} bytes sha256:{digest}>")


def _normal_event(event: SseEvent, normaliser: Normaliser) -> NormalEvent:
    fields = event_fields(event.lines)
    return NormalEvent(
        event=fields.event,
        data=normalise_body(event_data(event.lines), normaliser),
        id=EVENT_ID if fields.id is not None else None,
        comments=fields.comments,
        offset_us=event.offset_us,
    )


def _normal_grpc(message: GrpcMessage, normaliser: Normaliser) -> NormalGrpc:
    content = message.json if message.json is not None else message.raw or b""
    body = normalise_body(content, normaliser)
    return NormalGrpc(body, message.type_name, message.compressed, message.offset_us)


def normalise_request(request: Request, normaliser: Normaliser) -> NormalRequest:
    return NormalRequest(
        method=request.method,
        target=normaliser.target(request.target),
        headers=normaliser.headers(request.headers),
        body=normalise_body(request.body, normaliser),
        messages=tuple(_normal_grpc(m, normaliser) for m in request.messages),
    )


def normalise_response(response: Response, normaliser: Normaliser) -> NormalResponse:
    events = [_normal_event(e, normaliser) for e in response.events]
    data_events = tuple(e for e in events if not _comment_only(e))
    return NormalResponse(
        status=response.status,
        headers=normaliser.headers(response.headers),
        body=normalise_body(response.body, normaliser),
        events=data_events,
        comment_blocks=len(events) - len(data_events),
        newline=response.newline,
        messages=tuple(_normal_grpc(m, normaliser) for m in response.messages),
        trailers=normaliser.headers(response.trailers),
    )


def _comment_only(event: NormalEvent) -> bool:
    return bool(event.comments) and event.data is EMPTY and event.id is None


def normalise_exchange(exchange: Exchange, normaliser: Normaliser) -> NormalExchange:
    """One exchange through a normaliser that has already observed it."""
    c = exchange.classification
    response = exchange.response
    return NormalExchange(
        number=exchange.number,
        key=exchange_key(exchange),
        binding=c.binding_name,
        version=c.version.value if c.version else None,
        request=normalise_request(exchange.request, normaliser),
        response=normalise_response(response, normaliser) if response is not None else None,
        error=normaliser.text(exchange.error) if exchange.error else None,
        started_us=exchange.started_us,
        duration_us=exchange.duration_us,
    )


def normalise_capture(
    capture: Capture, normaliser: Normaliser | None = None
) -> tuple[NormalExchange, ...]:
    """Every exchange of a capture, normalised; discovery runs over all of them first, so an id
    named in free text before its own field appears is still replaced."""
    normaliser = normaliser if normaliser is not None else Normaliser()
    exchanges = in_start_order(capture)
    for exchange in exchanges:
        normaliser.observe_exchange(exchange)
    return tuple(normalise_exchange(e, normaliser) for e in exchanges)


def in_start_order(capture: Capture) -> list[Exchange]:
    """The exchanges in the order they started: a scenario fixes that, not the completion order
    a capture lists them in (which concurrency varies from run to run)."""
    return sorted(capture.exchanges, key=lambda e: (e.started_us, e.number))
