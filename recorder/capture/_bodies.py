"""Display forms: how bytes and strings are shown in a capture file and restored exactly.

Every `show_*` function checks its own round trip, so `restore(show(x)) == x`: it picks the
most readable form that passes (pretty JSON, then verbatim text) and falls back to forms that
always do (base64 for bytes, a JSON string literal for str).  A display never holds a line that
could start a section (`###`, a status or request line), nor a CR (files split on LF only).
Restoring raises `FormError(ValueError)` with the 0-based line inside the display, for the
parser's `file:line`.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
from dataclasses import dataclass
from typing import Any

from recorder._errors import FormError, FormLineError
from recorder.capture._model import GrpcMessage, SseEvent

# Characters a verbatim line may not hold: C0 and C1 controls except tab, the separators that
# some editors take for line ends (U+2028, U+2029), and lone surrogates (which UTF-8 cannot
# encode).  LF is allowed only where a display spans several lines.
_UNSAFE_IN_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_UNSAFE_IN_LINE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_NEEDS_QUOTES = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")

STATUS_LINE = re.compile(r"(HTTP/[0-9.]+) ([0-9]{3})(?: (.*))?")
REQUEST_LINE = re.compile(r"([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) (HTTP/[0-9.]+)")
_REQUEST_LIKE = re.compile(r"\S+ \S+ HTTP/\S*")

OFFSET = re.compile(r"([+-]?)([0-9]+)\.([0-9]{6})s")
BASE64_WIDTH = 76


QUOTE_LIMIT = 200  # characters of a bad line an error message quotes


def quoted(text: str) -> str:
    """`text` quoted for an error message: its first `QUOTE_LIMIT` characters only."""
    if len(text) <= QUOTE_LIMIT:
        return repr(text)
    return f"{text[:QUOTE_LIMIT]!r}… ({len(text)} characters)"


def is_section_start(line: str) -> bool:
    """True for a line that ends a body region: an exchange line or a status line."""
    return line.startswith("###") or (
        line.startswith("HTTP/") and STATUS_LINE.fullmatch(line) is not None
    )


def _line_is_safe(line: str) -> bool:
    # Stricter than is_section_start: text that merely looks like a head line is not verbatim.
    return not (
        line.startswith(("###", "HTTP/"))
        or _REQUEST_LIKE.fullmatch(line)
        or _UNSAFE_IN_LINE.search(line)
    )


def lines_safe(text: str) -> bool:
    return all(_line_is_safe(line) for line in text.split("\n"))


# --- times ---------------------------------------------------------------------------------


def format_seconds(us: int, *, signed: bool) -> str:
    """`+1.250000s` (signed) or `1.250000s`: microseconds, exact."""
    sign = "-" if us < 0 else ("+" if signed else "")
    whole, frac = divmod(abs(us), 1_000_000)
    return f"{sign}{whole}.{frac:06d}s"


def parse_seconds(text: str) -> int:
    match = OFFSET.fullmatch(text)
    if match is None:
        raise FormError(f"bad time {quoted(text)}: expected seconds like +1.250000s")
    sign, whole, frac = match.groups()
    us = int(whole) * 1_000_000 + int(frac)
    return -us if sign == "-" else us


# --- single-line values (metadata) --------------------------------------------------------


def show_value(value: str) -> str:
    """A metadata value as written: verbatim, or a JSON string literal when it must be."""
    plain = (
        value != ""
        and value == value.strip()
        and not value.startswith('"')
        and not _NEEDS_QUOTES.search(value)
    )
    return value if plain else json.dumps(value, ensure_ascii=has_surrogate(value))


def restore_value(text: str) -> str:
    if not text.startswith('"'):
        return text
    try:
        value: str = json.loads(text)  # JSON text that starts with `"` is a string
    except ValueError as exc:
        raise FormError(f"bad quoted value {quoted(text)}: {exc}") from exc
    return value


def has_surrogate(text: str) -> bool:
    """True when `text` holds a lone surrogate, which UTF-8 cannot encode."""
    return _SURROGATE.search(text) is not None


# --- JSON forms ----------------------------------------------------------------------------

SEPARATORS: dict[str, tuple[str, str]] = {"compact": (",", ":"), "spaced": (", ", ": ")}


@dataclass(frozen=True, slots=True)
class JsonForm:
    """One way a JSON value was serialised on the wire; `label` names it in the file."""

    spacing: str  # a key of SEPARATORS
    ascii: bool = False
    newline: bool = False

    @property
    def label(self) -> str:
        flags = (["ascii"] if self.ascii else []) + (["newline"] if self.newline else [])
        return " ".join([self.spacing, *flags])

    def dumps(self, value: Any) -> str:
        """`json.dumps` with this form's options, from an encoder made once (one costs a body)."""
        text = _encoder(self.spacing, self.ascii).encode(value)
        return text + "\n" if self.newline else text


@functools.cache
def _encoder(spacing: str, ascii_only: bool) -> json.JSONEncoder:
    return json.JSONEncoder(
        separators=SEPARATORS[spacing], ensure_ascii=ascii_only, check_circular=False
    )


JSON_FORMS: dict[str, JsonForm] = {
    form.label: form
    for form in (
        JsonForm(spacing, ascii_, newline)
        for newline in (False, True)
        for spacing in SEPARATORS
        for ascii_ in (False, True)
    )
}


def json_form_of(text: str) -> tuple[JsonForm, str] | None:
    """The form that re-serialises `text` byte for byte, with the pretty display
    (`json.dumps(value, indent=2)`, which loads back equal, keys in order); or None."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    for form in _likely_forms(text):
        if _dumps(form, value) == text:
            pretty = _pretty(value)
            if pretty is not None and _display_safe(value, pretty):
                return form, pretty
            return None
    return None


def _likely_forms(text: str) -> list[JsonForm]:
    # The forms of the text's newline kind, the likeliest first (each try is a dumps).
    forms = [f for f in JSON_FORMS.values() if f.newline == text.endswith("\n")]
    spaced = '": ' in text or '", ' in text
    escaped = "\\u" in text
    return sorted(
        forms, key=lambda f: (f.spacing != ("spaced" if spaced else "compact"), f.ascii != escaped)
    )


def _display_safe(value: Any, pretty: str) -> bool:
    # Inside an object or array every line starts with indentation or a bracket, so none can
    # pass for a `###`, status or request line; only characters can make it unsafe.
    if isinstance(value, dict | list):
        return _UNSAFE_IN_TEXT.search(pretty) is None
    return lines_safe(pretty)


def restore_json(display: str, form: JsonForm) -> str:
    try:
        value = json.loads(display)
    except json.JSONDecodeError as exc:
        raise FormError(f"invalid JSON ({exc.msg})", exc.lineno - 1) from exc
    except (ValueError, RecursionError) as exc:
        raise FormError(f"invalid JSON ({exc})") from exc
    text = _dumps(form, value)
    if text is None:
        raise FormError("JSON value cannot be serialised")
    return text


def json_form(label: str) -> JsonForm:
    form = JSON_FORMS.get(label)
    if form is None:
        raise FormLineError(f"unknown JSON form {quoted(label)}; known: {', '.join(JSON_FORMS)}")
    return form


def _dumps(form: JsonForm, value: Any) -> str | None:
    try:
        return form.dumps(value)
    except (ValueError, RecursionError):
        return None


def _pretty(value: Any) -> str | None:
    """`json.dumps(value, indent=2, ensure_ascii=False)` (ASCII when it holds a lone
    surrogate), built faster by `_Indented`: this runs for every body written."""
    try:
        text = _Indented(ascii_only=False).text(value)
        return _Indented(ascii_only=True).text(value) if has_surrogate(text) else text
    except (ValueError, RecursionError):
        return None


_SCALARS: dict[Any, str] = {True: "true", False: "false", None: "null"}


class _Indented:
    """Indent-2 JSON with `json.dumps`'s exact output, for the types `json.loads` returns."""

    def __init__(self, *, ascii_only: bool) -> None:
        self._string = (
            json.encoder.encode_basestring_ascii if ascii_only else (json.encoder.encode_basestring)
        )
        self._out: list[str] = []

    def text(self, value: Any) -> str:
        self._emit(value, "\n")
        return "".join(self._out)

    def _emit(self, value: Any, newline: str) -> None:
        out = self._out
        kind = type(value)
        if kind is str:
            out.append(self._string(value))
        elif kind is dict:
            self._container(value.items(), "{", "}", newline, pairs=True)
        elif kind is list:
            self._container(value, "[", "]", newline, pairs=False)
        else:
            out.append(
                _SCALARS.get(value, "")
                if kind is bool or value is None
                else int.__repr__(value)
                if kind is int
                else json.dumps(value)
            )

    def _container(
        self, items: Any, opening: str, closing: str, newline: str, *, pairs: bool
    ) -> None:
        out = self._out
        inner = newline + "  "
        out.append(opening)
        separator = inner
        empty = True
        for item in items:
            empty = False
            out.append(separator)
            separator = "," + inner
            if pairs:
                out.append(self._string(item[0]))
                out.append(": ")
                self._emit(item[1], inner)
            else:
                self._emit(item, inner)
        out.append(closing if empty else newline + closing)


# --- bodies --------------------------------------------------------------------------------


def show_body(body: bytes) -> tuple[str, str]:
    """(form, display) for a non-empty body: `json <label>`, `text` or `base64`."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return "base64", _base64_lines(body)
    found = json_form_of(text)
    if found is not None:
        return f"json {found[0].label}", found[1]
    if not _UNSAFE_IN_TEXT.search(text) and lines_safe(text):
        return "text", text
    return "base64", _base64_lines(body)


def restore_body(form: str, display: str) -> bytes:
    if form == "text":
        return display.encode("utf-8")
    if form == "base64":
        return decode_base64(display)
    if form.startswith("json "):
        return restore_json(display, json_form(form[5:])).encode("utf-8")
    raise FormLineError(f"unknown body form {quoted(form)}")


def _base64_lines(data: bytes) -> str:
    text = base64.b64encode(data).decode("ascii")
    return "\n".join(text[i : i + BASE64_WIDTH] for i in range(0, len(text), BASE64_WIDTH))


def decode_base64(display: str) -> bytes:
    try:
        return base64.b64decode(display.replace("\n", ""), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise FormError(f"bad base64 ({exc})") from exc


# --- SSE events ----------------------------------------------------------------------------
# A block is an annotation `: +0.315000s [form]` then the event's lines.  The annotation is
# always the block's first line, so a wire comment (`: ping`) is never taken for one.

ANNOTATION = re.compile(r": ([+-][0-9]+\.[0-9]{6}s)(?: (.+))?")
_DATA = "data: "


def show_event(event: SseEvent) -> list[str]:
    head = ": " + format_seconds(event.offset_us, signed=True)
    pretty = _pretty_event(event.lines)
    if pretty is not None:
        return [f"{head} json {pretty[0].label}", *pretty[1]]
    if all(_sse_line_safe(line) for line in event.lines):
        return [head, *event.lines]
    return [f"{head} quoted", json.dumps(list(event.lines), ensure_ascii=True)]


def restore_event(block: list[str]) -> SseEvent:
    match = ANNOTATION.fullmatch(block[0])
    if match is None:
        raise FormError(
            f"SSE block must start with an annotation like ': +0.100000s', got {quoted(block[0])}"
        )
    offset = parse_seconds(match.group(1))
    form, lines = match.group(2), block[1:]
    if form is None:
        return SseEvent(offset, tuple(lines))
    if form == "quoted":
        return SseEvent(offset, _restore_quoted_lines(lines))
    if form.startswith("json "):
        return SseEvent(offset, _restore_pretty_event(lines, json_form(form[5:])))
    raise FormError(f"unknown SSE block form {quoted(form)}")


def _sse_line_safe(line: str) -> bool:
    return line != "" and _line_is_safe(line)


def _pretty_event(lines: tuple[str, ...]) -> tuple[JsonForm, list[str]] | None:
    data = [i for i, line in enumerate(lines) if line.startswith(_DATA)]
    others_safe = all(_sse_line_safe(line) for i, line in enumerate(lines) if i not in data)
    if len(data) != 1 or not others_safe:
        return None
    found = json_form_of(lines[data[0]][len(_DATA) :])
    if found is None or found[0].newline:
        return None
    shown = [_DATA + line for line in found[1].split("\n")]
    if not all(_sse_line_safe(line) for line in shown):
        return None
    return found[0], [*lines[: data[0]], *shown, *lines[data[0] + 1 :]]


def _restore_pretty_event(lines: list[str], form: JsonForm) -> tuple[str, ...]:
    first, last, display = _data_run(lines)
    try:
        compact = restore_json(display, form)
    except FormError as exc:
        raise FormError(str(exc), 1 + first + exc.offset) from exc
    return (*lines[:first], _DATA + compact, *lines[last + 1 :])


def _data_run(lines: list[str]) -> tuple[int, int, str]:
    """The first and last index of the block's one run of data lines, and what they hold."""
    joined = "\n".join(lines)
    if joined.startswith(_DATA) and joined.count("\n" + _DATA) == len(lines) - 1:
        # Every line is a data line (the usual block): a C join and replace, no line loop.
        return 0, len(lines) - 1, joined[len(_DATA) :].replace("\n" + _DATA, "\n")
    data = [i for i, line in enumerate(lines) if line.startswith(_DATA)]
    if not data or data != list(range(data[0], data[-1] + 1)):
        raise FormError("a JSON SSE block needs one contiguous run of 'data: ' lines", 1)
    return data[0], data[-1], "\n".join(lines[i][len(_DATA) :] for i in data)


def _restore_quoted_lines(lines: list[str]) -> tuple[str, ...]:
    if len(lines) != 1:
        raise FormError("a quoted SSE block holds exactly one JSON array line", 1)
    try:
        value = json.loads(lines[0])
    except ValueError as exc:
        raise FormError(f"bad quoted SSE lines ({exc})", 1) from exc
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise FormError("quoted SSE lines must be a JSON array of strings", 1)
    return tuple(value)


# --- gRPC messages -------------------------------------------------------------------------
# A block is `# message <offset> <type|-> [compressed] <form>` then the content lines.

MESSAGE_HEAD = "# message "


def show_message(message: GrpcMessage) -> list[str]:
    type_name = message.type_name
    if type_name is not None and (type_name in ("", "-") or not _is_word(type_name)):
        raise ValueError(f"gRPC type name {quoted(type_name)} must be one word, not '-'")
    form, content = _message_content(message)
    words = [
        MESSAGE_HEAD.rstrip(),
        format_seconds(message.offset_us, signed=True),
        type_name or "-",
        *(["compressed"] if message.compressed else []),
        form,
    ]
    return [" ".join(words), *content]


def restore_message(block: list[str]) -> GrpcMessage:
    words = block[0].split(" ")
    if len(words) < 5 or words[:2] != ["#", "message"]:
        raise FormError(
            f"bad message line {quoted(block[0])}: expected '# message <offset> <type> <form>'"
        )
    offset = parse_seconds(words[2])
    type_name = None if words[3] == "-" else words[3]
    compressed = words[4] == "compressed"
    form = " ".join(words[5:] if compressed else words[4:])
    content = "\n".join(block[1:])
    common: dict[str, Any] = {"offset_us": offset, "compressed": compressed, "type_name": type_name}
    if form == "base64":
        return GrpcMessage(raw=decode_base64(content), **common)
    return GrpcMessage(json=_restore_message_json(form, block[1:], content), **common)


def _message_content(message: GrpcMessage) -> tuple[str, list[str]]:
    if message.raw is not None:
        shown = _base64_lines(message.raw)
        return "base64", shown.split("\n") if shown else []
    text = message.json or ""
    found = json_form_of(text)
    if found is not None:
        return f"json {found[0].label}", found[1].split("\n")
    if text and _line_is_safe(text):
        return "text", [text]
    return "quoted", [json.dumps(text, ensure_ascii=True)]


def _restore_message_json(form: str, lines: list[str], content: str) -> str:
    if form == "text" and len(lines) == 1:
        return lines[0]
    if form == "quoted" and len(lines) == 1:
        return restore_value(lines[0]) if lines[0].startswith('"') else _not_quoted(lines[0])
    if form.startswith("json ") and lines:
        return restore_json(content, json_form(form[5:]))
    raise FormError(f"bad message form {quoted(form)} for {len(lines)} content line(s)")


def _not_quoted(line: str) -> str:
    raise FormError(f"quoted message must be a JSON string literal, got {quoted(line)}", 1)


def _is_word(text: str) -> bool:
    return not any(ch.isspace() for ch in text) and not _UNSAFE_IN_LINE.search(text)
