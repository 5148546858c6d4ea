"""What a body region's display holds, restored (pure): a body, SSE events, or gRPC messages and
trailers, by the region's form (`# response-body: event-stream 3 events`).  A problem is a
`FormError` with the line inside the display, or a `FormLineError` for the form's own line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from recorder._errors import FormError, FormLineError
from recorder.capture._bodies import quoted, restore_body, restore_event, restore_message
from recorder.capture._model import GrpcMessage, Headers, SseEvent
from recorder.capture._render import FORM_EVENT_STREAM, FORM_GRPC, HEADER_LINE, TRAILER_HEAD

_EVENT_STREAM_FORM = re.compile(FORM_EVENT_STREAM + r" ([0-9]+) events?")
_GRPC_FORM = re.compile(FORM_GRPC + r" ([0-9]+) messages?(?: ([0-9]+) trailers?)?")


@dataclass(slots=True)  # not frozen: a frozen dataclass is slower to make, and this is internal
class Parts:
    body: bytes = b""
    events: tuple[SseEvent, ...] = ()
    messages: tuple[GrpcMessage, ...] = ()
    trailers: Headers = ()


def _body_parts(form: str, display: str) -> Parts:
    return Parts(body=restore_body(form, display))


def _blocks(display: str) -> list[tuple[int, list[str]]]:
    """Split a display into blank-line separated blocks, each with its 0-based line offset."""
    blocks: list[tuple[int, list[str]]] = []
    padded = [*display.split("\n"), ""]
    start = 0
    while start < len(padded):
        end = padded.index("", start)  # a C search: event streams are many lines
        if end == start:
            raise FormError("empty block (two blank lines in a row?)", end)
        blocks.append((start, padded[start:end]))
        start = end + 1
    return blocks


def _event_parts(form: str, display: str) -> Parts:
    declared = _counts(_EVENT_STREAM_FORM, form)
    events: list[SseEvent] = []
    for offset, block in _blocks(display):
        try:
            events.append(restore_event(block))
        except FormError as exc:
            raise FormError(str(exc), offset + exc.offset) from exc
    _check_count(declared[0], len(events), "SSE events")
    return Parts(events=tuple(events))


def _grpc_parts(form: str, display: str, *, trailers_allowed: bool) -> Parts:
    declared = _counts(_GRPC_FORM, form)
    blocks = _blocks(display)
    trailers: Headers = ()
    if blocks[-1][1][0].startswith(TRAILER_HEAD):
        if not trailers_allowed:
            raise FormError("a request has no trailers", blocks[-1][0])
        trailers = _trailers(*blocks.pop())
    messages: list[GrpcMessage] = []
    for offset, block in blocks:
        try:
            messages.append(restore_message(block))
        except FormError as exc:
            raise FormError(str(exc), offset + exc.offset) from exc
    _check_count(declared[0], len(messages), "gRPC messages")
    _check_count(declared[1] or 0, len(trailers), "trailers")
    return Parts(messages=tuple(messages), trailers=trailers)


def _trailers(offset: int, block: list[str]) -> Headers:
    trailers: list[tuple[str, str]] = []
    for index, line in enumerate(block):
        field = line[len(TRAILER_HEAD) :] if line.startswith(TRAILER_HEAD) else ""
        match = HEADER_LINE.fullmatch(field)
        if match is None:
            raise FormError(
                f"bad trailer line {quoted(line)}: expected '# trailer name: value'", offset + index
            )
        trailers.append(match.groups())  # type: ignore[arg-type]
    return tuple(trailers)


def _counts(pattern: re.Pattern[str], form: str) -> tuple[int, int | None]:
    match = pattern.fullmatch(form)
    if match is None:
        raise FormLineError(f"bad body form {quoted(form)}")
    extra = match.group(2) if match.re.groups > 1 else None
    return int(match.group(1)), None if extra is None else int(extra)


def _check_count(declared: int, found: int, what: str) -> None:
    if declared != found:
        raise FormLineError(f"{declared} {what} declared, {found} found (truncated?)")


Forms = dict[str, Callable[[str, str], Parts]]  # (form, display) -> parts
REQUEST_FORMS: Forms = {
    "text": _body_parts,
    "base64": _body_parts,
    "json": _body_parts,
    FORM_GRPC: lambda form, display: _grpc_parts(form, display, trailers_allowed=False),
}
RESPONSE_FORMS: Forms = {
    **REQUEST_FORMS,
    FORM_EVENT_STREAM: _event_parts,
    FORM_GRPC: lambda form, display: _grpc_parts(form, display, trailers_allowed=True),
}
