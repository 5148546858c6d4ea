"""A2A documents between v0.3 and v1.0, both ways: the type and rename tables (pure).

Every document is read into v1.0 and written from it (`_walk`); a member no row of `TYPES`
names is copied as the wire said it.  Nothing silently: each rule applied leaves a `Rename` in
v0.3 -> v1.0 terms, each value the target cannot carry a `Lost` (dropped unless `keep=True`:
the diff compares it).  Never raises on odd input: a value of the wrong type is copied as is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from recorder.protocol import (
    PUSH_DELIVERY,
    TASK_STATES,
    V03_KINDS,
    V03_PROTO_STATES,
    V03_ROLES,
    V03_TASK_STATES,
    Binding,
    Version,
)

Json = Any


class Dialect(StrEnum):
    """How a document is written: v1.0, or one of v0.3's two JSON forms."""

    V1 = "1.0"
    V03 = "0.3"  # the JSON-RPC schema (and push deliveries)
    V03_PROTO = "0.3 proto-JSON"  # HTTP+JSON and gRPC

    @property
    def version(self) -> Version:
        return Version.V1_0 if self is Dialect.V1 else Version.V0_3


def dialect_of(version: object, binding: object) -> Dialect:
    if str(version) != Version.V0_3:
        return Dialect.V1
    proto = str(binding) in (Binding.HTTP_JSON, Binding.GRPC)
    return Dialect.V03_PROTO if proto else Dialect.V03


class RenameRule(StrEnum):
    VERSION = "version"
    METHOD = "method"
    ROUTE = "route"
    GRPC_SERVICE = "grpc-service"
    GRPC_RPC = "grpc-rpc"
    ENUM = "enum"
    KIND_WRAPPER = "kind-wrapper"
    KIND_REMOVED = "kind-removed"
    PART_KIND = "part-kind"
    FINAL_REMOVED = "final-removed"
    CONTENT_PARTS = "content-parts"
    SEND_CONFIG = "send-config"
    PUSH_CONFIG = "push-config"
    CARD_FIELD = "card-field"
    HEADER = "header"
    RESOURCE_NAME = "resource-name"
    ERROR = "error"


def _swapped(what: str) -> tuple[str, str]:
    """`what: {old} → {new}` one way, `what: {new} → {old}` the other."""
    return f"{what}: {{old}} → {{new}}", f"{what}: {{new}} → {{old}}"


# How each rule reads: (v0.3 -> v1.0, v1.0 -> v0.3); {old} and {new} are in v0.3 -> v1.0 terms.
_R = RenameRule
RULE_TEXT: Mapping[RenameRule, tuple[str, str]] = {
    _R.VERSION: _swapped("protocol version"),
    _R.METHOD: _swapped("method renamed"),
    _R.ROUTE: _swapped("route renamed"),
    _R.GRPC_SERVICE: _swapped("gRPC service renamed"),
    _R.GRPC_RPC: _swapped("gRPC rpc renamed"),
    _R.ENUM: _swapped("enum form"),
    _R.KIND_WRAPPER: (
        "kind discriminator replaced by wrapper member `{new}`",
        "wrapper member `{new}` replaced by kind discriminator `{old}`",
    ),
    _R.KIND_REMOVED: ("kind discriminator `{old}` removed", "kind discriminator `{old}` added"),
    _R.PART_KIND: (
        "part kind discriminator `{old}` replaced by member `{new}`",
        "part member `{new}` replaced by kind discriminator `{old}`",
    ),
    _R.FINAL_REMOVED: ("`final` removed from status updates", "`final` added to status updates"),
    _R.CONTENT_PARTS: _swapped("message field renamed"),
    _R.SEND_CONFIG: _swapped("send configuration"),
    _R.PUSH_CONFIG: _swapped("push config"),
    _R.CARD_FIELD: _swapped("card field"),
    _R.HEADER: _swapped("header renamed"),
    _R.RESOURCE_NAME: ("resource name → ids: {old} → {new}", "ids → resource name: {new} → {old}"),
    _R.ERROR: _swapped("error"),
}


@dataclass(frozen=True, slots=True)
class Rename:
    """One application of a rule: old and new in v0.3 -> v1.0 terms."""

    rule: RenameRule
    old: str
    new: str
    path: str

    def describe(self, *, reverse: bool = False) -> str:
        forward, backward = RULE_TEXT[self.rule]
        text = (backward if reverse else forward).format(old=self.old, new=self.new)
        if self.rule is RenameRule.VERSION:  # already says which way
            return text
        return text + (" (v1.0 → v0.3)" if reverse else " (v0.3 → v1.0)")


@dataclass(frozen=True, slots=True)
class Lost:
    """A value the target dialect cannot carry."""

    path: str
    value: str  # short JSON of what was left out
    why: str

    def describe(self) -> str:
        return f"{self.path} = {self.value}: {self.why}"


@dataclass(frozen=True, slots=True)
class Translated:
    value: Json
    renames: tuple[Rename, ...] = ()
    lost: tuple[Lost, ...] = ()


# ---- types ---------------------------------------------------------------------------------

MESSAGE, PART, TASK, STATUS, ARTIFACT = "Message", "Part", "Task", "TaskStatus", "Artifact"
STATUS_UPDATE, ARTIFACT_UPDATE = "TaskStatusUpdateEvent", "TaskArtifactUpdateEvent"
SEND_RESULT, STREAM = "SendMessageResponse", "StreamResponse"
SEND_PARAMS, SEND_CONFIG = "SendMessageRequest", "SendMessageConfiguration"
STREAM_PARAMS = "SendMessageRequest (streaming)"  # the same message; blocking means nothing
PUSH_CONFIG = "TaskPushNotificationConfig"
CREATE_CONFIG, CONFIG_REF = "CreateTaskPushNotificationConfigRequest", "PushConfigReference"
LIST_CONFIGS, CONFIG_LIST = "ListTaskPushNotificationConfigsRequest", "PushConfigList"
GET_TASK, CANCEL_TASK, SUBSCRIBE = "GetTaskRequest", "CancelTaskRequest", "SubscribeToTaskRequest"
CARD_REQUEST, CARD, ROLE, STATE = "GetExtendedAgentCardRequest", "AgentCard", "Role", "TaskState"
LIST_OF = "[]"  # a member type ending in it is a list of that type

# The root type of each operation's request and response (None: not translated).
ROOTS: Mapping[str, tuple[str | None, str | None]] = {
    "SendMessage": (SEND_PARAMS, SEND_RESULT),
    "SendStreamingMessage": (STREAM_PARAMS, STREAM),
    "GetTask": (GET_TASK, TASK),
    "CancelTask": (CANCEL_TASK, TASK),
    "SubscribeToTask": (SUBSCRIBE, STREAM),
    "CreateTaskPushNotificationConfig": (CREATE_CONFIG, PUSH_CONFIG),
    "GetTaskPushNotificationConfig": (CONFIG_REF, PUSH_CONFIG),
    "ListTaskPushNotificationConfigs": (LIST_CONFIGS, CONFIG_LIST),
    "DeleteTaskPushNotificationConfig": (CONFIG_REF, None),
    "GetExtendedAgentCard": (CARD_REQUEST, CARD),
    "AgentCard": (None, CARD),
    PUSH_DELIVERY: (STREAM, None),
}
# The StreamResponse members and the type each holds; `kind` of each in v0.3 JSON-RPC.
MEMBER_TYPES: Mapping[str, str] = {
    "task": TASK,
    "message": MESSAGE,
    "statusUpdate": STATUS_UPDATE,
    "artifactUpdate": ARTIFACT_UPDATE,
}
KINDS: Mapping[str, str] = {MEMBER_TYPES[member]: kind for kind, member in V03_KINDS.items()}


class Walker(Protocol):
    """What a shape asks of the walk that called it: notes, and the walk for its members."""

    defaults: bool

    def note(self, rule: RenameRule, old: str, new: str, path: str) -> None: ...
    def lose(self, obj: dict[str, Any], key: str, path: str, why: str) -> None: ...
    def lose_value(self, value: Any, path: str, why: str) -> None: ...
    def read(
        self, value: Any, kind: str, source: Dialect, path: str, *, wrapped: bool = False
    ) -> Any: ...
    def write(
        self, value: Any, kind: str, target: Dialect, path: str, *, wrapped: bool = False
    ) -> Any: ...
    def read_members(
        self, obj: dict[str, Any], kind: str, source: Dialect, path: str
    ) -> dict[str, Any]: ...
    def write_members(
        self, obj: dict[str, Any], kind: str, target: Dialect, path: str
    ) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class TypeRow:
    members: Mapping[str, str] = field(default_factory=dict)  # v1.0 member -> type
    renamed: Mapping[Dialect, Mapping[str, tuple[str, RenameRule]]] = field(default_factory=dict)
    v1_only: frozenset[str] = frozenset()
    v03_only: frozenset[str] = frozenset()
    shape: str | None = None  # a key of `_shapes.SHAPES`


_TENANT, _METADATA = frozenset({"tenant"}), frozenset({"metadata"})
_CONTENT = {Dialect.V03_PROTO: {"parts": ("content", RenameRule.CONTENT_PARTS)}}
TYPES: Mapping[str, TypeRow] = {
    MESSAGE: TypeRow({"parts": PART + LIST_OF, "role": ROLE}, _CONTENT),
    TASK: TypeRow(
        {"status": STATUS, "artifacts": ARTIFACT + LIST_OF, "history": MESSAGE + LIST_OF}
    ),
    STATUS: TypeRow({"state": STATE, "message": MESSAGE}),
    ARTIFACT: TypeRow({"parts": PART + LIST_OF}),
    STATUS_UPDATE: TypeRow({"status": STATUS}, shape="status-update"),
    ARTIFACT_UPDATE: TypeRow({"artifact": ARTIFACT}),
    PART: TypeRow(shape="part"),
    SEND_RESULT: TypeRow(shape="wrapper"),
    STREAM: TypeRow(shape="wrapper"),
    SEND_PARAMS: TypeRow(
        {"message": MESSAGE, "configuration": SEND_CONFIG}, v1_only=_TENANT, shape="send-params"
    ),
    STREAM_PARAMS: TypeRow({"message": MESSAGE, "configuration": SEND_CONFIG}, v1_only=_TENANT),
    SEND_CONFIG: TypeRow(shape="send-config"),
    PUSH_CONFIG: TypeRow(v1_only=_TENANT, shape="push-config"),
    CREATE_CONFIG: TypeRow(v1_only=_TENANT, shape="create-config"),
    CONFIG_REF: TypeRow(v1_only=_TENANT, v03_only=_METADATA, shape="config-ref"),
    LIST_CONFIGS: TypeRow(v1_only=_TENANT, v03_only=_METADATA, shape="config-ref"),
    CONFIG_LIST: TypeRow(shape="config-list"),
    GET_TASK: TypeRow(v1_only=_TENANT, v03_only=_METADATA, shape="task-ref"),
    CANCEL_TASK: TypeRow(v1_only=_TENANT, shape="task-ref"),
    SUBSCRIBE: TypeRow(v1_only=_TENANT, v03_only=_METADATA, shape="task-ref"),
    CARD_REQUEST: TypeRow(v1_only=_TENANT),
    CARD: TypeRow(shape="card"),
}

# Enum forms, v1.0 name -> (v0.3 JSON-RPC, v0.3 proto-JSON).
ENUMS: Mapping[str, Mapping[str, tuple[str, str]]] = {
    STATE: {row.name: (row.v03, V03_PROTO_STATES.get(row.name, row.name)) for row in TASK_STATES},
    ROLE: {new: (old, new) for old, new in V03_ROLES.items()},
}
ENUM_READS: Mapping[tuple[str, Dialect], Mapping[str, str]] = {
    (STATE, Dialect.V03): V03_TASK_STATES,
    (STATE, Dialect.V03_PROTO): {old: new for new, old in V03_PROTO_STATES.items()},
    (ROLE, Dialect.V03): V03_ROLES,
}


def renamed(obj: dict[str, Json], old: str, new: str) -> dict[str, Json]:
    return {new if k == old else k: v for k, v in obj.items()}


def short(value: Json, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."
