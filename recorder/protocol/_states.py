"""Task states as a table, and the StreamResponse members an answer carries.

An answer carries a Task, a Message, a status update or an artifact update (spec §3.2.3): v1.0
names the member, v0.3 puts a `kind` inside.  States are `TASK_STATE_COMPLETED` in v1.0 and
`completed` in v0.3.  Pure, never raises on odd input.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TaskStateRow:
    name: str
    v03: str
    terminal: bool = False  # the task is done: completed, canceled, failed, rejected
    interrupted: bool = False  # the task waits for the client: input or auth required

    @property
    def short(self) -> str:
        """The name without its prefix: `INPUT_REQUIRED`."""
        return self.name.removeprefix("TASK_STATE_")


TASK_STATES: tuple[TaskStateRow, ...] = (
    TaskStateRow("TASK_STATE_UNSPECIFIED", "unknown"),
    TaskStateRow("TASK_STATE_SUBMITTED", "submitted"),
    TaskStateRow("TASK_STATE_WORKING", "working"),
    TaskStateRow("TASK_STATE_INPUT_REQUIRED", "input-required", interrupted=True),
    TaskStateRow("TASK_STATE_COMPLETED", "completed", terminal=True),
    TaskStateRow("TASK_STATE_CANCELED", "canceled", terminal=True),
    TaskStateRow("TASK_STATE_FAILED", "failed", terminal=True),
    TaskStateRow("TASK_STATE_REJECTED", "rejected", terminal=True),
    TaskStateRow("TASK_STATE_AUTH_REQUIRED", "auth-required", interrupted=True),
)
# Other spellings of a v1.0 state seen on the wire: v0.3 proto-JSON's double L.
STATE_ALIASES: Mapping[str, str] = {"TASK_STATE_CANCELLED": "TASK_STATE_CANCELED"}

_STATE_ROWS: Mapping[str, TaskStateRow] = {
    **{row.name: row for row in TASK_STATES},
    **{row.v03: row for row in TASK_STATES},
}

# The StreamResponse members (v1.0 oneof names) and the v0.3 `kind` of each.
STREAM_MEMBERS: tuple[str, ...] = ("task", "message", "statusUpdate", "artifactUpdate")
V03_KINDS: Mapping[str, str] = {
    "task": "task",
    "message": "message",
    "status-update": "statusUpdate",
    "artifact-update": "artifactUpdate",
}


def task_state_row(value: object) -> TaskStateRow | None:
    """The row of a state in any of its forms (`TASK_STATE_FAILED`, `failed`), or None."""
    if not isinstance(value, str):
        return None
    return _STATE_ROWS.get(STATE_ALIASES.get(value, value))


def task_state(value: object) -> str | None:
    """The v1.0 name of a state in any of its forms, or None."""
    row = task_state_row(value)
    return row.name if row is not None else None
