"""Lint checks on the wire envelope: content types, the A2A-Version header, JSON-RPC, errors.

Each check is a pure `(view, session, spec) -> Violation`s; `_rules.py` says which rule it
serves and where it applies.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from recorder.lint._view import (
    ExchangeView,
    Payload,
    Session,
    Violation,
    major_minor,
)
from recorder.protocol import (
    BODY_MEDIA_TYPES,
    ERROR_DOMAIN,
    ERROR_INFO_TYPE,
    EVENT_STREAM,
    GRPC_STATUS_NAMES,
    Binding,
    ErrorRow,
    SpecVersion,
    Version,
    decode_status_details,
    error_by_code,
    error_by_name,
    error_by_reason,
    media_type,
    value_at,
)

_LABELS = {Binding.JSONRPC: "JSON-RPC", Binding.HTTP_JSON: "HTTP+JSON", Binding.GRPC: "gRPC"}
_VERSION_FORM = re.compile(r"[0-9]+\.[0-9]+")


def _label(view: ExchangeView) -> str:
    if view.is_delivery:
        return "push delivery"
    return _LABELS.get(view.binding, "HTTP") if view.binding else "HTTP"


def _payload_binding(view: ExchangeView) -> Binding | None:
    """The binding whose body rules apply: deliveries use HTTP+JSON payloads (§3.5.1)."""
    return Binding.HTTP_JSON if view.is_delivery else view.binding


# ---- content types (§9.1, §11.1, §14.1, §4.3.3, §9.4.2, §11.7) ----

_BODY_SECTIONS = {Binding.JSONRPC: "§9.1", Binding.HTTP_JSON: "§11.1"}
_STREAM_SECTIONS = {Binding.JSONRPC: "§9.4.2", Binding.HTTP_JSON: "§11.7"}


def _cite(spec: SpecVersion, section: str) -> str:
    return f"A2A {spec.value} {section}"


def request_media_type(
    view: ExchangeView, session: Session, spec: SpecVersion
) -> Iterator[Violation]:
    binding = _payload_binding(view)
    if binding is None or not view.request_body:
        return
    allowed = BODY_MEDIA_TYPES.get((binding, spec))
    if allowed is None:
        return
    raw = view.request_headers.get("content-type")
    section = "§4.3.3, §11.1" if view.is_delivery else _BODY_SECTIONS[binding]
    if media_type(raw) not in allowed:
        yield Violation(
            f"{_label(view)} request body sent as {media_type(raw) or 'untyped'}",
            " or ".join(allowed),
            raw or "(no Content-Type)",
            "request",
            _cite(spec, section),
        )


def response_media_type(
    view: ExchangeView, session: Session, spec: SpecVersion
) -> Iterator[Violation]:
    binding = view.binding
    if view.is_delivery or view.is_card or not view.has_response or binding is None:
        return
    raw = view.response_headers.get("content-type")
    if view.events or (view.stream and view.status == 200 and not view.response_body):
        allowed: tuple[str, ...] | None = (EVENT_STREAM,)
        what, section = "stream", _STREAM_SECTIONS.get(binding)
    else:
        allowed = BODY_MEDIA_TYPES.get((binding, spec)) if view.response_body else None
        what = "error body" if error_row(view) or view.status >= 400 else "body"
        section = _BODY_SECTIONS.get(binding)
    if allowed is not None and media_type(raw) not in allowed:
        yield Violation(
            f"{_label(view)} response {what} sent as {media_type(raw) or 'untyped'}",
            " or ".join(allowed),
            raw or "(no Content-Type)",
            "response",
            _cite(spec, section) if section else None,
        )


# ---- A2A-Version (§3.6, §14.2.1) ----


def version_sent(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    if view.operation is not None and view.asked_version is None:
        carrier = "metadata a2a-version" if view.binding is Binding.GRPC else "header A2A-Version"
        yield Violation(f"the request has no {carrier}", f"{carrier}: 1.0", "(absent)", "request")


def version_form(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    value = view.asked_version
    if value is not None and not _VERSION_FORM.fullmatch(value):
        yield Violation(
            f"A2A-Version {value!r} is not Major.Minor",
            "Major.Minor, such as 1.0",
            value,
            "request",
        )


def version_names(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    asked, spoken = major_minor(view.asked_version), view.speaks
    if view.operation is None or asked is None or spoken is None or asked == spoken.value:
        return
    if asked not in (v.value for v in Version):
        return  # an unknown version: `version.unsupported` says what the answer must be
    served = " and the agent answered it" if not view.classification.error else ""
    yield Violation(
        f"A2A-Version {asked} on a request in v{spoken.value} names "
        f"({view.classification.method}){served}",
        f"v{asked} names, or A2A-Version {spoken.value}",
        f"v{spoken.value} method {view.classification.method}",
        "request",
    )


def version_unsupported(
    view: ExchangeView, session: Session, spec: SpecVersion
) -> Iterator[Violation]:
    if view.operation is None or not view.has_response or view.binding is None:
        return
    declared = session.declared_versions(view.binding)
    if not declared:
        return
    asked = view.asked_version
    requested = major_minor(asked) or asked or "0.3"  # an empty version means 0.3 (§3.6.2)
    error = view.classification.error
    refused = error == "VersionNotSupportedError"
    listed = ", ".join(sorted(declared))
    if requested not in declared and not refused:
        yield Violation(
            f"version {requested} is not among the card's {_label(view)} versions ({listed})",
            "VersionNotSupportedError",
            error or f"a success (HTTP {view.status})",
            "response",
        )
    elif requested in declared and refused and asked:
        yield Violation(
            f"the card declares {_label(view)} version {requested}, but the agent refused it",
            f"the request served (card: {listed})",
            "VersionNotSupportedError",
            "response",
        )


def declares_binding(
    view: ExchangeView, session: Session, spec: SpecVersion
) -> Iterator[Violation]:
    if view.operation is None or session.card is None or view.binding is None:
        return
    if not any(iface.binding is view.binding for iface in session.interfaces):
        declared = sorted({iface.binding.value for iface in session.interfaces})
        yield Violation(
            f"the agent serves {_label(view)}, which its card does not declare",
            f"an interface with protocolBinding {view.binding.value}",
            ", ".join(declared) or "(no interfaces)",
            "card",
        )


# ---- JSON-RPC 2.0 envelopes (§9.3, §9.4.2) ----


def jsonrpc_request(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    body = view.request_json
    if not isinstance(body, Mapping):
        yield Violation(
            "the request body is no JSON object",
            "a JSON-RPC 2.0 request",
            view.request_body[:60].decode("utf-8", "replace"),
            "request",
        )
        return
    yield from _jsonrpc_2_0(body, "request", "request")
    if not _is_id(body.get("id")):
        yield Violation(
            "the request has no usable id (a notification gets no answer)",
            "a string or number id",
            _show(body.get("id")),
            "request",
        )
    if "params" in body and not isinstance(body["params"], Mapping):
        yield Violation(
            "params is no object",
            "params: a request message object",
            _show(body["params"]),
            "request",
        )


def _jsonrpc_2_0(document: Mapping[str, Any], what: str, where: str) -> Iterator[Violation]:
    if document.get("jsonrpc") != "2.0":
        yield Violation(
            f"the {what} is no JSON-RPC 2.0 {what}",
            '"jsonrpc": "2.0"',
            _show(document.get("jsonrpc")),
            where,
        )


def jsonrpc_response(
    view: ExchangeView, session: Session, spec: SpecVersion
) -> Iterator[Violation]:
    request = view.request_json
    request_id = request.get("id") if isinstance(request, Mapping) else None
    for payload in _jsonrpc_documents(view):
        yield from _envelope(payload, request_id)


def _jsonrpc_documents(view: ExchangeView) -> list[Payload]:
    if view.events:
        return [Payload(f"response event {e.index}", e.json) for e in view.events]
    return [Payload("response", view.response_json)] if view.response_body else []


def _envelope(payload: Payload, request_id: Any) -> Iterator[Violation]:
    doc, where = payload.value, payload.where
    if not isinstance(doc, Mapping):
        yield Violation(
            "the response is no JSON object",
            "a JSON-RPC 2.0 response",
            "not JSON" if doc is not None else "null",
            where,
        )
        return
    yield from _jsonrpc_2_0(doc, "response", where)
    null_on_error = doc.get("id") is None and "error" in doc  # allowed when parsing failed
    if _is_id(request_id) and doc.get("id") != request_id and not null_on_error:
        yield Violation(
            "the response id is not the request's", _show(request_id), _show(doc.get("id")), where
        )
    if ("result" in doc) == ("error" in doc):
        yield Violation(
            "a response holds exactly one of result and error",
            "result or error",
            "both" if "result" in doc else "neither",
            where,
        )


def _is_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def _show(value: Any) -> str:
    return "(absent)" if value is None else repr(value)


# ---- errors (§3.3.2, §5.4, §9.5, §10.6, §11.6) ----


def error_row(view: ExchangeView) -> ErrorRow | None:
    """The row of the error this exchange carries: JSON-RPC by code, else the classifier's name."""
    if view.binding is Binding.JSONRPC:
        code = next((value_at(e.value, ("code",)) for e in error_objects(view)), None)
        return error_by_code(code) if _is_id(code) and isinstance(code, int) else None
    name = view.classification.error
    return error_by_name(name) if name else None


def error_objects(view: ExchangeView) -> list[Payload]:
    """The `error` members of the body and of the events."""
    found = [Payload("response", value_at(view.response_json, ("error",)))]
    found += [
        Payload(f"response event {e.index}", value_at(e.json, ("error",))) for e in view.events
    ]
    return [p for p in found if p.value is not None]


def jsonrpc_error(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    for payload in error_objects(view):
        error, where = payload.value, payload.where
        if not isinstance(error, Mapping):
            yield Violation("error is no object", "{code, message, data?}", _show(error), where)
            continue
        code, message = error.get("code"), error.get("message")
        if not (isinstance(code, int) and _is_id(code)):
            yield Violation("error.code is no integer", "an integer code", _show(code), where)
        if not isinstance(message, str):
            yield Violation("error.message is no string", "a message", _show(message), where)
        yield from _details(error, "data", where)


def http_json_error(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    errors = error_objects(view)
    if view.status >= 400 and not view.events and not errors:
        yield Violation(
            f"HTTP {view.status} without a google.rpc.Status body",
            '{"error": {"code", "status", "message", "details"}}',
            view.response_body[:60].decode("utf-8", "replace") or "(empty body)",
            "response",
        )
    for payload in errors:
        status, where = payload.value, payload.where
        if not isinstance(status, Mapping):
            yield Violation("error is no object", "a google.rpc.Status", _show(status), where)
            continue
        code = status.get("code")
        if where == "response" and code != view.status:
            yield Violation(
                "error.code is not the HTTP status", str(view.status), _show(code), where
            )
        if not isinstance(status.get("message"), str):
            yield Violation(
                "error.message is no string", "a message", _show(status.get("message")), where
            )
        yield from _details(status, "details", where)


def _details(error: Mapping[str, Any], key: str, where: str) -> Iterator[Violation]:
    details = error.get(key)
    if details is None:
        return
    if not isinstance(details, list):
        yield Violation(
            f"error.{key} is no array", "an array of objects with @type", _show(details), where
        )
        return
    for index, item in enumerate(details):
        if not (isinstance(item, Mapping) and isinstance(item.get("@type"), str)):
            yield Violation(
                f"error.{key}[{index}] has no @type", "an object with @type", _show(item), where
            )


def grpc_error(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    status = view.grpc_status
    if status in (None, "0"):
        return
    if not view.trailers.get("grpc-message"):
        yield Violation(
            "the error has no grpc-message", "a human-readable message", "(absent)", "trailers"
        )
    raw = view.trailers.get("grpc-status-details-bin")
    if raw is None:
        return
    decoded = decode_status_details(raw)
    if decoded is None:
        yield Violation(
            "grpc-status-details-bin is no google.rpc.Status", "a Status", raw[:40], "trailers"
        )
    elif str(decoded["code"]) != status:
        yield Violation(
            "the Status in grpc-status-details-bin has another code",
            status,
            str(decoded["code"]),
            "trailers",
        )


def error_info(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    row = error_row(view)
    if row is None or row.standard:
        return
    details = _error_details(view)
    infos = [d for d in details if d.get("@type") == ERROR_INFO_TYPE]
    if not infos:
        yield Violation(
            f"{row.name} carries no google.rpc.ErrorInfo",
            f"ErrorInfo reason {row.reason}, domain {ERROR_DOMAIN}",
            f"details: {[d.get('@type') for d in details]}" if details else "no details",
            "response",
        )
        return
    info = infos[0]
    if info.get("reason") != row.reason:
        named = error_by_reason(str(info.get("reason")))
        also = f" ({named.name}, code {named.code})" if named else ""
        yield Violation(
            f"the ErrorInfo reason does not name {row.name}",
            str(row.reason),
            f"{info.get('reason')}{also}",
            "response",
        )
    if info.get("domain") != ERROR_DOMAIN:
        yield Violation(
            "the ErrorInfo domain is not A2A's", ERROR_DOMAIN, _show(info.get("domain")), "response"
        )


def _error_details(view: ExchangeView) -> list[Mapping[str, Any]]:
    if view.binding is Binding.GRPC:
        raw = view.trailers.get("grpc-status-details-bin")
        decoded = decode_status_details(raw) if raw else None
        items: Any = decoded["details"] if decoded else []
    else:
        key = "data" if view.binding is Binding.JSONRPC else "details"
        items = next((value_at(e.value, (key,)) for e in error_objects(view)), None)
    return [d for d in items if isinstance(d, Mapping)] if isinstance(items, list) else []


def error_mapping(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    row = error_row(view)
    if row is None or row.standard:
        return
    if view.binding is Binding.HTTP_JSON and view.status >= 400:
        expected_http = expected_http_status(row, spec)
        if view.status != expected_http:
            yield Violation(
                f"{row.name} sent with HTTP {view.status}",
                f"HTTP {expected_http}",
                f"HTTP {view.status}",
                "response",
            )
    elif view.binding is Binding.GRPC and view.grpc_status:
        expected = expected_grpc_status(row, spec)
        actual = _grpc_name(view.grpc_status)
        if actual != expected:
            yield Violation(f"{row.name} sent with gRPC {actual}", expected, actual, "trailers")


def expected_http_status(row: ErrorRow, spec: SpecVersion) -> int:
    """§5.4's HTTP column for an error, in the spec version given."""
    if spec is SpecVersion.V1_0_0 and row.http_status_v1_0_0 is not None:
        return row.http_status_v1_0_0
    return row.http_status


def expected_grpc_status(row: ErrorRow, spec: SpecVersion) -> str:
    """§5.4's gRPC column for an error, in the spec version given."""
    if spec is SpecVersion.V1_0_0 and row.grpc_status_v1_0_0 is not None:
        return row.grpc_status_v1_0_0
    return row.grpc_status


def _grpc_name(status: str) -> str:
    return GRPC_STATUS_NAMES.get(int(status), status) if status.isdigit() else status
