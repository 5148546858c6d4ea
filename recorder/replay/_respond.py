"""Turning a recorded HTTP response into the answer for a live request (pure).

The recorded response is served as it was, with live values put back where the recording had
its own: every recorded id, URL and token the session maps to a live value, and the JSON-RPC
`id` of the live request.  JSON keeps the recorded serialisation style (compact or spaced),
so a Python agent's replay still looks like a Python agent.

An answer is built once per (step, session state) as a `HttpTemplate`: its body and events cut
where the JSON-RPC `id` goes, so that a poll with a fresh `id` on every request costs a join,
not a JSON round trip.  Bytes never fail to encode: text that UTF-8 cannot hold (lone
surrogates from a `"\\ud800"` escape, undecodable bytes kept as surrogate escapes) is written
back as the escape or the original byte.
"""

from __future__ import annotations

import functools
import http
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from recorder.capture import JSON_FORMS, Headers, JsonForm, Response
from recorder.protocol import card_etag, etag_matches

# Never replayed as recorded: the server recomputes framing, and bodies are stored decoded.
DROPPED_HEADERS = frozenset(
    {"content-length", "transfer-encoding", "content-encoding", "connection", "keep-alive", "date"}
)
# Recorded ids shorter than this are replaced only where a whole string equals them, never
# inside longer text (an error message may quote a task id; "1" must not be replaced anywhere).
MIN_EMBEDDED = 8
# Stands in for the live JSON-RPC id while a template is built (control characters are always
# escaped by json.dumps, so the serialised form is unique and ASCII).
ID_SENTINEL = "\x01a2a-recorder-jsonrpc-id\x01"
_SENTINEL_BYTES = json.dumps(ID_SENTINEL).encode()

Json = Any
Parts = tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class HttpAnswer:
    """What to send over HTTP: status, headers, and either a body or timed SSE events."""

    status: int
    reason: str
    headers: Headers
    body: bytes
    events: tuple[tuple[int, bytes], ...] = ()  # (offset in µs, event bytes with terminator)


@dataclass(frozen=True, slots=True)
class HttpTemplate:
    """An answer with the JSON-RPC id still to fill in (`parts` are joined around it)."""

    status: int
    reason: str
    headers: Headers
    body: Parts
    events: tuple[tuple[int, Parts], ...] = ()
    static: HttpAnswer | None = None  # the answer, when there is no id to fill in

    def render(self, jsonrpc_id: Json = None) -> HttpAnswer:
        if self.static is not None:
            return self.static
        live = json_bytes(jsonrpc_id)
        return HttpAnswer(
            self.status,
            self.reason,
            self.headers,
            live.join(self.body),
            tuple((offset, live.join(parts)) for offset, parts in self.events),
        )

    @classmethod
    def of(cls, answer: HttpAnswer) -> HttpTemplate:
        return cls(
            answer.status,
            answer.reason,
            answer.headers,
            (answer.body,),
            tuple((offset, (data,)) for offset, data in answer.events),
        )


def template(
    response: Response, mapping: Mapping[str, str], *, jsonrpc: bool, rewrite: Any = None
) -> HttpTemplate:
    """The recorded `response` with recorded values swapped for live ones.

    With `jsonrpc`, each document's envelope `id` is left to `render`.  `rewrite(body)` edits
    the body once swapped (the card's URLs).
    """
    swap = Swapper(mapping, jsonrpc=jsonrpc)
    headers = tuple(
        (k, swap.text(v)) for k, v in response.headers if k.lower() not in DROPPED_HEADERS
    )
    body = swap.body(response.body)
    if rewrite is not None and body:
        served = rewrite(body)
        if served != body:
            headers = _etag_for(headers, served)
        body = served
    events = tuple(
        (event.offset_us, _cut(_event_bytes(swap.event(event.lines), response.newline)))
        for event in response.events
    )
    parts = _cut(body)
    if len(parts) == 1 and all(len(cut) == 1 for _, cut in events):
        static = HttpAnswer(
            response.status,
            response.reason,
            headers,
            body,
            tuple((offset, cut[0]) for offset, cut in events),
        )
        return HttpTemplate(response.status, response.reason, headers, parts, events, static)
    return HttpTemplate(response.status, response.reason, headers, parts, events)


def _etag_for(headers: Headers, served: bytes) -> Headers:
    # The agent's ETag names the card it served; the replayer serves another (A2A §8.6).
    return tuple((k, card_etag(served, v)) if k.lower() == "etag" else (k, v) for k, v in headers)


# Headers a 304 keeps from the 200 it stands for (RFC 9110 §15.4.5).
NOT_MODIFIED_KEEPS = frozenset(
    {"cache-control", "content-location", "date", "etag", "expires", "vary", "last-modified"}
)


def revalidated(answer: HttpAnswer, if_none_match: str | None) -> HttpAnswer:
    """`answer`, or a 304 when the client's `If-None-Match` names what it would get."""
    if if_none_match is None or answer.status != 200 or answer.events:
        return answer
    etag = next((v for k, v in answer.headers if k.lower() == "etag"), None)
    if etag is None or not etag_matches(if_none_match, etag):
        return answer
    kept = tuple((k, v) for k, v in answer.headers if k.lower() in NOT_MODIFIED_KEEPS)
    return HttpAnswer(304, "Not Modified", kept, b"")


def _cut(data: bytes) -> Parts:
    return tuple(data.split(_SENTINEL_BYTES))


def standard_reason(status: int) -> str:
    """The reason phrase of `status` (RFC 9110), "" for a status it has none for."""
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


def json_bytes(value: Json) -> bytes:
    """`value` as JSON bytes; ASCII escapes where UTF-8 cannot hold a character."""
    kind = type(value)
    if kind is int:  # the usual JSON-RPC ids, on every request: no encoder needed
        return str(value).encode()
    if kind is str and _plain(value):
        return b'"' + str(value).encode() + b'"'
    try:
        return json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value).encode("ascii")
    except (TypeError, ValueError):
        return b"null"


def wire_bytes(text: str) -> bytes:
    """Text as the bytes that carried it: surrogate escapes back to their bytes, lone
    surrogates (from JSON `\\ud800` escapes) back to their escape."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace")


def substitute_body(body: bytes, mapping: Mapping[str, str]) -> bytes:
    """A request or response body with recorded values swapped (push deliveries use this)."""
    return Swapper(mapping).body(body)


def substitute_json_text(text: str, mapping: Mapping[str, str]) -> str:
    """JSON text (a gRPC message's proto-JSON) with recorded values swapped, style kept."""
    return Swapper(mapping).json_text(text)


def substitute_text(text: str, mapping: Mapping[str, str]) -> str:
    """Plain text (a gRPC status message) with recorded values swapped, as header values are."""
    return Swapper(mapping).text(text)


def substitute_headers(headers: Iterable[tuple[str, str]], mapping: Mapping[str, str]) -> Headers:
    """Header values with recorded values swapped, inside longer values too (`Bearer <id>`)."""
    swap = Swapper(mapping)
    return tuple((k, swap.text(v)) for k, v in headers)


def _event_bytes(lines: Iterable[str], newline: str) -> bytes:
    return wire_bytes("".join(line + newline for line in lines) + newline)


def _plain(text: str) -> bool:
    """Whether JSON writes `text` as it is inside a string, in every form (printable ASCII,
    no quote, no backslash): swapping such values in the text is the same as swapping them in
    the parsed document (see Swapper.json_text)."""
    return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text


@functools.lru_cache(maxsize=4096)
def _prepared(text: str, jsonrpc: bool) -> tuple[JsonForm | None, str]:
    """A recorded JSON text's form, and the text with its envelope `id` made the sentinel."""
    form = form_of(text)
    if form is None or not jsonrpc:
        return form, text
    document = json.loads(text)
    if isinstance(document, dict) and "jsonrpc" in document and "id" in document:
        document["id"] = ID_SENTINEL
        return form, dumps_like(form, document) or text
    return form, text


@functools.lru_cache(maxsize=4096)
def form_of(text: str) -> JsonForm | None:
    """The serialisation style of a recorded JSON text (cached: the same texts recur)."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return next((f for f in JSON_FORMS.values() if dumps_like(f, value) == text), None)


def dumps_like(form: JsonForm, value: Json) -> str | None:
    try:
        return form.dumps(value)
    except (ValueError, RecursionError):
        return None


class Swapper:
    """Swaps recorded values for live ones in text, JSON and SSE lines.

    A string equal to a recorded value becomes the live one; a recorded value of
    MIN_EMBEDDED characters or more is also replaced inside longer strings.  With `jsonrpc`,
    each JSON-RPC envelope's `id` becomes ID_SENTINEL, for `HttpTemplate.render`.
    """

    def __init__(self, mapping: Mapping[str, str], *, jsonrpc: bool = False) -> None:
        self._exact = {old: new for old, new in mapping.items() if old != new}
        self._embedded = sorted(
            ((old, new) for old, new in self._exact.items() if len(old) >= MIN_EMBEDDED),
            key=lambda pair: -len(pair[0]),
        )
        self._jsonrpc = jsonrpc
        # When every pair is long and plain, JSON text can be swapped as text, unparsed.
        self._plain = len(self._embedded) == len(self._exact) and all(
            _plain(old) and _plain(new) for old, new in self._embedded
        )

    def text(self, value: str) -> str:
        if value in self._exact:
            return self._exact[value]
        for old, new in self._embedded:
            if old in value:
                value = value.replace(old, new)
        return value

    def body(self, body: bytes) -> bytes:
        if not body:
            return body
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return body
        return wire_bytes(self.json_text(text))

    def json_text(self, text: str) -> str:
        form, base = _prepared(text, self._jsonrpc)
        if form is None:
            return self.text(text)
        if self._plain:
            for old, new in self._embedded:
                if old in base:
                    base = base.replace(old, new)
            return base
        swapped = dumps_like(form, self.walk(json.loads(base)))
        return swapped if swapped is not None else self.text(text)

    def event(self, lines: Iterable[str]) -> list[str]:
        return [self._event_line(line) for line in lines]

    def _event_line(self, line: str) -> str:
        name, sep, value = line.partition(":")
        if name != "data" or not sep:
            return line
        space = " " if value.startswith(" ") else ""
        return f"data:{space}{self.json_text(value[len(space) :])}"

    def walk(self, value: Json) -> Json:
        if isinstance(value, dict):
            return {k: self.walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.walk(v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        return value
