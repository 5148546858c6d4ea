"""The demo agent, webhook receiver and scripted session, live on real sockets."""

from __future__ import annotations

import asyncio
import json
import socket
import time
import uuid
from collections.abc import Callable

import grpc
import httpx
import pytest
from a2a.client import AgentCardResolutionError, ClientConfig, create_client
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest

import recorder.demo
from recorder.demo import (
    SCRIPT,
    DemoAgent,
    SessionResult,
    Step,
    WebhookReceiver,
    run_session,
)

BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"]
V1 = {"A2A-Version": "1.0"}

_PUSH_CONFIG = (
    ("credentials", "CREDENTIALS"),
    ("id", "CFG-1"),
    ("scheme", "Bearer"),
    ("task", "TASK-1"),
    ("token", "TOKEN"),
    ("url", "WEBHOOK-URL"),
)
_CTX = (("context", "CTX-1"),)

# What the client must see, written out literally (not derived from a run).
EXPECTED_STEPS = (
    Step(
        "card",
        fields=(
            ("capabilities", "streaming=True push=True extended=True"),
            ("interfaces", "GRPC@0.3 GRPC@1.0 HTTP+JSON@0.3 HTTP+JSON@1.0 JSONRPC@0.3 JSONRPC@1.0"),
            ("name", "a2a-recorder demo agent"),
            ("skills", "echo slow wait message fail whoami"),
        ),
    ),
    Step("send", task="TASK-1", state="completed", artifacts=("echo hello",), fields=_CTX),
    Step(
        "stream",
        task="TASK-2",
        events=(
            "task:submitted",
            "status_update:working",
            "artifact_update:chunk 1",
            "artifact_update:chunk 2",
            "artifact_update:chunk 3",
            "status_update:completed",
        ),
    ),
    Step(
        "get_task",
        task="TASK-2",
        state="completed",
        artifacts=("chunk 1", "chunk 2", "chunk 3"),
        fields=_CTX,
    ),
    Step("list_tasks", fields=(("tasks", "TASK-2=completed TASK-1=completed"), ("total", "2"))),
    Step("message", messages=("hi there",), events=("message:hi there",)),
    Step("cancel_start", task="TASK-3", state="working", fields=_CTX),
    Step("cancel", task="TASK-3", state="canceled", fields=_CTX),
    Step("subscribe_start", task="TASK-4", state="working", fields=_CTX),
    Step(
        "subscribe",
        task="TASK-4",
        state="canceled",
        events=("task:working", "status_update:canceled"),
    ),
    Step("push_send", task="TASK-5", state="completed", artifacts=("echo push",), fields=_CTX),
    Step("push_create", fields=_PUSH_CONFIG),
    Step("push_get", fields=_PUSH_CONFIG),
    Step("push_list", fields=(("configs", "CFG-1"),)),
    Step("push_delete", fields=(("deleted", "CFG-1"),)),
    Step("push_list_after_delete", fields=(("configs", ""),)),
    Step("error_get_unknown_task", error="TaskNotFoundError"),
    Step("error_cancel_completed", error="TaskNotCancelableError"),
    Step("error_subscribe_terminal", error="UnsupportedOperationError"),
    Step("error_push_get_unknown", error="TaskNotFoundError"),
    Step(
        "extended_card",
        fields=(
            ("description", "Deterministic demo agent for a2a-recorder (extended card)"),
            ("skills", "echo slow wait message fail whoami extended"),
        ),
    ),
)

EXPECTED_DELIVERIES = (
    "task:submitted token=True auth=True",
    "statusUpdate:working token=True auth=True",
    "artifactUpdate:echo push token=True auth=True",
    "statusUpdate:completed token=True auth=True",
)


def _port_is_free(port: int) -> bool:
    # SO_REUSEADDR, as servers use: a lingering TIME_WAIT is not a listener.
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


# --- the scripted session -------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
async def test_session_live_is_as_expected_and_repeatable(
    demo_agent: DemoAgent, webhook_receiver: WebhookReceiver, binding: str
) -> None:
    first = await run_session(
        demo_agent.base_url,
        binding=binding,
        webhook=webhook_receiver,
        grpc_channel_factory=grpc.aio.insecure_channel,
    )
    assert first.binding == binding
    assert [s.name for s in first.steps] == list(SCRIPT)
    for expected, got in zip(EXPECTED_STEPS, first.steps, strict=True):
        assert got == expected
    assert first.webhook_deliveries == 4
    assert first.deliveries == EXPECTED_DELIVERIES
    raw = webhook_receiver.deliveries
    assert len(raw) == 4
    assert all(d.headers.get("x-a2a-notification-token") for d in raw)
    assert all(d.headers.get("authorization", "").startswith("Bearer ") for d in raw)

    second = await run_session(demo_agent.base_url, binding=binding, webhook=webhook_receiver)
    assert second == first
    assert len(webhook_receiver.deliveries) == 8
    # Fresh values per run: the two sessions used different webhook paths and tokens.
    assert raw[0].path != webhook_receiver.deliveries[4].path
    assert (
        raw[0].headers["x-a2a-notification-token"]
        != webhook_receiver.deliveries[4].headers["x-a2a-notification-token"]
    )


async def test_session_without_webhook_skips_the_delivering_send(demo_agent: DemoAgent) -> None:
    result = await run_session(demo_agent.base_url, binding="JSONRPC")
    assert result.webhook_deliveries is None
    assert "push_send" not in [s.name for s in result.steps]
    assert result.step("push_create").fields[-1] == ("url", "NO-WEBHOOK")
    assert result.errors == {
        "error_get_unknown_task": "TaskNotFoundError",
        "error_cancel_completed": "TaskNotCancelableError",
        "error_subscribe_terminal": "UnsupportedOperationError",
        "error_push_get_unknown": "TaskNotFoundError",
    }
    assert json.loads(json.dumps(result.as_dict()))["binding"] == "JSONRPC"
    with pytest.raises(KeyError, match="no step 'nope'"):
        result.step("nope")


def test_session_results_differ_when_the_agent_differs() -> None:
    a = SessionResult("JSONRPC", EXPECTED_STEPS)
    b = SessionResult("JSONRPC", EXPECTED_STEPS[:-1] + (Step("extended_card", error="X"),))
    assert a != b
    assert a == SessionResult("JSONRPC", tuple(EXPECTED_STEPS))


# --- the agent ------------------------------------------------------------------------------


def test_agent_card_uses_real_ports_and_stop_frees_them() -> None:
    with DemoAgent(event_delay=0.05) as agent:
        http_port, grpc_port = agent.http_port, agent.grpc_port
        assert grpc_port is not None
        card = httpx.get(agent.card_url, headers=V1, timeout=5).json()
        urls = {
            (i["protocolBinding"], i["protocolVersion"]): i["url"]
            for i in card["supportedInterfaces"]
        }
        assert urls[("JSONRPC", "1.0")] == agent.jsonrpc_url
        assert urls[("HTTP+JSON", "0.3")] == agent.rest_url
        assert urls[("GRPC", "1.0")] == agent.grpc_target == f"127.0.0.1:{grpc_port}"
        assert card["capabilities"] == {
            "streaming": True,
            "pushNotifications": True,
            "extendedAgentCard": True,
        }
        assert not _port_is_free(http_port)
    assert _port_is_free(http_port)
    assert _port_is_free(grpc_port)
    with pytest.raises(RuntimeError, match="not running"):
        _ = agent.base_url


def test_agent_without_grpc(make_demo_agent: Callable[..., DemoAgent]) -> None:
    agent = make_demo_agent(enable_grpc=False)
    assert agent.grpc_target is None
    card = httpx.get(agent.card_url, timeout=5).json()
    assert {i["protocolBinding"] for i in card["supportedInterfaces"]} == {"JSONRPC", "HTTP+JSON"}


def _send(url: str, text: str, **configuration: object) -> httpx.Response:
    body = {
        "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]},
        "configuration": configuration,
    }
    return httpx.post(url + "/message:send", json=body, headers=V1, timeout=10)


def test_executor_commands_over_rest(demo_agent: DemoAgent) -> None:
    rest = demo_agent.rest_url
    assert _send(rest, "fail").json()["task"]["status"]["state"] == "TASK_STATE_FAILED"
    unknown = _send(rest, "bogus").json()["message"]["parts"][0]["text"]
    assert unknown.startswith("unknown command")
    # Tenant routes work because REST is a Starlette Mount, not path_prefix.
    tenant = _send(rest + "/acme", "echo tenant").json()["task"]
    assert tenant["artifacts"][0]["parts"][0]["text"] == "echo tenant"


def test_error_recipes_on_the_wire(demo_agent: DemoAgent) -> None:
    rest, rpc = demo_agent.rest_url, demo_agent.jsonrpc_url
    with httpx.Client(headers=V1, timeout=10) as http:
        assert http.get(f"{rest}/tasks/{uuid.uuid4()}").status_code == 404
        bad = http.get(f"{rest}/tasks?pageSize=0")
        assert (bad.status_code, bad.json()["error"]["status"]) == (400, "INVALID_ARGUMENT")
        nope = http.post(rpc, json={"jsonrpc": "2.0", "id": 1, "method": "Nope", "params": {}})
        assert (nope.status_code, nope.json()["error"]["code"]) == (200, -32601)
        # The trailing-slash form is routed too (a bare Starlette Route would answer 307).
        invalid = http.post(
            rpc + "/",
            json={
                "jsonrpc": "2.0",
                "id": 2,
                "method": "GetTask",
                "params": {"id": "x", "historyLength": -1},
            },
        )
        assert (invalid.status_code, invalid.json()["error"]["code"]) == (200, -32602)
    # v0.3 compat: a legacy method with no A2A-Version header.
    legacy = httpx.post(
        rpc,
        timeout=10,
        json={
            "jsonrpc": "2.0",
            "id": 3,
            "method": "message/send",
            "params": {
                "message": {
                    "messageId": "m-1",
                    "role": "user",
                    "kind": "message",
                    "parts": [{"kind": "text", "text": "echo old"}],
                }
            },
        },
    )
    assert legacy.json()["result"]["kind"] == "task"


def test_push_after_create_then_cancel(
    demo_agent: DemoAgent, webhook_receiver: WebhookReceiver
) -> None:
    """A config created on a running task gets the later events (here: the cancel)."""
    rest = demo_agent.rest_url
    task_id = _send(rest, "wait", returnImmediately=True).json()["task"]["id"]
    created = httpx.post(
        f"{rest}/tasks/{task_id}/pushNotificationConfigs",
        headers=V1,
        json={"url": webhook_receiver.url, "token": "tok-1"},
        timeout=10,
    )
    assert (created.status_code, created.json()["id"]) == (200, task_id)  # id defaults to task
    httpx.post(f"{rest}/tasks/{task_id}:cancel", json={"id": task_id}, headers=V1, timeout=10)
    assert webhook_receiver.wait_for(1, timeout=5)
    delivery = webhook_receiver.deliveries[0]
    assert delivery.json["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED"
    assert delivery.headers["x-a2a-notification-token"] == "tok-1"
    deleted = httpx.delete(
        f"{rest}/tasks/{task_id}/pushNotificationConfigs/{task_id}", headers=V1, timeout=10
    )
    assert (deleted.status_code, deleted.json()) == (200, {})


async def test_slow_stream_events_are_spaced(make_demo_agent: Callable[..., DemoAgent]) -> None:
    """Events stream as produced (not buffered): 3 updates 0.3 s apart span >= 0.5 s."""
    agent = await asyncio.to_thread(make_demo_agent, event_delay=0.3)
    client = await create_client(agent.base_url, client_config=ClientConfig(streaming=True))
    arrivals: list[float] = []
    request = SendMessageRequest(
        message=Message(
            message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text="slow 3")]
        )
    )
    try:
        async for ev in client.send_message(request):
            if ev.HasField("artifact_update"):
                arrivals.append(time.monotonic())
    finally:
        await client.close()
    assert len(arrivals) == 3
    assert arrivals[-1] - arrivals[0] >= 0.5


async def test_async_context_manager() -> None:
    async with DemoAgent(event_delay=0.05, enable_grpc=False) as agent:
        async with httpx.AsyncClient(timeout=5) as http:
            assert (await http.get(agent.card_url)).status_code == 200
        port = agent.http_port
    assert _port_is_free(port)


# --- the webhook receiver -------------------------------------------------------------------


def test_webhook_receiver_records_and_frees_its_port() -> None:
    with WebhookReceiver() as hook:
        port = hook.port
        ok = httpx.post(hook.url + "/a", json={"x": 1}, headers={"X-A2A-Notification-Token": "t"})
        raw = httpx.post(hook.url, content=b"not json")
        assert (ok.status_code, raw.status_code) == (200, 200)
        assert httpx.get(hook.url).status_code == 405
        first, second = hook.deliveries
        assert (first.path, first.json, first.headers["x-a2a-notification-token"]) == (
            "/webhook/a",
            {"x": 1},
            "t",
        )
        assert (second.body, second.json) == (b"not json", None)
        assert hook.wait_for(2, timeout=1)
        assert not hook.wait_for(3, timeout=0.05)
    assert _port_is_free(port)
    with pytest.raises(RuntimeError, match="not running"):
        _ = hook.url


def test_exports_are_complete_and_sorted() -> None:
    exported = recorder.demo.__all__
    assert sorted(exported) == exported
    # (names like "@py_builtins" come from pytest rewriting asserts in this installed plugin)
    public = {n for n in dir(recorder.demo) if n.isidentifier() and not n.startswith("_")}
    assert public - {"annotations"} == set(exported)


async def test_session_against_a_non_agent_raises_a_clear_error(
    webhook_receiver: WebhookReceiver,
) -> None:
    with pytest.raises(AgentCardResolutionError):
        await run_session(webhook_receiver.url.removesuffix("/webhook"), binding="JSONRPC")
