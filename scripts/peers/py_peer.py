"""A2A peer on the Python a2a-sdk 1.x (checked on 1.3.0 and 1.2.3): ``agent`` and ``client``.

Run it with the interpreter of a ``.peers/py-1.*`` environment (``run.py`` does). The agent is
the project's demo agent rebuilt on the SDK of that environment: JSON-RPC at /a2a/jsonrpc (and
the slash form), HTTP+JSON under Mount('/a2a/rest'), gRPC with the v1.0 and v0.3 services,
v0.3 compat on every binding, the SDK's push sender, an extended card. The client runs one
scenario with the SDK's own ClientFactory and prints the summary described in run.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from importlib.metadata import version as dist_version
from typing import Any

import _common as C
import grpc
import httpx
import uvicorn
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc
from a2a.compat.v0_3.grpc_handler import CompatGrpcHandler
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import a2a_pb2_grpc
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    AuthenticationInfo,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
)
from starlette.applications import Starlette
from starlette.routing import BaseRoute, Mount

SDK = "a2a-python"
SDK_VERSION = dist_version("a2a-sdk")
_VERSIONS = ("1.0", "0.3")

# --- agent ----------------------------------------------------------------------------------


class PeerExecutor(AgentExecutor):
    """Runs the command named by the first word of the user's text (see _common.COMMANDS)."""

    def __init__(self, delay: float) -> None:
        self.delay = delay

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        verb, arg = C.parse_command(context.get_user_input())
        up = TaskUpdater(event_queue, str(context.task_id), str(context.context_id))
        if verb == "message" or verb not in C.COMMANDS:
            text = arg if verb == "message" else f"unknown command {verb!r}"
            await event_queue.enqueue_event(
                Message(
                    message_id=str(uuid.uuid4()),
                    role=Role.ROLE_AGENT,
                    parts=[Part(text=text)],
                    context_id=str(context.context_id),
                )
            )
            return
        if context.current_task is None:
            first = (
                TaskState.TASK_STATE_WORKING if verb == "wait" else TaskState.TASK_STATE_SUBMITTED
            )
            history = [context.message] if context.message is not None else []
            await event_queue.enqueue_event(
                Task(
                    id=up.task_id,
                    context_id=up.context_id,
                    status=TaskStatus(state=first),
                    history=history,
                )
            )
        if verb == "wait":
            await asyncio.Event().wait()  # until the framework cancels this coroutine
        await up.start_work()
        if verb == "echo":
            await up.add_artifact([Part(text=f"echo {arg}".rstrip())], name="echo")
        else:
            for i in range(1, C.slow_count(arg) + 1):
                await asyncio.sleep(self.delay)
                await up.add_artifact([Part(text=f"chunk {i}")], name=f"chunk-{i}")
        await up.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, str(context.task_id), str(context.context_id)).cancel()


def build_card(http_port: int, grpc_port: int | None) -> AgentCard:
    u = C.urls(http_port, grpc_port)
    by_binding = {"JSONRPC": u["jsonrpc_url"], "HTTP+JSON": u["rest_url"], "GRPC": u["grpc_target"]}
    interfaces = [
        AgentInterface(url=url, protocol_binding=b, protocol_version=v)
        for v in _VERSIONS
        for b, url in by_binding.items()
        if url
    ]
    skills = [AgentSkill(id=k, name=k, description=d, tags=["peer"]) for k, d in C.COMMANDS.items()]
    return AgentCard(
        name=f"{SDK} {SDK_VERSION} peer agent",
        description="A2A peer agent for a2a-recorder",
        version="1.0.0",
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(
            streaming=True, push_notifications=True, extended_agent_card=True
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=skills,
    )


def build_extended(card: AgentCard) -> AgentCard:
    ext = AgentCard()
    ext.CopyFrom(card)
    ext.description = card.description + " (extended card)"
    ext.skills.append(
        AgentSkill(id="extended", name="extended", description="extended only", tags=["peer"])
    )
    return ext


class _QuietServer(uvicorn.Server):
    """uvicorn without its own signal handling: the peer owns SIGTERM."""

    def install_signal_handlers(self) -> None:
        return None

    @contextlib.contextmanager
    def capture_signals(self) -> Any:
        yield


async def serve(port: int, grpc_port: int, delay: float) -> None:
    sock = C.bind_http(port)
    http_port = int(sock.getsockname()[1])
    gserver: grpc.aio.Server | None = None
    real_grpc: int | None = None
    if grpc_port >= 0:
        gserver = grpc.aio.server()
        real_grpc = int(gserver.add_insecure_port(f"{C.HOST}:{grpc_port}"))
    card = build_card(http_port, real_grpc)
    push_client = httpx.AsyncClient(timeout=10.0)
    store = InMemoryPushNotificationConfigStore()
    handler = DefaultRequestHandler(
        agent_executor=PeerExecutor(delay),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=store,
        push_sender=BasePushNotificationSender(push_client, store),
        extended_agent_card=build_extended(card),
    )
    routes: list[BaseRoute] = list(create_agent_card_routes(card, card_url=C.CARD_PATH))
    for path in (C.JSONRPC_PATH, C.JSONRPC_PATH + "/"):  # exact routes; the TCK posts to '<url>/'
        routes += create_jsonrpc_routes(handler, rpc_url=path, enable_v0_3_compat=True)
    # Mount, not path_prefix: the SDK mounts '/{tenant}' outside path_prefix.
    routes.append(Mount(C.REST_PATH, routes=create_rest_routes(handler, enable_v0_3_compat=True)))
    server = _QuietServer(
        uvicorn.Config(
            Starlette(routes=routes),
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=1,
        )
    )
    if gserver is not None:
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(  # type: ignore[no-untyped-call]
            GrpcHandler(handler), gserver
        )
        a2a_v0_3_pb2_grpc.add_A2AServiceServicer_to_server(  # type: ignore[no-untyped-call]
            CompatGrpcHandler(handler), gserver
        )
        await gserver.start()
    stop = C.stop_event_on_sigterm()
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            task.result()
            raise RuntimeError("HTTP server exited during start-up")
        await asyncio.sleep(0.01)
    C.print_ready({**C.urls(http_port, real_grpc), "sdk": SDK, "sdk_version": SDK_VERSION})
    await asyncio.wait(
        [asyncio.create_task(stop.wait()), task], return_when=asyncio.FIRST_COMPLETED
    )
    server.should_exit = True
    await asyncio.wait([task], timeout=5)
    if gserver is not None:
        await gserver.stop(grace=0.5)
    with contextlib.suppress(Exception):
        await handler.aclose()
    await push_client.aclose()


# --- client ---------------------------------------------------------------------------------


def _state(task: Task) -> str:
    return C.short_state(TaskState.Name(task.status.state))


def _texts(parts: Any) -> list[str]:
    return [p.text for p in parts if p.WhichOneof("content") == "text"]


def _event(ev: StreamResponse) -> str:
    kind = ev.WhichOneof("payload")
    if kind == "task":
        return f"task:{_state(ev.task)}"
    if kind == "status_update":
        return "status:" + C.short_state(TaskState.Name(ev.status_update.status.state))
    if kind == "artifact_update":
        return "artifact:" + "".join(_texts(ev.artifact_update.artifact.parts))
    if kind == "message":
        return "message:" + "".join(_texts(ev.message.parts))
    return f"{kind}:"


def _error_name(exc: BaseException) -> str:
    return type(exc).__name__


class PyClient:
    """One scenario run: a non-streaming and a streaming SDK client on one binding."""

    def __init__(self, args: Any, summary: C.Summary) -> None:
        self.args = args
        self.summary = summary
        self.context_id = str(uuid.uuid4())
        self.tenant: str = args.tenant or ""
        self.card: AgentCard | None = None
        self._clients: list[Client] = []

    def message(self, text: str) -> Message:
        return Message(
            message_id=str(uuid.uuid4()),
            role=Role.ROLE_USER,
            context_id=self.context_id,
            parts=[Part(text=text)],
        )

    def request(self, text: str, **config: Any) -> SendMessageRequest:
        cfg = SendMessageConfiguration(**config) if config else None
        req = SendMessageRequest(message=self.message(text), tenant=self.tenant)
        if cfg is not None:
            req.configuration.CopyFrom(cfg)
        return req

    async def resolve_card(self) -> AgentCard:
        url = self.args.card_url
        base, rel = (url, None)
        if url.endswith(C.CARD_PATH):
            base, rel = url[: -len(C.CARD_PATH)], C.CARD_PATH
        async with httpx.AsyncClient(timeout=10.0) as http:
            card = await A2ACardResolver(http, base).get_agent_card(relative_card_path=rel)
        self.card = card
        return card

    async def client(self, streaming: bool, binding: str | None = None) -> Client:
        card = self.card or await self.resolve_card()
        cfg = ClientConfig(
            streaming=streaming,
            use_client_preference=True,
            supported_protocol_bindings=[binding or self.args.binding],
            grpc_channel_factory=grpc.aio.insecure_channel,
        )
        client = ClientFactory(cfg).create(card)
        self._clients.append(client)
        return client

    async def close(self) -> None:
        for client in self._clients:
            with contextlib.suppress(Exception):
                await client.close()

    async def send(
        self, client: Client, req: SendMessageRequest, call: str
    ) -> tuple[list[str], Task | None]:
        events: list[StreamResponse] = [ev async for ev in client.send_message(req)]
        names = [_event(e) for e in events]
        task = next((e.task for e in events if e.HasField("task")), None)
        # The last task/status state seen: what the caller ends up believing.
        self.summary.step(call, events=names, state=_terminal(names) or None)
        return names, task


async def _collect(stream: AsyncIterator[StreamResponse]) -> list[StreamResponse]:
    return [ev async for ev in stream]


def _terminal(events: list[str]) -> str:
    states = [e.split(":", 1)[1] for e in events if e.startswith(("task:", "status:"))]
    return states[-1] if states else ""


async def sc_card(p: PyClient) -> None:
    card = await p.resolve_card()
    caps = card.capabilities
    ifaces = sorted(
        f"{i.protocol_binding}@{i.protocol_version} {i.url}" for i in card.supported_interfaces
    )
    p.summary.step(
        "GetAgentCard",
        name=card.name,
        interfaces=ifaces,
        capabilities={
            "streaming": caps.streaming,
            "push": caps.push_notifications,
            "extended": caps.extended_agent_card,
        },
        skills=[s.id for s in card.skills],
    )
    C.expect(bool(card.supported_interfaces), "card lists no interfaces")


async def sc_blocking(p: PyClient, binding: str | None = None) -> None:
    c = await p.client(streaming=False, binding=binding)
    events, task = await p.send(c, p.request("echo hello"), "SendMessage")
    C.expect(task is not None, "no task returned")
    assert task is not None
    p.summary.steps[-1]["texts"] = [t for a in task.artifacts for t in _texts(a.parts)]
    C.expect(_state(task) == "completed", f"state {_state(task)}")
    C.expect("echo hello" in p.summary.steps[-1]["texts"], "no 'echo hello' artifact")


async def sc_polling(p: PyClient) -> None:
    c = await p.client(streaming=False)
    _, task = await p.send(c, p.request("slow 3", return_immediately=True), "SendMessage")
    C.expect(task is not None, "no task returned")
    assert task is not None
    seen: list[str] = []
    while True:
        got = await c.get_task(GetTaskRequest(id=task.id, tenant=p.tenant))
        state = _state(got)
        if not seen or seen[-1] != state:
            seen.append(state)
        if state in C.TERMINAL:
            break
        await asyncio.sleep(0.02)
    p.summary.step(
        "GetTask*",
        events=[f"task:{s}" for s in seen],
        state=seen[-1],
        texts=[t for a in got.artifacts for t in _texts(a.parts)],
    )
    C.expect(seen[-1] == "completed", f"ended {seen[-1]}")


async def sc_streaming(p: PyClient) -> None:
    c = await p.client(streaming=True)
    events, _ = await p.send(c, p.request("slow 3"), "SendStreamingMessage")
    C.expect(_terminal(events) == "completed", f"stream ended {_terminal(events)}")


async def _start_wait(p: PyClient, c: Client) -> Task:
    _, task = await p.send(c, p.request("wait", return_immediately=True), "SendMessage")
    C.expect(task is not None, "no task returned for 'wait'")
    assert task is not None
    return task


async def sc_subscribe(p: PyClient) -> None:
    plain, streaming = await p.client(False), await p.client(True)
    task = await _start_wait(p, plain)
    seen: list[StreamResponse] = []
    first = asyncio.Event()

    async def consume() -> None:
        async for ev in streaming.subscribe(SubscribeToTaskRequest(id=task.id, tenant=p.tenant)):
            seen.append(ev)
            first.set()

    consumer = asyncio.create_task(consume())
    waiter = asyncio.create_task(first.wait())
    # Cancel once the subscription is live. A 0.3 server sends nothing until the next
    # event (no Task first), so after a short wait cancel anyway.
    await asyncio.wait([consumer, waiter], timeout=1.0, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    if consumer.done():
        consumer.result()
    p.summary.facts["event_before_cancel"] = first.is_set()
    canceled = await plain.cancel_task(CancelTaskRequest(id=task.id, tenant=p.tenant))
    p.summary.step("CancelTask", state=_state(canceled))
    await consumer
    names = [_event(e) for e in seen]
    p.summary.step("SubscribeToTask", events=names)
    C.expect(_terminal(names) == "canceled", f"subscription ended {_terminal(names)}")


async def sc_cancel(p: PyClient) -> None:
    c = await p.client(False)
    task = await _start_wait(p, c)
    canceled = await c.cancel_task(CancelTaskRequest(id=task.id, tenant=p.tenant))
    p.summary.step("CancelTask", state=_state(canceled))
    C.expect(_state(canceled) == "canceled", f"state {_state(canceled)}")


def _push(p: PyClient, task_id: str = "", config_id: str = "") -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        id=config_id,
        task_id=task_id,
        url=p.args.webhook_url or C.NO_WEBHOOK_URL,
        token=C.PUSH_TOKEN,
        tenant=p.tenant,
        authentication=AuthenticationInfo(scheme=C.PUSH_SCHEME, credentials=C.PUSH_CREDENTIALS),
    )


def _cfg_fields(cfg: TaskPushNotificationConfig) -> dict[str, str]:
    return {"url": cfg.url, "token": cfg.token, "scheme": cfg.authentication.scheme}


async def sc_push(p: PyClient) -> None:
    c = await p.client(False)
    _, task = await p.send(c, p.request("echo hello"), "SendMessage")
    assert task is not None
    cid = "cfg-" + uuid.uuid4().hex[:8]
    created = await c.create_task_push_notification_config(_push(p, task.id, cid))
    p.summary.step(
        "CreateTaskPushNotificationConfig", config=_cfg_fields(created), same_id=created.id == cid
    )
    got = await c.get_task_push_notification_config(
        GetTaskPushNotificationConfigRequest(task_id=task.id, id=created.id, tenant=p.tenant)
    )
    p.summary.step("GetTaskPushNotificationConfig", config=_cfg_fields(got))
    listed = await c.list_task_push_notification_configs(
        ListTaskPushNotificationConfigsRequest(task_id=task.id, tenant=p.tenant)
    )
    p.summary.step("ListTaskPushNotificationConfigs", count=len(listed.configs))
    try:
        await c.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=created.id, tenant=p.tenant)
        )
        p.summary.step("DeleteTaskPushNotificationConfig")
    except Exception as exc:  # py REST client vs a 204 body is a known SDK gap
        p.summary.step(
            "DeleteTaskPushNotificationConfig", error=_error_name(exc), message=str(exc)[:200]
        )
    after = await c.list_task_push_notification_configs(
        ListTaskPushNotificationConfigsRequest(task_id=task.id, tenant=p.tenant)
    )
    p.summary.step("ListTaskPushNotificationConfigs", count=len(after.configs))
    C.expect(len(listed.configs) == 1 and not after.configs, "config not listed/deleted")
    if p.args.webhook_url:
        req = p.request("echo push")
        req.configuration.task_push_notification_config.CopyFrom(_push(p))
        _, pushed = await p.send(c, req, "SendMessage+push")
        C.expect(pushed is not None and _state(pushed) == "completed", "push send failed")


async def sc_list(p: PyClient) -> None:
    c = await p.client(False)
    await p.send(c, p.request("echo hello"), "SendMessage")
    page = await c.list_tasks(
        ListTasksRequest(context_id=p.context_id, tenant=p.tenant, include_artifacts=True)
    )
    p.summary.step(
        "ListTasks",
        states=[_state(t) for t in page.tasks],
        total=page.total_size,
        count=len(page.tasks),
    )
    C.expect(len(page.tasks) == 1, f"listed {len(page.tasks)} tasks")


async def sc_extended(p: PyClient) -> None:
    c = await p.client(False)
    card = await c.get_extended_agent_card(GetExtendedAgentCardRequest(tenant=p.tenant))
    p.summary.step(
        "GetExtendedAgentCard", description=card.description, skills=[s.id for s in card.skills]
    )
    C.expect("extended" in card.description, "not the extended card")


async def sc_errors(p: PyClient) -> None:
    c = await p.client(False)
    await C.expect_error(
        p.summary,
        "GetTask(unknown)",
        "TaskNotFound",
        lambda: c.get_task(GetTaskRequest(id=str(uuid.uuid4()), tenant=p.tenant)),
        _error_name,
    )
    _, task = await p.send(c, p.request("echo hello"), "SendMessage")
    assert task is not None
    await C.expect_error(
        p.summary,
        "CancelTask(completed)",
        "TaskNotCancelable",
        lambda: c.cancel_task(CancelTaskRequest(id=task.id, tenant=p.tenant)),
        _error_name,
    )


async def sc_tenant(p: PyClient) -> None:
    p.tenant = p.args.tenant or C.DEFAULT_TENANT
    p.summary.facts["tenant"] = p.tenant
    await sc_blocking(p)


async def sc_rest(p: PyClient) -> None:
    p.summary.binding = "HTTP+JSON"
    await sc_blocking(p, binding="HTTP+JSON")


SCENARIOS: dict[str, Callable[[PyClient], Any]] = {
    "01-agent-card": sc_card,
    "03-blocking-task": sc_blocking,
    "04-polling": sc_polling,
    "05-streaming": sc_streaming,
    "06-subscribe": sc_subscribe,
    "07-cancel": sc_cancel,
    "08-push-configs": sc_push,
    "09-list-tasks": sc_list,
    "10-extended-card": sc_extended,
    "11-errors": sc_errors,
    "12-tenant": sc_tenant,
    "16-rest-binding": sc_rest,
}


def client_main(args: Any) -> int:
    summary = C.Summary(SDK, SDK_VERSION, args.scenario, args.binding)

    async def body() -> None:
        p = PyClient(args, summary)
        try:
            await SCENARIOS[args.scenario](p)
        finally:
            await p.close()

    return C.run_client_main(summary, body, args.timeout)


def main(argv: list[str] | None = None) -> int:
    args = C.parser("py_peer.py").parse_args(argv)
    if args.role == "agent":
        asyncio.run(serve(args.port, args.grpc_port, args.delay))
        return 0
    return client_main(args)


if __name__ == "__main__":
    sys.exit(main())
