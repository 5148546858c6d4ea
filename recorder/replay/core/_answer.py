"""Recorded answers with live values in: what the faces send (pure).

Each recorded answer is prepared once, when first served (`recorder.script.prepare`), then
rendered with the live request's swap and JSON-RPC id: work in the size of the answer, never a
JSON round trip.  Headers are swapped as text; bodies are stored decoded and the server
recomputes framing, so `DROPPED_HEADERS` are never replayed.  A served card points at the
replayer, its ETag recomputed and `If-None-Match` answered (`revalidated`).
"""

from __future__ import annotations

import http
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass, replace

from recorder.capture import GrpcMessage, Headers, Response
from recorder.protocol import card_etag, etag_matches
from recorder.script import (
    MIN_EMBEDDED,
    Embedded,
    Json,
    Lookup,
    Step,
    Template,
    embedded_pairs,
    prepare,
    swap_text,
    wire_bytes,
)

# Never replayed as recorded: the server recomputes framing, and bodies are stored decoded.
DROPPED_HEADERS = frozenset(
    {"content-length", "transfer-encoding", "content-encoding", "connection", "keep-alive", "date"}
)
# Headers a 304 keeps from the 200 it stands for (RFC 9110 §15.4.5).
NOT_MODIFIED_KEEPS = frozenset(
    {"cache-control", "content-location", "date", "etag", "expires", "vary", "last-modified"}
)
Rewrite = Callable[[bytes], bytes]


@dataclass(slots=True)  # made per request: not frozen, which costs
class HttpAnswer:
    """What to send over HTTP: status, headers, and either a body or timed SSE events."""

    status: int
    reason: str
    headers: Headers
    body: bytes
    events: tuple[tuple[int, bytes], ...] = ()  # (offset in µs, event bytes with terminator)


@dataclass(frozen=True, slots=True)
class _Event:
    offset_us: int
    lines: tuple[str | tuple[str, Template], ...]  # a data line: (its "data: " head, template)


@dataclass(frozen=True, slots=True)
class Prepared:
    """One recorded HTTP answer cut for rendering; `embedded`: ids inside longer strings of it."""

    headers: Headers
    body: Template | None
    events: tuple[_Event, ...]
    newline: str
    embedded: tuple[str, ...] = ()
    swapped_headers: bool = True  # whether a swap may change a header value


def prepare_http(
    response: Response,
    *,
    jsonrpc: bool,
    ids: Iterable[str] = (),
    swappable: Container[str] | None = None,
) -> Prepared:
    """`response` cut for rendering; `ids` are those the answer may quote in longer text.  Given
    `swappable` (every value a live lookup may have), strings that can never change are left out
    of the holes: rendering works in what may change, not in the size of the answer."""
    headers = tuple((k, v) for k, v in response.headers if k.lower() not in DROPPED_HEADERS)
    body = None
    if response.body:
        text = response.body.decode("utf-8", "surrogateescape")
        body = prepare(text, jsonrpc=jsonrpc)
    events = tuple(
        _Event(event.offset_us, tuple(_line(line, jsonrpc) for line in event.lines))
        for event in response.events
    )
    texts = [v for _, v in headers]
    lines = [line[1] for e in events for line in e.lines if isinstance(line, tuple)]
    for template in (body, *lines):
        if template is not None:
            texts += [hole.value for hole in template.holes]
    embedded = tuple(
        i
        for i in dict.fromkeys(ids)
        if len(i) >= MIN_EMBEDDED and any(i in t and i != t for t in texts)
    )
    if swappable is None:
        return Prepared(headers, body, events, response.newline, embedded)
    body = _changeable(body, swappable, embedded) if body is not None else None
    events = tuple(
        _Event(e.offset_us, tuple(_changeable_line(x, swappable, embedded) for x in e.lines))
        for e in events
    )
    swapped = any(v in swappable or any(i in v for i in embedded) for _, v in headers)
    return Prepared(headers, body, events, response.newline, embedded, swapped)


def _changeable(template: Template, swappable: Container[str], embedded: Sequence[str]) -> Template:
    """`template` with only the holes a swap may change (a whole value, or an id inside one)."""
    holes = tuple(
        hole
        for hole in template.holes
        if hole.value in swappable or any(i in hole.value for i in embedded)
    )
    return template if len(holes) == len(template.holes) else replace(template, holes=holes)


def _changeable_line(
    line: str | tuple[str, Template], swappable: Container[str], embedded: Sequence[str]
) -> str | tuple[str, Template]:
    return line if isinstance(line, str) else (line[0], _changeable(line[1], swappable, embedded))


def _line(line: str, jsonrpc: bool) -> str | tuple[str, Template]:
    name, sep, value = line.partition(":")
    if name != "data" or not sep:
        return line
    space = " " if value.startswith(" ") else ""
    return f"data:{space}", prepare(value[len(space) :], jsonrpc=jsonrpc)


def render_http(
    response: Response, prepared: Prepared, lookup: Lookup, jsonrpc_id: Json = None
) -> HttpAnswer:
    pairs = [(r, v) for r in prepared.embedded if (v := lookup(r)) is not None]
    embedded = embedded_pairs(pairs) if pairs else ()
    headers = prepared.headers
    if prepared.swapped_headers:
        headers = tuple((k, swap_text(v, lookup, embedded)) for k, v in headers)
    body = b""
    if prepared.body is not None:
        body = wire_bytes(prepared.body.render(lookup, embedded, jsonrpc_id))
    events = tuple(
        (event.offset_us, _event_bytes(event, lookup, embedded, jsonrpc_id, prepared.newline))
        for event in prepared.events
    )
    return HttpAnswer(response.status, response.reason, headers, body, events)


def _event_bytes(
    event: _Event, lookup: Lookup, embedded: Embedded, jsonrpc_id: Json, newline: str
) -> bytes:
    lines = [
        line if isinstance(line, str) else line[0] + line[1].render(lookup, embedded, jsonrpc_id)
        for line in event.lines
    ]
    return wire_bytes("".join(line + newline for line in lines) + newline)


def rewrite_card_answer(answer: HttpAnswer, rewrite: Rewrite) -> HttpAnswer:
    """A card answer with its interfaces rewritten, and an ETag for the card it now serves."""
    if not answer.body:
        return answer
    served = rewrite(answer.body)
    if served == answer.body:
        return answer
    headers = tuple(
        (k, card_etag(served, v)) if k.lower() == "etag" else (k, v) for k, v in answer.headers
    )
    return HttpAnswer(answer.status, answer.reason, headers, served, answer.events)


def standard_reason(status: int) -> str:
    """The reason phrase of `status` (RFC 9110), "" for a status it has none for."""
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


def revalidated(answer: HttpAnswer, if_none_match: str | None) -> HttpAnswer:
    """`answer`, or a 304 when the client's `If-None-Match` names what it would get."""
    if if_none_match is None or answer.status != 200 or answer.events:
        return answer
    etag = next((v for k, v in answer.headers if k.lower() == "etag"), None)
    if etag is None or not etag_matches(if_none_match, etag):
        return answer
    kept = tuple((k, v) for k, v in answer.headers if k.lower() in NOT_MODIFIED_KEEPS)
    return HttpAnswer(304, "Not Modified", kept, b"")


class Answers:
    """Every recorded answer's prepared form, made when first served (one per step)."""

    def __init__(self, swappable: Container[str]) -> None:
        self.swappable = swappable  # see `prepare_http`
        self._http: dict[int, Prepared] = {}
        self._grpc: dict[int, tuple[Template | None, ...]] = {}

    def http(
        self, step: Step, response: Response, lookup: Lookup, jsonrpc: bool, jsonrpc_id: Json
    ) -> HttpAnswer:
        recorded = response is step.exchange.response
        prepared = self._http.get(step.index) if recorded else None
        if prepared is None:
            ids = (*step.response_ids, *(r.slot.value for r in step.slots))
            prepared = prepare_http(response, jsonrpc=jsonrpc, ids=ids, swappable=self.swappable)
            if recorded:
                self._http[step.index] = prepared
        return render_http(response, prepared, lookup, jsonrpc_id)

    def grpc_messages(
        self, step: Step, messages: tuple[GrpcMessage, ...]
    ) -> tuple[Template | None, ...]:
        """The messages' proto-JSON, prepared (None: a message kept as raw bytes)."""
        response = step.exchange.response
        recorded = response is not None and messages is response.messages
        found = self._grpc.get(step.index) if recorded else None
        if found is None:
            found = tuple(prepare(m.json) if m.json is not None else None for m in messages)
            if recorded:
                self._grpc[step.index] = found
        return found
