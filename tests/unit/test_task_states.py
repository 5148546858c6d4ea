"""What an answer carries (kind and task state), the v0.3 tables, and the derived renames."""

from __future__ import annotations

from typing import Any

import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2 as v03_pb2
from a2a.compat.v0_3 import types as v03_types
from a2a.types import a2a_pb2 as v10

from recorder.protocol import (
    OPERATIONS,
    STREAM_MEMBERS,
    TASK_STATES,
    V03_KINDS,
    V03_METHOD_RENAMES,
    V03_ROLES,
    V03_RPC_RENAMES,
    V03_TASK_STATES,
    Carried,
    Version,
    carried,
    task_state,
    task_state_row,
    v1_route_path,
)


def test_task_states_are_the_sdk_enums_in_both_versions() -> None:
    assert {row.name for row in TASK_STATES} == set(v10.TaskState.keys())
    assert {row.v03 for row in TASK_STATES} == {s.value for s in v03_types.TaskState}
    assert set(V03_ROLES) == {r.value for r in v03_types.Role}
    assert set(V03_ROLES.values()) <= set(v10.Role.keys())
    # v0.3 proto-JSON spells CANCELLED; each of its names reads as a v1.0 state.
    assert all(task_state(name) is not None for name in v03_pb2.TaskState.DESCRIPTOR.values_by_name)
    assert V03_TASK_STATES["TASK_STATE_CANCELLED"] == "TASK_STATE_CANCELED"


def test_stream_members_are_the_stream_response_oneof() -> None:
    oneof = v10.StreamResponse.DESCRIPTOR.oneofs_by_name["payload"]
    assert [f.json_name for f in oneof.fields] == list(STREAM_MEMBERS)
    assert set(V03_KINDS.values()) == set(STREAM_MEMBERS)


@pytest.mark.parametrize(
    ("value", "name", "terminal", "interrupted"),
    [
        ("TASK_STATE_COMPLETED", "TASK_STATE_COMPLETED", True, False),
        ("input-required", "TASK_STATE_INPUT_REQUIRED", False, True),
        ("TASK_STATE_CANCELLED", "TASK_STATE_CANCELED", True, False),
        ("auth-required", "TASK_STATE_AUTH_REQUIRED", False, True),
        ("working", "TASK_STATE_WORKING", False, False),
    ],
)
def test_task_state_forms(value: str, name: str, terminal: bool, interrupted: bool) -> None:
    row = task_state_row(value)
    assert row is not None and (row.name, row.terminal, row.interrupted) == (
        name,
        terminal,
        interrupted,
    )
    assert row.short == name.removeprefix("TASK_STATE_")


@pytest.mark.parametrize("value", ["done", "", None, 3, "task_state_completed"])
def test_not_a_state(value: object) -> None:
    assert task_state(value) is None


TASK = {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_FAILED"}}
STATUS = {"taskId": "t", "contextId": "c", "status": {"state": "input-required"}}
CARRIED_CASES: list[tuple[str, Any, Carried | None]] = [
    ("v1.0 send result", {"task": TASK}, Carried("task", "TASK_STATE_FAILED",
                                                 "TASK_STATE_FAILED")),
    ("bare task (GetTask)", TASK, Carried("task", "TASK_STATE_FAILED", "TASK_STATE_FAILED")),
    ("JSON-RPC envelope", {"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": STATUS}},
     Carried("statusUpdate", "TASK_STATE_INPUT_REQUIRED", "input-required")),
    ("v0.3 status event", {"kind": "status-update", **STATUS},
     Carried("statusUpdate", "TASK_STATE_INPUT_REQUIRED", "input-required")),
    ("v0.3 message", {"kind": "message", "messageId": "m", "parts": []}, Carried("message")),
    ("v1.0 message", {"message": {"messageId": "m", "parts": []}}, Carried("message")),
    ("artifact", {"artifactUpdate": {"taskId": "t", "artifact": {}}}, Carried("artifactUpdate")),
    ("odd state", {"task": {**TASK, "status": {"state": "DONE"}}}, Carried("task", None, "DONE")),
    ("error envelope", {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001}}, None),
    ("task list", {"tasks": [TASK], "nextPageToken": ""}, None),
    ("push config", {"taskId": "t", "id": "c", "url": "http://x"}, None),
    ("not an object", [TASK], None),
    ("two members", {"task": TASK, "message": {}}, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("_name", "document", "expected"), CARRIED_CASES, ids=[c[0] for c in CARRIED_CASES]
)
def test_carried(_name: str, document: Any, expected: Carried | None) -> None:
    assert carried(document) == expected


def test_v03_method_and_rpc_renames_come_from_the_operation_table() -> None:
    v03_rows = [op for op in OPERATIONS if op.version is Version.V0_3 and op.jsonrpc_method]
    assert len(V03_METHOD_RENAMES) == len(v03_rows)
    assert V03_METHOD_RENAMES["tasks/resubscribe"] == "SubscribeToTask"
    assert V03_RPC_RENAMES == {
        "TaskSubscription": "SubscribeToTask",
        "ListTaskPushNotificationConfig": "ListTaskPushNotificationConfigs",
        "GetAgentCard": "GetExtendedAgentCard",
    }
    # Every v0.3 rpc renamed here is a method of the v0.3 service a2a-sdk ships.
    service = v03_pb2.DESCRIPTOR.services_by_name["A2AService"]
    assert set(V03_RPC_RENAMES) <= set(service.methods_by_name)


@pytest.mark.parametrize(
    ("name", "verb", "path", "expected"),
    [
        ("SendMessage", "POST", "/a2a/rest/v1/message:send", "/a2a/rest/message:send"),
        ("CancelTask", "post", "/v1/tasks/<task-1>:cancel", "/tasks/<task-1>:cancel"),
        ("GetExtendedAgentCard", "GET", "http://<origin-1>/v1/card",
         "http://<origin-1>/extendedAgentCard"),
        ("GetTaskPushNotificationConfig", "GET", "/v1/tasks/a%2Fb/pushNotificationConfigs/c",
         "/tasks/a%2Fb/pushNotificationConfigs/c"),  # parameters kept as written
        ("GetTask", "GET", "/tasks/t1", None),  # already v1.0
        ("GetTask", "POST", "/v1/tasks/t1", None),  # no such route
        ("ListTasks", "GET", "/a2a/v1/tasks", "/a2a/tasks"),  # Go v0.3 compat route
        ("AgentCard", "GET", "/.well-known/agent-card.json", None),
    ],
)  # fmt: skip
def test_v1_route_path(name: str, verb: str, path: str, expected: str | None) -> None:
    found = v1_route_path(name, verb, path)
    assert (found[0] if found else None) == expected
