"""Turning a matched recorded exchange into the answer for a live request (pure).

The recorded response is served as it was, with the live request's values put back where the
recording had its own: the JSON-RPC `id`, and every recorded id, URL and token that the
conversation maps to a live value.  JSON keeps the recorded serialisation style (compact or
spaced), so a Python agent's replay still looks like a Python agent.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from recorder.capture import Headers, Response
from recorder.capture._bodies import JSON_FORMS, JsonForm
from recorder.protocol import Binding

# Never replayed as recorded: the server recomputes framing, and bodies are stored decoded.
DROPPED_HEADERS = frozenset(
    {"content-length", "transfer-encoding", "content-encoding", "connection", "keep-alive", "date"}
)
# Recorded ids shorter than this are replaced only where a whole string equals them, never
# inside longer text (an error message may quote a task id; "1" must not be replaced anywhere).
MIN_EMBEDDED = 8

Json = Any


@dataclass(frozen=True, slots=True)
class Answer:
    """What to send: status, headers, and either a body or timed SSE events."""

    status: int
    reason: str
    headers: Headers
    body: bytes
    events: tuple[tuple[int, bytes], ...] = ()  # (offset in µs, event bytes with terminator)


def answer(
    response: Response,
    mapping: Mapping[str, str],
    *,
    binding: Binding | None,
    jsonrpc_id: Json = None,
) -> Answer:
    """The recorded `response` with recorded values swapped for live ones."""
    swap = _Swapper(mapping, jsonrpc_id if binding is Binding.JSONRPC else _KEEP)
    headers = tuple((k, swap.text(v)) for k, v in response.headers
                    if k.lower() not in DROPPED_HEADERS)
    events = tuple(
        (event.offset_us, _event_bytes(swap.event(event.lines), response.newline))
        for event in response.events
    )
    return Answer(response.status, response.reason, headers, swap.body(response.body), events)


def substitute_body(body: bytes, mapping: Mapping[str, str]) -> bytes:
    """A request or response body with recorded values swapped (push deliveries use this)."""
    return _Swapper(mapping, _KEEP).body(body)


def substitute_json_text(text: str, mapping: Mapping[str, str]) -> str:
    """JSON text (a gRPC message's proto-JSON) with recorded values swapped, style kept."""
    return _Swapper(mapping, _KEEP).json_text(text)


def substitute_text(text: str, mapping: Mapping[str, str]) -> str:
    """Plain text (a gRPC status message) with recorded values swapped, as header values are."""
    return _Swapper(mapping, _KEEP).text(text)


def substitute_headers(headers: Iterable[tuple[str, str]], mapping: Mapping[str, str]) -> Headers:
    """Header values with recorded values swapped, inside longer values too (`Bearer <id>`)."""
    swap = _Swapper(mapping, _KEEP)
    return tuple((k, swap.text(v)) for k, v in headers)


def _event_bytes(lines: Iterable[str], newline: str) -> bytes:
    return "".join(line + newline for line in lines).encode("utf-8") + newline.encode()


_KEEP = object()


@functools.lru_cache(maxsize=4096)
def _form_of(text: str) -> JsonForm | None:
    """The serialisation style of a recorded JSON text (cached: the same texts recur)."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return next((f for f in JSON_FORMS.values() if _dumps(f, value) == text), None)


def _dumps(form: JsonForm, value: Json) -> str | None:
    try:
        return form.dumps(value)
    except (ValueError, RecursionError):
        return None


class _Swapper:
    def __init__(self, mapping: Mapping[str, str], jsonrpc_id: Json) -> None:
        self._exact = dict(mapping)
        self._embedded = sorted(
            ((old, new) for old, new in mapping.items() if len(old) >= MIN_EMBEDDED and old != new),
            key=lambda pair: -len(pair[0]),
        )
        self._jsonrpc_id = jsonrpc_id

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
        return self.json_text(text).encode("utf-8")

    def json_text(self, text: str) -> str:
        form = _form_of(text)
        if form is None:
            return self.text(text)
        return form.dumps(self._document(json.loads(text)))

    def event(self, lines: Iterable[str]) -> list[str]:
        return [self._event_line(line) for line in lines]

    def _event_line(self, line: str) -> str:
        name, sep, value = line.partition(":")
        if name != "data" or not sep:
            return line
        space = " " if value.startswith(" ") else ""
        return f"data:{space}{self.json_text(value[len(space):])}"

    def _document(self, document: Json) -> Json:
        swapped = self._walk(document)
        if (
            self._jsonrpc_id is not _KEEP
            and isinstance(swapped, dict)
            and "jsonrpc" in swapped
            and "id" in swapped
        ):
            swapped["id"] = self._jsonrpc_id
        return swapped

    def _walk(self, value: Json) -> Json:
        if isinstance(value, dict):
            return {k: self._walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._walk(v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        return value
