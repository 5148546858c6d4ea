"""The A2A error an answer carries, read in its binding's own shape.

One small reader per binding (`_ERROR_SHAPES`); pure, and never raises on junk.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from recorder.protocol._errors import (
    ERROR_INFO_TYPE,
    GRPC_STATUS_NAMES,
    ErrorRow,
    error_by_code,
    error_by_reason,
    errors_by_grpc_status,
    errors_by_http,
    unknown_error_name,
)
from recorder.protocol._grpc import DETAILS_HEADER, decode_status_details, status_reason
from recorder.protocol._likes import ResponseLike, lower_headers
from recorder.protocol._paths import parse_json, value_at
from recorder.protocol._sse import event_data, event_type
from recorder.protocol._types import Binding


def response_error(binding: Binding | None, response: ResponseLike) -> str | None:
    """The name of the A2A error a response carries, by ErrorInfo reason, then by status
    (JSON-RPC: code), or None; a status >= 400 is at least `HTTPError(<status>)`, and a bare
    message `error` (a2a-dotnet's) `...(no code)`."""
    reader = _ERROR_SHAPES.get(binding) if binding is not None else None
    found = reader(response) if reader is not None else None
    if found is None and response.status >= 400:
        found = unknown_error_name("HTTPError", response.status)
    return found


def _jsonrpc_error(response: ResponseLike) -> str | None:
    for document in _documents(response):
        error = value_at(document, ("error",), snake_case=True)
        if isinstance(error, Mapping) and "code" in error:
            return _name_jsonrpc_code(error.get("code"))
    return _bare_error(response, "JSONRPCError")


def _name_jsonrpc_code(code: object) -> str:
    row = error_by_code(code) if isinstance(code, int) and not isinstance(code, bool) else None
    return row.name if row is not None else unknown_error_name("JSONRPCError", repr(code))


def _rest_error(response: ResponseLike) -> str | None:
    for document in _documents(response):
        status = value_at(document, ("error",), snake_case=True)
        if isinstance(status, Mapping) and ("status" in status or "code" in status):
            return _name_rest_status(status, response.status)
    return _bare_error(response, "HTTPError")


def _bare_error(response: ResponseLike, kind: str) -> str | None:
    """A bare message `error` in a 2xx/3xx answer (a failing status names the error itself)."""
    if response.status >= 400:
        return None
    for document in _documents(response):
        error = document.get("error") if isinstance(document, Mapping) else None
        if isinstance(error, str) and error:
            return unknown_error_name(kind, "no code")
    return None


def _name_rest_status(status: Mapping[str, Any], http_status: int) -> str:
    row = _row_by_reason(status.get("details"))
    if row is not None:
        return row.name
    code = status.get("code")
    http = code if isinstance(code, int) and http_status < 400 else http_status
    name = status.get("status") if isinstance(status.get("status"), str) else None
    rows = errors_by_http(http, name)
    if len(rows) == 1:
        return rows[0].name
    return unknown_error_name("HTTPError", f"{http} {name}" if name else http)


def _row_by_reason(details: object) -> ErrorRow | None:
    if not isinstance(details, list):
        return None
    for detail in details:
        if isinstance(detail, Mapping) and detail.get("@type") == ERROR_INFO_TYPE:
            reason = detail.get("reason")
            row = error_by_reason(reason) if isinstance(reason, str) else None
            if row is not None:
                return row
    return None


def _documents(response: ResponseLike) -> list[object]:
    """The body's JSON, then each SSE event's (error events first)."""
    documents = [parse_json(response.body)]
    events = [tuple(event.lines) for event in response.events]
    events.sort(key=lambda lines: event_type(lines) != "error")
    documents += [parse_json(event_data(lines)) for lines in events]
    return [d for d in documents if isinstance(d, Mapping)]


def _grpc_error(response: ResponseLike) -> str | None:
    metadata = lower_headers(response.trailers)
    if "grpc-status" not in metadata:
        metadata = lower_headers(response.headers)  # trailers-only response
    raw = metadata.get("grpc-status", "").strip()
    if not raw:
        return None
    if not (raw.isascii() and raw.isdigit()):
        return unknown_error_name("GRPCError", raw)
    code = int(raw)
    if code == 0:
        return None
    reason = status_reason(decode_status_details(metadata.get(DETAILS_HEADER)))
    row = error_by_reason(reason) if reason else None
    if row is not None:
        return row.name
    rows = errors_by_grpc_status(code)
    if len(rows) == 1:
        return rows[0].name
    return unknown_error_name("GRPCError", GRPC_STATUS_NAMES.get(code, str(code)))


_ERROR_SHAPES: dict[Binding, Callable[[ResponseLike], str | None]] = {
    Binding.JSONRPC: _jsonrpc_error,
    Binding.HTTP_JSON: _rest_error,
    Binding.GRPC: _grpc_error,
}
