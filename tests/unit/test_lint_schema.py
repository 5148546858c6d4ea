"""The descriptors a2a-sdk ships, read as the lint reads them, pinned to the spec's a2a.proto.

The REQUIRED lists below were read by hand in a2aproject/A2A `specification/a2a.proto` at
v1.0.1 (identical at v1.0.0): if a2a-sdk ever ships descriptors that disagree, this fails
before the lint starts judging agents by another text.
"""

from __future__ import annotations

import pytest

from recorder.lint._schema import (
    descriptor,
    enum_names,
    legacy_keys,
    oneofs,
    required_fields,
    walk,
)

SPEC_REQUIRED = {
    "Task": ["id", "status"],
    "TaskStatus": ["state"],
    "Message": ["messageId", "role", "parts"],
    "Artifact": ["artifactId", "parts"],
    "TaskStatusUpdateEvent": ["taskId", "contextId", "status"],
    "TaskArtifactUpdateEvent": ["taskId", "contextId", "artifact"],
    "AgentCard": ["name", "description", "supportedInterfaces", "version", "capabilities",
                  "defaultInputModes", "defaultOutputModes", "skills"],
    "AgentInterface": ["url", "protocolBinding", "protocolVersion"],
    "AgentSkill": ["id", "name", "description", "tags"],
    "AgentProvider": ["url", "organization"],
    "AgentCardSignature": ["protected", "signature"],
    "AuthenticationInfo": ["scheme"],
    "TaskPushNotificationConfig": ["url"],
    "Part": [],
    "StreamResponse": [],
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(SPEC_REQUIRED))
def test_required_fields_are_the_spec_s(name: str) -> None:
    found = descriptor(f"lf.a2a.v1.{name}")
    assert found is not None
    assert [f.json_name for f in required_fields(found)] == SPEC_REQUIRED[name]


def test_v0_3_names_a_v1_0_message_no_longer_has() -> None:
    names = {
        n: legacy_keys(descriptor(f"lf.a2a.v1.{n}"))
        for n in ("AgentCard", "Message", "Part", "TaskStatusUpdateEvent", "Task")  # type: ignore[arg-type]
    }
    assert names["AgentCard"] == {
        "url",
        "preferredTransport",
        "additionalInterfaces",
        "protocolVersion",
        "security",
        "supportsAuthenticatedExtendedCard",
    }
    assert names["Message"] == {"content", "kind"}
    assert names["Part"] == {"file", "kind"}
    assert names["TaskStatusUpdateEvent"] == {"final", "kind"}
    assert names["Task"] == {"kind"}


def test_enums_and_oneofs() -> None:
    status = descriptor("lf.a2a.v1.TaskStatus")
    old = descriptor("a2a.v1.TaskStatus")
    assert status is not None and old is not None
    assert "TASK_STATE_CANCELED" in enum_names(status.fields_by_name["state"])
    assert "TASK_STATE_CANCELLED" in enum_names(old.fields_by_name["state"])  # v0.3's spelling
    stream = descriptor("lf.a2a.v1.StreamResponse")
    assert stream is not None
    ((name, members),) = oneofs(stream)
    assert (name, [f.json_name for f in members]) == (
        "payload",
        ["task", "message", "statusUpdate", "artifactUpdate"],
    )
    optional = descriptor("lf.a2a.v1.AgentCapabilities")
    assert optional is not None and oneofs(optional) == ()  # proto3 `optional`s are no oneofs


def test_walk_reaches_nested_messages_and_stops_at_user_data() -> None:
    document = {
        "task": {
            "id": "t",
            "status": {
                "state": "TASK_STATE_WORKING",
                "message": {
                    "role": "ROLE_AGENT",
                    "parts": [{"text": "x", "metadata": {"role": "admin"}}],
                },
            },
            "metadata": {"status": {"state": "mine"}},
        }
    }
    paths = [
        (n.path, n.message.name, n.in_scope)
        for n in walk(document, "lf.a2a.v1.StreamResponse", "$", frozenset({"Task"}))
    ]
    assert paths == [
        ("$", "StreamResponse", False),
        ("$.task", "Task", True),
        ("$.task.status", "TaskStatus", True),
        ("$.task.status.message", "Message", True),
        ("$.task.status.message.parts[0]", "Part", True),
    ]
    assert list(walk(document, "no.such.Type", "$")) == []
