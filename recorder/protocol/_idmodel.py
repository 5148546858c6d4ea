"""The id model of A2A messages: one table for every part that handles ids (pure data).

Where requests name ids is in the operations' `IdPosition`s; here are a bare `id`'s owner by
its object's shape, ids inside v0.3 resource names and HTTP+JSON paths, and webhook positions.
On replay task, context and config ids are minted per session, message and artifact ids and
page cursors served as recorded; user content never holds ids.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from recorder.protocol._operations import OPERATIONS
from recorder.protocol._volatile import ID_FIELDS, IdKind

# Subtrees that hold the agent's or the user's data (metadata, a data part): never ids.
USER_CONTENT_KEYS = frozenset({"metadata", "data"})

# Id fields a client never names back (its own message ids aside): served as recorded.
SERVED_AS_RECORDED = frozenset(
    name for name, kind in ID_FIELDS.items() if kind in (IdKind.MESSAGE, IdKind.ARTIFACT)
)
# Page cursors an answer hands out; the next page's request names them back as they are.
CURSOR_FIELDS = frozenset({"nextPageToken"})

TASKS_SEGMENT = "tasks"
CONFIGS_SEGMENT = "pushNotificationConfigs"
# A v0.3 resource name: `tasks/{task}` or `tasks/{task}/pushNotificationConfigs/{config}`.
RESOURCE_NAME = re.compile(rf"{TASKS_SEGMENT}/([^/]+)(?:/{CONFIGS_SEGMENT}/([^/]+))?")
# Ids in an HTTP+JSON path (`/tasks/{id}:cancel`, `.../pushNotificationConfigs/{id}?x`).
PATH_IDS: tuple[tuple[re.Pattern[str], IdKind], ...] = (
    (re.compile(rf"(?:^|/){TASKS_SEGMENT}/([^/:?#]+)"), IdKind.TASK),
    (re.compile(rf"/{CONFIGS_SEGMENT}/([^/:?#]+)"), IdKind.CONFIG),
)


def resource_ids(name: str) -> tuple[str, str | None] | None:
    """(task id, push-config id or None) of a whole v0.3 resource name, or None."""
    matched = RESOURCE_NAME.fullmatch(name)
    return (matched.group(1), matched.group(2)) if matched else None


def bare_task_id(value: str, kind: IdKind | None) -> str | None:
    """The task a value that is no resource name names where v0.3 puts a task's name (`kind`
    TASK: `GetTaskRequest.name`, a config's `parent`): a bare id, with no `/`, is that task's.
    a2a-java 1.0.0.Alpha3's draft sends `GetTaskRequest {id = 1}` (Cancel's and Subscribe's
    too, and `ListTaskPushNotificationConfigRequest {task_id = 1}`) on v0.3's service, which is
    v0.3's `{name = 1}` (`{parent = 1}`) byte for byte, so it is read as v0.3's; a v0.3 peer
    writes `tasks/{id}` there.  Where v0.3 puts a config's name, a bare value may be either id
    (the draft's `GetTaskPushNotificationConfigRequest {id = 1}` is the config's): None."""
    return value if kind is IdKind.TASK and value and "/" not in value else None


# Keys of a bare task-reference params object (`{id}`, v0.3 `{id, pushNotificationConfigId}`).
_TASK_PARAM_KEYS = frozenset(
    {"id", "historyLength", "metadata", "tenant", "pushNotificationConfigId"}
)


def _is_envelope(obj: Mapping[str, Any]) -> bool:
    return "jsonrpc" in obj


# A push config (v1.0 flat, v0.3 nested, or inline in a send): a webhook `url` and one of these.
PUSH_CONFIG_MARKS = frozenset({"token", "authentication", "taskId", "id"})


def is_push_config(obj: Mapping[str, Any]) -> bool:
    return "url" in obj and not PUSH_CONFIG_MARKS.isdisjoint(obj)


def _holds_config_id(obj: Mapping[str, Any]) -> bool:
    # A push config or v1.0 get/delete params `{taskId, id}`: a Task never carries `url` or
    # `taskId`.  On the hot path of every object with an `id`: kept to two lookups.
    return "url" in obj or "taskId" in obj


def _is_task(obj: Mapping[str, Any]) -> bool:
    return "status" in obj or "contextId" in obj or obj.get("kind") == "task"


def _is_task_params(obj: Mapping[str, Any]) -> bool:
    return obj.keys() <= _TASK_PARAM_KEYS


# The first predicate that holds names the kind of the object's `id`.
ID_OWNERS: tuple[tuple[Callable[[Mapping[str, Any]], bool], IdKind], ...] = (
    (_is_envelope, IdKind.JSONRPC_ID),
    (_holds_config_id, IdKind.CONFIG),
    (_is_task, IdKind.TASK),
    (_is_task_params, IdKind.TASK),
)


def id_owner(obj: Mapping[str, Any]) -> IdKind | None:
    """The kind of the `id` an object holds, by its shape (None: not an id we know)."""
    return next((kind for test, kind in ID_OWNERS if test(obj)), None)


# Every request position of a webhook URL (relative to the JSON-RPC params or the body).
WEBHOOK_PATHS: tuple[tuple[str, ...], ...] = tuple(
    dict.fromkeys(
        position.path
        for op in OPERATIONS
        for position in op.positions
        if position.kind is IdKind.WEBHOOK
    )
)
