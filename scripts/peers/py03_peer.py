"""A2A peer on the Python a2a-sdk 0.3.x (checked on 0.3.26): ``agent`` and ``client``.

Run it with the interpreter of ``.peers/py-0.3.*`` (``run.py`` does). The agent serves the v0.3
protocol only (0.3 has no v1.0 support): JSON-RPC at /a2a/jsonrpc (A2AFastAPIApplication), REST
at /a2a/rest/v1/... (A2ARESTFastAPIApplication), gRPC ``a2a.v1.A2AService``, the SDK's push
sender and an authenticated extended card. The card is the 0.3 shape: ``url`` +
``preferredTransport`` JSONRPC + ``additionalInterfaces`` for all three bindings.
The client runs one scenario with the 0.3 ClientFactory (pydantic types).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import uuid
from collections.abc import Callable
from importlib.metadata import version as dist_version
from typing import Any

import _common as C
import grpc
import httpx
import uvicorn
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.grpc import a2a_pb2_grpc
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AFastAPIApplication, A2ARESTFastAPIApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    GetTaskPushNotificationConfigParams,
    Message,
    MessageSendConfiguration,
    Part,
    PushNotificationAuthenticationInfo,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)

SDK = "a2a-python"
SDK_VERSION = dist_version("a2a-sdk")
EXTENDED_CARD_PATH = "/agent/authenticatedExtendedCard"

# --- agent ----------------------------------------------------------------------------------


def _text(text: str) -> list[Part]:
    return [Part(root=TextPart(text=text))]


class PeerExecutor(AgentExecutor):
    """Runs the command named by the first word of the user's text (see _common.COMMANDS)."""

    def __init__(self, delay: float) -> None:
        self.delay = delay

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        verb, arg = C.parse_command(context.get_user_input())
        task_id, context_id = str(context.task_id), str(context.context_id)
        if verb == "message" or verb not in C.COMMANDS:
            text = arg if verb == "message" else f"unknown command {verb!r}"
            await event_queue.enqueue_event(
                Message(
                    message_id=str(uuid.uuid4()),
                    role=Role.agent,
                    parts=_text(text),
                    context_id=context_id,
                )
            )
            return
        up = TaskUpdater(event_queue, task_id, context_id)
        if context.current_task is None:
            first = TaskState.working if verb == "wait" else TaskState.submitted
            history = [context.message] if context.message is not None else []
            await event_queue.enqueue_event(
                Task(
                    id=task_id,
                    context_id=context_id,
                    status=TaskStatus(state=first),
                    history=history,
                )
            )
        if verb == "wait":
            await asyncio.Event().wait()  # until the framework cancels this coroutine
        await up.start_work()
        if verb == "echo":
            await up.add_artifact(_text(f"echo {arg}".rstrip()), name="echo")
        else:
            for i in range(1, C.slow_count(arg) + 1):
                await asyncio.sleep(self.delay)
                await up.add_artifact(_text(f"chunk {i}"), name=f"chunk-{i}")
        await up.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, str(context.task_id), str(context.context_id)).cancel()


def build_card(http_port: int, grpc_port: int | None) -> AgentCard:
    u = C.urls(http_port, grpc_port)
    by_binding = {"JSONRPC": u["jsonrpc_url"], "HTTP+JSON": u["rest_url"], "GRPC": u["grpc_target"]}
    skills = [AgentSkill(id=k, name=k, description=d, tags=["peer"]) for k, d in C.COMMANDS.items()]
    return AgentCard(
        name=f"{SDK} {SDK_VERSION} peer agent",
        description="A2A peer agent for a2a-recorder",
        version="1.0.0",
        url=u["jsonrpc_url"],
        preferred_transport="JSONRPC",
        additional_interfaces=[
            AgentInterface(transport=b, url=url) for b, url in by_binding.items() if url
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        supports_authenticated_extended_card=True,
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=skills,
    )


def build_extended(card: AgentCard) -> AgentCard:
    skills = [
        *card.skills,
        AgentSkill(id="extended", name="extended", description="extended only", tags=["peer"]),
    ]
    return card.model_copy(
        update={"description": card.description + " (extended card)", "skills": skills}
    )


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
    extended = build_extended(card)
    push_client = httpx.AsyncClient(timeout=10.0)
    store = InMemoryPushNotificationConfigStore()
    handler = DefaultRequestHandler(
        agent_executor=PeerExecutor(delay),
        task_store=InMemoryTaskStore(),
        push_config_store=store,
        push_sender=BasePushNotificationSender(push_client, store),
    )
    # REST app first (its routes carry the /a2a/rest prefix), then JSON-RPC routes on it.
    app = A2ARESTFastAPIApplication(card, handler, extended_agent_card=extended).build(
        agent_card_url=C.CARD_PATH, rpc_url=C.REST_PATH
    )
    jsonrpc = A2AFastAPIApplication(card, handler, extended_agent_card=extended)
    jsonrpc.add_routes_to_app(
        app,
        agent_card_url=C.CARD_PATH,
        rpc_url=C.JSONRPC_PATH,
        extended_agent_card_url=EXTENDED_CARD_PATH,
    )
    server = _QuietServer(
        uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1)
    )
    if gserver is not None:
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(card, handler), gserver)
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
    await push_client.aclose()


# --- client ---------------------------------------------------------------------------------


def _state(raw: Any) -> str:
    return C.short_state(raw)


def _texts(parts: Any) -> list[str]:
    return [p.root.text for p in parts or [] if isinstance(p.root, TextPart)]


def _event(ev: Any) -> str:
    """A 0.3 client event: a Message or a (Task, update-or-None) pair."""
    if isinstance(ev, Message):
        return "message:" + "".join(_texts(ev.parts))
    task, update = ev
    if isinstance(update, TaskStatusUpdateEvent):
        return "status:" + _state(update.status.state)
    if isinstance(update, TaskArtifactUpdateEvent):
        return "artifact:" + "".join(_texts(update.artifact.parts))
    return "task:" + _state(task.status.state)


def _error_name(exc: BaseException) -> str:
    """Class name plus what identifies the A2A error (JSON-RPC code, HTTP status, gRPC code)."""
    name = type(exc).__name__
    inner = getattr(exc, "error", None)
    if inner is not None:
        return f"{name}[{type(inner).__name__} {getattr(inner, 'code', '')}]"
    if hasattr(exc, "status_code"):
        return f"{name}[{exc.status_code}]"
    code = getattr(exc, "code", None)
    if callable(code):
        with contextlib.suppress(Exception):
            return f"{name}[{code().name}]"
    return name


# What each expected error looks like per binding in 0.3 (no typed client errors there).
_WANTED = {
    "TaskNotFound": ("TaskNotFoundError", "-32001", "[404]", "NOT_FOUND"),
    "TaskNotCancelable": (
        "TaskNotCancelableError",
        "-32002",
        "[409]",
        "[400]",
        "FAILED_PRECONDITION",
        "UNIMPLEMENTED",
    ),
}


class Py03Client:
    def __init__(self, args: Any, summary: C.Summary) -> None:
        self.args = args
        self.summary = summary
        self.context_id = str(uuid.uuid4())
        self.card: AgentCard | None = None
        self._clients: list[Client] = []

    def message(self, text: str) -> Message:
        return Message(
            message_id=str(uuid.uuid4()),
            role=Role.user,
            parts=_text(text),
            context_id=self.context_id,
        )

    async def resolve_card(self) -> AgentCard:
        url = self.args.card_url
        base, rel = (url, None)
        if url.endswith(C.CARD_PATH):
            base, rel = url[: -len(C.CARD_PATH)], C.CARD_PATH
        async with httpx.AsyncClient(timeout=10.0) as http:
            self.card = await A2ACardResolver(http, base).get_agent_card(relative_card_path=rel)
        return self.card

    async def client(
        self,
        streaming: bool,
        binding: str | None = None,
        push: PushNotificationConfig | None = None,
    ) -> Client:
        card = self.card or await self.resolve_card()
        cfg = ClientConfig(
            streaming=streaming,
            use_client_preference=True,
            supported_transports=[binding or self.args.binding],
            grpc_channel_factory=grpc.aio.insecure_channel,
            httpx_client=httpx.AsyncClient(timeout=30.0),
            push_notification_configs=[push] if push else [],
        )
        client = ClientFactory(cfg).create(card)
        self._clients.append(client)
        return client

    async def close(self) -> None:
        for client in self._clients:
            with contextlib.suppress(Exception):
                await client.close()

    async def send(
        self, client: Client, text: str, call: str, config: MessageSendConfiguration | None = None
    ) -> tuple[list[str], Any]:
        events = [ev async for ev in client.send_message(self.message(text), configuration=config)]
        names = [_event(e) for e in events]
        task = next((e[0] for e in reversed(events) if not isinstance(e, Message)), None)
        self.summary.step(call, events=names, state=_terminal(names) or None)
        return names, task


def _terminal(events: list[str]) -> str:
    states = [e.split(":", 1)[1] for e in events if e.startswith(("task:", "status:"))]
    return states[-1] if states else ""


async def _expect_error(p: Py03Client, call: str, wanted: str, action: Callable[[], Any]) -> None:
    try:
        await action()
    except Exception as exc:  # the class name is what we record
        name = _error_name(exc)
        p.summary.step(call, error=name, message=str(exc)[:200])
        C.expect(any(w in name for w in _WANTED[wanted]), f"{call}: wanted {wanted}, got {name}")
        return
    p.summary.step(call)
    raise C.ScenarioFailed(f"{call}: no error raised, wanted {wanted}")


async def sc_card(p: Py03Client) -> None:
    card = await p.resolve_card()
    ifaces = sorted(f"{i.transport} {i.url}" for i in card.additional_interfaces or [])
    p.summary.step(
        "GetAgentCard",
        name=card.name,
        url=card.url,
        preferred_transport=card.preferred_transport,
        protocol_version=card.protocol_version,
        interfaces=ifaces,
        capabilities={
            "streaming": card.capabilities.streaming,
            "push": card.capabilities.push_notifications,
            "extended": card.supports_authenticated_extended_card,
        },
        skills=[s.id for s in card.skills],
    )


async def sc_blocking(p: Py03Client, binding: str | None = None) -> None:
    c = await p.client(False, binding)
    _, task = await p.send(c, "echo hello", "message/send")
    C.expect(task is not None, "no task returned")
    texts = [t for a in task.artifacts or [] for t in _texts(a.parts)]
    p.summary.steps[-1]["texts"] = texts
    C.expect(_state(task.status.state) == "completed", f"state {task.status.state}")
    C.expect("echo hello" in texts, "no 'echo hello' artifact")


async def sc_polling(p: Py03Client) -> None:
    c = await p.client(False)
    _, task = await p.send(c, "slow 3", "message/send", MessageSendConfiguration(blocking=False))
    C.expect(task is not None, "no task returned")
    seen: list[str] = []
    while True:
        got = await c.get_task(TaskQueryParams(id=task.id))
        state = _state(got.status.state)
        if not seen or seen[-1] != state:
            seen.append(state)
        if state in C.TERMINAL:
            break
        await asyncio.sleep(0.02)
    p.summary.step(
        "tasks/get*",
        events=[f"task:{s}" for s in seen],
        state=seen[-1],
        texts=[t for a in got.artifacts or [] for t in _texts(a.parts)],
    )
    C.expect(seen[-1] == "completed", f"ended {seen[-1]}")


async def sc_streaming(p: Py03Client) -> None:
    c = await p.client(True)
    names, _ = await p.send(c, "slow 3", "message/stream")
    C.expect(_terminal(names) == "completed", f"stream ended {_terminal(names)}")


async def _start_wait(p: Py03Client, c: Client) -> Any:
    _, task = await p.send(c, "wait", "message/send", MessageSendConfiguration(blocking=False))
    C.expect(task is not None, "no task returned for 'wait'")
    return task


async def sc_subscribe(p: Py03Client) -> None:
    plain, streaming = await p.client(False), await p.client(True)
    task = await _start_wait(p, plain)
    seen: list[Any] = []
    first = asyncio.Event()

    async def consume() -> None:
        async for ev in streaming.resubscribe(TaskIdParams(id=task.id)):
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
    canceled = await plain.cancel_task(TaskIdParams(id=task.id))
    p.summary.step("tasks/cancel", state=_state(canceled.status.state))
    await consumer
    names = [_event(e) for e in seen]
    p.summary.step("tasks/resubscribe", events=names)
    # a2a-sdk 0.3 ends a resubscribe stream without events when the task is canceled (the
    # cancel runs on another queue), so only the cancel result is checked here.
    C.expect(_state(canceled.status.state) == "canceled", f"cancel gave {canceled.status.state}")


async def sc_cancel(p: Py03Client) -> None:
    c = await p.client(False)
    task = await _start_wait(p, c)
    canceled = await c.cancel_task(TaskIdParams(id=task.id))
    p.summary.step("tasks/cancel", state=_state(canceled.status.state))
    C.expect(_state(canceled.status.state) == "canceled", f"state {canceled.status.state}")


def _push(p: Py03Client, config_id: str | None = None) -> PushNotificationConfig:
    return PushNotificationConfig(
        id=config_id,
        url=p.args.webhook_url or C.NO_WEBHOOK_URL,
        token=C.PUSH_TOKEN,
        authentication=PushNotificationAuthenticationInfo(
            schemes=[C.PUSH_SCHEME], credentials=C.PUSH_CREDENTIALS
        ),
    )


def _cfg_fields(cfg: TaskPushNotificationConfig) -> dict[str, Any]:
    pc = cfg.push_notification_config
    auth = pc.authentication
    return {"url": pc.url, "token": pc.token, "scheme": auth.schemes[0] if auth else None}


async def sc_push(p: Py03Client) -> None:
    c = await p.client(False)
    _, task = await p.send(c, "echo hello", "message/send")
    cid = "cfg-" + uuid.uuid4().hex[:8]
    created = await c.set_task_callback(
        TaskPushNotificationConfig(task_id=task.id, push_notification_config=_push(p, cid))
    )
    p.summary.step(
        "tasks/pushNotificationConfig/set",
        config=_cfg_fields(created),
        same_id=created.push_notification_config.id == cid,
    )
    got = await c.get_task_callback(
        GetTaskPushNotificationConfigParams(id=task.id, push_notification_config_id=cid)
    )
    p.summary.step("tasks/pushNotificationConfig/get", config=_cfg_fields(got))
    for call in ("tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete"):
        p.summary.step(call, skipped="the 0.3 Client has no list/delete push-config method")
    if p.args.webhook_url:
        # Through ClientConfig, not a per-call configuration: 0.3.26's send_message merges the
        # per-call config with model_dump(), which turns the push config into a dict that the
        # REST and gRPC transports then fail on (AttributeError: 'dict' ... 'authentication').
        pusher = await p.client(False, push=_push(p))
        _, pushed = await p.send(pusher, "echo push", "message/send+push")
        C.expect(
            pushed is not None and _state(pushed.status.state) == "completed", "push send failed"
        )


async def sc_extended(p: Py03Client) -> None:
    c = await p.client(False)
    card = await c.get_card()
    p.summary.step(
        "agent/getAuthenticatedExtendedCard",
        description=card.description,
        skills=[s.id for s in card.skills],
    )
    extended = "extended" in card.description
    p.summary.facts["extended"] = extended
    if p.args.binding == "GRPC" and not extended:
        # a2a-sdk 0.3's GrpcHandler answers GetAgentCard with the public card.
        p.summary.facts["note"] = "0.3 gRPC GetAgentCard returns the public card"
        return
    C.expect(extended, "not the extended card")


async def sc_errors(p: Py03Client) -> None:
    c = await p.client(False)
    await _expect_error(
        p,
        "tasks/get(unknown)",
        "TaskNotFound",
        lambda: c.get_task(TaskQueryParams(id=str(uuid.uuid4()))),
    )
    _, task = await p.send(c, "echo hello", "message/send")
    await _expect_error(
        p,
        "tasks/cancel(completed)",
        "TaskNotCancelable",
        lambda: c.cancel_task(TaskIdParams(id=task.id)),
    )


async def sc_rest(p: Py03Client) -> None:
    p.summary.binding = "HTTP+JSON"
    await sc_blocking(p, "HTTP+JSON")


def _skip(why: str) -> Callable[[Py03Client], Any]:
    async def skip(p: Py03Client) -> None:
        raise C.Skip(why)

    return skip


SCENARIOS: dict[str, Callable[[Py03Client], Any]] = {
    "01-agent-card": sc_card,
    "03-blocking-task": sc_blocking,
    "04-polling": sc_polling,
    "05-streaming": sc_streaming,
    "06-subscribe": sc_subscribe,
    "07-cancel": sc_cancel,
    "08-push-configs": sc_push,
    "09-list-tasks": _skip("a2a-sdk 0.3 has no ListTasks client call (v0.3 has no tasks/list)"),
    "10-extended-card": sc_extended,
    "11-errors": sc_errors,
    "12-tenant": _skip("v0.3 has no tenant"),
    "16-rest-binding": sc_rest,
}


def client_main(args: Any) -> int:
    summary = C.Summary(SDK, SDK_VERSION, args.scenario, args.binding)

    async def body() -> None:
        p = Py03Client(args, summary)
        try:
            await SCENARIOS[args.scenario](p)
        finally:
            await p.close()

    return C.run_client_main(summary, body, args.timeout)


def main(argv: list[str] | None = None) -> int:
    args = C.parser("py03_peer.py").parse_args(argv)
    if args.role == "agent":
        asyncio.run(serve(args.port, args.grpc_port, args.delay))
        return 0
    return client_main(args)


if __name__ == "__main__":
    sys.exit(main())
