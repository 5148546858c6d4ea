"""Which values in A2A messages change on every run: the table replay and diff share.

Ids are recognised by the name of the field holding them (a bare `id` needs its object's
shape: the diff's business); timestamps and opaque values (tokens, secrets) are volatile whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum


class IdKind(StrEnum):
    """The kinds of volatile id; the value is the placeholder's stem (`<task-1>`)."""

    TASK = "task"
    CONTEXT = "context"
    MESSAGE = "message"
    ARTIFACT = "artifact"
    CONFIG = "config"
    JSONRPC_ID = "jsonrpc-id"
    ORIGIN = "origin"
    WEBHOOK = "webhook"  # a push config's URL path (often carries a random token)


# Id fields whose kind the name alone decides (camelCase proto-JSON; snake_case just in case).
ID_FIELDS: Mapping[str, IdKind] = {
    "taskId": IdKind.TASK,
    "task_id": IdKind.TASK,
    "referenceTaskIds": IdKind.TASK,
    "contextId": IdKind.CONTEXT,
    "context_id": IdKind.CONTEXT,
    "messageId": IdKind.MESSAGE,
    "message_id": IdKind.MESSAGE,
    "artifactId": IdKind.ARTIFACT,
    "artifact_id": IdKind.ARTIFACT,
    "pushNotificationConfigId": IdKind.CONFIG,  # v0.3 get/delete params
    "configId": IdKind.CONFIG,  # v0.3 gRPC CreateTaskPushNotificationConfigRequest
    "config_id": IdKind.CONFIG,
}

# v0.3 gRPC resource names (`name: "tasks/{id}"`, `parent`) carry ids too.
RESOURCE_NAME_FIELDS = frozenset({"name", "parent"})

# Fields whose whole value is volatile.
TIMESTAMP_FIELDS = frozenset({"timestamp", "statusTimestampAfter"})
# The v1.1 draft's task generation (a2aproject/A2A #1810), stepped on every change of a task and
# named back by clients: its steps mean something, its value does not (the diff compares steps).
GENERATION_FIELDS = frozenset(
    {"generation", "currentGeneration", "ifGenerationMatch", "current_generation",
     "if_generation_match"}
)  # fmt: skip
# Pagination cursors: opaque and volatile, but never credentials, whatever their name says.
PAGINATION_FIELDS = frozenset({"pageToken", "nextPageToken"})
OPAQUE_FIELDS: Mapping[str, str] = {
    "token": "<token>",
    "credentials": "<credentials>",
    "nextPageToken": "<page-token>",
    "pageToken": "<page-token>",
    "signature": "<signature>",
}


class IdRole(StrEnum):
    """What a request does with an id (§3.4.1, §3.4.2, §4.1.4); no unissued id is served as real."""

    REFERENCE = "reference"  # must name something that exists (GetTask `id`, `message.taskId`)
    CHOSEN = "chosen"  # the client's to pick: new, or one it named or was given before
    FRESH = "fresh"  # new on every request and never named again (messageId, webhook secrets)


@dataclass(frozen=True, slots=True)
class IdPosition:
    """One place in a request that holds an id; `*` in `path` is every item of a list.  With
    `resource`, a v0.3 resource name: its task is a reference, its config has `role`."""

    path: tuple[str, ...]
    kind: IdKind | None
    role: IdRole
    resource: bool = False


_REF, _CHOSEN, _FRESH = IdRole.REFERENCE, IdRole.CHOSEN, IdRole.FRESH


def message_positions(*prefix: str) -> tuple[IdPosition, ...]:
    """A Message's ids, v1.0 and v0.3 alike."""
    return (
        IdPosition((*prefix, "messageId"), IdKind.MESSAGE, _FRESH),
        IdPosition((*prefix, "contextId"), IdKind.CONTEXT, _CHOSEN),
        IdPosition((*prefix, "taskId"), IdKind.TASK, _REF),
        IdPosition((*prefix, "referenceTaskIds"), IdKind.TASK, _REF),
    )


# A push config's secrets, relative to the config (v1.0 flat, v0.3 nested alike).
PUSH_CONFIG_SECRETS: tuple[tuple[str, ...], ...] = (("token",), ("authentication", "credentials"))


def push_config_positions(*prefix: str, config_role: IdRole = _CHOSEN) -> tuple[IdPosition, ...]:
    return (
        IdPosition((*prefix, "id"), IdKind.CONFIG, config_role),
        IdPosition((*prefix, "taskId"), IdKind.TASK, _REF),
        IdPosition((*prefix, "url"), IdKind.WEBHOOK, _FRESH),
        *(IdPosition((*prefix, *secret), None, _FRESH) for secret in PUSH_CONFIG_SECRETS),
    )


def resource_position(*path: str, role: IdRole = _REF) -> IdPosition:
    return IdPosition(path, IdKind.TASK, role, resource=True)


# HTTP+JSON path parameters: a URL names what exists, so both are always references.
PATH_POSITIONS: tuple[IdPosition, ...] = (
    IdPosition(("taskId",), IdKind.TASK, _REF),
    IdPosition(("configId",), IdKind.CONFIG, _REF),
)

# Keys whose string values in a response are ids the agent hands out (a bare `id` except the
# JSON-RPC envelope's); webhook URLs and secrets there are the client's own, echoed.
RESPONSE_ID_KEYS: frozenset[str] = frozenset(ID_FIELDS) | {"id", "name", "nextPageToken"}

# Responses that list resources: operation -> (the list's key, each item's id key); spec §3.1.4.
LISTINGS: Mapping[str, tuple[str, str]] = {"ListTasks": ("tasks", "id")}

# The fields that make a message's or a task's shape: `--compare shape:PATH` compares these by
# value, and every other string under PATH only by whether it is there (an LLM's sampled text).
SHAPE_FIELDS: frozenset[str] = frozenset({"state", "kind", "name", "role", "mediaType", "mimeType"})
