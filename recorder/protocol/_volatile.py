"""Which values in A2A messages change on every run: the table replay and diff share.

Ids are recognised by the name of the field that holds them (camelCase proto-JSON, snake_case
just in case), in v1.0 and v0.3 shapes alike; a bare `id` needs its object's shape to tell its
kind, which is the diff's business.  Timestamps and opaque values (tokens, credentials, page
tokens, signatures) are volatile whole.
"""

from __future__ import annotations

from collections.abc import Mapping
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

# v0.3 gRPC resource names (`name: "tasks/{id}"`, `parent`) and REST paths carry ids too.
RESOURCE_NAME_FIELDS = frozenset({"name", "parent"})

# Fields whose whole value is volatile, and the fixed placeholder each becomes.
TIMESTAMP_FIELDS = frozenset({"timestamp", "statusTimestampAfter"})
# Pagination cursors: opaque and volatile, but never credentials, whatever their name says.
PAGINATION_FIELDS = frozenset({"pageToken", "nextPageToken"})
OPAQUE_FIELDS: Mapping[str, str] = {
    "token": "<token>",
    "credentials": "<credentials>",
    "nextPageToken": "<page-token>",
    "pageToken": "<page-token>",
    "signature": "<signature>",
}
