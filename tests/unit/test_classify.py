"""The classifier: every operation row in every binding, by hand and by property."""

from __future__ import annotations

import json
from typing import Any

import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2
from a2a.types import a2a_pb2
from google.protobuf import json_format, message_factory
from hypothesis import given, settings
from hypothesis import strategies as st

from recorder.capture import GrpcMessage, Request, Response, SseEvent
from recorder.protocol import (
    AGENT_CARD,
    OPERATIONS,
    PUSH_DELIVERY,
    UNKNOWN,
    Binding,
    Classification,
    Interface,
    Operation,
    Version,
    classify,
    operation_by_jsonrpc_method,
)
from recorder.protocol._grpc import grpc_method, message_class

V1, V03, V01 = Version.V1_0, Version.V0_3, Version.V0_1
GRPC_HEADERS = (("content-type", "application/grpc"), ("te", "trailers"))
# (task_id, context_id, config_id) each operation names in the requests built below.
EXPECTED_IDS: dict[str, tuple[str | None, str | None, str | None]] = {
    "SendMessage": ("t1", "c1", None),
    "SendStreamingMessage": ("t1", "c1", None),
    "GetTask": ("t1", None, None),
    "ListTasks": (None, "c1", None),
    "CancelTask": ("t1", None, None),
    "SubscribeToTask": ("t1", None, None),
    "CreateTaskPushNotificationConfig": ("t1", None, "p1"),
    "GetTaskPushNotificationConfig": ("t1", None, "p1"),
    "ListTaskPushNotificationConfigs": ("t1", None, None),
    "DeleteTaskPushNotificationConfig": ("t1", None, "p1"),
    "GetExtendedAgentCard": (None, None, None),
}
MESSAGE = {"messageId": "m1", "taskId": "t1", "contextId": "c1", "role": "ROLE_USER"}
V03_MESSAGE = {
    "messageId": "m1",
    "taskId": "t1",
    "contextId": "c1",
    "role": "user",
    "kind": "message",
    "parts": [{"kind": "text", "text": "hi"}],
}

JSONRPC_PARAMS: dict[tuple[str, Version], dict[str, Any]] = {
    ("SendMessage", V1): {"message": MESSAGE},
    ("SendStreamingMessage", V1): {"message": MESSAGE},
    ("GetTask", V1): {"id": "t1", "historyLength": 2},
    ("ListTasks", V1): {"contextId": "c1"},
    ("CancelTask", V1): {"id": "t1"},
    ("SubscribeToTask", V1): {"id": "t1"},
    ("CreateTaskPushNotificationConfig", V1): {"taskId": "t1", "id": "p1", "url": "http://x/h"},
    ("GetTaskPushNotificationConfig", V1): {"taskId": "t1", "id": "p1"},
    ("ListTaskPushNotificationConfigs", V1): {"taskId": "t1"},
    ("DeleteTaskPushNotificationConfig", V1): {"taskId": "t1", "id": "p1"},
    ("GetExtendedAgentCard", V1): {},
    ("SendMessage", V03): {"message": V03_MESSAGE},
    ("SendStreamingMessage", V03): {"message": V03_MESSAGE},
    ("GetTask", V03): {"id": "t1"},
    ("CancelTask", V03): {"id": "t1"},
    ("SubscribeToTask", V03): {"id": "t1"},
    ("CreateTaskPushNotificationConfig", V03): {
        "taskId": "t1", "pushNotificationConfig": {"id": "p1", "url": "http://x/h"}},
    ("GetTaskPushNotificationConfig", V03): {"id": "t1", "pushNotificationConfigId": "p1"},
    ("ListTaskPushNotificationConfigs", V03): {"id": "t1"},
    ("DeleteTaskPushNotificationConfig", V03): {"id": "t1", "pushNotificationConfigId": "p1"},
    ("GetExtendedAgentCard", V03): {},
    ("SendMessage", V01): {"id": "t1", "sessionId": "c1", "message": {"role": "user", "parts": []}},
    ("SendStreamingMessage", V01): {"id": "t1", "sessionId": "c1", "message": {}},
    ("GetTask", V01): {"id": "t1"},
    ("ListTasks", V01): {"contextId": "c1"},
    ("CancelTask", V01): {"id": "t1"},
    ("SubscribeToTask", V01): {"id": "t1"},
    ("CreateTaskPushNotificationConfig", V01): {
        "id": "t1", "pushNotificationConfig": {"url": "http://x/h"}},
    ("GetTaskPushNotificationConfig", V01): {"id": "t1"},
}  # fmt: skip
# v0.1 has no push-config ids: what its rows find instead of EXPECTED_IDS.
V01_IDS = {
    "CreateTaskPushNotificationConfig": ("t1", None, None),
    "GetTaskPushNotificationConfig": ("t1", None, None),
}

# gRPC request messages, in proto-JSON; v0.3 uses resource names.
GRPC_MESSAGES: dict[tuple[str, Version], dict[str, Any]] = {
    **{key: value for key, value in JSONRPC_PARAMS.items() if key[1] is V1},
    ("SendMessage", V03): {"message": {"messageId": "m1", "taskId": "t1", "contextId": "c1"}},
    ("SendStreamingMessage", V03): {"message": {"taskId": "t1", "contextId": "c1"}},
    ("GetTask", V03): {"name": "tasks/t1"},
    ("CancelTask", V03): {"name": "tasks/t1"},
    ("SubscribeToTask", V03): {"name": "tasks/t1"},
    ("CreateTaskPushNotificationConfig", V03): {
        "parent": "tasks/t1", "configId": "p1",
        "config": {"pushNotificationConfig": {"id": "p1", "url": "http://x/h"}}},
    ("GetTaskPushNotificationConfig", V03): {"name": "tasks/t1/pushNotificationConfigs/p1"},
    ("ListTaskPushNotificationConfigs", V03): {"parent": "tasks/t1"},
    ("DeleteTaskPushNotificationConfig", V03): {"name": "tasks/t1/pushNotificationConfigs/p1"},
    ("GetExtendedAgentCard", V03): {},
}  # fmt: skip

REST_BODIES: dict[tuple[str, Version], dict[str, Any]] = {
    ("SendMessage", V1): {"message": MESSAGE},
    ("SendStreamingMessage", V1): {"message": MESSAGE},
    ("CancelTask", V1): {"id": "t1"},
    ("CreateTaskPushNotificationConfig", V1): {"taskId": "t1", "id": "p1", "url": "http://x/h"},
    ("SendMessage", V03): {"message": {"messageId": "m1", "taskId": "t1", "contextId": "c1"}},
    ("SendStreamingMessage", V03): {"message": {"taskId": "t1", "contextId": "c1"}},
    ("CreateTaskPushNotificationConfig", V03): {
        "name": "tasks/t1/pushNotificationConfigs/p1",
        "pushNotificationConfig": {"id": "p1", "url": "http://x/h"}},
}  # fmt: skip
PATH_PARAMS = {"task_id": "t1", "config_id": "p1", "tenant": "acme"}

ROWS = [pytest.param(op, id=f"{op.version}-{op.name}") for op in OPERATIONS]
# Rows with a JSON-RPC name of their own (a shared name reads as the newest dialect's, below).
JSONRPC_ROWS = [
    pytest.param(op, id=f"{op.version}-{op.name}")
    for op in OPERATIONS
    if op.jsonrpc_method and operation_by_jsonrpc_method(op.jsonrpc_method) is op
]
GRPC_ROWS = [pytest.param(op, id=f"{op.version}-{op.name}") for op in OPERATIONS if op.grpc_rpc]
CARD = (
    Interface("http://agent:1/a2a/jsonrpc", Binding.JSONRPC, V1),
    Interface("http://agent:1/a2a/jsonrpc", Binding.JSONRPC, V03),
    Interface("http://agent:1/a2a/rest", Binding.HTTP_JSON, V1),
    Interface("agent:2", Binding.GRPC, V1),
)


def ids(c: Classification) -> tuple[str | None, str | None, str | None]:
    return c.task_id, c.context_id, c.config_id


def rpc(
    method: str,
    params: dict[str, Any] | None = None,
    target: str = "/a2a/jsonrpc",
    headers: tuple[tuple[str, str], ...] = (),
) -> Request:
    envelope: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        envelope["params"] = params
    return Request("POST", target, headers, json.dumps(envelope).encode())


def grpc_request(path: str, message: dict[str, Any] | None) -> Request:
    messages = () if message is None else (GrpcMessage(0, json=json.dumps(message)),)
    return Request("POST", path, GRPC_HEADERS, http_version="HTTP/2.0", messages=messages)


# ---- JSON-RPC: every row, with and without a card, with and without a trailing slash ----


@pytest.mark.parametrize("op", JSONRPC_ROWS)
@pytest.mark.parametrize("target", ["/a2a/jsonrpc", "/a2a/jsonrpc/", "/"])
@pytest.mark.parametrize("card", [(), CARD], ids=["no-card", "card"])
def test_jsonrpc_rows(op: Operation, target: str, card: tuple[Interface, ...]) -> None:
    found = classify(
        rpc(op.jsonrpc_method, JSONRPC_PARAMS[op.name, op.version], target), interfaces=card
    )
    assert (found.binding, found.operation, found.method) == (
        Binding.JSONRPC,
        op.name,
        op.jsonrpc_method,
    )
    assert (found.version, found.streaming) == (op.version, op.streaming)
    expected = V01_IDS.get(op.name) if op.version is V01 else None
    assert ids(found) == (expected or EXPECTED_IDS[op.name])


SHARED = [
    pytest.param(op, id=f"{op.version}-{op.jsonrpc_method}")
    for op in OPERATIONS
    if op.jsonrpc_method and operation_by_jsonrpc_method(op.jsonrpc_method) is not op
]


@pytest.mark.parametrize("op", SHARED)
def test_shared_jsonrpc_name_reads_as_the_cards_dialect(op: Operation) -> None:
    """`tasks/get` is v0.3's and 0.1's: the newest without a card, the card's version with one."""
    request = rpc(op.jsonrpc_method, JSONRPC_PARAMS[op.name, op.version])
    newest = classify(request)
    assert (newest.operation, newest.version) == (op.name, V03)
    card = (Interface("http://agent:1/a2a/jsonrpc", Binding.JSONRPC, op.version),)
    found = classify(request, interfaces=card)
    assert (found.operation, found.version, found.method) == (
        op.name,
        op.version,
        op.jsonrpc_method,
    )
    assert ids(found) == EXPECTED_IDS[op.name]


def test_jsonrpc_v1_name_without_version_header_is_v1() -> None:
    found = classify(rpc("SendMessage", {"message": MESSAGE}, headers=(("A2A-Version", "0.3"),)))
    assert found.version is V1


def test_jsonrpc_tenant_from_params_and_from_card() -> None:
    assert classify(rpc("GetTask", {"id": "t", "tenant": "acme"})).tenant == "acme"
    card = (Interface("http://h/rpc", Binding.JSONRPC, V1, "t9"),)
    assert classify(rpc("GetTask", {"id": "t"}, target="/rpc"), interfaces=card).tenant == "t9"


# ---- gRPC: every row, with messages the SDK's descriptors accept ----


def _proto_json(op: Operation, message: dict[str, Any]) -> dict[str, Any]:
    """Round-trip through the real request type, so the test's JSON is real proto-JSON."""
    module = a2a_pb2 if op.version is V1 else a2a_v0_3_pb2
    service = module.DESCRIPTOR.services_by_name["A2AService"]
    cls = message_factory.GetMessageClass(service.methods_by_name[op.grpc_rpc].input_type)
    parsed = json_format.ParseDict(message, cls(), ignore_unknown_fields=False)
    return json_format.MessageToDict(parsed)  # type: ignore[no-any-return]


@pytest.mark.parametrize("op", GRPC_ROWS)
def test_grpc_rows(op: Operation) -> None:
    message = _proto_json(op, GRPC_MESSAGES[op.name, op.version])
    found = classify(grpc_request(op.grpc_path, message))
    assert (found.binding, found.operation, found.method) == (Binding.GRPC, op.name, op.grpc_path)
    assert (found.version, found.streaming) == (op.version, op.streaming)
    assert ids(found) == EXPECTED_IDS[op.name]


# a2a-java 1.0.0.Alpha3's draft rpcs on v0.3's service, with messages its draft type accepts.
DRAFT_MESSAGES: dict[str, dict[str, Any]] = {
    "ListTasks": {"contextId": "c1", "pageToken": "p9", "tenant": "acme"},
    "SubscribeToTask": {"id": "t1", "tenant": "acme"},
    "GetExtendedAgentCard": {"tenant": "acme"},
}


@pytest.mark.parametrize("name", list(DRAFT_MESSAGES))
def test_a2a_javas_draft_rpcs_on_v03s_service_are_v03_rows(name: str) -> None:
    path = f"/a2a.v1.A2AService/{name}"
    method = grpc_method(path)
    assert method is not None and method.input_type.startswith("a2a_java_draft.v1.")
    cls = message_class(method.input_type)
    assert cls is not None
    message = json_format.MessageToDict(json_format.ParseDict(DRAFT_MESSAGES[name], cls()))
    found = classify(grpc_request(path, message))
    assert (found.binding, found.operation, found.method) == (Binding.GRPC, name, path)
    assert (found.version, found.streaming) == (V03, name == "SubscribeToTask")
    assert ids(found) == EXPECTED_IDS[name]
    assert found.tenant == "acme"


def test_grpc_snake_case_json_and_tenant() -> None:
    message = {"tenant": "acme", "task_id": "t1", "id": "p1"}
    found = classify(grpc_request("/lf.a2a.v1.A2AService/GetTaskPushNotificationConfig", message))
    assert (found.tenant, found.task_id, found.config_id) == ("acme", "t1", "p1")


def test_grpc_without_decoded_message_still_names_the_operation() -> None:
    found = classify(grpc_request("/a2a.v1.A2AService/TaskSubscription", None))
    assert (found.operation, found.version, found.streaming) == ("SubscribeToTask", V03, True)


@pytest.mark.parametrize(
    ("path", "operation", "version", "reason"),
    [
        ("/lf.a2a.v1.A2AService/Nope", UNKNOWN, V1,
         "unknown gRPC method /lf.a2a.v1.A2AService/Nope"),
        ("/a2a.v1.A2AService/Nope", UNKNOWN, V03,
         "unknown gRPC method /a2a.v1.A2AService/Nope"),
        ("/grpc.health.v1.Health/Check", None, None,
         "gRPC method /grpc.health.v1.Health/Check of no A2A service"),
    ],
)  # fmt: skip
def test_grpc_unknown(
    path: str, operation: str | None, version: Version | None, reason: str
) -> None:
    found = classify(grpc_request(path, {}))
    assert (found.binding, found.operation, found.version, found.reason) == (
        Binding.GRPC,
        operation,
        version,
        reason,
    )
    assert found.method == path


# ---- HTTP+JSON: every route of every row, under a base path, with and without a card ----

REST_CASES = [
    pytest.param(op, route, id=f"{op.version}-{op.name}-{route.verb} {route.template}")
    for op in OPERATIONS
    for route in op.routes
]


@pytest.mark.parametrize(("op", "route"), REST_CASES)
@pytest.mark.parametrize("card", [(), CARD], ids=["no-card", "card"])
def test_rest_routes(op: Operation, route: Any, card: tuple[Interface, ...]) -> None:
    params = {k: v for k, v in PATH_PARAMS.items() if "{" + k + "}" in route.template}
    query = "?contextId=c1" if op.name == "ListTasks" else ""
    body = REST_BODIES.get((op.name, op.version)) if route.verb == "POST" else None
    raw = json.dumps(body).encode() if body is not None else b""
    request = Request(route.verb, "/a2a/rest" + route.expand(**params) + query, body=raw)
    found = classify(request, interfaces=card)
    assert (found.binding, found.operation, found.version) == (
        Binding.HTTP_JSON,
        op.name,
        op.version,
    )
    assert found.method == f"{route.verb} {route.template}"
    assert found.tenant == params.get("tenant")
    assert found.streaming == op.streaming
    assert ids(found) == EXPECTED_IDS[op.name]


# ---- hand-written request lines: what a reader of a capture expects ----

LITERAL = [
    # (verb, target, operation, version, tenant, task, config)
    ("POST", "/a2a/rest/acme/tasks/abc:cancel", "CancelTask", V1, "acme", "abc", None),
    ("POST", "/a2a/rest/message:send", "SendMessage", V1, None, None, None),
    ("GET", "/a2a/rest/acme/tasks/123", "GetTask", V1, "acme", "123", None),
    ("GET", "/a2a/rest/tasks/123?historyLength=3", "GetTask", V1, None, "123", None),
    ("GET", "/tasks/123", "GetTask", V1, None, "123", None),
    ("GET", "/acme/tasks", "ListTasks", V1, "acme", None, None),
    ("GET", "/a2a/tasks", "ListTasks", V1, None, None, None),
    ("GET", "/api/v1/tasks/9", "GetTask", V03, None, "9", None),
    ("GET", "/a2a/rest/v1/tasks/9:subscribe", "SubscribeToTask", V03, None, "9", None),
    ("POST", "/a2a/rest/v1/tasks/9:subscribe", "SubscribeToTask", V03, None, "9", None),
    ("POST", "/a2a/rest/tasks/9:subscribe", "SubscribeToTask", V1, None, "9", None),
    ("GET", "/v1/card", "GetExtendedAgentCard", V03, None, None, None),
    ("GET", "/a2a/rest/t%20x/extendedAgentCard", "GetExtendedAgentCard", V1, "t x", None, None),
    ("DELETE", "/a2a/rest/v1/tasks/t/pushNotificationConfigs/c", "DeleteTaskPushNotificationConfig",
     V03, None, "t", "c"),
    ("GET", "http://agent:9/a2a/rest/tasks/abc", "GetTask", V1, None, "abc", None),
]  # fmt: skip


@pytest.mark.parametrize(("verb", "target", "op", "version", "tenant", "task", "config"), LITERAL)
def test_literal_request_lines(
    verb: str,
    target: str,
    op: str,
    version: Version,
    tenant: str | None,
    task: str | None,
    config: str | None,
) -> None:
    found = classify(Request(verb, target))
    assert (found.binding, found.operation, found.version) == (Binding.HTTP_JSON, op, version)
    assert (found.tenant, found.task_id, found.config_id) == (tenant, task, config)


def test_card_settles_tenant_versus_base_path() -> None:
    # Without a card "rest" reads as a base-path word; the card says it is a tenant.
    request = Request("GET", "/a2a/rest/rest/tasks/1")
    assert classify(request).tenant is None
    assert classify(request, interfaces=CARD).tenant == "rest"
    # A card whose REST URL ends in /acme: acme is part of the base, not a tenant.
    card = (Interface("http://h/a2a/rest/acme", Binding.HTTP_JSON, V1),)
    assert classify(Request("GET", "/a2a/rest/acme/tasks/1"), interfaces=card).tenant is None
    assert classify(Request("GET", "/a2a/rest/acme/tasks/1")).tenant == "acme"


def test_interface_tenant_fills_in() -> None:
    card = (Interface("http://h/rest", Binding.HTTP_JSON, V1, "t9"),)
    assert classify(Request("GET", "/rest/tasks/1"), interfaces=card).tenant == "t9"


def test_rest_send_body_tenant() -> None:
    body = json.dumps({"tenant": "acme", "message": MESSAGE}).encode()
    assert classify(Request("POST", "/message:send", body=body)).tenant == "acme"


# ---- agent card and push deliveries ----


@pytest.mark.parametrize(
    ("target", "headers", "version"),
    [
        ("/.well-known/agent-card.json", (("A2A-Version", "1.0"),), V1),
        ("/a2a/.well-known/agent-card.json", (), None),
        ("/.well-known/agent-card.json", (("a2a-version", "0.3"),), V03),
        ("/.well-known/agent.json", (("A2A-Version", "9.9"),), None),
    ],
)
def test_agent_card(
    target: str, headers: tuple[tuple[str, str], ...], version: Version | None
) -> None:
    found = classify(Request("GET", target, headers))
    assert (found.binding, found.operation, found.version) == (Binding.HTTP, AGENT_CARD, version)


def test_agent_card_post_is_not_a_card_fetch() -> None:
    found = classify(Request("POST", "/.well-known/agent-card.json"))
    assert (found.binding, found.operation) == (Binding.HTTP, UNKNOWN)
    assert found.method == "POST /.well-known/agent-card.json"
    assert found.reason == "POST at the agent card path"


PUSH_BODIES = [
    ({"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {}}}, V1, "t1"),
    ({"task": {"id": "t1", "contextId": "c1"}}, V1, "t1"),
    ({"artifactUpdate": {"taskId": "t1", "contextId": "c1"}}, V1, "t1"),
    ({"message": {"taskId": "t1", "contextId": "c1"}}, V1, "t1"),
    ({"kind": "status-update", "taskId": "t1", "contextId": "c1", "final": True}, V03, "t1"),
    ({"kind": "task", "id": "t1", "contextId": "c1"}, V03, "t1"),
]


@pytest.mark.parametrize(("body", "version", "task"), PUSH_BODIES)
def test_push_with_token(body: dict[str, Any], version: Version, task: str) -> None:
    request = Request(
        "POST", "/hook", (("X-A2A-Notification-Token", "tok"),), json.dumps(body).encode()
    )
    found = classify(request)
    assert (found.binding, found.operation, found.version) == (Binding.HTTP, PUSH_DELIVERY, version)
    assert (found.task_id, found.context_id) == (task, "c1")


def test_push_by_webhook_path_and_by_shape() -> None:
    body = json.dumps({"message": {"taskId": "t1"}}).encode()
    plain = Request("POST", "/webhooks/a", (("Content-Type", "application/json"),), body)
    assert classify(plain).operation is None  # a bare message at an unknown path: not enough
    assert classify(plain, webhook_paths={"/webhooks/a"}).operation == PUSH_DELIVERY
    status = json.dumps({"statusUpdate": {"taskId": "t1"}}).encode()
    assert classify(Request("POST", "/cb", body=status)).operation == PUSH_DELIVERY


def test_send_message_is_not_mistaken_for_push() -> None:
    body = json.dumps({"message": MESSAGE}).encode()
    request = Request("POST", "/message:send", (("X-A2A-Notification-Token", "x"),), body)
    assert classify(request).operation == "SendMessage"


# ---- not A2A, unknown methods, batches ----


@pytest.mark.parametrize(
    ("request_", "binding", "reason"),
    [
        (Request("GET", "/favicon.ico"), None, "no A2A route for GET /favicon.ico"),
        (Request("POST", "/upload", body=b"\x00\x01"), None,
         "no A2A route for POST /upload (body is not JSON)"),
        (Request("PUT", "/tasks/1"), None, "no A2A route for PUT /tasks/1"),
        (Request("POST", "/a2a/jsonrpc", body=b"[]"), None,
         "no A2A route for POST /a2a/jsonrpc"),  # no card: nothing says this is an endpoint
    ],
)  # fmt: skip
def test_not_a2a(request_: Request, binding: Binding | None, reason: str) -> None:
    found = classify(request_)
    assert (found.binding, found.operation, found.reason) == (binding, None, reason)
    assert not found.is_a2a


@pytest.mark.parametrize(
    ("request_", "method", "reason"),
    [
        (rpc("x"), "x", "unknown JSON-RPC method 'x'"),
        (rpc("tasks/sendx", {"id": "t"}), "tasks/sendx", "unknown JSON-RPC method 'tasks/sendx'"),
        (Request("POST", "/a2a/jsonrpc", body=b'[{"jsonrpc":"2.0","method":"GetTask","id":1}]'),
         None, "JSON-RPC batch request (A2A has no batches)"),
        (Request("POST", "/a2a/jsonrpc", body=b'{"jsonrpc":"2.0","id":1}'), None,
         "JSON-RPC request without a method"),
        (Request("POST", "/x", body=b'{"jsonrpc":"1.0","id":1,"method":"GetTask"}'), "GetTask",
         "JSON-RPC version '1.0'"),
    ],
)  # fmt: skip
def test_unknown_jsonrpc_by_body(request_: Request, method: str | None, reason: str) -> None:
    """A JSON-RPC body is an A2A request wherever it goes: unknown, not left out."""
    found = classify(request_)
    assert (found.binding, found.operation, found.method) == (Binding.JSONRPC, UNKNOWN, method)
    assert found.reason == reason
    assert found.is_a2a and not found.is_known


@pytest.mark.parametrize(
    ("body", "reason"),
    [(b"not json", "body not read as JSON (Expecting value: line 1 column 1 (char 0))"),
     (b"", "no body"),
     (b'{"a":1}', "body is JSON dict, not a JSON-RPC request"),
     (b"null", "body is JSON null, not a JSON-RPC request"),
     (b"[1]", "JSON-RPC batch request (A2A has no batches)"),
     (b"[]", "empty JSON-RPC batch"),
     (b"[" * 100_000, "body not read as JSON (nested too deep to read)"),
     (b'{"jsonrpc":"2.0","id":' + b"7" * 10_000 + b',"method":"GetTask"}',
      "body not read as JSON (Exceeds the limit (4300 digits) for integer string conversion: "
      "value has 10000 digits; use sys.set_int_max_str_digits() )"),
     (b'{"jsonrpc":"2.0","method":"G\xff"}',
      "body not read as JSON ('utf-8' codec can't decode byte 0xff in position 28: "
      "invalid start byte)")],
)  # fmt: skip
def test_junk_at_a_known_jsonrpc_endpoint(body: bytes, reason: str) -> None:
    found = classify(Request("POST", "/a2a/jsonrpc/", body=body), interfaces=CARD)
    assert (found.binding, found.operation, found.reason) == (Binding.JSONRPC, UNKNOWN, reason)
    assert found.method is None


# ---- with a response ----


def test_jsonrpc_stream_error_event() -> None:
    error = '{"jsonrpc":"2.0","id":1,"error":{"code":-32004,"message":"terminal"}}'
    response = Response(
        200,
        headers=(("content-type", "text/event-stream"),),
        events=(SseEvent(0, ("event: error", f"data: {error}")),),
    )
    found = classify(rpc("SubscribeToTask", {"id": "t1"}), response)
    assert (found.operation, found.error) == ("SubscribeToTask", "UnsupportedOperationError")


def test_rest_error_body() -> None:
    body = json.dumps(
        {
            "error": {
                "code": 404,
                "status": "NOT_FOUND",
                "message": "Task not found",
                "details": [
                    {
                        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                        "reason": "TASK_NOT_FOUND",
                    }
                ],
            }
        }
    ).encode()
    found = classify(Request("GET", "/a2a/rest/tasks/nope"), Response(404, body=body))
    assert (found.operation, found.task_id, found.error) == ("GetTask", "nope", "TaskNotFoundError")


def test_success_has_no_error() -> None:
    found = classify(rpc("GetTask", {"id": "t"}), Response(200, body=b'{"result":{}}'))
    assert found.error is None


# ---- never raises ----

_header = st.tuples(st.text(max_size=20), st.text(max_size=30))
_targets = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["/a2a/rest/acme/tasks/x:cancel", "/.well-known/agent-card.json",
                     "/lf.a2a.v1.A2AService/GetTask", "/a2a.v1.A2AService/GetTask", "/"]),
)  # fmt: skip
_bodies = st.one_of(
    st.binary(max_size=60),
    st.sampled_from([b'{"jsonrpc":"2.0","method":"GetTask","params":[1]}',
                     b'{"jsonrpc":"2.0","method":"SendMessage","params":{"message":7}}',
                     b'{"statusUpdate":{"taskId":{}}}', b'{"kind":"task","id":[]}', b"[]", b"1e999",
                     b'{"jsonrpc":"2.0","method":"message/send","params":{"message":{"taskId":1}}}']),
)  # fmt: skip
_json_texts = st.one_of(
    st.none(),
    st.text(max_size=30),
    st.sampled_from(['{"name":5}', '{"id":null}', "[]", '{"tenant":{}}']),
)


@settings(max_examples=300)
@given(
    method=st.text(max_size=8) | st.sampled_from(["GET", "POST", "DELETE"]),
    target=_targets,
    headers=st.lists(_header | st.just(("content-type", "application/grpc")), max_size=4),
    body=_bodies,
    grpc_json=_json_texts,
    status=st.integers(0, 999),
    response_body=_bodies,
    trailers=st.lists(_header | st.tuples(st.just("grpc-status"), st.text(max_size=4))
                      | st.tuples(st.just("grpc-status-details-bin"), st.text(max_size=30)),
                      max_size=3),
    event_lines=st.lists(st.lists(st.text(max_size=30), max_size=3).map(tuple), max_size=3),
)  # fmt: skip
def test_never_raises(
    method: str,
    target: str,
    headers: list[tuple[str, str]],
    body: bytes,
    grpc_json: str | None,
    status: int,
    response_body: bytes,
    trailers: list[tuple[str, str]],
    event_lines: list[tuple[str, ...]],
) -> None:
    messages = () if grpc_json is None else (GrpcMessage(0, json=grpc_json),)
    request = Request(method, target, tuple(headers), body, messages=messages)
    events = tuple(SseEvent(0, lines) for lines in event_lines)
    response = Response(
        status, headers=tuple(headers), body=response_body, trailers=tuple(trailers), events=events
    )
    for interfaces in ((), CARD):
        found = classify(request, response, interfaces=interfaces)
        assert isinstance(found, Classification)
        assert found.is_a2a or found.reason
        assert found.reason is None or not found.reason.startswith("classifier failed"), found
