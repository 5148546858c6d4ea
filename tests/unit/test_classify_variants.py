"""What real SDKs and agents put on the wire besides the spec's names, fed to the classifier.

One table (`VARIANTS`): each row is a request as some SDK or agent sends it (sources in
/work/shared/reference/sdk-variants.md, read from their code), the card interfaces the
recorder would know, and what the classification must say.  Nothing in it may come back as
not A2A: an exchange with an A2A endpoint is recorded, with operation `unknown` when no table
knows what it asked.  `tests/integration/test_record_reach.py` sends the same kinds of request
through the real recorder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from recorder.capture import Request, Response, SseEvent
from recorder.protocol import (
    AGENT_CARD,
    PUSH_DELIVERY,
    UNKNOWN,
    Binding,
    Interface,
    Version,
    classify,
)

V1, V03, V01 = Version.V1_0, Version.V0_3, Version.V0_1
JSONRPC_CARD = (Interface("http://agent:1/a2a/jsonrpc", Binding.JSONRPC, V1),)
REST_CARD = (Interface("http://agent:1/a2a/rest", Binding.HTTP_JSON, V1),)
JAVA_CARD = (Interface("http://agent:1", Binding.JSONRPC, V1),)  # Java: JSON-RPC at `/`
GO_V03_CARD = (Interface("http://agent:1", Binding.HTTP_JSON, V03),)  # Go v0.3 compat REST
JSON = (("Content-Type", "application/json"),)


def rpc(method: str, params: Any = None, target: str = "/a2a/jsonrpc") -> Request:
    envelope = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    return Request("POST", target, JSON, json.dumps(envelope).encode())


def post(target: str, body: bytes, headers: tuple[tuple[str, str], ...] = JSON) -> Request:
    return Request("POST", target, headers, body)


@dataclass(frozen=True)
class Variant:
    request: Request
    binding: Binding
    operation: str
    version: Version | None = None
    method: str | None = None
    interfaces: tuple[Interface, ...] = ()
    expect: dict[str, Any] = field(default_factory=dict)  # other fields: tenant, task_id, ...


STATUS = json.dumps({"statusUpdate": {"taskId": "t1", "contextId": "c1"}}).encode()
MESSAGE_EVENT = json.dumps({"message": {"taskId": "t1", "contextId": "c1"}}).encode()

VARIANTS: dict[str, Variant] = {
    # ---- routes and method names ----
    "java-list-trailing-slash": Variant(
        Request("GET", "/a2a/rest/tasks/t1/pushNotificationConfigs/"),
        Binding.HTTP_JSON, "ListTaskPushNotificationConfigs", V1,
        "GET /tasks/{task_id}/pushNotificationConfigs/", REST_CARD, {"task_id": "t1"}),
    "java-list-trailing-slash-tenant-no-card": Variant(
        Request("GET", "/acme/tasks/t1/pushNotificationConfigs/"),
        Binding.HTTP_JSON, "ListTaskPushNotificationConfigs", V1,
        "GET /{tenant}/tasks/{task_id}/pushNotificationConfigs/",
        expect={"tenant": "acme", "task_id": "t1"}),
    "dotnet-singular-list-method": Variant(
        rpc("ListTaskPushNotificationConfig", {"taskId": "t1"}), Binding.JSONRPC,
        "ListTaskPushNotificationConfigs", V1, "ListTaskPushNotificationConfig",
        JSONRPC_CARD, {"task_id": "t1"}),
    "java-jsonrpc-tenant-in-path": Variant(
        rpc("GetTask", {"id": "t1"}, target="/acme"), Binding.JSONRPC, "GetTask", V1,
        "GetTask", JAVA_CARD, {"tenant": "acme", "task_id": "t1"}),
    "go-rest-without-v1": Variant(
        Request("POST", "/tasks/t1:cancel", JSON, b"{}"), Binding.HTTP_JSON, "CancelTask", V1,
        "POST /tasks/{task_id}:cancel", expect={"task_id": "t1"}),
    "go-v03-compat-list-tasks": Variant(
        Request("GET", "/v1/tasks?contextId=c1"), Binding.HTTP_JSON, "ListTasks", V03,
        "GET /v1/tasks", GO_V03_CARD, {"context_id": "c1"}),
    "go-v03-compat-get-task": Variant(
        Request("GET", "/v1/tasks/t1"), Binding.HTTP_JSON, "GetTask", V03,
        "GET /v1/tasks/{task_id}", GO_V03_CARD, {"task_id": "t1"}),
    # ---- the 0.1 dialect (A2A v0.1.0 names, still served by v0.2-era agents) ----
    "v01-tasks-send": Variant(
        rpc("tasks/send", {"id": "t1", "sessionId": "s1", "message": {"role": "user"}}),
        Binding.JSONRPC, "SendMessage", V01, "tasks/send",
        expect={"task_id": "t1", "context_id": "s1"}),
    "v01-tasks-send-subscribe": Variant(
        rpc("tasks/sendSubscribe", {"id": "t1", "sessionId": "s1", "message": {}}),
        Binding.JSONRPC, "SendStreamingMessage", V01, "tasks/sendSubscribe",
        expect={"task_id": "t1", "streaming": True}),
    "v01-push-set": Variant(
        rpc("tasks/pushNotification/set", {"id": "t1", "pushNotificationConfig": {"url": "u"}}),
        Binding.JSONRPC, "CreateTaskPushNotificationConfig", V01, "tasks/pushNotification/set",
        expect={"task_id": "t1"}),
    "v01-push-get": Variant(
        rpc("tasks/pushNotification/get", {"id": "t1"}), Binding.JSONRPC,
        "GetTaskPushNotificationConfig", V01, "tasks/pushNotification/get"),
    "fasta2a-tasks-list": Variant(
        rpc("tasks/list", {}), Binding.JSONRPC, "ListTasks", V01, "tasks/list"),
    "v01-tasks-get-shared-name": Variant(
        rpc("tasks/get", {"id": "t1"}), Binding.JSONRPC, "GetTask", V03, "tasks/get"),
    "v01-tasks-cancel-by-card": Variant(
        rpc("tasks/cancel", {"id": "t1"}), Binding.JSONRPC, "CancelTask", V01, "tasks/cancel",
        (Interface("http://agent:1/a2a/jsonrpc", Binding.JSONRPC, V01),)),
    # ---- card paths ----
    "card-v1": Variant(Request("GET", "/.well-known/agent-card.json"), Binding.HTTP, AGENT_CARD,
                       method="GET /.well-known/agent-card.json"),
    "card-v02-agent-json": Variant(Request("GET", "/.well-known/agent.json"), Binding.HTTP,
                                   AGENT_CARD, method="GET /.well-known/agent.json"),
    "card-voltagent": Variant(
        Request("GET", "/.well-known/support-agent/agent-card.json"), Binding.HTTP, AGENT_CARD,
        method="GET /.well-known/support-agent/agent-card.json"),
    "card-under-prefix": Variant(
        Request("GET", "/agents/echo/.well-known/agent-card.json"), Binding.HTTP, AGENT_CARD,
        method="GET /.well-known/agent-card.json"),
    "card-options": Variant(
        Request("OPTIONS", "/.well-known/agent-card.json"), Binding.HTTP, UNKNOWN,
        method="OPTIONS /.well-known/agent-card.json"),
    # ---- push delivery headers ----
    "push-x-a2a-token": Variant(
        post("/hook", MESSAGE_EVENT, (("X-A2A-Notification-Token", "tok"),)),
        Binding.HTTP, PUSH_DELIVERY, V1, "POST /hook", expect={"task_id": "t1"}),
    "push-go-token": Variant(
        post("/hook", MESSAGE_EVENT, (("A2A-Notification-Token", "tok"),)),
        Binding.HTTP, PUSH_DELIVERY, V1, "POST /hook", expect={"task_id": "t1"}),
    "push-authorization": Variant(
        post("/hook", MESSAGE_EVENT, (("Authorization", "Bearer tok"),)),
        Binding.HTTP, PUSH_DELIVERY, V1, "POST /hook", expect={"task_id": "t1"}),
    "push-status-no-header": Variant(
        post("/hook", STATUS), Binding.HTTP, PUSH_DELIVERY, V1, "POST /hook"),
    # ---- unknown operations at an A2A endpoint ----
    "unknown-method": Variant(
        rpc("tasks/explode", {"id": "t1"}), Binding.JSONRPC, UNKNOWN, None, "tasks/explode",
        JSONRPC_CARD, {"reason": "unknown JSON-RPC method 'tasks/explode'"}),
    "unknown-method-no-card": Variant(
        rpc("Nope"), Binding.JSONRPC, UNKNOWN, None, "Nope"),
    "not-json": Variant(
        post("/a2a/jsonrpc", b"hello"), Binding.JSONRPC, UNKNOWN, interfaces=JSONRPC_CARD),
    "xml": Variant(
        post("/a2a/jsonrpc", b"<call/>", (("Content-Type", "application/xml"),)),
        Binding.JSONRPC, UNKNOWN, interfaces=JSONRPC_CARD),
    "invalid-utf8": Variant(
        post("/a2a/jsonrpc", b'{"method":"\xff\xfe"}'), Binding.JSONRPC, UNKNOWN,
        interfaces=JSONRPC_CARD),
    "null": Variant(post("/a2a/jsonrpc/", b"null"), Binding.JSONRPC, UNKNOWN,
                    interfaces=JSONRPC_CARD),
    "batch": Variant(
        post("/a2a/jsonrpc", b'[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]'),
        Binding.JSONRPC, UNKNOWN, interfaces=JSONRPC_CARD),
    "batch-no-card": Variant(
        post("/anywhere", b'[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]'),
        Binding.JSONRPC, UNKNOWN),
    "empty-batch": Variant(post("/a2a/jsonrpc", b"[]"), Binding.JSONRPC, UNKNOWN,
                           interfaces=JSONRPC_CARD),
    "deep-nesting": Variant(post("/a2a/jsonrpc", b"[" * 100_000), Binding.JSONRPC, UNKNOWN,
                            interfaces=JSONRPC_CARD),
    "huge-id": Variant(
        post("/a2a/jsonrpc", b'{"jsonrpc":"2.0","method":"GetTask","id":' + b"9" * 10_000 + b"}"),
        Binding.JSONRPC, UNKNOWN, interfaces=JSONRPC_CARD),
    "get-on-jsonrpc-endpoint": Variant(
        Request("GET", "/a2a/jsonrpc"), Binding.JSONRPC, UNKNOWN, interfaces=JSONRPC_CARD,
        expect={"reason": "GET at the JSON-RPC endpoint"}),
    "java-tenant-junk": Variant(
        post("/acme", b"garbage"), Binding.JSONRPC, UNKNOWN, interfaces=JAVA_CARD),
    "unknown-rest-route": Variant(
        Request("GET", "/a2a/rest/tasks/t1/history"), Binding.HTTP_JSON, UNKNOWN, None,
        "GET /tasks/t1/history", REST_CARD,
        {"reason": "no HTTP+JSON route for GET /tasks/t1/history"}),
    "rest-wrong-verb": Variant(
        Request("PUT", "/a2a/rest/message:send", JSON, b"{}"), Binding.HTTP_JSON, UNKNOWN, None,
        "PUT /message:send", REST_CARD),
}  # fmt: skip


@pytest.mark.parametrize("variant", list(VARIANTS.values()), ids=list(VARIANTS))
def test_variant_is_classified_not_dropped(variant: Variant) -> None:
    found = classify(variant.request, interfaces=variant.interfaces)
    assert (found.binding, found.operation) == (variant.binding, variant.operation)
    assert found.is_a2a  # so the recorder keeps it without --all
    if variant.operation == UNKNOWN:
        assert found.reason  # says what was not understood
        assert not found.is_known
    else:
        assert found.version is variant.version
    if variant.method is not None:
        assert found.method == variant.method
    for name, value in variant.expect.items():
        assert getattr(found, name) == value, name


# ---- a card is known by its shape, wherever it is served ----

V03_CARD = {
    "name": "echo",
    "description": "",
    "url": "http://agent:1/a2a",
    "version": "1",
    "protocolVersion": "0.3.0",
    "capabilities": {},
    "skills": [],
    "defaultInputModes": [],
    "defaultOutputModes": [],
}


def test_get_answered_with_a_card_is_a_card_fetch() -> None:
    """a2a-dotnet's v0.3 compat answers `GET <base>/` with its card."""
    request = Request("GET", "/a2a/")
    assert classify(request).operation is None
    found = classify(request, Response(200, body=json.dumps(V03_CARD).encode()))
    assert (found.binding, found.operation, found.method) == (Binding.HTTP, AGENT_CARD, "GET /a2a/")


@pytest.mark.parametrize(
    "body",
    [
        {**V03_CARD, "skills": None},
        {key: value for key, value in V03_CARD.items() if key != "url"},
        {"name": "x", "url": "http://y"},
        [V03_CARD],
    ],
    ids=["skills-not-a-list", "no-interfaces", "too-few-fields", "a-list"],
)
def test_answers_not_shaped_like_a_card_stay_what_they_were(body: object) -> None:
    found = classify(Request("GET", "/a2a/"), Response(200, body=json.dumps(body).encode()))
    assert found.operation is None


def test_only_a_successful_get_answer_makes_a_card() -> None:
    card = json.dumps(V03_CARD).encode()
    assert classify(Request("POST", "/x", body=b"1"), Response(200, body=card)).operation is None
    assert classify(Request("GET", "/x"), Response(404, body=card)).operation is None


def test_card_at_the_jsonrpc_endpoint_url() -> None:
    """`GET <jsonrpc url>/` is `unknown` by the request; the card answer makes it a card."""
    request = Request("GET", "/a2a/jsonrpc/")
    assert classify(request, interfaces=JSONRPC_CARD).operation == UNKNOWN
    answer = Response(200, body=json.dumps(V03_CARD).encode())
    assert classify(request, answer, interfaces=JSONRPC_CARD).operation == AGENT_CARD


# ---- errors in the shapes real agents send them ----


def _sse(*data: str, status: int = 200) -> Response:
    events = tuple(SseEvent(0, (f"data: {d}",)) for d in data)
    return Response(status, headers=(("content-type", "text/event-stream"),), events=events)


def test_go_error_on_a_streaming_method_is_an_event_with_200() -> None:
    error = '{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"task not found"}}'
    found = classify(rpc("SubscribeToTask", {"id": "t1"}), _sse(error))
    assert found.error == "TaskNotFoundError"


def test_dotnet_error_message_mid_stream_is_an_error_without_a_code() -> None:
    ok = '{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t1"}}}'
    bare = '{"error":"An internal error occurred during streaming."}'
    found = classify(rpc("SendStreamingMessage", {}), _sse(ok, bare))
    assert found.error == "JSONRPCError(no code)"
    # A failing HTTP status names the error itself.
    rest = classify(Request("GET", "/a2a/rest/tasks/t1"), Response(404, body=b'{"error":"gone"}'))
    assert rest.error == "HTTPError(404)"
