"""Parse `.http` capture text back into a Capture (sans-I/O).

A cursor walks the text once, by offsets, never splitting it into lines (a 10,000-exchange
capture has 717,000).  Every problem is a `CaptureParseError`, `file:line: what is wrong`; any
other exception is converted at the one boundary, `parse`, so a damaged file never crashes a
caller.  `parse(text, only=N)` steps over the other exchanges unread (a `###` line always ends a
body region).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NoReturn

from recorder._errors import CaptureParseError, FormError, FormLineError
from recorder.capture._bodies import (
    REQUEST_LINE,
    STATUS_LINE,
    is_section_start,
    parse_seconds,
    quoted,
    restore_value,
)
from recorder.capture._foreign import SNIFF_BYTES, foreign_kind, foreign_message
from recorder.capture._heads import KEY_EXACT, KEY_WIRE_HEADER, REASON, TARGET, Aside
from recorder.capture._model import (
    FORMAT_VERSION,
    READABLE_VERSIONS,
    Capture,
    Exchange,
    Headers,
    Request,
    Response,
)
from recorder.capture._regions import REQUEST_FORMS, RESPONSE_FORMS, Forms, Parts
from recorder.capture._render import (
    CLASSIFICATION_KEYS,
    EMPTY,
    HEADER_LINE,
    HEADER_RECORDER,
    HEADER_REDACTED,
    HEADER_STARTED,
    HEADER_UPSTREAM,
    KEY_DURATION,
    KEY_ERROR,
    KEY_NOTE,
    KEY_REQUEST_BODY,
    KEY_RESPONSE,
    KEY_RESPONSE_BODY,
    KEY_SSE_NEWLINE,
    KEY_STARTED,
    KEY_STREAMING,
    NEWLINES,
    NO_RESPONSE,
    VERSION_PATTERN,
)
from recorder.protocol import Binding, Classification, Version

_EXCHANGE_LINE = re.compile(r"### ([0-9]+) (\S+) (\S+) (\S+)")
_META_LINE = re.compile(r"# ([a-z][a-z0-9-]*):(?: (.*))?")
_HEADER_FIELD = re.compile(r"# ([A-Za-z0-9][A-Za-z0-9._-]*):(?: (.*))?")
_STATUS_ATTEMPT = re.compile(r"HTTP/\S* ")
# How the lines that can end a body region, or be a damaged status line, start (_region_end).
_REGION_STOPS = ("\n###", "\nHTTP/")
# A run of metadata lines: `#` but not `###`, each ended by its LF.
_META_BLOCK = re.compile(r"(?:#(?!##)[^\n]*\n)*")
# Each line pattern anchored at every line's ends of a joined block, for `_fields`.
_LINES = {
    p: re.compile(f"^(?:{p.pattern})$", re.MULTILINE)
    for p in (_META_LINE, _HEADER_FIELD, HEADER_LINE)
}
_NEWLINE_BY_NAME = {name: newline for newline, name in NEWLINES.items()}
_CONVERTERS: dict[str, Callable[[str], object]] = {"version": Version}


def parse(text: str, filename: str = "<capture>", *, only: int | None = None) -> Capture:
    """Parse capture text (the inverse of `render`); CaptureParseError (`file:line`) for any
    damage.  `only`: exchange number `only` alone, no other read (their damage goes unseen)."""
    cursor = _Cursor(_checked(text, filename), filename)
    try:
        return _parse_capture(cursor, only)
    except CaptureParseError:
        raise
    except (ValueError, TypeError, RecursionError) as exc:  # a safety net; see module docstring
        raise CaptureParseError(str(exc), filename, cursor.lineno) from exc


def parse_bytes(data: bytes, filename: str = "<capture>", *, only: int | None = None) -> Capture:
    """Decode UTF-8 and parse (`parse`); invalid UTF-8 is a CaptureParseError too."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        _check_foreign(data[:SNIFF_BYTES], filename)
        line = data.count(b"\n", 0, exc.start) + 1
        raise CaptureParseError(f"not UTF-8 ({exc.reason})", filename, line) from exc
    return parse(text, filename, only=only)


def _checked(text: str, filename: str) -> str:
    """The text to parse, with LF line endings; what makes it no capture at all said first."""
    if not text:
        raise CaptureParseError("empty file: no version line", filename, 1)
    if not text.startswith("#"):
        _check_foreign(text[:SNIFF_BYTES].encode("utf-8", "surrogatepass"), filename)
    if "\r" in text:
        text = _lf_endings(text, filename)
    if not text.endswith("\n"):
        line = text.count("\n") + 1
        raise CaptureParseError("file does not end with a newline (truncated?)", filename, line)
    return text


def _check_foreign(head: bytes, filename: str) -> None:
    kind = foreign_kind(head)
    if kind is not None:
        raise CaptureParseError(foreign_message(kind), filename, 1)


def _lf_endings(text: str, filename: str) -> str:
    """A capture whose lines all end in CRLF (git's `autocrlf`) with LF endings: the format
    writes no CR of its own, so nothing is lost."""
    lone = text.replace("\r\n", "\n")
    if "\r" in lone:
        at = lone.index("\r")
        line = lone.count("\n", 0, at) + 1
        raise CaptureParseError(
            "CR found that does not end a line; capture files use LF (or CRLF) line endings",
            filename,
            line,
        )
    return lone


class _Cursor:
    """An offset at the start of a line of `text` (which ends with LF), and that line's number."""

    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.pos = 0
        self.lineno = 1
        self.filename = filename
        self.exchange_line = 1  # where the current exchange's `###` line is

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def peek(self) -> str | None:
        if self.at_end():
            return None
        return self.text[self.pos : self.text.index("\n", self.pos)]

    def take(self) -> str:
        line = self.peek()
        if line is None:
            self.fail("unexpected end of file (truncated?)")
        self.skip_line()
        return line

    def skip_line(self) -> None:
        self.pos = self.text.index("\n", self.pos) + 1
        self.lineno += 1

    def advance(self, end: int, lines: int) -> None:
        """Move to `end`, a line start `lines` lines further on."""
        self.pos = end
        self.lineno += lines

    def lines_to(self, end: int) -> int:
        return self.text.count("\n", self.pos, end)

    def fail(self, message: str, lineno: int | None = None) -> NoReturn:
        raise CaptureParseError(message, self.filename, lineno or self.lineno)


@dataclass
class _Meta:
    """`# key: value` lines of one block, with their line numbers."""

    values: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    first_line: int = 0

    def many(self, key: str) -> list[str]:
        return [value for _, value in self.values.get(key, [])]

    def one(self, cursor: _Cursor, key: str) -> str | None:
        found = self.values.get(key)
        if found is None:
            return None
        if len(found) > 1:
            cursor.fail(f"'{key}' given more than once", found[1][0])
        return found[0][1]

    def line_of(self, key: str) -> int:
        return self.values[key][0][0] if key in self.values else self.first_line


def _read_meta(cursor: _Cursor, pattern: re.Pattern[str]) -> _Meta:
    meta = _Meta(first_line=cursor.lineno)
    start = cursor.pos
    end = _META_BLOCK.match(cursor.text, start).end()  # type: ignore[union-attr]  # `*` matches
    count = cursor.lines_to(end)
    fields = _fields(pattern, cursor.text, start, end - 1, count)
    if fields is None:
        bad, line = _first_mismatch(pattern, cursor.text[start : end - 1])
        cursor.fail(
            f"bad metadata line {quoted(line)}: expected '# key: value'", meta.first_line + bad
        )
    for lineno, (key, raw) in enumerate(fields, meta.first_line):
        value = _restored(cursor, raw, lineno) if raw[:1] == '"' else raw
        meta.values.setdefault(key, []).append((lineno, value))
    cursor.advance(end, count)
    return meta


def _fields(
    pattern: re.Pattern[str], text: str, start: int, end: int, count: int
) -> list[tuple[str, str]] | None:
    """The groups of each of the `count` lines in `text[start:end]`, from one search (much
    cheaper than a match per line), or None when a line does not match."""
    if count == 0:
        return []
    found: list[tuple[str, str]] = _LINES[pattern].findall(text, start, end)
    return found if len(found) == count else None


def _first_mismatch(pattern: re.Pattern[str], block: str) -> tuple[int, str]:
    """The 0-based index and text of the first line of `block` that `pattern` does not match."""
    return next(
        (i, line) for i, line in enumerate(block.split("\n")) if pattern.fullmatch(line) is None
    )


def _restored(cursor: _Cursor, text: str, lineno: int | None = None) -> str:
    try:
        return restore_value(text)
    except FormError as exc:
        cursor.fail(str(exc), lineno)


# --- header --------------------------------------------------------------------------------


def _parse_capture(cursor: _Cursor, only: int | None = None) -> Capture:
    version_line = cursor.take()
    match = VERSION_PATTERN.fullmatch(version_line)
    if match is None:
        cursor.fail(
            "not an a2a-recorder capture: expected its first line to be "
            f"'# a2a-recorder capture format {FORMAT_VERSION}'",
            1,
        )
    version = int(match.group(1))
    if version not in READABLE_VERSIONS:
        known = " and ".join(map(str, READABLE_VERSIONS))
        cursor.fail(
            f"unknown capture format version {match.group(1)}; this reader knows {known}", 1
        )
    meta = _read_meta(cursor, _HEADER_FIELD)
    if cursor.peek() != "":
        cursor.fail("the header must end with a blank line (truncated or bad header line?)")
    cursor.skip_line()
    exchanges = _parse_exchanges(cursor) if only is None else _parse_only(cursor, only)
    return _header_capture(cursor, meta, exchanges, version)


def _header_capture(
    cursor: _Cursor, meta: _Meta, exchanges: tuple[Exchange, ...], version: int
) -> Capture:
    known = (HEADER_RECORDER, HEADER_STARTED, HEADER_UPSTREAM, HEADER_REDACTED)
    required = {key: meta.one(cursor, key) for key in (HEADER_RECORDER, HEADER_STARTED)}
    for key, value in required.items():
        if value is None:
            cursor.fail(f"the header has no '# {key}:' line", meta.first_line)
    extra = [
        (key, value)
        for line, key, value in sorted(
            (line, key, value)
            for key, found in meta.values.items()
            if key not in known
            for line, value in found
        )
    ]
    return Capture(
        started=required[HEADER_STARTED] or "",
        recorder_version=required[HEADER_RECORDER] or "",
        exchanges=exchanges,
        upstreams=tuple(meta.many(HEADER_UPSTREAM)),
        redacted=tuple(meta.many(HEADER_REDACTED)),
        format_version=version,
        extra=tuple(extra),
    )


# --- exchanges -----------------------------------------------------------------------------


def _parse_exchanges(cursor: _Cursor) -> tuple[Exchange, ...]:
    exchanges: list[Exchange] = []
    while not cursor.at_end():
        exchange = _parse_exchange(cursor)
        if exchanges and exchange.number <= exchanges[-1].number:
            previous = exchanges[-1].number
            cursor.fail(
                f"exchange {exchange.number} follows {previous}; numbers must increase",
                cursor.exchange_line,
            )
        exchanges.append(exchange)
    return tuple(exchanges)


def _parse_only(cursor: _Cursor, number: int) -> tuple[Exchange, ...]:
    """Exchange `number` alone (none if there is none), the others stepped over unread."""
    while not cursor.at_end():
        found = _EXCHANGE_LINE.match(cursor.peek() or "")
        if found is None or int(found.group(1)) == number:
            return (_parse_exchange(cursor),)
        end = cursor.text.find("\n###", cursor.pos) + 1 or len(cursor.text)
        cursor.advance(end, cursor.lines_to(end))
    return ()


def _parse_exchange(cursor: _Cursor) -> Exchange:
    cursor.exchange_line = cursor.lineno
    line = cursor.take()
    match = _EXCHANGE_LINE.fullmatch(line)
    if match is None:
        cursor.fail(
            f"expected '### <number> <operation> <binding> <outcome>', got {quoted(line)}",
            cursor.exchange_line,
        )
    number, operation, binding, _outcome = match.groups()
    meta = _read_meta(cursor, _META_LINE)
    classification = _classification(cursor, meta, operation, binding)
    aside = _aside(cursor, meta)
    request, after = _parse_request(cursor, meta, aside)
    response = _parse_response(cursor, meta, after, aside)
    return Exchange(
        number=int(number),
        classification=classification,
        request=request,
        response=response,
        started_us=_seconds(cursor, meta, KEY_STARTED),
        duration_us=_seconds(cursor, meta, KEY_DURATION),
        notes=tuple(meta.many(KEY_NOTE)),
        error=meta.one(cursor, KEY_ERROR),
    )


def _aside(cursor: _Cursor, meta: _Meta) -> Aside:
    aside = Aside()
    for key, add in ((KEY_WIRE_HEADER, aside.add_wire_header), (KEY_EXACT, aside.add_exact)):
        for line, text in meta.values.get(key, []):
            try:
                add(text)
            except FormError as exc:
                cursor.fail(str(exc), line)
    return aside


def _restored_head[T](cursor: _Cursor, restore: Callable[[], T]) -> T:
    # An index that does not fit the head is reported at the exchange line.
    try:
        return restore()
    except FormError as exc:
        cursor.fail(str(exc), cursor.exchange_line)


def _classification(cursor: _Cursor, meta: _Meta, operation: str, binding: str) -> Classification:
    fields: dict[str, object] = {}
    for key, attribute in CLASSIFICATION_KEYS:
        value = meta.one(cursor, key)
        if value is not None:
            fields[attribute] = _convert(cursor, meta, key, value)
    streaming = meta.one(cursor, KEY_STREAMING)
    if streaming not in (None, "true"):
        cursor.fail(
            f"'streaming' must be 'true' when present, got {quoted(streaming)}",
            meta.line_of(KEY_STREAMING),
        )
    return Classification(
        binding=None if binding == EMPTY else _binding(cursor, binding),
        binding_uri=binding if ":" in binding else None,  # a custom binding's URI
        operation=None if operation == EMPTY else operation,
        streaming=streaming == "true",
        **fields,  # type: ignore[arg-type]
    )


def _binding(cursor: _Cursor, name: str) -> Binding:
    try:
        return Binding.CUSTOM if ":" in name else Binding(name)
    except ValueError:
        known = ", ".join(binding.value for binding in Binding)
        cursor.fail(f"unknown binding {quoted(name)}; known: {known}", cursor.exchange_line)


def _convert(cursor: _Cursor, meta: _Meta, key: str, value: str) -> object:
    converter = _CONVERTERS.get(key)
    if converter is None:
        return value
    try:
        return converter(value)
    except ValueError:
        cursor.fail(f"bad '{key}' value {quoted(value)}", meta.line_of(key))


def _seconds(cursor: _Cursor, meta: _Meta, key: str) -> int:
    value = meta.one(cursor, key)
    if value is None:
        cursor.fail(f"exchange has no '# {key}:' line", meta.first_line)
    try:
        return parse_seconds(value)
    except FormError as exc:
        cursor.fail(str(exc), meta.line_of(key))


# --- request and response ------------------------------------------------------------------


def _parse_request(cursor: _Cursor, meta: _Meta, aside: Aside) -> tuple[Request, str | None]:
    line = cursor.peek()
    if line is None or line == "" or line.startswith("###"):
        cursor.fail("missing request line (truncated?)")
    match = REQUEST_LINE.fullmatch(line)
    if match is None:
        cursor.fail(f"bad request line {quoted(line)}: expected 'METHOD target HTTP/x'")
    headers, parts = _parse_part(cursor, meta, aside, "request", KEY_REQUEST_BODY, REQUEST_FORMS)
    method, target, version = match.groups()
    request = Request(
        method, aside.value(TARGET, target), headers, parts.body, version, parts.messages
    )
    return request, cursor.peek()


def _parse_response(
    cursor: _Cursor, meta: _Meta, line: str | None, aside: Aside
) -> Response | None:
    declared_none = meta.one(cursor, KEY_RESPONSE)
    if declared_none not in (None, NO_RESPONSE):
        cursor.fail(
            f"'response' can only be 'none', got {quoted(declared_none)}",
            meta.line_of(KEY_RESPONSE),
        )
    status = STATUS_LINE.fullmatch(line) if line is not None else None
    if declared_none is not None:
        if status is not None or meta.one(cursor, KEY_RESPONSE_BODY) is not None:
            cursor.fail(
                "exchange says 'response: none' but has a response", meta.line_of(KEY_RESPONSE)
            )
        return None
    if status is None:
        cursor.fail("expected a status line 'HTTP/x NNN reason' (truncated or bad status line?)")
    headers, parts = _parse_part(cursor, meta, aside, "response", KEY_RESPONSE_BODY, RESPONSE_FORMS)
    version, code, reason = status.groups()
    trailers = _restored_head(cursor, lambda: aside.trailers(parts.trailers))
    return Response(
        int(code),
        aside.value(REASON, reason or ""),
        headers,
        parts.body,
        version,
        parts.events,
        _newline(cursor, meta),
        parts.messages,
        trailers,
    )


def _parse_part(
    cursor: _Cursor, meta: _Meta, aside: Aside, side: str, key: str, forms: Forms
) -> tuple[Headers, Parts]:
    """After a request or status line: the side's headers (restored) and its body region."""
    cursor.skip_line()
    shown = _parse_headers(cursor)
    parts = _parse_region(cursor, meta.one(cursor, key), meta.line_of(key), forms)
    return _restored_head(cursor, lambda: aside.headers(side, shown)), parts


def _newline(cursor: _Cursor, meta: _Meta) -> str:
    name = meta.one(cursor, KEY_SSE_NEWLINE) or "lf"
    if name not in _NEWLINE_BY_NAME:
        cursor.fail(
            f"'sse-newline' must be lf, crlf or cr, got {quoted(name)}",
            meta.line_of(KEY_SSE_NEWLINE),
        )
    return _NEWLINE_BY_NAME[name]


def _parse_headers(cursor: _Cursor) -> Headers:
    text, start = cursor.text, cursor.pos
    # `end` is where the blank line that ends the headers starts, or the end of the text.
    if text.startswith("\n", start) or start == len(text):
        end = start
    else:
        blank = text.find("\n\n", start)
        end = len(text) if blank < 0 else blank + 1
    count = cursor.lines_to(end)
    fields = _fields(HEADER_LINE, text, start, end - 1, count)
    if fields is None:
        bad, line = _first_mismatch(HEADER_LINE, text[start : end - 1])
        _bad_header_line(cursor, line, cursor.lineno + bad)
    if end == len(text):
        cursor.fail("headers not ended by a blank line (truncated?)", cursor.lineno + count)
    cursor.advance(end + 1, count + 1)
    return tuple(fields)


def _bad_header_line(cursor: _Cursor, line: str, lineno: int) -> NoReturn:
    if is_section_start(line):
        cursor.fail(f"missing blank line after headers before {quoted(line)}", lineno)
    cursor.fail(
        f"bad header line {quoted(line)}: expected 'Name: value' or a blank line "
        "(missing blank line after headers?)",
        lineno,
    )


def _parse_region(cursor: _Cursor, form: str | None, form_line: int, forms: Forms) -> Parts:
    first_line, end = cursor.lineno, _region_end(cursor)
    region = cursor.text[cursor.pos : end]  # its lines, each ended by LF
    cursor.advance(end, region.count("\n"))
    if form is None:
        if region:
            cursor.fail("body present but no '# request-body:'/'# response-body:' line", first_line)
        return Parts()
    # The region must be the display and then one blank line.
    if not region.endswith("\n\n") or region == "\n":
        where = cursor.lineno - 1 if region else form_line
        cursor.fail(
            f"body declared as {quoted(form)} is missing or not ended by a blank line (truncated?)",
            where,
        )
    restore = forms.get(form.split(" ")[0])
    if restore is None:
        cursor.fail(f"unknown body form {quoted(form)}", form_line)
    try:
        return restore(form, region[:-2])
    except FormLineError as exc:
        cursor.fail(str(exc), form_line)
    except FormError as exc:
        cursor.fail(str(exc), first_line + exc.offset)


def _region_end(cursor: _Cursor) -> int:
    """Where the body region from the cursor ends: its first `###` or status line, or the end.
    Candidates (`_REGION_STOPS`) are found with `str.find`: most of a big file is bodies."""
    text = cursor.text
    after = cursor.pos - 1  # the LF that ends the line before (a body never starts the file)
    while True:
        found = [i for i in (text.find(stop, after) for stop in _REGION_STOPS) if i >= 0]
        if not found:
            return len(text)
        start = min(found) + 1
        line = text[start : text.index("\n", start)]
        if is_section_start(line):
            return start
        if _STATUS_ATTEMPT.match(line):
            cursor.fail(
                f"bad status line {quoted(line)}: expected 'HTTP/x NNN reason'",
                cursor.lineno + cursor.lines_to(start),
            )
        after = start + len(line)
