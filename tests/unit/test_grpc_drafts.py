"""A draft schema spoken under another's service name: a2a-java 1.0.0.Alpha3's on `a2a.v1`.

Its messages are built here byte by byte, by field number (as the Java SDK's descriptor numbers
them), not from the shipped descriptor, so these tests fail if the shipped draft is wrong: a
message v0.3's schema does not read losslessly is read as the draft's type of the same rpc, and
re-encodes to the same bytes; one v0.3 reads losslessly stays v0.3's; the push relay rewrites a
draft push config's url.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from pathlib import Path

import pytest
from protowire import field, fields, values

from recorder.capture import Capture, GrpcMessage, Request, read_capture
from recorder.protocol import IdKind, IdRole, Version, classify
from recorder.protocol._grpc import (
    DRAFT_SERVICES,
    a2a_pool,
    decode_message,
    descriptor_manifest,
    descriptor_source,
    encode_message,
    grpc_method,
)
from recorder.record import RELAY_PREFIX, PushRelay
from recorder.record._push import grpc_swap
from recorder.replay import ReplayService, Served
from recorder.replay.core._grpcanswer import GrpcAnswer, live_request
from recorder.script import find_slots, positions_of, request_value

V03 = "/a2a.v1.A2AService/"
DRAFT = "a2a_java_draft.v1."
CREATE = V03 + "CreateTaskPushNotificationConfig"
HOOK = "http://127.0.0.1:7000/webhook"
ORIGIN = "http://127.0.0.1:9000"
NOT_FOUND = 5  # the gRPC status code


# Java's PushNotificationConfig {id=1, url=2, token=3, authentication=4 {scheme=1, credentials=2}}
CONFIG = (
    field(1, "cfg-1")
    + field(2, HOOK)
    + field(3, "tok-1")
    + field(4, field(1, "Bearer") + field(2, "secret-1"))
)
# CreateTaskPushNotificationConfigRequest {task_id=1, config_id=2, tenant=4, config=5}
JAVA_CREATE = field(1, "task-1") + field(2, "cfg-1") + field(4, "acme") + field(5, CONFIG)
# TaskPushNotificationConfig {id=1, push_notification_config=2, task_id=3, tenant=4}
JAVA_CONFIG = field(1, "cfg-1") + field(2, CONFIG) + field(3, "task-1")

CONFIG_JSON = {
    "id": "cfg-1",
    "url": HOOK,
    "token": "tok-1",
    "authentication": {"scheme": "Bearer", "credentials": "secret-1"},
}


def test_javas_create_request_is_read_as_the_draft() -> None:
    found = decode_message(CREATE, JAVA_CREATE, "request")
    assert found is not None
    type_name, text = found
    assert type_name == DRAFT + "CreateTaskPushNotificationConfigRequest"
    assert json.loads(text) == {
        "taskId": "task-1",
        "configId": "cfg-1",
        "tenant": "acme",
        "config": CONFIG_JSON,
    }
    assert encode_message(type_name, text) == JAVA_CREATE


def test_javas_config_answer_is_read_as_the_draft() -> None:
    found = decode_message(CREATE, JAVA_CONFIG, "response")
    assert found is not None
    type_name, text = found
    assert type_name == DRAFT + "TaskPushNotificationConfig"
    assert json.loads(text) == {
        "id": "cfg-1",
        "pushNotificationConfig": CONFIG_JSON,
        "taskId": "task-1",
    }
    assert encode_message(type_name, text) == JAVA_CONFIG
    for rpc in ("GetTaskPushNotificationConfig",):
        assert decode_message(V03 + rpc, JAVA_CONFIG, "response") == found


def test_what_v03_reads_losslessly_stays_v03() -> None:
    # v0.3's CreateTaskPushNotificationConfigRequest {parent=1, config_id=2,
    # config=3 TaskPushNotificationConfig {name=1, push_notification_config=2}}.
    name = "tasks/task-1/pushNotificationConfigs/cfg-1"
    v03 = field(1, "tasks/task-1") + field(2, "cfg-1") + field(3, field(1, name))
    found = decode_message(CREATE, v03, "request")
    assert found is not None and found[0] == "a2a.v1.CreateTaskPushNotificationConfigRequest"
    assert json.loads(found[1])["parent"] == "tasks/task-1"
    # Java's answer without task_id is the same bytes as v0.3's {name, push_notification_config}:
    # both read it losslessly, and v0.3 (the path's own schema) is kept.
    both = field(1, "cfg-1") + field(2, CONFIG)
    found = decode_message(CREATE, both, "response")
    assert found is not None and found[0] == "a2a.v1.TaskPushNotificationConfig"
    v03_config = {
        **CONFIG_JSON,
        "authentication": {"schemes": ["Bearer"], "credentials": "secret-1"},
    }
    assert json.loads(found[1]) == {"name": "cfg-1", "pushNotificationConfig": v03_config}
    # A Java GetTaskRequest {id=1, history_length=2} reads losslessly as v0.3's {name, ...}.
    get = decode_message(V03 + "GetTask", field(1, "task-1") + field(2, 3), "request")
    assert get == ("a2a.v1.GetTaskRequest", '{"name":"task-1","historyLength":3}')


def test_what_neither_reads_stays_undecoded() -> None:
    junk = field(9, "x") + field(5, b"\xff\xff")
    assert decode_message(CREATE, junk, "request") is None


def test_the_drafts_own_rpcs_are_known_on_the_service_it_speaks_under() -> None:
    subscribe = grpc_method(V03 + "SubscribeToTask")
    assert subscribe is not None and subscribe.server_streaming
    assert subscribe.service == "a2a.v1.A2AService"
    assert subscribe.input_type == DRAFT + "SubscribeToTaskRequest"
    card = grpc_method(V03 + "GetExtendedAgentCard")
    assert card is not None and not card.server_streaming
    assert card.output_type == DRAFT + "AgentCard"
    # ListTasksRequest {context_id=1, page_size=3, include_artifacts=7}
    request = field(1, "ctx-1") + field(3, 2) + field(7, 1)
    found = decode_message(V03 + "ListTasks", request, "request")
    assert found == (
        DRAFT + "ListTasksRequest",
        '{"contextId":"ctx-1","pageSize":2,"includeArtifacts":true}',
    )
    # The path's own rpcs keep v0.3's types.
    send = grpc_method(V03 + "SendMessage")
    assert send is not None and send.input_type == "a2a.v1.SendMessageRequest"
    assert grpc_method("/a2a_java_draft.v1.A2AService/SendMessage") is None  # not a wire name


def test_the_draft_is_shipped_renamed() -> None:
    (shipped,) = DRAFT_SERVICES.values()
    service = a2a_pool().FindServiceByName(shipped)
    file = service.file
    assert (file.name, file.package) == ("a2a_java_draft.proto", "a2a_java_draft.v1")
    named = {
        t.full_name
        for rpc in service.methods
        for t in (rpc.input_type, rpc.output_type)
        if not t.full_name.startswith("google.")
    }
    assert named and all(n.startswith(DRAFT) for n in named)
    manifest = descriptor_manifest()
    assert manifest["files"]["a2a_java_draft.proto"] == (
        "io.github.a2asdk:a2a-java-sdk-spec-grpc 1.0.0.Alpha3"
    )
    assert "a2a_java_draft.v1" in manifest["renamed"]["a2a_java_draft.proto"]
    assert "a2a-java-sdk-spec-grpc 1.0.0.Alpha3" in descriptor_source()


# --- the push relay -------------------------------------------------------------------------


def test_the_relay_rewrites_a_draft_create_request_and_its_answer() -> None:
    relay = PushRelay()
    swap = grpc_swap(relay, ORIGIN, CREATE, True, None)
    assert swap is not None
    out = swap(False, JAVA_CREATE)
    assert out is not None
    relayed = f"{ORIGIN}{RELAY_PREFIX}1".encode()
    config = values(out, 5)[0]
    assert isinstance(config, bytes)
    assert values(config, 2) == [relayed]  # config.url
    assert values(out, 1) == [b"task-1"] and values(out, 4) == [b"acme"]
    assert relay.real_url(f"{RELAY_PREFIX}1") == HOOK
    # The agent's answer names the relay URL; the client gets its own webhook back.
    answer = field(1, "cfg-1") + field(2, _fields_with(CONFIG, 2, relayed)) + field(3, "t")
    back = grpc_swap(relay, ORIGIN, CREATE, False, None)
    assert back is not None
    assert back(False, answer) == field(1, "cfg-1") + field(2, CONFIG) + field(3, "t")


def _fields_with(data: bytes, number: int, value: bytes) -> bytes:
    """`data` (length-delimited fields only) with field `number` set to `value`, in order."""
    return b"".join(
        field(n, value if n == number else v) for n, v in fields(data) if isinstance(v, bytes)
    )


@pytest.mark.parametrize("rpc", ["SendMessage", "SendStreamingMessage"])
def test_the_relay_rewrites_a_draft_send_configuration(rpc: str) -> None:
    # SendMessageRequest {message=1 {message_id=1, role=4, parts=5 {text=1}, reference_task_ids=8},
    # configuration=2 {push_notification_config=2}, tenant=4}
    message = field(1, "m-1") + field(4, 1) + field(5, field(1, "hi")) + field(8, "t-0")
    request = field(1, message) + field(2, field(2, CONFIG)) + field(4, "acme")
    found = decode_message(V03 + rpc, request, "request")
    assert found is not None and found[0] == DRAFT + "SendMessageRequest"
    relay = PushRelay()
    swap = grpc_swap(relay, ORIGIN, V03 + rpc, True, None)
    assert swap is not None
    out = swap(False, request)
    assert out is not None
    configuration = values(out, 2)[0]
    assert isinstance(configuration, bytes)
    pushed = values(configuration, 2)[0]
    assert isinstance(pushed, bytes)
    assert values(pushed, 2) == [f"{ORIGIN}{RELAY_PREFIX}1".encode()]


# --- a bare task id where v0.3 puts a task's name -------------------------------------------
#
# Java's GetTaskRequest {id = 1} (CancelTaskRequest's, SubscribeToTaskRequest's too) is v0.3's
# {name = 1} byte for byte, so it is read as v0.3's: `name` holds the task's id, not
# `tasks/{id}`.  The slot finder and the classifier read it as the task's (`bare_task_id`).

V03_GRPC = Path(__file__).resolve().parents[2] / "captures" / "a2a-python-0.3.26" / "grpc"
GET = V03 + "GetTask"


def _with_bare_names(capture: Capture) -> Capture:
    """a2a-python 0.3's capture as Java's client would have named its tasks: `tasks/X` -> `X`."""

    def bare(message: GrpcMessage) -> GrpcMessage:
        value = json.loads(message.json) if message.json is not None else None
        name = value.get("name") if isinstance(value, dict) else None
        if not isinstance(name, str) or not name.startswith("tasks/") or name.count("/") != 1:
            return message
        text = json.dumps({**value, "name": name.removeprefix("tasks/")}, separators=(",", ":"))
        return dataclasses.replace(message, json=text)

    return dataclasses.replace(
        capture,
        exchanges=tuple(
            dataclasses.replace(
                e,
                request=dataclasses.replace(
                    e.request, messages=tuple(bare(m) for m in e.request.messages)
                ),
            )
            for e in capture.exchanges
        ),
    )


def _capture(name: str, bare: bool) -> Capture:
    found = read_capture(V03_GRPC / name)
    return _with_bare_names(found) if bare else found


def _get_task(task: str) -> Request:
    return live_request(
        GET, encode_message("a2a.v1.GetTaskRequest", json.dumps({"name": task})), ()
    )


def _answer(path: str, outcome: object) -> dict[str, object]:
    assert isinstance(outcome, Served), getattr(outcome, "describe", lambda: outcome)()
    answer = outcome.answer
    assert isinstance(answer, GrpcAnswer) and answer.messages, answer
    found = decode_message(path, answer.messages[0][1], "response")
    assert found is not None
    value = json.loads(found[1])
    assert isinstance(value, dict)
    return value


@pytest.mark.parametrize("bare", [False, True], ids=["tasks-name", "bare-id"])
def test_a_get_task_names_the_issued_task_on_replay(bare: bool) -> None:
    """The first run is served the recorded ids, the second minted ones the capture never held:
    either way GetTask names the task SendMessage handed out, and is answered with that task.
    (A bare issued id was found before `bare_task_id` too, as a value equal to an id known;
    an unknown one, next, was not.)"""
    found = _capture("04-polling.http", bare)
    names = [
        json.loads(m.json or "")["name"]
        for e in found.exchanges
        if e.classification.operation == "GetTask"
        for m in e.request.messages
    ]
    assert names and all(("/" in n) is not bare for n in names)  # what the capture holds
    svc = ReplayService([found])
    send = next(e for e in found.exchanges if e.classification.operation == "SendMessage").request
    seen = []
    for _ in range(2):
        task = _answer(V03 + "SendMessage", svc.handle(send))["task"]
        assert isinstance(task, dict)
        live = task["id"]
        got = _answer(GET, svc.handle(_get_task(live if bare else f"tasks/{live}")))
        assert got["id"] == live
        seen.append(live)
    assert seen[0] != seen[1]


@pytest.mark.parametrize("bare", [False, True], ids=["tasks-name", "bare-id"])
def test_a_get_task_of_an_unknown_task_is_answered_not_found_on_replay(bare: bool) -> None:
    """11-errors: the client asks for a random task id; live, another random one."""
    found = _capture("11-errors.http", bare)
    svc = ReplayService([found])
    task = str(uuid.uuid4())
    outcome = svc.handle(_get_task(task if bare else f"tasks/{task}"))
    assert isinstance(outcome, Served), getattr(outcome, "describe", lambda: outcome)()
    assert isinstance(outcome.answer, GrpcAnswer) and outcome.answer.code == NOT_FOUND


@pytest.mark.parametrize(
    ("rpc", "message", "want"),
    [
        ("GetTask", {"name": "t-1", "historyLength": 2}, [("t-1", IdKind.TASK, None)]),
        ("GetTask", {"name": "tasks/t-1"}, [("t-1", IdKind.TASK, 1)]),
        ("CancelTask", {"name": "t-1"}, [("t-1", IdKind.TASK, None)]),
        ("TaskSubscription", {"name": "t-1"}, [("t-1", IdKind.TASK, None)]),
        # Java's ListTaskPushNotificationConfigRequest {task_id = 1} is v0.3's {parent = 1}.
        ("ListTaskPushNotificationConfig", {"parent": "t-1"}, [("t-1", IdKind.TASK, None)]),
        # Where v0.3 puts a config's name a bare value may be either id: compared as it is.
        ("GetTaskPushNotificationConfig", {"name": "c-1"}, []),
        ("DeleteTaskPushNotificationConfig", {"name": "c-1"}, []),
        # Neither a resource name nor a bare id: compared as it is.
        ("GetTask", {"name": "jobs/t-1"}, []),
    ],
)
def test_a_bare_id_where_v03_names_a_task_is_that_task_s(
    rpc: str, message: dict[str, object], want: list[tuple[str, IdKind, int | None]]
) -> None:
    request = Request(
        "POST",
        V03 + rpc,
        (("content-type", "application/grpc"),),
        messages=(GrpcMessage(0, json=json.dumps(message)),),
    )
    c = classify(request)
    assert c.version is Version.V0_3 and c.operation is not None, c
    slots = find_slots(request_value(request, c), positions_of(c))
    assert [(s.value, s.kind, s.segment) for s in slots] == want
    assert all(s.role is IdRole.REFERENCE for s in slots)
    assert (c.task_id, c.config_id) == ((want[0][0] if want else None), None)
