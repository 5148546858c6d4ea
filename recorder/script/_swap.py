"""Putting live values where recorded ones stood, in recorded bytes: the one swap path (pure).

A recorded text is *prepared* once (`prepare`): cut at its JSON string values (`holes`), the
text between kept byte for byte, so the agent's serialisation style survives; a JSON-RPC
envelope's `id` is a hole of its own.  Rendering (`Template.render`) swaps each hole whose
string is a recorded value (`lookup`); values of `MIN_EMBEDDED` characters or more are also
swapped inside longer strings ("1" must not change inside "10").  A swapped string keeps its
recorded escaping, and text UTF-8 cannot hold goes back as the escape or byte it was.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recorder.capture import JSON_FORMS, JsonForm

Json = Any
Lookup = Callable[[str], str | None]
# (recorded, live) pairs swapped inside longer strings too, longest first (`embedded_pairs`).
Embedded = Sequence[tuple[str, str]]

# Recorded values shorter than this are swapped only where a whole string equals them.
MIN_EMBEDDED = 8
# A JSON string, and the colon after it when it is an object's key.
_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"(\s*:)?', re.S)
# A number or a literal (a JSON-RPC id that is no string).
_LITERAL = re.compile(r"\s*(-?[0-9][0-9eE+.\-]*|null|true|false)")
_VALUE = r'("[^"\\]*(?:\\.[^"\\]*)*"|-?[0-9][0-9eE+.\-]*|null)'
_VERSION = r'"jsonrpc"\s*:\s*"[^"\\]*"'
# Where every SDK writes an envelope's id: first, after "jsonrpc", or in the last `_TAIL` chars.
_TAIL = 512
_ID_PLACES = (
    re.compile(rf'\A\s*\{{\s*(?:{_VERSION}\s*,\s*)?"id"\s*:\s*{_VALUE}\s*[,}}]'),
    re.compile(rf',\s*"id"\s*:\s*{_VALUE}\s*(?:,\s*{_VERSION}\s*)?\}}\s*\Z'),
)


@dataclass(frozen=True, slots=True)
class Hole:
    at: int  # index in `Template.parts`
    value: str  # the recorded string, decoded
    ascii: bool  # written with `\u` escapes: swapped values are escaped alike


@dataclass(frozen=True, slots=True)
class Template:
    """A recorded text cut at its string values (see the module docstring)."""

    parts: tuple[str, ...]
    holes: tuple[Hole, ...]
    id_at: int | None = None  # where the live JSON-RPC id goes, if the text is an envelope
    json: bool = True

    def render(
        self,
        lookup: Lookup,
        embedded: Sequence[tuple[str, str]] = (),
        jsonrpc_id: Json = None,
    ) -> str:
        """The text with live values in (see `Swap`), `jsonrpc_id` at the envelope's id."""
        parts: list[str] | None = None
        for hole in self.holes:
            swapped = swap_text(hole.value, lookup, embedded)
            if swapped is not hole.value and swapped != hole.value:
                if parts is None:
                    parts = list(self.parts)
                parts[hole.at] = _quoted(swapped, hole.ascii) if self.json else swapped
        if self.id_at is not None:
            if parts is None:
                parts = list(self.parts)
            parts[self.id_at] = json_text(jsonrpc_id)
        return "".join(parts if parts is not None else self.parts)


def swap_text(value: str, lookup: Lookup, embedded: Sequence[tuple[str, str]] = ()) -> str:
    """One string with live values in (the same rule as `Template.render`'s holes)."""
    found = lookup(value)
    if found is not None:
        return found
    if len(value) >= MIN_EMBEDDED:
        for old, new in embedded:
            if old in value:
                value = value.replace(old, new)
    return value


def prepare(text: str, *, jsonrpc: bool = False) -> Template:
    """`text` cut for rendering (whole if not JSON); with `jsonrpc`, the envelope's `id` a hole."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return Template((text,), (Hole(0, text, False),), json=False)
    envelope = jsonrpc and isinstance(document, dict) and "jsonrpc" in document and "id" in document
    return _Cutter(text, envelope).cut()


class _Cutter:
    """Walks a JSON text's strings once, telling keys from values, and finds the envelope's `id`."""

    def __init__(self, text: str, envelope: bool) -> None:
        self.text, self.envelope = text, envelope
        self.parts: list[str] = []
        self.holes: list[Hole] = []
        self.id_at: int | None = None
        self.done = 0  # text before this offset is in `parts`

    def cut(self) -> Template:
        text = self.text
        spans: list[tuple[int, int, str | None]] = []  # (start, end, value token; None: the id)
        placed = _placed_id(text) if self.envelope else None
        if placed is not None:  # where SDKs put it: first, after "jsonrpc", or last
            self.envelope = False
            self.id_at = -1
            spans.append((*placed, None))
        depth, last, id_from = 0, 0, -1
        for match in _STRINGS.finditer(text):
            start, end = match.span()
            if self.envelope:
                depth += _depth(text, last, start)
                last = end
            if match.group(1) is not None:  # a key
                if (
                    self.envelope
                    and depth == 1
                    and id_from < 0
                    and text[start:end].startswith('"id"')
                ):
                    id_from = end
                continue
            if placed is not None and placed[0] <= start < placed[1]:
                continue  # the envelope's id, a string
            if id_from >= 0 and self.id_at is None and not text[id_from:start].strip():
                spans.append((start, end, None))  # the envelope's id is this string
                self.id_at = -1
                continue
            spans.append((start, end, match.group()))
        if id_from >= 0 and self.id_at is None:
            literal = _LITERAL.match(text, id_from)
            if literal is not None:
                spans.append((literal.start(1), literal.end(1), None))
        for start, end, token in sorted(spans):
            self.parts.append(text[self.done : start])
            if token is None:
                self.id_at = len(self.parts)
                self.parts.append(text[start:end])
            else:
                escaped = "\\" in token
                value = json.loads(token) if escaped else token[1:-1]
                self.holes.append(Hole(len(self.parts), value, escaped and "\\u" in token))
                self.parts.append(token)
            self.done = end
        self.parts.append(text[self.done :])
        return Template(tuple(self.parts), tuple(self.holes), self.id_at)


def _placed_id(text: str) -> tuple[int, int] | None:
    """The span of an envelope's `id` where SDKs write it, found without walking the text."""
    first, last = _ID_PLACES
    found = first.match(text) or last.search(text, max(0, len(text) - _TAIL))
    return found.span(1) if found is not None else None


def _depth(text: str, start: int, end: int) -> int:
    """How much deeper the JSON is after `text[start:end]`, text between two strings."""
    return (
        text.count("{", start, end)
        + text.count("[", start, end)
        - text.count("}", start, end)
        - text.count("]", start, end)
    )


def _quoted(value: str, ascii_only: bool) -> str:
    if value.isascii() and value.isprintable() and '"' not in value and "\\" not in value:
        return f'"{value}"'  # written as it is in every form (most ids)
    try:
        return json.dumps(value, ensure_ascii=ascii_only)
    except UnicodeEncodeError:  # pragma: no cover - json.dumps escapes what it cannot encode
        return json.dumps(value)


def json_text(value: Json) -> str:
    """A JSON-RPC id (or any value) as JSON text; `null` for what JSON cannot hold."""
    if type(value) is int:
        return str(value)
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return "null"


def json_bytes(value: Json) -> bytes:
    """`json_text` as the bytes that carry it."""
    return wire_bytes(json_text(value))


def wire_bytes(text: str) -> bytes:
    """Text as the bytes that carried it: surrogate escapes to bytes, lone surrogates to escapes."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace")


# ---- the same rule on whole values and texts --------------------------------------------


@dataclass(frozen=True, slots=True)
class Swap:
    """Live values for recorded ones: `lookup` for whole strings, `embedded` inside longer ones."""

    lookup: Lookup
    embedded: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, mapping: Mapping[str, str]) -> Swap:
        exact = {old: new for old, new in mapping.items() if old != new}
        return cls(exact.get, embedded_pairs(exact.items()))

    def text(self, value: str) -> str:
        return swap_text(value, self.lookup, self.embedded)

    def json_text(self, text: str) -> str:
        return prepare(text).render(self.lookup, self.embedded)

    def body(self, body: bytes) -> bytes:
        if not body:
            return body
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return body
        return wire_bytes(self.json_text(text))

    def walk(self, value: Json) -> Json:
        if isinstance(value, dict):
            return {k: self.walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.walk(v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        return value


def embedded_pairs(pairs: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The (recorded, live) pairs swapped inside longer strings too, longest first."""
    return tuple(
        sorted(
            ((old, new) for old, new in pairs if len(old) >= MIN_EMBEDDED and old != new),
            key=lambda pair: -len(pair[0]),
        )
    )


def substitute_body(body: bytes, mapping: Mapping[str, str]) -> bytes:
    """A request or response body with recorded values swapped (push deliveries use this)."""
    return Swap.of(mapping).body(body)


def substitute_json_text(text: str, mapping: Mapping[str, str]) -> str:
    """JSON text (a gRPC message's proto-JSON) with recorded values swapped, style kept."""
    return Swap.of(mapping).json_text(text)


def substitute_headers(
    headers: Iterable[tuple[str, str]], mapping: Mapping[str, str]
) -> tuple[tuple[str, str], ...]:
    """Header values with recorded values swapped, inside longer values too (`Bearer <id>`)."""
    swap = Swap.of(mapping)
    return tuple((k, swap.text(v)) for k, v in headers)


def dumps_like(text: str, value: Json) -> str:
    """`value` as JSON written as `text` was (compact when `text` is in no form we write)."""
    form = form_of(text)
    if form is not None:
        try:
            return form.dumps(value)
        except (ValueError, RecursionError):
            pass
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def form_of(text: str) -> JsonForm | None:
    """The form that writes `text` back byte for byte, if one does."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    for form in JSON_FORMS.values():
        try:
            if form.dumps(value) == text:
                return form
        except (ValueError, RecursionError):
            return None
    return None
