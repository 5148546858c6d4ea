"""Render a Capture to `.http` text (sans-I/O).

An exchange is its `###` line, its metadata, then for each part a start line, headers, a
blank line and, with a body, its display and one more blank line (docs/capture-format.md,
"Grammar"); `_heads` says what stays sendable, `_bodies` how a body is shown.  This runs once
per recorded exchange, on the recorder's hot path: plain string building.  It refuses, with
ValueError, the few values the parser could not give back (a header name that is not a token,
an operation with spaces), so `parse(render(c)) == c` for every capture that renders.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

from recorder.capture._bodies import (
    REQUEST_LINE,
    STATUS_LINE,
    format_seconds,
    has_surrogate,
    show_body,
    show_event,
    show_message,
    show_value,
)
from recorder.capture._heads import (
    REASON,
    TRAILER,
    Aside,
    set_aside_headers,
    set_aside_target,
    set_aside_value,
)
from recorder.capture._model import (
    FORMAT_VERSION,
    Capture,
    Exchange,
    Request,
    Response,
    header_value,
)
from recorder.protocol import GRPC_STATUS_NAMES as STATUS_BY_CODE
from recorder.protocol import Classification

VERSION_PATTERN = re.compile(r"# a2a-recorder capture format ([0-9]+)")

# File header keys (one `# key: value` line each; upstream and redacted repeat).
HEADER_RECORDER = "recorder"
HEADER_STARTED = "started"
HEADER_UPSTREAM = "upstream"
HEADER_REDACTED = "redacted"
HEADER_KEYS = (HEADER_RECORDER, HEADER_STARTED, HEADER_UPSTREAM, HEADER_REDACTED)
EXTRA_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

# Exchange metadata: Classification string fields and their keys, in file order.
CLASSIFICATION_KEYS: tuple[tuple[str, str], ...] = (
    ("method", "method"),
    ("version", "version"),
    ("tenant", "tenant"),
    ("task-id", "task_id"),
    ("context-id", "context_id"),
    ("config-id", "config_id"),
    ("a2a-error", "error"),
    ("reason", "reason"),
)
KEY_STREAMING = "streaming"
KEY_STARTED = "started"
KEY_DURATION = "duration"
KEY_NOTE = "note"
KEY_ERROR = "error"
KEY_RESPONSE = "response"  # `none` when no response came
KEY_REQUEST_BODY = "request-body"
KEY_RESPONSE_BODY = "response-body"
KEY_SSE_NEWLINE = "sse-newline"

FORM_EVENT_STREAM = "event-stream"
FORM_GRPC = "grpc"
NO_RESPONSE = "none"
NEWLINES: dict[str, str] = {"\n": "lf", "\r\n": "crlf", "\r": "cr"}
TRAILER_HEAD = "# trailer "
EMPTY = "-"

# gRPC status names by the number as written in `grpc-status`, for the outcome word.
GRPC_STATUS_NAMES: dict[str, str] = {str(code): name for code, name in STATUS_BY_CODE.items()}

_HEADER_NAME = re.compile(r":?[!#$%&'*+.^_`|~0-9A-Za-z-]+")
# A header line's name and value; the one space after the colon is not the value's.
HEADER_LINE = re.compile(f"({_HEADER_NAME.pattern}): ?(.*)")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_UNSAFE_IN_WORD = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def render(capture: Capture) -> str:
    """The whole capture as `.http` text; ValueError for a value that cannot round-trip."""
    numbers = [exchange.number for exchange in capture.exchanges]
    if any(b <= a for a, b in zip(numbers, numbers[1:], strict=False)):
        raise ValueError(f"exchange numbers must increase strictly, got {numbers}")
    return render_header(capture) + "".join(map(render_exchange, capture.exchanges))


def render_header(capture: Capture) -> str:
    """The file header (version line, `# key: value` lines, a blank line), always in the
    current format whatever a parsed capture's was: that is how `migrate` works."""
    fields = [
        (HEADER_RECORDER, capture.recorder_version),
        (HEADER_STARTED, capture.started),
        *((HEADER_UPSTREAM, upstream) for upstream in capture.upstreams),
        *((HEADER_REDACTED, name) for name in capture.redacted),
        *(_extra_field(key, value) for key, value in capture.extra),
    ]
    lines = [
        f"# a2a-recorder capture format {FORMAT_VERSION}",
        *(f"# {key}: {show_value(value)}" for key, value in fields),
        "",
    ]
    return _checked_utf8("\n".join(lines) + "\n", "the header")


def render_exchange(exchange: Exchange) -> str:
    """One exchange: its `###` line, metadata, request and response, ending in a blank line."""
    if exchange.number < 0:
        raise ValueError(f"exchange number must not be negative, got {exchange.number}")
    classification = exchange.classification
    aside = Aside()
    request_form, request_body = _request_body(exchange.request)
    response_form, response_body = _response_body(exchange.response, aside)
    request = _request_context(exchange.request, request_body, aside)
    response = _response_context(exchange.response, response_body, aside)
    binding = classification.binding_name or EMPTY
    lines = [
        f"### {exchange.number} {_operation(classification)} {binding} {outcome(exchange)}",
        *(
            f"# {key}: {value}"
            for key, value in _metadata(exchange, request_form, response_form, aside)
        ),
    ]
    for part in (request, response):
        if part is not None:
            lines += [part["start"], *part["headers"], ""]
            if part["body"] is not None:
                lines += [part["body"], ""]
    return _checked_utf8("\n".join(lines) + "\n", f"exchange {exchange.number}")


def outcome(exchange: Exchange) -> str:
    """The `###` line's last word (A2A error, gRPC status, HTTP status), never parsed back."""
    if exchange.classification.error:
        return _word(exchange.classification.error)
    response = exchange.response
    if response is None:
        return "no-response"
    grpc_status = header_value(response.trailers, "grpc-status") or response.header("grpc-status")
    if grpc_status is not None:
        return GRPC_STATUS_NAMES.get(grpc_status.strip(), _word(grpc_status))
    return str(response.status)


def _word(text: str) -> str:
    return _UNSAFE_IN_WORD.sub("?", "".join(text.split())) or EMPTY


# --- metadata ------------------------------------------------------------------------------


def _metadata(
    exchange: Exchange, request_form: str | None, response_form: str | None, aside: Aside
) -> list[tuple[str, str]]:
    response = exchange.response
    pairs: list[tuple[str, str | None]] = [
        *_classification_pairs(exchange.classification),
        (KEY_STARTED, format_seconds(exchange.started_us, signed=True)),
        (KEY_DURATION, format_seconds(exchange.duration_us, signed=False)),
        *((KEY_NOTE, note) for note in exchange.notes),
        (KEY_ERROR, exchange.error),
        (KEY_RESPONSE, NO_RESPONSE if response is None else None),
        (KEY_REQUEST_BODY, request_form),
        (KEY_RESPONSE_BODY, response_form),
        (KEY_SSE_NEWLINE, _newline_name(response)),
        *aside.pairs(),
    ]
    return [(key, show_value(value)) for key, value in pairs if value is not None]


def _classification_pairs(classification: Classification) -> Iterable[tuple[str, str | None]]:
    for key, attribute in CLASSIFICATION_KEYS:
        value = getattr(classification, attribute)
        yield key, None if value is None else str(value)
    yield KEY_STREAMING, "true" if classification.streaming else None


def _operation(classification: Classification) -> str:
    operation = classification.operation
    if operation is None:
        return EMPTY
    if operation == EMPTY or not _TOKEN.fullmatch(operation):
        raise ValueError(f"operation {operation!r} must be one token and not '-'")
    return operation


def _newline_name(response: Response | None) -> str | None:
    if response is None:
        return None
    name = NEWLINES.get(response.newline)
    if name is None:
        raise ValueError(f"SSE newline must be LF, CRLF or CR, got {response.newline!r}")
    return None if name == "lf" else name


def _extra_field(key: str, value: str) -> tuple[str, str]:
    if key in HEADER_KEYS or not EXTRA_KEY.fullmatch(key):
        raise ValueError(f"extra header key {key!r} is reserved or not a plain word")
    return key, value


# --- request and response ------------------------------------------------------------------


def _request_context(request: Request, body: str | None, aside: Aside) -> dict[str, Any]:
    start = f"{request.method} {set_aside_target(aside, request.target)} {request.http_version}"
    if not REQUEST_LINE.fullmatch(start):
        raise ValueError(f"cannot write request line {start!r}: method or version")
    headers = set_aside_headers(aside, "request", request.headers, has_body=body is not None)
    return {"start": start, "headers": _header_lines(headers), "body": body}


def _response_context(
    response: Response | None, body: str | None, aside: Aside
) -> dict[str, Any] | None:
    if response is None:
        return None
    shown = set_aside_value(aside, REASON, response.reason)
    reason = f" {shown}" if shown else ""
    start = f"{response.http_version} {response.status}{reason}"
    if not 100 <= response.status <= 999 or not STATUS_LINE.fullmatch(start):
        raise ValueError(f"cannot write status line {start!r}")
    headers = set_aside_headers(aside, "response", response.headers, has_body=body is not None)
    return {"start": start, "headers": _header_lines(headers), "body": body}


def _header_lines(headers: Iterable[tuple[str, str]]) -> list[str]:
    return [_header_line(name, value) for name, value in headers]


def _header_line(name: str, value: str) -> str:
    if "\r" in value or "\n" in value:
        raise ValueError(f"header {name!r}: value holds CR or LF")
    if not _header_name_ok(name):
        raise ValueError(f"header name {name!r} is not a token")
    return f"{name}: {value}" if value else f"{name}:"


@functools.lru_cache(maxsize=1024)
def _header_name_ok(name: str) -> bool:
    # Cached: the same few names come with every exchange.  An HTTP/2 pseudo-header keeps
    # its colon (`:authority`).
    return _HEADER_NAME.fullmatch(name) is not None


def _request_body(request: Request) -> tuple[str | None, str | None]:
    if request.messages:
        if request.body:
            raise ValueError("a request holds either a body or gRPC messages, not both")
        form = f"{FORM_GRPC} {count(len(request.messages), 'message')}"
        return form, _blocks([show_message(message) for message in request.messages])
    return show_body(request.body) if request.body else (None, None)


def _response_body(response: Response | None, aside: Aside) -> tuple[str | None, str | None]:
    if response is None:
        return None, None
    kinds = [
        bool(response.body),
        bool(response.events),
        bool(response.messages or response.trailers),
    ]
    if sum(kinds) > 1:
        raise ValueError("a response holds one of a body, SSE events or gRPC messages/trailers")
    if response.events:
        form = f"{FORM_EVENT_STREAM} {count(len(response.events), 'event')}"
        return form, _blocks([show_event(event) for event in response.events])
    if response.messages or response.trailers:
        form = f"{FORM_GRPC} {count(len(response.messages), 'message')}"
        if response.trailers:
            form += f" {count(len(response.trailers), 'trailer')}"
        return form, _blocks(_grpc_blocks(response, aside))
    return show_body(response.body) if response.body else (None, None)


def count(number: int, noun: str) -> str:
    """`1 event`, `5 events`: counts in body forms let a reader notice a cut-off stream."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _grpc_blocks(response: Response, aside: Aside) -> list[list[str]]:
    blocks = [show_message(message) for message in response.messages]
    if response.trailers:
        blocks.append(
            [
                TRAILER_HEAD + _header_line(k, set_aside_value(aside, TRAILER, v, i))
                for i, (k, v) in enumerate(response.trailers)
            ]
        )
    return blocks


def _blocks(blocks: list[list[str]]) -> str:
    return "\n\n".join("\n".join(block) for block in blocks)


def _checked_utf8(text: str, what: str) -> str:
    if has_surrogate(text):  # every display escapes them; this is the last safety net
        raise ValueError(f"{what} cannot be written as UTF-8: it holds a lone surrogate")
    return text
