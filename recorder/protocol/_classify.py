"""Classify one exchange: binding, operation, version, ids, and the A2A error it carried.

A pure function that never raises.  `_RECOGNISERS` are tried in order and the first to claim
the request wins: gRPC, card fetch, known webhook, the card's interfaces (Java's JSON-RPC
tenant is `POST /{tenant}`), JSON-RPC by body, HTTP+JSON by path suffix, push delivery by
heuristic, then `unknown` at an A2A endpoint; anything else is not A2A, and `reason` says why.
A GET left unknown whose answer looks like a card is a card fetch (a2a-dotnet's v0.3 compat
serves its card at its JSON-RPC URL).  Without a card, the route with more literal characters
wins, then the tenant reading unless it is a base-path word.  The version comes from the wire
names, not `A2A-Version` (a shared name: `operation_by_jsonrpc_method`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace

from recorder.protocol._cards import Interface, card_path, looks_like_card, parse_version
from recorder.protocol._errorshapes import response_error
from recorder.protocol._idmodel import RESOURCE_NAME, bare_task_id
from recorder.protocol._likes import RequestLike, ResponseLike, lower_headers, split_target
from recorder.protocol._operations import (
    V03_SERVICE,
    V1_SERVICE,
    Operation,
    RouteMatch,
    match_route,
    match_routes,
    operation_by_grpc_path,
    operation_by_jsonrpc_method,
)
from recorder.protocol._paths import NOT_JSON, json_problem, parse_json, value_at
from recorder.protocol._states import STREAM_MEMBERS, V03_KINDS
from recorder.protocol._types import (
    AGENT_CARD,
    PUSH_DELIVERY,
    UNKNOWN,
    Binding,
    Classification,
    Version,
)

# Path segments that name a mount point, never a tenant.
BASE_PATH_WORDS: frozenset[str] = frozenset(
    {"a2a", "rest", "api", "http", "json", "http+json", "http-json", "httpjson", "jsonrpc",
     "json-rpc", "grpc", "v1", "v2", "agent", "agents"}
)  # fmt: skip
# Push senders' credential headers: py/JS/Java's token, Go's (a2asrv/push), and Authorization.
DELIVERY_HEADERS: tuple[str, ...] = (
    "x-a2a-notification-token",
    "a2a-notification-token",
    "authorization",
)


@dataclass(frozen=True, slots=True)
class _Req:
    """The request, parsed once."""

    verb: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: object  # parsed JSON, or NOT_JSON
    grpc_json: object  # the first gRPC message's JSON, or NOT_JSON
    raw: bytes  # the body as sent

    @property
    def json_problem(self) -> str:
        return json_problem(self.raw) or "unreadable"

    def header_version(self) -> Version | None:
        return parse_version(self.headers.get("a2a-version"))


@dataclass(frozen=True, slots=True)
class _Context:
    interfaces: tuple[Interface, ...]
    webhooks: frozenset[str]


def classify(
    request: RequestLike,
    response: ResponseLike | None = None,
    *,
    interfaces: Sequence[Interface] = (),
    webhook_paths: Collection[str] = (),
) -> Classification:
    """What an exchange is in A2A terms; never raises.  `interfaces` (from the card) tell base
    paths and tenants apart; with a `response`, `error` names the A2A error it carried."""
    try:
        req = _parse_request(request)
        found = _classify_request(req, tuple(interfaces), frozenset(webhook_paths))
        if response is not None:
            found = _card_by_answer(req, found, response)
            found = replace(found, error=response_error(found.binding, response))
        return found
    except Exception as exc:  # last resort: the recorder must not crash
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


def _parse_request(request: RequestLike) -> _Req:
    path, query = split_target(str(request.target))
    headers = lower_headers(request.headers)
    messages = list(request.messages)
    grpc_json = parse_json(messages[0].json) if messages and messages[0].json else NOT_JSON
    raw = request.body
    return _Req(str(request.method).upper(), path, query, headers, parse_json(raw), grpc_json, raw)


def _text(value: object) -> str | None:
    """A non-empty id as a string; numbers too (some clients send them)."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return str(value) or None


def _ids(op: Operation, *sources: object) -> dict[str, str]:
    found: dict[str, str] = {}
    filled = [source for source in sources if source]  # a GET's empty body and query: none
    for kind, paths in op.ids if filled else ():
        for source in filled:
            for path in paths:
                value = _text(value_at(source, path, snake_case=True))
                if value is not None:
                    found.setdefault(kind, value)
    return found


def _resource_ids(op: Operation, message: object) -> dict[str, str]:
    """v0.3 gRPC resource names where the row's positions hold one: `tasks/{id}`,
    `tasks/{id}/pushNotificationConfigs/{cid}`, or where a task's goes a bare id (a2a-java's
    draft, `bare_task_id`)."""
    for position in op.positions:
        value = value_at(message, position.path, snake_case=True) if position.resource else None
        if not isinstance(value, str):
            continue
        matched = RESOURCE_NAME.fullmatch(value)
        if matched:
            ids = {"task_id": matched.group(1)}
            if matched.group(2):
                ids["config_id"] = matched.group(2)
            return ids
        task = bare_task_id(value, position.kind)
        if task is not None:
            return {"task_id": task}
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


# ---- recognisers ----


def _grpc(req: _Req, ctx: _Context) -> Classification | None:
    if not req.headers.get("content-type", "").lower().startswith("application/grpc"):
        return None
    op = operation_by_grpc_path(req.path)
    if op is None:
        version = _grpc_service_version(req.path)
        return Classification(
            binding=Binding.GRPC,
            operation=UNKNOWN if version is not None else None,
            method=req.path,
            version=version,
            reason=f"unknown gRPC method {req.path}"
            if version is not None
            else f"gRPC method {req.path} of no A2A service",
        )
    message = req.grpc_json if isinstance(req.grpc_json, Mapping) else {}
    ids = _resource_ids(op, message) | _ids(op, message)
    tenant = _tenant(message) or _interface_tenant(ctx.interfaces, Binding.GRPC, op.version)
    return _found(op, Binding.GRPC, req.path, tenant, ids)


def _grpc_service_version(path: str) -> Version | None:
    services = {f"/{V1_SERVICE}/": Version.V1_0, f"/{V03_SERVICE}/": Version.V0_3}
    return next((v for prefix, v in services.items() if path.startswith(prefix)), None)


def _agent_card(req: _Req, ctx: _Context) -> Classification | None:
    if req.verb not in ("GET", "HEAD"):
        return None
    suffix = card_path(req.path)
    if suffix is None:
        return None
    return _card(req, suffix)


def _card(req: _Req, where: str) -> Classification:
    return Classification(
        binding=Binding.HTTP,
        operation=AGENT_CARD,
        method=f"{req.verb} {where}",
        version=req.header_version(),
    )


def _known_webhook(req: _Req, ctx: _Context) -> Classification | None:
    if req.verb != "POST" or req.path not in ctx.webhooks:
        return None
    return _push(req) or Classification(
        binding=Binding.HTTP, operation=PUSH_DELIVERY, method=f"POST {req.path}"
    )


def _by_interface(req: _Req, ctx: _Context) -> Classification | None:
    """At a JSON-RPC interface URL or a route under an HTTP+JSON one; then Java's tenant."""
    under = _under_interfaces(req.path, ctx.interfaces)
    for iface, rest in under:
        if iface.binding is Binding.CUSTOM:
            return _custom(req, iface)
        if iface.binding is Binding.JSONRPC and rest in ("", "/"):
            return _jsonrpc(req, ctx.interfaces, iface.version) or _jsonrpc_junk(req)
        if iface.binding is Binding.HTTP_JSON:
            match = match_route(req.verb, rest or "/")
            if match is not None:
                return _rest(req, match, ctx.interfaces)
    for iface, rest in under:
        tenant = _path_tenant(rest) if iface.binding is Binding.JSONRPC else None
        found = _jsonrpc(req, ctx.interfaces, iface.version) if tenant else None
        if found is not None and found.is_known:
            return replace(found, tenant=found.tenant or tenant)
    return None


def _under_interfaces(path: str, interfaces: Sequence[Interface]) -> list[tuple[Interface, str]]:
    """(interface, path remainder) for each HTTP interface whose URL path prefixes `path`."""
    found = []
    for iface in interfaces:
        if iface.binding not in (Binding.JSONRPC, Binding.HTTP_JSON, Binding.CUSTOM):
            continue
        base = iface.path
        if path == base or path.startswith(base + "/"):
            found.append((iface, path[len(base) :]))
    return sorted(found, key=lambda pair: len(pair[1]))  # longest base first


def _custom(req: _Req, iface: Interface) -> Classification:
    """A custom binding's operations are in no table: kept as `unknown`, served as recorded."""
    body = req.body if isinstance(req.body, Mapping) else {}
    named = body.get("method") if isinstance(body.get("method"), str) else None
    return replace(
        _unknown(Binding.CUSTOM, req, f"custom binding {iface.uri}", named),
        binding_uri=iface.uri,
        version=iface.version or req.header_version(),
    )


def _path_tenant(rest: str) -> str | None:
    """`acme` for a remainder `/acme` or `/acme/` (Java's JSON-RPC `POST /{tenant}`)."""
    segment = rest[1:].removesuffix("/") if rest.startswith("/") else ""
    return segment if segment and "/" not in segment else None


def _jsonrpc_by_body(req: _Req, ctx: _Context) -> Classification | None:
    if req.verb != "POST":
        return None
    if isinstance(req.body, list):
        if any(isinstance(item, Mapping) and "jsonrpc" in item for item in req.body):
            return _unknown(Binding.JSONRPC, req, "JSON-RPC batch request (A2A has no batches)")
        return None
    return _jsonrpc(req, ctx.interfaces)


def _jsonrpc(
    req: _Req, interfaces: Sequence[Interface], version: Version | None = None
) -> Classification | None:
    """The JSON-RPC reading of a body, or None; `version` (the card's) picks a shared name's."""
    body = req.body
    if not isinstance(body, Mapping) or "jsonrpc" not in body:
        return None
    method = body.get("method")
    if body.get("jsonrpc") != "2.0":
        return _unknown(Binding.JSONRPC, req, f"JSON-RPC version {body.get('jsonrpc')!r}", method)
    if not isinstance(method, str):
        return _unknown(Binding.JSONRPC, req, "JSON-RPC request without a method")
    op = operation_by_jsonrpc_method(method, version)
    if op is None:
        return _unknown(Binding.JSONRPC, req, f"unknown JSON-RPC method {method!r}", method)
    params = body.get("params")
    params = params if isinstance(params, Mapping) else {}
    tenant = _tenant(params) or _interface_tenant(interfaces, Binding.JSONRPC, op.version)
    return _found(op, Binding.JSONRPC, method, tenant, _ids(op, params))


def _jsonrpc_junk(req: _Req) -> Classification:
    if req.verb != "POST":
        return _unknown(Binding.JSONRPC, req, f"{req.verb} at the JSON-RPC endpoint")
    return _unknown(Binding.JSONRPC, req, _junk_reason(req))


def _junk_reason(req: _Req) -> str:
    body = req.body
    if isinstance(body, list):
        return "JSON-RPC batch request (A2A has no batches)" if body else "empty JSON-RPC batch"
    if body is NOT_JSON:
        return f"body not read as JSON ({req.json_problem})" if req.raw else "no body"
    kind = "null" if body is None else type(body).__name__
    return f"body is JSON {kind}, not a JSON-RPC request"


def _rest_by_suffix(req: _Req, ctx: _Context) -> Classification | None:
    match = _best_suffix_match(req.verb, req.path)
    return None if match is None else _rest(req, match, ctx.interfaces)


def _best_suffix_match(verb: str, path: str) -> RouteMatch | None:
    """The route reading of `path` under an unknown base path (the module's tenant rule)."""
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
    credential = any(name in req.headers for name in DELIVERY_HEADERS)
    bare_message = isinstance(req.body, Mapping) and "message" in req.body
    return found if credential or not bare_message else None


def _push(req: _Req) -> Classification | None:
    body = req.body
    if not isinstance(body, Mapping):
        return None
    member = next((m for m in STREAM_MEMBERS if isinstance(body.get(m), Mapping)), None)
    if member is not None and len(body) == 1:
        event, version = body[member], Version.V1_0
    elif body.get("kind") in V03_KINDS:
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


def _unknown_at_endpoint(req: _Req, ctx: _Context) -> Classification | None:
    for iface, rest in _under_interfaces(req.path, ctx.interfaces):
        if iface.binding is Binding.HTTP_JSON:
            reason = f"no HTTP+JSON route for {req.verb} {rest or '/'}"
            return _unknown(Binding.HTTP_JSON, req, reason, rest or "/")
        if _path_tenant(rest) and req.verb == "POST":
            return _jsonrpc(req, ctx.interfaces, iface.version) or _jsonrpc_junk(req)
    suffix = card_path(req.path)
    if suffix is not None:
        return _unknown(Binding.HTTP, req, f"{req.verb} at the agent card path", suffix)
    return None


def _unknown(binding: Binding, req: _Req, reason: str, method: object = None) -> Classification:
    """Operation `unknown` at an A2A endpoint: `method` is what the wire named, if anything."""
    named = method if isinstance(method, str) else None
    if binding is not Binding.JSONRPC:
        named = f"{req.verb} {named or req.path}"
    return Classification(
        binding=binding,
        operation=UNKNOWN,
        method=named,
        version=req.header_version(),
        reason=reason,
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
    _unknown_at_endpoint,
)


# ---- a GET answered with an agent card ----


def _card_by_answer(req: _Req, found: Classification, response: ResponseLike) -> Classification:
    if found.is_known or req.verb != "GET" or response.status != 200:
        return found
    if not looks_like_card(parse_json(response.body)):
        return found
    return _card(req, req.path)
