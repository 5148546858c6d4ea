"""Whole messages between v0.3 and v1.0: names, bodies, streams, headers, errors (pure).

A JSON-RPC `error` keeps its code; an HTTP+JSON or gRPC error becomes v1.0's `google.rpc.Status`
with an ErrorInfo (written from the error table when a v0.3 answer had none) or v0.3's
`{"message"}`.  A v0.3 proto-JSON document is cut to its descriptor, each member cut listed as
lost.  Every function returns what it renamed and lost, and never raises on odd input.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from google.protobuf import descriptor as pb_descriptor

from recorder.protocol import (
    ERROR_DOMAIN,
    ERROR_INFO_TYPE,
    ERRORS,
    GRPC_STATUS_CODES,
    GRPC_STATUS_NAMES,
    V03_CONTENT_TYPES,
    V03_HEADER_RENAMES,
    V03_SERVICE,
    V1_SERVICE,
    VERSION_HEADER,
    ErrorRow,
    Operation,
    Version,
    a2a_pool,
    error_by_name,
    error_by_reason,
    errors_by_grpc_status,
    errors_by_http,
    operation,
)
from recorder.versions._tables import (
    ROOTS,
    Dialect,
    Lost,
    Rename,
    RenameRule,
    Translated,
    short,
)
from recorder.versions._walk import Walk

Json = Any
Side = Literal["request", "response"]
_R = RenameRule


# ---- documents -----------------------------------------------------------------------------


def body(
    document: Json, name: str, side: Side, source: Dialect, target: Dialect, *, path: str = "$"
) -> Translated:
    """One JSON document of operation `name`, from `source` to `target`, saying defaults too."""
    walk = Walk(defaults=True)
    if source is target:
        return walk.result(document)

    def step(value: Json, kind: str, here: str) -> Json:
        return walk.write(walk.read(value, kind, source, here), kind, target, here)

    value = _document(walk, document, name, side, (source.version, target.version), step, path)
    if target is Dialect.V03_PROTO and not _is_envelope(document):
        value = _pruned(walk, value, name, side, path)
    return walk.result(value)


def read_body(
    document: Json, name: str, side: Side, source: Dialect, *, path: str = "$", keep: bool = False
) -> Translated:
    """One JSON document of operation `name` in v1.0 (`keep`: what v1.0 cannot carry stays)."""
    walk = Walk(keep=keep)

    def step(value: Json, kind: str, here: str) -> Json:
        return walk.read(value, kind, source, here)

    versions = (source.version, Version.V1_0)
    return walk.result(_document(walk, document, name, side, versions, step, path))


Step = Callable[[Json, str, str], Json]


def _document(
    walk: Walk,
    document: Json,
    name: str,
    side: Side,
    versions: tuple[Version, Version],
    step: Step,
    path: str,
) -> Json:
    if _is_envelope(document):
        return _envelope(walk, document, name, side, versions, step, path)
    kind = root(name, side)
    if kind is None or _is_error(document):
        return document
    return step(document, kind, path)


def root(name: str, side: Side) -> str | None:
    """The root type of operation `name`'s document (None: not translated)."""
    found = ROOTS.get(name)
    return None if found is None else found[0 if side == "request" else 1]


def _envelope(
    walk: Walk,
    envelope: dict[str, Json],
    name: str,
    side: Side,
    versions: tuple[Version, Version],
    step: Step,
    path: str,
) -> dict[str, Json]:
    out = dict(envelope)
    method, (source, to) = out.get("method"), versions
    row, new = operation(name, source), jsonrpc_method(name, to)
    named = row is not None and method in row.jsonrpc_methods
    if isinstance(method, str) and named and new and new != method:
        old, v1 = (new, method) if to is Version.V0_3 else (method, new)
        walk.note(_R.METHOD, old, v1, f"{path}.method")
        out["method"] = new
    member = "params" if side == "request" else "result"
    kind = root(name, side)
    if kind is not None and member in out:
        out[member] = step(out[member], kind, f"{path}.{member}")
    return out


def jsonrpc_method(name: str, version: Version) -> str | None:
    row = operation(name, version)
    return row.jsonrpc_method if row is not None and row.jsonrpc_method else None


def _is_envelope(document: Json) -> bool:
    return isinstance(document, dict) and "jsonrpc" in document


def _is_error(document: Json) -> bool:
    return isinstance(document, dict) and isinstance(document.get("error"), dict)


def stream(
    documents: Sequence[Json], name: str, source: Dialect, target: Dialect
) -> tuple[list[Json], tuple[Rename, ...], tuple[Lost, ...]]:
    """A stream's documents, each a `body`; in v0.3 the last status update is always `final`."""
    out: list[Json] = []
    renames: list[Rename] = []
    lost: list[Lost] = []
    for i, document in enumerate(documents):
        found = body(document, name, "response", source, target, path=f"events[{i}]")
        out.append(found.value)
        renames.extend(found.renames)
        lost.extend(found.lost)
    if target is not Dialect.V1 and out:
        _final(out[-1])
    return out, tuple(renames), tuple(lost)


def _final(document: Json) -> None:
    """Mark the last status update `final`, in place (it is the translator's own copy)."""
    inner = document.get("result", document) if isinstance(document, dict) else None
    if isinstance(inner, dict):
        update = inner.get("statusUpdate") if "statusUpdate" in inner else inner
        if isinstance(update, dict) and "final" in update:
            update["final"] = True


# ---- names and headers ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Target:
    target: str
    renames: tuple[Rename, ...] = ()


def target(name: str, verb: str, where: str, binding: str, source: Version, to: Version) -> Target:
    """The request target of operation `name` in version `to`, under the same base path."""
    old, new = operation(name, source), operation(name, to)
    if old is None or new is None or source is to:
        return Target(where)
    if binding == "GRPC":
        return _grpc_target(old, new, where)
    if binding != "HTTP+JSON":
        return Target(where)
    return _route_target(old, new, verb, where)


def _grpc_target(old: Operation, new: Operation, where: str) -> Target:
    if where != old.grpc_path or not new.grpc_path:
        return Target(where)
    v03, v1 = (old, new) if old.version is Version.V0_3 else (new, old)
    notes = [Rename(_R.GRPC_SERVICE, V03_SERVICE, V1_SERVICE, "request.target")]
    if v03.grpc_rpc != v1.grpc_rpc:
        notes.append(Rename(_R.GRPC_RPC, v03.grpc_rpc, v1.grpc_rpc, "request.target"))
    return Target(new.grpc_path, tuple(notes))


def _route_target(old: Operation, new: Operation, verb: str, where: str) -> Target:
    path, sep, query = where.partition("?")
    for route in old.routes:
        found = (
            route.match_tail(path) if route.verb == verb.upper() and not route.has_tenant else None
        )
        if found is None:
            continue
        to = next((r for r in new.routes if r.verb == route.verb and not r.has_tenant), None)
        to = to or next((r for r in new.routes if not r.has_tenant), None)
        if to is None:
            return Target(where)
        base, params = found
        moved = base + to.fill(params)
        v03, v1 = (path, moved) if old.version is Version.V0_3 else (moved, path)
        return Target(moved + sep + query, (Rename(_R.ROUTE, v03, v1, "request.target"),))
    return Target(where)


Headers = tuple[tuple[str, str], ...]


def headers(
    found: Iterable[tuple[str, str]], side: Side, source: Version, to: Version
) -> tuple[Headers, tuple[Rename, ...]]:
    """Headers in version `to`: extensions, `A2A-Version`, an answer's HTTP+JSON content type."""
    if source is to:
        return tuple(found), ()
    out: list[tuple[str, str]] = []
    notes: list[Rename] = []
    renames = (
        V03_HEADER_RENAMES if to is Version.V1_0 else {v: k for k, v in V03_HEADER_RENAMES.items()}
    )
    for key, value in found:
        low = key.lower()
        if low == VERSION_HEADER.lower():
            continue
        if low in renames:
            notes.append(_header_note(low, renames[low], to))
            key = renames[low]
        if low == "content-type" and side == "response":
            value = _content_type(value, to)
        out.append((key, value))
    if side == "request" and to is Version.V1_0:
        out.append((VERSION_HEADER, str(Version.V1_0)))
        notes.append(Rename(_R.HEADER, "(none)", f"{VERSION_HEADER}: 1.0", "request.header"))
    return tuple(out), tuple(notes)


def _header_note(old: str, new: str, to: Version) -> Rename:
    v03, v1 = (old, new) if to is Version.V1_0 else (new, old)
    return Rename(_R.HEADER, v03, v1, f"header:{old}")


_V03_CONTENT_TYPES: Mapping[str, str] = {new: old for old, new in V03_CONTENT_TYPES.items()}


def _content_type(value: str, to: Version) -> str:
    """An answer's content type in `to`; a v0.3 one stays in v1.0 (a2a-sdk's errors are JSON)."""
    if to is Version.V1_0:
        return value
    media, sep, rest = value.partition(";")
    return _V03_CONTENT_TYPES.get(media.strip(), media) + sep + rest


# ---- errors --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ErrorAnswer:
    """An error in the other version: HTTP status or gRPC code, body or message, gRPC details."""

    status: int
    document: Json
    details: Json = None
    renames: tuple[Rename, ...] = ()
    lost: tuple[Lost, ...] = ()


def rest_error(status: int, document: Json, source: Version, to: Version) -> ErrorAnswer:
    """An HTTP+JSON error answer in version `to` (a success is unchanged)."""
    if status < 400 or source is to:
        return ErrorAnswer(status, document)
    if to is Version.V0_3:
        return _rest_to_v03(status, document)
    return _rest_to_v1(status, document)


def _rest_to_v03(status: int, document: Json) -> ErrorAnswer:
    error = document.get("error") if isinstance(document, dict) else None
    if not isinstance(error, dict):
        return ErrorAnswer(status, document)
    row = _row_by_reason(error.get("details")) or _first(
        errors_by_http(status, error.get("status"))
    )
    new = (row.http_status_v0_3 if row else None) or status
    message = error.get("message", row.message if row else "")
    lost = tuple(
        Lost(f"body.error.{key}", short(error[key]), "a v0.3 error body is {message} only")
        for key in ("status", "details")
        if key in error
    )
    old = f"{{message}} (HTTP {new})"
    v1 = f"google.rpc.Status{_reason(row)} (HTTP {status})"
    return ErrorAnswer(new, {"message": message}, None, (Rename(_R.ERROR, old, v1, "body"),), lost)


def _rest_to_v1(status: int, document: Json) -> ErrorAnswer:
    if isinstance(document, dict) and isinstance(document.get("error"), dict):
        return ErrorAnswer(status, document)  # already v1.0-shaped
    message = document.get("message") if isinstance(document, dict) else None
    text = message if isinstance(message, str) else ""
    row = _row_by_text(text) or _by_message(_v03_http(status), text)
    new = row.http_status if row else status
    error: dict[str, Json] = {"code": new, "status": row.grpc_status if row else _status_for(new)}
    error["message"] = text or (row.message if row else "")
    if row is not None and row.reason:
        error["details"] = [error_info(row)]
    old = f"{{message}} (HTTP {status})"
    v1 = f"google.rpc.Status{_reason(row)} (HTTP {new}; the ErrorInfo written from the error table)"
    return ErrorAnswer(new, {"error": error}, None, (Rename(_R.ERROR, old, v1, "body"),))


def grpc_error(code: int, message: str, details: Json, source: Version, to: Version) -> ErrorAnswer:
    """A gRPC error status in version `to`, with `google.rpc.Status` details (a dict or None)."""
    if code == 0 or source is to:
        return ErrorAnswer(code, message, details)
    infos = details.get("details") if isinstance(details, dict) else None
    if to is Version.V0_3:
        row = _row_by_reason(infos) or _first(errors_by_grpc_status(code))
        name = (row.grpc_status_v0_3 if row else None) or GRPC_STATUS_NAMES.get(code, "")
        new = GRPC_STATUS_CODES.get(name, code)
        old, v1 = (
            f"status {name or code}",
            f"status {GRPC_STATUS_NAMES.get(code, code)}{_reason(row)}",
        )
        return ErrorAnswer(new, message, details, (Rename(_R.ERROR, old, v1, "status"),))
    row = _row_by_text(message) or _by_message(_v03_grpc(code), message)
    if row is None:
        return ErrorAnswer(code, message, details)
    if not infos:
        details = {"code": row.grpc_code, "message": message, "details": [error_info(row)]}
    old = f"status {GRPC_STATUS_NAMES.get(code, code)}"
    v1 = f"status {row.grpc_status}{_reason(row)} (the ErrorInfo written from the error table)"
    return ErrorAnswer(row.grpc_code, message, details, (Rename(_R.ERROR, old, v1, "status"),))


def error_info(row: ErrorRow) -> dict[str, Json]:
    """The `google.rpc.ErrorInfo` a v1.0 agent sends with this error (spec §10.6, §11.6)."""
    return {"@type": ERROR_INFO_TYPE, "reason": row.reason, "domain": ERROR_DOMAIN, "metadata": {}}


def _row_by_reason(details: Json) -> ErrorRow | None:
    for detail in details if isinstance(details, list) else ():
        reason = detail.get("reason") if isinstance(detail, dict) else None
        if isinstance(reason, str) and error_by_reason(reason) is not None:
            return error_by_reason(reason)
    return None


def _row_by_text(text: str) -> ErrorRow | None:
    """The error a v0.3 message names (`TaskNotFoundError: Task not found`)."""
    name = text.partition(":")[0].strip()
    return error_by_name(name) if name else None


def _by_message(rows: Sequence[ErrorRow], text: str) -> ErrorRow | None:
    """The row whose message `text` starts with, else the first."""
    return next((r for r in rows if text.lower().startswith(r.message.lower())), _first(rows))


def _v03_http(status: int) -> tuple[ErrorRow, ...]:
    return tuple(r for r in ERRORS if r.http_status_v0_3 == status)


def _v03_grpc(code: int) -> tuple[ErrorRow, ...]:
    name = GRPC_STATUS_NAMES.get(code)
    return tuple(r for r in ERRORS if r.grpc_status_v0_3 == name)


def _first(rows: Sequence[ErrorRow]) -> ErrorRow | None:
    return rows[0] if rows else None


def _reason(row: ErrorRow | None) -> str:
    return f" {row.reason}" if row is not None and row.reason else ""


_HTTP_STATUS_NAMES: Mapping[int, str] = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 500: "INTERNAL"}


def _status_for(http: int) -> str:
    return _HTTP_STATUS_NAMES.get(http, "UNKNOWN")


# ---- proto-JSON to its descriptor ------------------------------------------------------------

# Message types whose JSON is not an object of fields: never walked.
_OPAQUE = frozenset(
    {"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue",
     "google.protobuf.Timestamp", "google.protobuf.Any", "google.protobuf.Empty"}
)  # fmt: skip


def _pruned(walk: Walk, document: Json, name: str, side: Side, path: str) -> Json:
    row = operation(name, Version.V0_3)
    type_name = (row.request_type if side == "request" else row.response_type) if row else ""
    if not type_name:
        return document
    try:
        descriptor = a2a_pool().FindMessageTypeByName(type_name)
    except KeyError:
        return document
    return _prune(walk, document, descriptor, path)


def _prune(walk: Walk, value: Json, descriptor: pb_descriptor.Descriptor, path: str) -> Json:
    if descriptor.full_name in _OPAQUE or not isinstance(value, dict):
        return value
    fields = {f.json_name: f for f in descriptor.fields}
    fields.update({f.name: f for f in descriptor.fields})
    out: dict[str, Json] = {}
    for key, item in value.items():
        field = fields.get(key)
        if field is None:
            walk.lose_value(
                item, f"{path}.{key}", f"{descriptor.name} of the v0.3 proto has no {key}"
            )
            continue
        out[key] = _prune_field(walk, item, field, f"{path}.{key}")
    return out


def _prune_field(walk: Walk, value: Json, field: pb_descriptor.FieldDescriptor, path: str) -> Json:
    child = field.message_type
    if child is None:
        return value
    if child.GetOptions().map_entry:
        entry = child.fields_by_name["value"].message_type
        if entry is None or not isinstance(value, dict):
            return value
        return {k: _prune(walk, v, entry, f"{path}.{k}") for k, v in value.items()}
    if field.is_repeated and isinstance(value, list):
        return [_prune(walk, v, child, f"{path}[{i}]") for i, v in enumerate(value)]
    return _prune(walk, value, child, path)


def wire_name(name: str, binding: str, verb: str, version: Version) -> str | None:
    """Operation `name` on the wire in `version`: a JSON-RPC method, gRPC path or `VERB /route`."""
    row = operation(name, version)
    if row is None:
        return None
    if binding == "GRPC":
        return row.grpc_path or None
    if binding == "JSONRPC":
        return row.jsonrpc_method or None
    route = next((r for r in row.routes if not r.has_tenant and r.verb == verb.upper()), None)
    return f"{route.verb} {route.template}" if route is not None else None
