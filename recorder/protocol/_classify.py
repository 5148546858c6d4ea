"""Classify one exchange: binding, operation, version, ids, and the A2A error it carried.

Strategy: a pure function from request (and optionally response) values to a
`Classification`.  The request is tried against recognisers in a fixed order; the first that
claims it wins:

1. gRPC: `content-type: application/grpc*`; the `:path` is looked up in the service tables.
2. Agent card: GET `<any base>/.well-known/agent-card.json` (or the v0.2 `agent.json`).
3. Push delivery to a webhook path the caller names (`webhook_paths`).
4. The card's interfaces: a request under a JSON-RPC interface URL (trailing slash allowed)
   is JSON-RPC; under an HTTP+JSON interface URL its remainder must be a route exactly.
5. JSON-RPC by body: a POST whose JSON object has `"jsonrpc": "2.0"`.
6. HTTP+JSON by path suffix: the route table is matched against every suffix of the path.
7. Push delivery by heuristic: a POST of a StreamResponse-shaped object (v1.0 `task`,
   `message`, `statusUpdate`, `artifactUpdate`, or v0.3 `kind`) with an
   `X-A2A-Notification-Token` header, or of a task event shape (not a bare `message`) at a path
   that is no A2A route.
8. Anything else is not A2A, and `reason` says why.

**The tenant rule (rule 6, no card).**  `/a2a/rest/acme/tasks/1` reads as base `/a2a/rest`
with tenant `acme`, or as base `/a2a/rest/acme` with no tenant; a card settles it, the path
alone cannot.  Without a card the more specific route wins first (literal characters matched:
`/v1/tasks/{id}` is v0.3 GetTask, not tenant `v1`); between a tenant and a plain reading of the
same route, the tenant reading wins unless the would-be tenant is a common base-path word
(`BASE_PATH_WORDS`: `a2a`, `rest`, `api`, ...).

**Version.**  Names decide: PascalCase JSON-RPC methods, tenant-or-plain routes and
`lf.a2a.v1` are 1.0; slash methods, `/v1/` routes and `a2a.v1` are 0.3, whatever the
`A2A-Version` header says.  Where names are shared (the card fetch, unknown methods) the header
is recorded; push deliveries go by body shape.

The function never raises: malformed bodies, unknown methods and junk headers give a
classification with `operation=None` and a `reason`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlsplit

from recorder.protocol._cards import Interface, parse_version
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
from recorder.protocol._operations import (
    V03_SERVICE,
    V1_SERVICE,
    Operation,
    RouteMatch,
    match_routes,
    operation_by_grpc_path,
    operation_by_jsonrpc_method,
)
from recorder.protocol._paths import NOT_JSON, parse_json, value_at
from recorder.protocol._sse import event_data, event_type
from recorder.protocol._states import STREAM_MEMBERS, V03_KINDS
from recorder.protocol._types import AGENT_CARD, PUSH_DELIVERY, Binding, Classification, Version

# Path segments that name a mount point, never a tenant (the no-card tenant rule above).
BASE_PATH_WORDS: frozenset[str] = frozenset(
    {"a2a", "rest", "api", "http", "json", "http+json", "http-json", "httpjson", "jsonrpc",
     "json-rpc", "grpc", "v1", "v2", "agent", "agents"}
)  # fmt: skip
CARD_PATHS: tuple[str, ...] = ("/.well-known/agent-card.json", "/.well-known/agent.json")
NOTIFICATION_TOKEN_HEADER = "x-a2a-notification-token"
STREAM_RESPONSE_MEMBERS: tuple[str, ...] = STREAM_MEMBERS
V03_EVENT_KINDS: frozenset[str] = frozenset(V03_KINDS)
_RESOURCE = re.compile(r"tasks/([^/]+)(?:/pushNotificationConfigs/([^/]+))?")


# ---- what the classifier reads (recorder.capture's Request/Response fit these) ----


class GrpcMessageLike(Protocol):
    @property
    def json(self) -> str | None: ...


class SseEventLike(Protocol):
    @property
    def lines(self) -> Sequence[str]: ...


class RequestLike(Protocol):
    @property
    def method(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def headers(self) -> Sequence[tuple[str, str]]: ...
    @property
    def body(self) -> bytes: ...
    @property
    def messages(self) -> Sequence[GrpcMessageLike]: ...


class ResponseLike(Protocol):
    @property
    def status(self) -> int: ...
    @property
    def headers(self) -> Sequence[tuple[str, str]]: ...
    @property
    def body(self) -> bytes: ...
    @property
    def events(self) -> Sequence[SseEventLike]: ...
    @property
    def messages(self) -> Sequence[GrpcMessageLike]: ...
    @property
    def trailers(self) -> Sequence[tuple[str, str]]: ...


@dataclass(frozen=True, slots=True)
class _Req:
    """The request, parsed once: verb, path, query, lower-cased headers, JSON body."""

    verb: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: object  # parsed JSON, or NOT_JSON
    grpc_json: object  # the first gRPC message's JSON, or NOT_JSON

    def header_version(self) -> Version | None:
        return parse_version(self.headers.get("a2a-version"))


@dataclass(frozen=True, slots=True)
class _Context:
    """What the caller knows beyond the request: the card's interfaces, webhook paths."""

    interfaces: tuple[Interface, ...]
    webhooks: frozenset[str]


# ---- entry point ----


def classify(
    request: RequestLike,
    response: ResponseLike | None = None,
    *,
    interfaces: Sequence[Interface] = (),
    webhook_paths: Collection[str] = (),
) -> Classification:
    """What an exchange is in A2A terms; never raises.

    `interfaces` (from `interfaces_from_card`) tell base paths and tenants apart;
    `webhook_paths` are paths known to receive push deliveries.  With a `response`, `error`
    names the A2A error it carried (`TaskNotFoundError`, `JSONRPCError(-32099)`,
    `HTTPError(404)`), or stays None.

    >>> from recorder.capture import Request
    >>> c = classify(Request("POST", "/a2a/rest/acme/tasks/abc:cancel"))
    >>> (c.operation, c.tenant, c.task_id)
    ('CancelTask', 'acme', 'abc')
    """
    try:
        req = _parse_request(request)
        found = _classify_request(req, tuple(interfaces), frozenset(webhook_paths))
        if response is not None:
            found = replace(found, error=response_error(found.binding, response))
        return found
    except Exception as exc:  # noqa: BLE001 - last resort: the recorder must not crash
        return Classification(reason=f"classifier failed: {type(exc).__name__}: {exc}")


def _classify_request(
    req: _Req, interfaces: tuple[Interface, ...], webhooks: frozenset[str]
) -> Classification:
    ctx = _Context(interfaces, webhooks)
    for recogniser in _RECOGNISERS:
        found = recogniser(req, ctx)
        if found is not None:
            return found
    return Classification(reason=_not_a2a_reason(req))


def _not_a2a_reason(req: _Req) -> str:
    reason = f"no A2A route for {req.verb} {req.path}"
    if req.verb == "POST" and req.body is NOT_JSON:
        reason += " (body is not JSON)"
    return reason


# ---- request parsing ----


def _parse_request(request: RequestLike) -> _Req:
    path, query = _split_target(str(request.target))
    headers: dict[str, str] = {}
    for name, value in request.headers:
        headers.setdefault(str(name).lower(), str(value))
    messages = list(request.messages)
    grpc_json = parse_json(messages[0].json) if messages and messages[0].json else NOT_JSON
    body = parse_json(request.body)
    return _Req(str(request.method).upper(), path, query, headers, body, grpc_json)


def _split_target(target: str) -> tuple[str, dict[str, str]]:
    if not target.startswith("/"):
        parts = urlsplit(target)  # absolute-form, as a forward proxy sees it
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    path, _, query = target.partition("?")
    return path, dict(parse_qsl(query, keep_blank_values=True))


# ---- field extraction ----


def _text(value: object) -> str | None:
    """A non-empty id as a string; numbers are accepted (some clients send them)."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return str(value) or None


def _ids(op: Operation, *sources: object) -> dict[str, str]:
    """task_id / context_id / config_id from the first source that names each."""
    found: dict[str, str] = {}
    for kind in ("task_id", "context_id", "config_id"):
        for source in sources:
            for path in op.id_paths(kind):
                value = _text(value_at(source, path, snake_case=True))
                if value is not None:
                    found.setdefault(kind, value)
    return found


def _resource_ids(message: object) -> dict[str, str]:
    """v0.3 gRPC resource names: `tasks/{id}`, `tasks/{id}/pushNotificationConfigs/{cid}`."""
    for key in ("name", "parent"):
        value = value_at(message, (key,), snake_case=True)
        matched = _RESOURCE.fullmatch(value) if isinstance(value, str) else None
        if matched:
            ids = {"task_id": matched.group(1)}
            if matched.group(2):
                ids["config_id"] = matched.group(2)
            return ids
    return {}


def _tenant(source: object) -> str | None:
    value = value_at(source, ("tenant",), snake_case=True)
    return value if isinstance(value, str) and value else None


def _interface_tenant(
    interfaces: Sequence[Interface], binding: Binding, version: Version
) -> str | None:
    return next(
        (
            i.tenant
            for i in interfaces
            if i.binding is binding and i.tenant and i.version in (version, None)
        ),
        None,
    )


# ---- recognisers: (req, interfaces, webhook paths) -> Classification | None ----


def _grpc(req: _Req, ctx: _Context) -> Classification | None:
    if not req.headers.get("content-type", "").lower().startswith("application/grpc"):
        return None
    op = operation_by_grpc_path(req.path)
    if op is None:
        return Classification(
            binding=Binding.GRPC,
            method=req.path,
            version=_grpc_service_version(req.path),
            reason=f"unknown gRPC method {req.path}",
        )
    message = req.grpc_json if isinstance(req.grpc_json, Mapping) else {}
    ids = _resource_ids(message) | _ids(op, message)
    tenant = _tenant(message) or _interface_tenant(ctx.interfaces, Binding.GRPC, op.version)
    return _found(op, Binding.GRPC, req.path, tenant, ids)


def _grpc_service_version(path: str) -> Version | None:
    services = {f"/{V1_SERVICE}/": Version.V1_0, f"/{V03_SERVICE}/": Version.V0_3}
    return next((v for prefix, v in services.items() if path.startswith(prefix)), None)


def _agent_card(req: _Req, ctx: _Context) -> Classification | None:
    if req.verb not in ("GET", "HEAD"):
        return None
    suffix = next((p for p in CARD_PATHS if req.path.endswith(p)), None)
    if suffix is None:
        return None
    return Classification(
        binding=Binding.HTTP,
        operation=AGENT_CARD,
        method=f"{req.verb} {suffix}",
        version=req.header_version(),
    )


def _known_webhook(req: _Req, ctx: _Context) -> Classification | None:
    if req.verb != "POST" or req.path not in ctx.webhooks:
        return None
    return _push(req) or Classification(
        binding=Binding.HTTP, operation=PUSH_DELIVERY, method=f"POST {req.path}"
    )


def _by_interface(req: _Req, ctx: _Context) -> Classification | None:
    for iface, rest in _under_interfaces(req.path, ctx.interfaces):
        if iface.binding is Binding.JSONRPC and rest in ("", "/") and req.verb == "POST":
            return _jsonrpc(req, ctx.interfaces) or _jsonrpc_junk(req)
        if iface.binding is Binding.HTTP_JSON:
            matches = match_routes(req.verb, rest or "/")
            if matches:
                return _rest(req, matches[0], ctx.interfaces)
    return None


def _under_interfaces(path: str, interfaces: Sequence[Interface]) -> list[tuple[Interface, str]]:
    """(interface, path remainder) for each HTTP interface whose URL path prefixes `path`."""
    found = []
    for iface in interfaces:
        if iface.binding not in (Binding.JSONRPC, Binding.HTTP_JSON):
            continue
        base = urlsplit(iface.url).path.rstrip("/")
        if path == base or path.startswith(base + "/"):
            found.append((iface, path[len(base) :]))
    return sorted(found, key=lambda pair: len(pair[1]))  # longest base first


def _jsonrpc_by_body(req: _Req, ctx: _Context) -> Classification | None:
    if req.verb != "POST":
        return None
    if isinstance(req.body, list):
        if any(isinstance(item, Mapping) and "jsonrpc" in item for item in req.body):
            return Classification(
                binding=Binding.JSONRPC,
                reason="JSON-RPC batch request (A2A has no batches)",
            )
        return None
    return _jsonrpc(req, ctx.interfaces)


def _jsonrpc(req: _Req, interfaces: Sequence[Interface]) -> Classification | None:
    """The JSON-RPC reading of a request body, or None if it is no JSON-RPC request."""
    body = req.body
    if not isinstance(body, Mapping) or body.get("jsonrpc") != "2.0":
        return None
    method = body.get("method")
    if not isinstance(method, str):
        return Classification(binding=Binding.JSONRPC, reason="JSON-RPC request without a method")
    op = operation_by_jsonrpc_method(method)
    if op is None:
        return Classification(
            binding=Binding.JSONRPC,
            method=method,
            version=req.header_version(),
            reason=f"unknown JSON-RPC method {method!r}",
        )
    params = body.get("params")
    params = params if isinstance(params, Mapping) else {}
    tenant = _tenant(params) or _interface_tenant(interfaces, Binding.JSONRPC, op.version)
    return _found(op, Binding.JSONRPC, method, tenant, _ids(op, params))


def _jsonrpc_junk(req: _Req) -> Classification:
    if isinstance(req.body, list):
        return Classification(
            binding=Binding.JSONRPC, reason="JSON-RPC batch request (A2A has no batches)"
        )
    what = "body is not JSON" if req.body is NOT_JSON else "body is not a JSON-RPC request"
    return Classification(binding=Binding.JSONRPC, reason=what)


def _rest_by_suffix(req: _Req, ctx: _Context) -> Classification | None:
    match = _best_suffix_match(req.verb, req.path)
    return None if match is None else _rest(req, match, ctx.interfaces)


def _best_suffix_match(verb: str, path: str) -> RouteMatch | None:
    """The route reading of `path` under an unknown base path, by the tenant rule above."""
    candidates: list[tuple[int, int, int, RouteMatch]] = []
    starts = [i for i, ch in enumerate(path) if ch == "/"]
    for start in starts:
        for match in match_routes(verb, path[start:]):
            rank = (match.route.literal_weight, _tenant_preference(match), -start)
            candidates.append((*rank, match))
    if not candidates:
        return None
    return max(candidates, key=lambda c: c[:3])[3]


def _tenant_preference(match: RouteMatch) -> int:
    """1: a plausible tenant reading; 0: no tenant; -1: the "tenant" is a base-path word."""
    tenant = match.params.get("tenant")
    if tenant is None:
        return 0
    return -1 if tenant.lower() in BASE_PATH_WORDS else 1


def _rest(req: _Req, match: RouteMatch, interfaces: Sequence[Interface]) -> Classification:
    op, params = match.operation, match.params
    body = req.body if isinstance(req.body, Mapping) else {}
    ids = _ids(op, body, req.query) | _path_ids(params)  # the path wins over the body
    tenant = (
        params.get("tenant")
        or _tenant(body)
        or _interface_tenant(interfaces, Binding.HTTP_JSON, op.version)
    )
    method = f"{match.route.verb} {match.route.template}"
    return _found(op, Binding.HTTP_JSON, method, tenant, ids)


def _path_ids(params: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in params.items() if k in ("task_id", "config_id") and v}


def _push_heuristic(req: _Req, ctx: _Context) -> Classification | None:
    if req.verb != "POST":
        return None
    found = _push(req)
    if found is None:
        return None
    has_token = NOTIFICATION_TOKEN_HEADER in req.headers
    bare_message = isinstance(req.body, Mapping) and "message" in req.body
    return found if has_token or not bare_message else None


def _push(req: _Req) -> Classification | None:
    """A push delivery reading of a POST body, or None if it is no StreamResponse."""
    body = req.body
    if not isinstance(body, Mapping):
        return None
    member = next((m for m in STREAM_RESPONSE_MEMBERS if isinstance(body.get(m), Mapping)), None)
    if member is not None and len(body) == 1:
        event, version = body[member], Version.V1_0
    elif body.get("kind") in V03_EVENT_KINDS:
        event, version = body, Version.V0_3
    else:
        return None
    task_key = "id" if (member or body.get("kind")) == "task" else "taskId"
    return Classification(
        binding=Binding.HTTP,
        operation=PUSH_DELIVERY,
        method=f"POST {req.path}",
        version=version,
        task_id=_text(value_at(event, (task_key,), snake_case=True)),
        context_id=_text(value_at(event, ("contextId",), snake_case=True)),
    )


def _found(
    op: Operation, binding: Binding, method: str, tenant: str | None, ids: Mapping[str, str]
) -> Classification:
    return Classification(
        binding=binding,
        operation=op.name,
        method=method,
        version=op.version,
        tenant=tenant,
        task_id=ids.get("task_id"),
        context_id=ids.get("context_id"),
        config_id=ids.get("config_id"),
        streaming=op.streaming,
    )


_Recogniser = Callable[[_Req, _Context], Classification | None]
_RECOGNISERS: tuple[_Recogniser, ...] = (
    _grpc,
    _agent_card,
    _known_webhook,
    _by_interface,
    _jsonrpc_by_body,
    _rest_by_suffix,
    _push_heuristic,
)


# ---- response errors: one small reader per binding's error shape ----


def response_error(binding: Binding | None, response: ResponseLike) -> str | None:
    """The name of the A2A error a response carries in its binding's shape, or None.

    JSON-RPC: an error envelope in the body or in an SSE event.  HTTP+JSON: a
    `{"error": google.rpc.Status}` body or SSE event, named by ErrorInfo reason, then by HTTP
    status and status name.  gRPC: `grpc-status` in trailers (or headers, trailers-only), named
    by the ErrorInfo in `grpc-status-details-bin`, then by status.  Otherwise, any HTTP status
    of 400 or more is `HTTPError(<status>)`.
    """
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
    return None


def _name_jsonrpc_code(code: object) -> str:
    row = error_by_code(code) if isinstance(code, int) and not isinstance(code, bool) else None
    return row.name if row is not None else unknown_error_name("JSONRPCError", repr(code))


def _rest_error(response: ResponseLike) -> str | None:
    for document in _documents(response):
        status = value_at(document, ("error",), snake_case=True)
        if isinstance(status, Mapping) and ("status" in status or "code" in status):
            return _name_rest_status(status, response.status)
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
    """The row named by the first google.rpc.ErrorInfo in a JSON `details` / `data` list."""
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
    """The body's JSON, then each SSE event's data as JSON (error events first)."""
    documents = [parse_json(response.body)]
    events = [tuple(event.lines) for event in response.events]
    events.sort(key=lambda lines: event_type(lines) != "error")
    documents += [parse_json(event_data(lines)) for lines in events]
    return [d for d in documents if isinstance(d, Mapping)]


def _grpc_error(response: ResponseLike) -> str | None:
    metadata = _lower_map(response.trailers)
    if "grpc-status" not in metadata:
        metadata = _lower_map(response.headers)  # trailers-only response
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


def _lower_map(headers: Sequence[tuple[str, str]]) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, value in headers:
        found.setdefault(str(name).lower(), str(value))
    return found


_ERROR_SHAPES: dict[Binding, Callable[[ResponseLike], str | None]] = {
    Binding.JSONRPC: _jsonrpc_error,
    Binding.HTTP_JSON: _rest_error,
    Binding.GRPC: _grpc_error,
}
