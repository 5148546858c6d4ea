"""An exchange's request and response as the detail panel shows them, as text (pure).

JSON is shown pretty only when re-serialising it gives back the wire text, so the pretty form
hides nothing; other UTF-8 text verbatim; anything else as base64, with a note.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from recorder.capture import GrpcMessage, Headers, Request, Response, SseEvent
from recorder.protocol import event_data
from recorder.report._facts import Tick, Tone
from recorder.report._units import offset_text

# A body longer than this is cut in the page (the capture keeps it whole).
MAX_BODY_CHARS = 256 * 1024
BASE64_WIDTH = 76
_NOT_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class Body:
    form: str  # "json", "text", "base64"
    text: str
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Block:
    """One stream event or gRPC message: a title, its own lines, its data."""

    index: int
    title: str
    tone: Tone
    lines: tuple[str, ...]
    body: Body | None


@dataclass(frozen=True, slots=True)
class Side:
    """A request or a response: start line, headers, then a body or blocks, then trailers."""

    start_line: str
    headers: Headers
    body: Body | None
    blocks: tuple[Block, ...] = ()
    trailers: Headers = ()


def request_side(request: Request) -> Side:
    return Side(
        f"{request.method} {request.target} {request.http_version}",
        request.headers,
        show_body(request.body),
        tuple(_message_block(i, m, None) for i, m in enumerate(request.messages)),
    )


def response_side(response: Response | None, ticks: Sequence[Tick]) -> Side | None:
    """The response's side; `ticks` are its events' or messages' (`ExchangeFacts.ticks`)."""
    if response is None:
        return None
    status = f"{response.http_version} {response.status} {response.reason}".rstrip()
    if response.events:
        blocks = tuple(_event_block(e, t) for e, t in zip(response.events, ticks, strict=True))
        return Side(status, response.headers, None, blocks, trailers=response.trailers)
    blocks = tuple(
        _message_block(i, m, t)
        for (i, m), t in zip(enumerate(response.messages), ticks, strict=True)
    )
    return Side(status, response.headers, show_body(response.body), blocks, response.trailers)


def show_body(data: bytes) -> Body | None:
    if not data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return _base64(data, "not UTF-8")
    if _NOT_TEXT.search(text):
        return _base64(data, "binary")
    return show_text(text)


def show_text(text: str) -> Body:
    pretty = pretty_json(text)
    if pretty is not None:
        return _cut(Body("json", pretty))
    return _cut(Body("text", text))


def pretty_json(text: str) -> str | None:
    """Pretty JSON for `text`, if serialising its parse gives `text` back (else None)."""
    try:
        document = json.loads(text, object_pairs_hook=_no_duplicates)
    except (ValueError, RecursionError):
        return None
    if text.rstrip("\n") not in _serialisations(document):
        return None
    return json.dumps(document, indent=2, ensure_ascii=False)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document = dict(pairs)
    if len(document) != len(pairs):
        raise ValueError("duplicate keys")  # the pretty form would hide one of them
    return document


def _serialisations(document: Any) -> set[str]:
    return {
        json.dumps(document, separators=separators, ensure_ascii=ascii_only)
        for separators in ((",", ":"), (", ", ": "))
        for ascii_only in (False, True)
    }


def _base64(data: bytes, why: str) -> Body:
    encoded = base64.b64encode(data).decode("ascii")
    lines = [encoded[i : i + BASE64_WIDTH] for i in range(0, len(encoded), BASE64_WIDTH)]
    return _cut(Body("base64", "\n".join(lines), f"{why}, {len(data)} bytes, shown as base64"))


def _cut(body: Body) -> Body:
    if len(body.text) <= MAX_BODY_CHARS:
        return body
    note = f"first {MAX_BODY_CHARS} of {len(body.text)} characters shown; the capture has all"
    return Body(body.form, body.text[:MAX_BODY_CHARS], "; ".join(filter(None, (body.note, note))))


def _event_block(event: SseEvent, tick: Tick) -> Block:
    own = tuple(line for line in event.lines if not line.startswith("data:"))
    data = event_data(event.lines)
    has_data = len(own) < len(event.lines)
    title = f"event {tick.index + 1} · {offset_text(event.offset_us)} · {tick.label}"
    return Block(tick.index, title, tick.tone, own, show_text(data) if has_data else None)


def _message_block(index: int, message: GrpcMessage, tick: Tick | None) -> Block:
    words = [
        f"message {index + 1}",
        offset_text(message.offset_us),
        message.type_name or "type unknown",
        "compressed" if message.compressed else "",
    ]
    if tick is not None:
        words.append(tick.label)
    if message.json is not None:
        body: Body | None = show_text(message.json) if message.json else None
    else:
        body = _base64(message.raw or b"", "undecoded") if message.raw else None
    title = " · ".join(word for word in words if word)
    return Block(index, title, tick.tone if tick else Tone.OK, (), body)
