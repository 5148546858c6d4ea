"""The A2A operation tables: one row per operation and protocol version, all names on the wire.

The lookups are dicts built from `OPERATIONS` at import.  Route templates use semantic
parameter names (`{task_id}`, `{tenant}`), not the proto's, so a match reads alike in any version.
v1.0 routes are the proto's `google.api.http` options, each also under `/{tenant}`, and
`:subscribe` takes GET (proto) and POST (spec §11.3.2); v0.3 routes are those the py and JS
compat layers mount (a2a-wire.md §1).  Names real SDKs send besides the spec's are rows or
aliases too (Java's trailing slash, .NET's list method, the JSON-RPC-only `0.1` dialect, and
the rpcs a2a-java's draft of v1.0 serves under v0.3's gRPC service).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from urllib.parse import quote, unquote

from recorder.protocol._types import Version
from recorder.protocol._volatile import (
    IdKind,
    IdPosition,
    IdRole,
    message_positions,
    push_config_positions,
    resource_position,
)

V1_SERVICE = "lf.a2a.v1.A2AService"
V03_SERVICE = "a2a.v1.A2AService"


class Capability(StrEnum):
    """The card capability (`capabilities.<name>`) an operation needs."""

    STREAMING = "streaming"
    PUSH_NOTIFICATIONS = "pushNotifications"
    EXTENDED_AGENT_CARD = "extendedAgentCard"


_PARAM = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True, slots=True)
class Route:
    """One HTTP+JSON route: a verb and a path template such as `/tasks/{task_id}:cancel`; a
    `{param}` (with an optional literal suffix) matches one non-empty path segment."""

    verb: str
    template: str
    _segments: tuple[tuple[str | None, str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_segments", tuple(_compile(self.template)))

    @property
    def has_tenant(self) -> bool:
        return self.template.startswith("/{tenant}/")

    @property
    def literal_weight(self) -> int:
        """Literal characters a path must match, slashes aside: more is more specific."""
        return len(_PARAM.sub("", self.template).replace("/", ""))

    def match_tail(self, path: str) -> tuple[str, dict[str, str]] | None:
        """(base path, parameters as written) when `path` ends in this route, else None."""
        parts = path.split("/")
        size = len(self._segments) - 1  # the template's leading "" is not matched
        if len(parts) <= size:
            return None
        params: dict[str, str] = {}
        for part, (name, literal) in zip(parts[-size:], self._segments[1:], strict=True):
            if name is None:
                if part != literal:
                    return None
            elif not part.endswith(literal) or len(part) == len(literal):
                return None
            else:
                params[name] = part[: len(part) - len(literal)]
        return "/".join(parts[:-size]), params

    def fill(self, params: Mapping[str, str]) -> str:
        """The path for these parameter texts, inserted as they are (no percent-encoding)."""
        return _PARAM.sub(lambda m: params[m.group(1)], self.template)

    def match(self, path: str) -> dict[str, str] | None:
        """Path parameters (percent-decoded) if `path` (no query) fits the template, else None."""
        return self.match_parts(path.split("/"))

    def match_parts(self, parts: Sequence[str]) -> dict[str, str] | None:
        if len(parts) != len(self._segments):
            return None
        params: dict[str, str] = {}
        for part, (name, literal) in zip(parts, self._segments, strict=True):
            if name is None:
                if part != literal:
                    return None
                continue
            if not part.endswith(literal) or len(part) == len(literal):
                return None
            # surrogateescape: `%FF` is the byte 0xFF, as the target keeps it, not U+FFFD.
            params[name] = unquote(part[: len(part) - len(literal)], errors="surrogateescape")
        return params

    def expand(self, **params: str) -> str:
        """The path for these parameter values (percent-encoded); KeyError if one is missing."""
        return _PARAM.sub(
            lambda m: quote(params[m.group(1)], safe="", errors="surrogateescape"), self.template
        )


def _compile(template: str) -> list[tuple[str | None, str]]:
    segments: list[tuple[str | None, str]] = []
    for part in template.split("/"):
        found = _PARAM.fullmatch(part.split(":", 1)[0]) if part.startswith("{") else None
        if found is None:
            segments.append((None, part))
        else:
            segments.append((found.group(1), part[found.end() :]))
    return segments


@dataclass(frozen=True, slots=True)
class Operation:
    """One A2A operation in one protocol version, with all its names on the wire; `name` is the
    v1.0 rpc name, also for v0.3 rows.  `ids`: where a request names each id (the classifier's);
    `positions`: every place it holds one, and its `IdRole` (the replayer's)."""

    name: str
    version: Version
    jsonrpc_method: str
    grpc_rpc: str
    routes: tuple[Route, ...]
    streaming: bool
    capability: Capability | None
    request_type: str
    response_type: str
    ids: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...] = ()
    positions: tuple[IdPosition, ...] = ()

    jsonrpc_aliases: tuple[str, ...] = ()  # other JSON-RPC names real SDKs use for it
    grpc_aliases: tuple[str, ...] = ()  # other rpcs of the row's service real SDKs serve it as

    @property
    def grpc_service(self) -> str:
        return V1_SERVICE if self.version is Version.V1_0 else V03_SERVICE

    @property
    def grpc_path(self) -> str:
        """`/<service>/<rpc>`, or "" for a row with no gRPC rpc (the 0.1 dialect)."""
        return f"/{self.grpc_service}/{self.grpc_rpc}" if self.grpc_rpc else ""

    @property
    def grpc_paths(self) -> tuple[str, ...]:
        """Every gRPC path of the row: the proto's first, then the aliases'."""
        aliases = (f"/{self.grpc_service}/{rpc}" for rpc in self.grpc_aliases)
        return tuple(p for p in (self.grpc_path, *aliases) if p)

    @property
    def jsonrpc_methods(self) -> tuple[str, ...]:
        """Every JSON-RPC method name of the row: the spec's first, then the aliases."""
        return tuple(m for m in (self.jsonrpc_method, *self.jsonrpc_aliases) if m)


def _v1_routes(verb: str, template: str, *more_verbs: str) -> tuple[Route, ...]:
    verbs = (verb, *more_verbs)
    plain = tuple(Route(v, template) for v in verbs)
    return plain + tuple(Route(v, "/{tenant}" + template) for v in verbs)


def _v03_routes(verb: str, template: str, *more_verbs: str) -> tuple[Route, ...]:
    return tuple(Route(v, "/v1" + template) for v in (verb, *more_verbs))


_T = Version.V1_0
_L = Version.V0_3
_O = Version.V0_1
_S = Capability.STREAMING
_P = Capability.PUSH_NOTIFICATIONS
_X = Capability.EXTENDED_AGENT_CARD

# Where JSON bodies name their ids (v0.3 gRPC resource names are parsed by the classifier).
_SEND_IDS = (
    ("task_id", (("message", "taskId"), ("request", "taskId"))),
    ("context_id", (("message", "contextId"), ("request", "contextId"))),
)
_TASK_IDS = (("task_id", (("id",),)),)
_LIST_IDS = (("context_id", (("contextId",),)),)
_V1_CONFIG_IDS = (("task_id", (("taskId",),)), ("config_id", (("id",),)))
_V03_SET_IDS = (
    ("task_id", (("taskId",),)),
    (
        "config_id",
        (
            ("pushNotificationConfig", "id"),
            ("configId",),
            ("config", "pushNotificationConfig", "id"),
        ),
    ),
)
_V03_CONFIG_IDS = (
    ("task_id", (("id",), ("taskId",))),
    ("config_id", (("pushNotificationConfigId",),)),
)
# A2A v0.1.0's schema: `TaskSendParams {id, sessionId, ...}`; the other methods take `{id}`.
_V01_SEND_IDS = (("task_id", (("id",),)), ("context_id", (("sessionId",),)))

# Where requests hold ids (see `IdRole`); v0.3 rows list the JSON-RPC and the proto shapes.
_REF, _CHOSEN = IdRole.REFERENCE, IdRole.CHOSEN
_TASK_REF = (IdPosition(("id",), IdKind.TASK, _REF),)
_PAGE_REF = IdPosition(("pageToken",), None, _REF)  # a cursor a ListTasks response handed out
_CONFIG_REFS = (
    IdPosition(("taskId",), IdKind.TASK, _REF),
    IdPosition(("id",), IdKind.CONFIG, _REF),
)
_V03_CONFIG_REFS = (
    IdPosition(("id",), IdKind.TASK, _REF),
    IdPosition(("pushNotificationConfigId",), IdKind.CONFIG, _REF),
    IdPosition(("name",), IdKind.CONFIG, _REF, resource=True),
)
_SEND_POSITIONS = (
    *message_positions("message"),
    *push_config_positions("configuration", "taskPushNotificationConfig"),
    # a2a-java 1.0.0.Alpha3's draft keeps the v0.3 name
    *push_config_positions("configuration", "pushNotificationConfig"),
)
_V03_SEND_POSITIONS = (
    *message_positions("message"),
    *push_config_positions("configuration", "pushNotificationConfig"),  # JSON-RPC schema
    *push_config_positions("configuration", "pushNotification"),  # v0.3 proto
)
_V01_SEND_POSITIONS = (
    IdPosition(("id",), IdKind.TASK, _CHOSEN),
    IdPosition(("sessionId",), IdKind.CONTEXT, _CHOSEN),
    *push_config_positions("pushNotification")[2:],
)
_POSITIONS: dict[tuple[str, Version], tuple[IdPosition, ...]] = {
    ("SendMessage", Version.V1_0): _SEND_POSITIONS,
    ("SendStreamingMessage", Version.V1_0): _SEND_POSITIONS,
    ("GetTask", Version.V1_0): _TASK_REF,
    ("ListTasks", Version.V1_0): (IdPosition(("contextId",), IdKind.CONTEXT, _CHOSEN), _PAGE_REF),
    ("CancelTask", Version.V1_0): _TASK_REF,
    ("SubscribeToTask", Version.V1_0): _TASK_REF,
    ("CreateTaskPushNotificationConfig", Version.V1_0): (
        *push_config_positions(),
        # a2a-java 1.0.0.Alpha3's draft: {taskId, configId, config: {id, url, token, ...}}
        IdPosition(("configId",), IdKind.CONFIG, _CHOSEN),
        *push_config_positions("config"),
    ),
    ("GetTaskPushNotificationConfig", Version.V1_0): _CONFIG_REFS,
    ("ListTaskPushNotificationConfigs", Version.V1_0): (_CONFIG_REFS[0], _PAGE_REF),
    ("DeleteTaskPushNotificationConfig", Version.V1_0): _CONFIG_REFS,
    ("SendMessage", Version.V0_3): _V03_SEND_POSITIONS,
    ("SendStreamingMessage", Version.V0_3): _V03_SEND_POSITIONS,
    ("GetTask", Version.V0_3): (*_TASK_REF, resource_position("name")),
    ("CancelTask", Version.V0_3): (*_TASK_REF, resource_position("name")),
    ("SubscribeToTask", Version.V0_3): (*_TASK_REF, resource_position("name")),
    ("CreateTaskPushNotificationConfig", Version.V0_3): (
        IdPosition(("taskId",), IdKind.TASK, _REF),
        *push_config_positions("pushNotificationConfig"),
        resource_position("parent"),
        IdPosition(("configId",), IdKind.CONFIG, _CHOSEN),
        IdPosition(("config", "name"), IdKind.CONFIG, _CHOSEN, resource=True),
        *push_config_positions("config", "pushNotificationConfig"),
        # a2a-java 1.0.0.Alpha3's draft on a2a.v1 (recorder.protocol._grpc.DRAFT_SERVICES)
        *push_config_positions("config"),
    ),
    ("GetTaskPushNotificationConfig", Version.V0_3): _V03_CONFIG_REFS,
    ("ListTaskPushNotificationConfigs", Version.V0_3): (
        *_TASK_REF,
        resource_position("parent"),
        _PAGE_REF,
    ),
    ("DeleteTaskPushNotificationConfig", Version.V0_3): _V03_CONFIG_REFS,
    ("ListTasks", Version.V0_3): (IdPosition(("contextId",), IdKind.CONTEXT, _CHOSEN), _PAGE_REF),
    # v0.1: the client picks the task id it sends to (`tasks/send {id}`) and its session.
    ("SendMessage", Version.V0_1): _V01_SEND_POSITIONS,
    ("SendStreamingMessage", Version.V0_1): _V01_SEND_POSITIONS,
    ("GetTask", Version.V0_1): _TASK_REF,
    ("CancelTask", Version.V0_1): _TASK_REF,
    ("SubscribeToTask", Version.V0_1): _TASK_REF,
    ("CreateTaskPushNotificationConfig", Version.V0_1): (
        *_TASK_REF,
        *push_config_positions("pushNotificationConfig")[2:],  # v0.1 configs have no id
    ),
    ("GetTaskPushNotificationConfig", Version.V0_1): _TASK_REF,
}

_ROWS: tuple[Operation, ...] = (
    # ---- v1.0: JSON-RPC method == gRPC rpc name (spec §5.3) ----
    Operation("SendMessage", _T, "SendMessage", "SendMessage",
              _v1_routes("POST", "/message:send"), False, None,
              "lf.a2a.v1.SendMessageRequest", "lf.a2a.v1.SendMessageResponse", _SEND_IDS),
    Operation("SendStreamingMessage", _T, "SendStreamingMessage", "SendStreamingMessage",
              _v1_routes("POST", "/message:stream"), True, _S,
              "lf.a2a.v1.SendMessageRequest", "lf.a2a.v1.StreamResponse", _SEND_IDS),
    Operation("GetTask", _T, "GetTask", "GetTask",
              _v1_routes("GET", "/tasks/{task_id}"), False, None,
              "lf.a2a.v1.GetTaskRequest", "lf.a2a.v1.Task", _TASK_IDS),
    Operation("ListTasks", _T, "ListTasks", "ListTasks",
              _v1_routes("GET", "/tasks"), False, None,
              "lf.a2a.v1.ListTasksRequest", "lf.a2a.v1.ListTasksResponse", _LIST_IDS),
    Operation("CancelTask", _T, "CancelTask", "CancelTask",
              _v1_routes("POST", "/tasks/{task_id}:cancel"), False, None,
              "lf.a2a.v1.CancelTaskRequest", "lf.a2a.v1.Task", _TASK_IDS),
    Operation("SubscribeToTask", _T, "SubscribeToTask", "SubscribeToTask",
              _v1_routes("GET", "/tasks/{task_id}:subscribe", "POST"), True, _S,
              "lf.a2a.v1.SubscribeToTaskRequest", "lf.a2a.v1.StreamResponse", _TASK_IDS),
    Operation("CreateTaskPushNotificationConfig", _T, "CreateTaskPushNotificationConfig",
              "CreateTaskPushNotificationConfig",
              _v1_routes("POST", "/tasks/{task_id}/pushNotificationConfigs"), False, _P,
              "lf.a2a.v1.TaskPushNotificationConfig", "lf.a2a.v1.TaskPushNotificationConfig",
              _V1_CONFIG_IDS),
    Operation("GetTaskPushNotificationConfig", _T, "GetTaskPushNotificationConfig",
              "GetTaskPushNotificationConfig",
              _v1_routes("GET", "/tasks/{task_id}/pushNotificationConfigs/{config_id}"), False, _P,
              "lf.a2a.v1.GetTaskPushNotificationConfigRequest",
              "lf.a2a.v1.TaskPushNotificationConfig", _V1_CONFIG_IDS),
    Operation("ListTaskPushNotificationConfigs", _T, "ListTaskPushNotificationConfigs",
              "ListTaskPushNotificationConfigs",
              _v1_routes("GET", "/tasks/{task_id}/pushNotificationConfigs")
              + _v1_routes("GET", "/tasks/{task_id}/pushNotificationConfigs/"),  # Java's client
              False, _P, "lf.a2a.v1.ListTaskPushNotificationConfigsRequest",
              "lf.a2a.v1.ListTaskPushNotificationConfigsResponse", _V1_CONFIG_IDS),
    Operation("DeleteTaskPushNotificationConfig", _T, "DeleteTaskPushNotificationConfig",
              "DeleteTaskPushNotificationConfig",
              _v1_routes("DELETE", "/tasks/{task_id}/pushNotificationConfigs/{config_id}"), False,
              _P, "lf.a2a.v1.DeleteTaskPushNotificationConfigRequest", "google.protobuf.Empty",
              _V1_CONFIG_IDS),
    Operation("GetExtendedAgentCard", _T, "GetExtendedAgentCard", "GetExtendedAgentCard",
              _v1_routes("GET", "/extendedAgentCard"), False, _X,
              "lf.a2a.v1.GetExtendedAgentCardRequest", "lf.a2a.v1.AgentCard"),
    # ---- v0.3: slash methods, `/v1/` routes, gRPC package a2a.v1; no ListTasks rpc ----
    Operation("SendMessage", _L, "message/send", "SendMessage",
              _v03_routes("POST", "/message:send"), False, None,
              "a2a.v1.SendMessageRequest", "a2a.v1.SendMessageResponse", _SEND_IDS),
    Operation("SendStreamingMessage", _L, "message/stream", "SendStreamingMessage",
              _v03_routes("POST", "/message:stream"), True, _S,
              "a2a.v1.SendMessageRequest", "a2a.v1.StreamResponse", _SEND_IDS),
    Operation("GetTask", _L, "tasks/get", "GetTask",
              _v03_routes("GET", "/tasks/{task_id}"), False, None,
              "a2a.v1.GetTaskRequest", "a2a.v1.Task", _TASK_IDS),
    Operation("CancelTask", _L, "tasks/cancel", "CancelTask",
              _v03_routes("POST", "/tasks/{task_id}:cancel"), False, None,
              "a2a.v1.CancelTaskRequest", "a2a.v1.Task", _TASK_IDS),
    Operation("SubscribeToTask", _L, "tasks/resubscribe", "TaskSubscription",
              _v03_routes("GET", "/tasks/{task_id}:subscribe", "POST"), True, _S,
              "a2a.v1.TaskSubscriptionRequest", "a2a.v1.StreamResponse", _TASK_IDS),
    Operation("CreateTaskPushNotificationConfig", _L, "tasks/pushNotificationConfig/set",
              "CreateTaskPushNotificationConfig",
              _v03_routes("POST", "/tasks/{task_id}/pushNotificationConfigs"), False, _P,
              "a2a.v1.CreateTaskPushNotificationConfigRequest",
              "a2a.v1.TaskPushNotificationConfig", _V03_SET_IDS),
    Operation("GetTaskPushNotificationConfig", _L, "tasks/pushNotificationConfig/get",
              "GetTaskPushNotificationConfig",
              _v03_routes("GET", "/tasks/{task_id}/pushNotificationConfigs/{config_id}"), False,
              _P, "a2a.v1.GetTaskPushNotificationConfigRequest",
              "a2a.v1.TaskPushNotificationConfig", _V03_CONFIG_IDS),
    Operation("ListTaskPushNotificationConfigs", _L, "tasks/pushNotificationConfig/list",
              "ListTaskPushNotificationConfig",
              _v03_routes("GET", "/tasks/{task_id}/pushNotificationConfigs"), False, _P,
              "a2a.v1.ListTaskPushNotificationConfigRequest",
              "a2a.v1.ListTaskPushNotificationConfigResponse", _V03_CONFIG_IDS),
    Operation("DeleteTaskPushNotificationConfig", _L, "tasks/pushNotificationConfig/delete",
              "DeleteTaskPushNotificationConfig",
              _v03_routes("DELETE", "/tasks/{task_id}/pushNotificationConfigs/{config_id}"),
              False, _P, "a2a.v1.DeleteTaskPushNotificationConfigRequest",
              "google.protobuf.Empty", _V03_CONFIG_IDS),
    Operation("GetExtendedAgentCard", _L, "agent/getAuthenticatedExtendedCard", "GetAgentCard",
              _v03_routes("GET", "/card"), False, _X,
              "a2a.v1.GetAgentCardRequest", "a2a.v1.AgentCard"),
    # Go's v0.3 compat REST lists tasks; no v0.3 JSON-RPC method, rpc or proto type does (a2a-java's
    # draft rpc on a2a.v1 is an alias: _GRPC_ALIASES).
    Operation("ListTasks", _L, "", "", _v03_routes("GET", "/tasks"), False, None, "", "",
              _LIST_IDS),
    # ---- 0.1: A2A v0.1.0's JSON-RPC names (and fasta2a's tasks/list); nothing else ----
    Operation("SendMessage", _O, "tasks/send", "", (), False, None, "", "", _V01_SEND_IDS),
    Operation("SendStreamingMessage", _O, "tasks/sendSubscribe", "", (), True, _S, "", "",
              _V01_SEND_IDS),
    Operation("GetTask", _O, "tasks/get", "", (), False, None, "", "", _TASK_IDS),
    Operation("ListTasks", _O, "tasks/list", "", (), False, None, "", "", _LIST_IDS),
    Operation("CancelTask", _O, "tasks/cancel", "", (), False, None, "", "", _TASK_IDS),
    Operation("SubscribeToTask", _O, "tasks/resubscribe", "", (), True, _S, "", "", _TASK_IDS),
    Operation("CreateTaskPushNotificationConfig", _O, "tasks/pushNotification/set", "", (),
              False, _P, "", "", _TASK_IDS),
    Operation("GetTaskPushNotificationConfig", _O, "tasks/pushNotification/get", "", (),
              False, _P, "", "", _TASK_IDS),
)  # fmt: skip
# Other JSON-RPC names real SDKs give an operation (.NET's).
_JSONRPC_ALIASES: dict[tuple[str, Version], tuple[str, ...]] = {
    ("ListTaskPushNotificationConfigs", Version.V1_0): ("ListTaskPushNotificationConfig",),
}
# Other gRPC rpcs real SDKs serve an operation as, on the row's service.  a2a-java 1.0.0.Alpha3
# serves a draft of v1.0 under v0.3's service name `a2a.v1.A2AService` (its messages are read with
# the shipped draft, recorder.protocol._grpc.DRAFT_SERVICES), and with it three rpcs v0.3 has not
# (or names otherwise): the path is v0.3's package, so the exchange is v0.3's, as every other rpc
# on that service is; the ids sit where the v0.3 rows' positions already look (`id`, `contextId`,
# `pageToken`).
_GRPC_ALIASES: dict[tuple[str, Version], tuple[str, ...]] = {
    ("ListTasks", Version.V0_3): ("ListTasks",),
    ("SubscribeToTask", Version.V0_3): ("SubscribeToTask",),
    ("GetExtendedAgentCard", Version.V0_3): ("GetExtendedAgentCard",),
}
OPERATIONS: tuple[Operation, ...] = tuple(
    replace(
        op,
        positions=_POSITIONS.get((op.name, op.version), ()),
        jsonrpc_aliases=_JSONRPC_ALIASES.get((op.name, op.version), ()),
        grpc_aliases=_GRPC_ALIASES.get((op.name, op.version), ()),
    )
    for op in _ROWS
)

OPERATION_NAMES: tuple[str, ...] = tuple(dict.fromkeys(op.name for op in OPERATIONS))

# Every row a JSON-RPC name stands for, newest dialect first (the table's order).
_BY_JSONRPC: dict[str, tuple[Operation, ...]] = {}
for _op in OPERATIONS:
    for _name in _op.jsonrpc_methods:
        _BY_JSONRPC[_name] = (*_BY_JSONRPC.get(_name, ()), _op)
_BY_GRPC_PATH: dict[str, Operation] = {path: op for op in OPERATIONS for path in op.grpc_paths}
_BY_NAME: dict[tuple[str, Version], Operation] = {(op.name, op.version): op for op in OPERATIONS}
# Most specific template first, so `/tasks/{task_id}:cancel` wins over `/tasks/{task_id}`.
_ROUTES: tuple[tuple[Route, Operation], ...] = tuple(
    sorted(
        ((route, op) for op in OPERATIONS for route in op.routes),
        key=lambda pair: (-pair[0].literal_weight, pair[0].has_tenant),
    )
)
# The same, by verb and number of slashes: a path can only fit templates of its own shape.
_ROUTES_BY_SHAPE: dict[tuple[str, int], tuple[tuple[Route, Operation], ...]] = {}
for _pair in _ROUTES:
    _shape = (_pair[0].verb, _pair[0].template.count("/"))
    _ROUTES_BY_SHAPE[_shape] = (*_ROUTES_BY_SHAPE.get(_shape, ()), _pair)


# ---- v0.3 names beside their v1.0 ones (the diff's renames) ----


def _v1_row(row: Operation) -> Operation:
    return _BY_NAME[(row.name, Version.V1_0)]


_V03_ROWS = tuple(op for op in OPERATIONS if op.version is Version.V0_3)
# v0.3 JSON-RPC method -> v1.0 method: `message/send` -> `SendMessage`.
V03_METHOD_RENAMES: Mapping[str, str] = {
    op.jsonrpc_method: _v1_row(op).jsonrpc_method for op in _V03_ROWS if op.jsonrpc_method
}
# v0.3 gRPC rpc names that v1.0 changed: `TaskSubscription` -> `SubscribeToTask`.
V03_RPC_RENAMES: Mapping[str, str] = {
    op.grpc_rpc: _v1_row(op).grpc_rpc
    for op in _V03_ROWS
    if op.grpc_rpc and op.grpc_rpc != _v1_row(op).grpc_rpc
}


def v1_route_path(name: str, verb: str, path: str) -> tuple[str, str, str] | None:
    """(v1.0 path, v0.3 template, v1.0 template) of a v0.3 HTTP+JSON path, or None; base path
    and parameter text are kept, so a normalised path translates too."""
    old, new = _BY_NAME.get((name, Version.V0_3)), _BY_NAME.get((name, Version.V1_0))
    if old is None or new is None:
        return None
    verb = verb.upper()
    for route in old.routes:
        found = route.match_tail(path) if route.verb == verb else None
        target = next((r for r in new.routes if r.verb == verb and not r.has_tenant), None)
        if found is not None and target is not None:
            base, params = found
            return base + target.fill(params), route.template, target.template
    return None


def route_base(name: str, version: Version, verb: str, path: str) -> str | None:
    """The mount point (`/a2a/rest`) before operation `name`'s route in `path`, or None."""
    op = _BY_NAME.get((name, version))
    verb = verb.upper()
    for route in op.routes if op is not None else ():
        found = route.match_tail(path) if route.verb == verb and not route.has_tenant else None
        if found is not None:
            return found[0]
    return None


@dataclass(frozen=True, slots=True)
class RouteMatch:
    """A matched HTTP+JSON route, with its percent-decoded parameters."""

    operation: Operation
    route: Route
    params: Mapping[str, str]


def operation_by_jsonrpc_method(method: str, version: Version | None = None) -> Operation | None:
    """The operation a JSON-RPC `method` names, or None; of a shared name (`tasks/get`), the
    row of `version` (the card's) if given, else the newest."""
    rows = _BY_JSONRPC.get(method, ())
    return next((op for op in rows if op.version is version), rows[0] if rows else None)


def operation_by_grpc_path(path: str) -> Operation | None:
    return _BY_GRPC_PATH.get(path)


def operation(name: str, version: Version = Version.V1_0) -> Operation | None:
    return _BY_NAME.get((name, version))


def match_route(verb: str, path: str) -> RouteMatch | None:
    """The most specific HTTP+JSON route for `verb` and `path` (no base path, no query)."""
    return next(_matches(verb, path), None)


def match_routes(verb: str, path: str) -> tuple[RouteMatch, ...]:
    """Every HTTP+JSON route that fits, most specific first."""
    return tuple(_matches(verb, path))


def _matches(verb: str, path: str) -> Iterator[RouteMatch]:
    parts = path.split("/")
    for route, op in _ROUTES_BY_SHAPE.get((verb.upper(), len(parts) - 1), ()):
        params = route.match_parts(parts)
        if params is not None:
            yield RouteMatch(op, route, params)


def route_for(
    name: str,
    version: Version = Version.V1_0,
    *,
    tenant: str | None = None,
    task_id: str | None = None,
    config_id: str | None = None,
) -> tuple[str, str] | None:
    """(verb, path) to call an operation over HTTP+JSON, or None; a tenant picks the
    `/{tenant}` form, subscribe gives POST (as SDK clients send), a missing id KeyError."""
    op = _BY_NAME.get((name, version))
    if op is None:
        return None
    want_tenant = bool(tenant)
    routes = [r for r in op.routes if r.has_tenant == want_tenant]
    if not routes:
        return None
    route = next((r for r in routes if r.verb == "POST"), routes[0])
    values = {"tenant": tenant, "task_id": task_id, "config_id": config_id}
    given = {k: v for k, v in values.items() if v is not None}
    return route.verb, route.expand(**given)
