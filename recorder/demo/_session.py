"""A scripted A2A client session on the real a2a-sdk client, summarised as a comparable value.

``run_session`` drives ``SCRIPT`` with a non-streaming and a streaming SDK client on one
binding.  Each call becomes a ``Step`` of what a client could observe (a failure: its exception's
class name), volatile values as placeholders in first-seen order (``TASK-1``), so a live run and
its replay compare equal with ``==``.  Every run uses fresh ids, tokens and webhook paths, so
nothing a recorder or replayer could rely on repeats.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import grpc
import httpx
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import (
    AgentCard,
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
)

from recorder.demo._webhook import WebhookReceiver

# The steps of one session, in order. Push steps marked (*) need a webhook URL.
SCRIPT: tuple[str, ...] = (
    "card",
    "send",
    "stream",
    "get_task",
    "list_tasks",
    "message",
    "cancel_start",
    "cancel",
    "subscribe_start",
    "subscribe",
    "push_send",  # (*) inline push config in the send configuration -> deliveries
    "push_create",
    "push_get",
    "push_list",
    "push_delete",
    "push_list_after_delete",
    "error_get_unknown_task",
    "error_cancel_completed",
    "error_subscribe_terminal",
    "error_push_get_unknown",
    "extended_card",
)

# Push deliveries the SDK makes for a task that goes submitted -> working -> artifact -> done.
EXPECTED_PUSH_DELIVERIES = 4
_AUTH_SCHEME = "Bearer"
# Push configs need a URL; without a webhook they point here and nothing is delivered
# (they are created on an already completed task).
_NO_WEBHOOK_URL = "http://127.0.0.1:9/no-webhook"


@dataclass(frozen=True, slots=True)
class Step:
    """What the client saw for one call; unused fields stay empty."""

    name: str
    task: str | None = None
    state: str | None = None
    artifacts: tuple[str, ...] = ()
    messages: tuple[str, ...] = ()
    events: tuple[str, ...] = ()  # `kind:detail`: `task:working`, `artifact_update:chunk 1`
    error: str | None = None
    fields: tuple[tuple[str, str], ...] = ()  # sorted (name, value): card facts, configs, lists


@dataclass(frozen=True, slots=True)
class SessionResult:
    """A normalised, comparable summary of one session."""

    binding: str
    steps: tuple[Step, ...]
    webhook_deliveries: int | None = None  # POSTs to its webhook path (None: no receiver)
    deliveries: tuple[str, ...] = ()  # each `kind:detail`, and whether token and auth matched

    def step(self, name: str) -> Step:
        """The step called ``name``; KeyError names the steps there are."""
        for s in self.steps:
            if s.name == name:
                return s
        raise KeyError(f"no step {name!r}; steps: {[s.name for s in self.steps]}")

    @property
    def errors(self) -> dict[str, str]:
        """Step name -> error class name, for the steps that failed."""
        return {s.name: s.error for s in self.steps if s.error is not None}

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready form (for the CLI and for golden files)."""
        return asdict(self)


@dataclass(slots=True)
class _Placeholders:
    """Map volatile strings to stable placeholders, numbered per prefix in first-seen order."""

    fixed: dict[str, str] = field(default_factory=dict)
    seen: dict[tuple[str, str], str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def __call__(self, prefix: str, value: str) -> str:
        if not value:
            return ""
        if value in self.fixed:
            return self.fixed[value]
        key = (prefix, value)
        if key not in self.seen:
            self.counts[prefix] = self.counts.get(prefix, 0) + 1
            self.seen[key] = f"{prefix}-{self.counts[prefix]}"
        return self.seen[key]


def _state(state: int) -> str:
    return str(TaskState.Name(state)).removeprefix("TASK_STATE_").lower()


def _texts(parts: Any) -> str:
    return "".join(p.text for p in parts if p.WhichOneof("content") == "text")


def _artifact_texts(task: Task) -> tuple[str, ...]:
    return tuple(_texts(a.parts) for a in task.artifacts)


def _event(ev: StreamResponse) -> str:
    kind = ev.WhichOneof("payload") or "empty"
    detail = {
        "task": lambda: _state(ev.task.status.state),
        "status_update": lambda: _state(ev.status_update.status.state),
        "artifact_update": lambda: _texts(ev.artifact_update.artifact.parts),
        "message": lambda: _texts(ev.message.parts),
    }.get(kind, lambda: "")()
    return f"{kind}:{detail}"


def _delivery_event(body: Any) -> str:
    """Normalise a webhook body (a proto-JSON StreamResponse) to ``kind:detail``."""
    if not isinstance(body, dict) or len(body) != 1:
        return "malformed"
    kind, payload = next(iter(body.items()))
    if not isinstance(payload, dict):
        return f"{kind}:malformed"
    status, artifact = payload.get("status"), payload.get("artifact")
    if isinstance(status, dict):
        detail = str(status.get("state", "")).removeprefix("TASK_STATE_").lower()
    elif isinstance(artifact, dict) and isinstance(artifact.get("parts"), list):
        detail = "".join(str(p.get("text", "")) for p in artifact["parts"] if isinstance(p, dict))
    else:
        detail = ""
    return f"{kind}:{detail}"


@dataclass(slots=True)
class _Session:
    plain: Client
    streaming: Client
    ids: _Placeholders
    context_id: str
    webhook_url: str | None
    token: str
    credentials: str
    steps: list[Step] = field(default_factory=list)
    tasks: dict[str, str] = field(default_factory=dict)  # step name -> raw task id

    def message(self, text: str) -> Message:
        return Message(
            message_id=str(uuid.uuid4()),
            role=Role.ROLE_USER,
            context_id=self.context_id,
            parts=[Part(text=text)],
        )

    def push_config(self, task_id: str = "", config_id: str = "") -> TaskPushNotificationConfig:
        return TaskPushNotificationConfig(
            id=config_id,
            task_id=task_id,
            url=self.webhook_url or _NO_WEBHOOK_URL,
            token=self.token,
            authentication=AuthenticationInfo(scheme=_AUTH_SCHEME, credentials=self.credentials),
        )

    def task_step(self, name: str, task: Task, **extra: Any) -> Step:
        self.tasks[name] = task.id
        ctx = self.ids("CTX", task.context_id)
        return Step(
            name,
            task=self.ids("TASK", task.id),
            state=_state(task.status.state),
            artifacts=_artifact_texts(task),
            fields=tuple(sorted({"context": ctx, **extra}.items())),
        )

    def config_fields(self, cfg: TaskPushNotificationConfig) -> tuple[tuple[str, str], ...]:
        auth = cfg.authentication
        found = {
            "id": self.ids("CFG", cfg.id),
            "task": self.ids("TASK", cfg.task_id),
            "url": self.ids("URL", cfg.url),
            "token": self.ids("TOKEN", cfg.token),
            "scheme": auth.scheme,
            "credentials": self.ids("CREDENTIALS", auth.credentials),
        }
        return tuple(sorted(found.items()))


async def _collect(stream: AsyncIterator[StreamResponse]) -> list[StreamResponse]:
    return [ev async for ev in stream]


async def _send(client: Client, request: SendMessageRequest) -> list[StreamResponse]:
    return await _collect(client.send_message(request))


def _first_task(events: list[StreamResponse]) -> Task | None:
    return next((ev.task for ev in events if ev.HasField("task")), None)


async def _step_card(s: _Session, card: AgentCard) -> Step:
    interfaces = sorted(
        f"{i.protocol_binding}@{i.protocol_version}" for i in card.supported_interfaces
    )
    caps = card.capabilities
    return Step(
        "card",
        fields=(
            (
                "capabilities",
                f"streaming={caps.streaming} push={caps.push_notifications} "
                f"extended={caps.extended_agent_card}",
            ),
            ("interfaces", " ".join(interfaces)),
            ("name", card.name),
            ("skills", " ".join(sk.id for sk in card.skills)),
        ),
    )


async def _step_send(s: _Session) -> Step:
    events = await _send(s.plain, SendMessageRequest(message=s.message("echo hello")))
    task = _first_task(events)
    if task is None:
        return Step("send", events=tuple(_event(e) for e in events))
    return s.task_step("send", task)


async def _step_stream(s: _Session) -> Step:
    events = await _send(s.streaming, SendMessageRequest(message=s.message("slow 3")))
    first = _first_task(events)
    if first is not None:
        s.tasks["stream"] = first.id
        s.ids("TASK", first.id)
    return Step(
        "stream",
        task=s.ids("TASK", first.id) if first else None,
        events=tuple(_event(e) for e in events),
    )


async def _step_get_task(s: _Session) -> Step:
    task = await s.plain.get_task(GetTaskRequest(id=s.tasks["stream"]))
    return s.task_step("get_task", task)


async def _step_list_tasks(s: _Session) -> Step:
    # Filter on this session's context so earlier runs on the same agent do not show up.
    page = await s.plain.list_tasks(
        ListTasksRequest(context_id=s.context_id, include_artifacts=True)
    )
    listed = " ".join(f"{s.ids('TASK', t.id)}={_state(t.status.state)}" for t in page.tasks)
    return Step("list_tasks", fields=(("tasks", listed), ("total", str(page.total_size))))


async def _step_message(s: _Session) -> Step:
    events = await _send(s.plain, SendMessageRequest(message=s.message("message hi there")))
    texts = tuple(_texts(e.message.parts) for e in events if e.HasField("message"))
    return Step("message", messages=texts, events=tuple(_event(e) for e in events))


async def _start_wait(s: _Session, name: str) -> Step:
    # return_immediately: the send returns the first Task event (working) and the task runs on.
    request = SendMessageRequest(
        message=s.message("wait"), configuration=SendMessageConfiguration(return_immediately=True)
    )
    task = _first_task(await _send(s.plain, request))
    if task is None:
        return Step(name, error="NoTask")
    return s.task_step(name, task)


async def _step_cancel(s: _Session) -> Step:
    task = await s.plain.cancel_task(CancelTaskRequest(id=s.tasks["cancel_start"]))
    return s.task_step("cancel", task)


async def _step_subscribe(s: _Session, timeout: float) -> Step:
    """Subscribe to a waiting task, cancel it from the other client, collect until the end."""
    task_id = s.tasks["subscribe_start"]
    seen: list[StreamResponse] = []
    first = asyncio.Event()

    async def consume() -> None:
        async for ev in s.streaming.subscribe(SubscribeToTaskRequest(id=task_id)):
            seen.append(ev)
            first.set()

    consumer = asyncio.create_task(consume())
    started = asyncio.create_task(first.wait())
    try:
        async with asyncio.timeout(timeout):
            # Cancel only once the subscription is live (its first event is the Task).
            await asyncio.wait([consumer, started], return_when=asyncio.FIRST_COMPLETED)
            canceled = await s.plain.cancel_task(CancelTaskRequest(id=task_id))
            await consumer
    finally:
        consumer.cancel()
        started.cancel()
    return Step(
        "subscribe",
        task=s.ids("TASK", task_id),
        state=_state(canceled.status.state),
        events=tuple(_event(e) for e in seen),
    )


async def _step_push_send(s: _Session) -> Step:
    request = SendMessageRequest(
        message=s.message("echo push"),
        configuration=SendMessageConfiguration(task_push_notification_config=s.push_config()),
    )
    task = _first_task(await _send(s.plain, request))
    if task is None:
        return Step("push_send", error="NoTask")
    return s.task_step("push_send", task)


async def _step_push_create(s: _Session) -> Step:
    # On the completed echo task: the SDK only checks that the task exists.
    cfg = s.push_config(s.tasks["send"], str(uuid.uuid4()))
    created = await s.plain.create_task_push_notification_config(cfg)
    s.tasks["push_config"] = created.id
    return Step("push_create", fields=s.config_fields(created))


async def _step_push_get(s: _Session) -> Step:
    got = await s.plain.get_task_push_notification_config(
        GetTaskPushNotificationConfigRequest(task_id=s.tasks["send"], id=s.tasks["push_config"])
    )
    return Step("push_get", fields=s.config_fields(got))


async def _list_configs(s: _Session, name: str) -> Step:
    page = await s.plain.list_task_push_notification_configs(
        ListTaskPushNotificationConfigsRequest(task_id=s.tasks["send"])
    )
    ids = " ".join(s.ids("CFG", c.id) for c in page.configs)
    return Step(name, fields=(("configs", ids),))


async def _step_push_delete(s: _Session) -> Step:
    await s.plain.delete_task_push_notification_config(
        DeleteTaskPushNotificationConfigRequest(task_id=s.tasks["send"], id=s.tasks["push_config"])
    )
    return Step("push_delete", fields=(("deleted", s.ids("CFG", s.tasks["push_config"])),))


async def _step_error_get_unknown(s: _Session) -> Step:
    await s.plain.get_task(GetTaskRequest(id=str(uuid.uuid4())))
    return Step("error_get_unknown_task")


async def _step_error_cancel_completed(s: _Session) -> Step:
    await s.plain.cancel_task(CancelTaskRequest(id=s.tasks["send"]))
    return Step("error_cancel_completed")


async def _step_error_subscribe_terminal(s: _Session) -> Step:
    events = await _collect(s.streaming.subscribe(SubscribeToTaskRequest(id=s.tasks["send"])))
    return Step("error_subscribe_terminal", events=tuple(_event(e) for e in events))


async def _step_error_push_get_unknown(s: _Session) -> Step:
    await s.plain.get_task_push_notification_config(
        GetTaskPushNotificationConfigRequest(task_id=s.tasks["send"], id=str(uuid.uuid4()))
    )
    return Step("error_push_get_unknown")


async def _step_extended_card(s: _Session) -> Step:
    card = await s.plain.get_extended_agent_card(GetExtendedAgentCardRequest())
    skills = " ".join(sk.id for sk in card.skills)
    return Step("extended_card", fields=(("description", card.description), ("skills", skills)))


async def _guarded(name: str, call: Callable[[], Any], timeout: float) -> Step:
    """Run one step; an exception (a timeout too) becomes the step's ``error`` class name."""
    try:
        async with asyncio.timeout(timeout):
            step: Step = await call()
        return step
    except Exception as exc:  # recording what the client raised is the point
        return Step(name, error=type(exc).__name__)


def _plan(s: _Session, card: AgentCard, timeout: float) -> list[tuple[str, Callable[[], Any]]]:
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("card", lambda: _step_card(s, card)),
        ("send", lambda: _step_send(s)),
        ("stream", lambda: _step_stream(s)),
        ("get_task", lambda: _step_get_task(s)),
        ("list_tasks", lambda: _step_list_tasks(s)),
        ("message", lambda: _step_message(s)),
        ("cancel_start", lambda: _start_wait(s, "cancel_start")),
        ("cancel", lambda: _step_cancel(s)),
        ("subscribe_start", lambda: _start_wait(s, "subscribe_start")),
        ("subscribe", lambda: _step_subscribe(s, timeout)),
        ("push_send", lambda: _step_push_send(s)),
        ("push_create", lambda: _step_push_create(s)),
        ("push_get", lambda: _step_push_get(s)),
        ("push_list", lambda: _list_configs(s, "push_list")),
        ("push_delete", lambda: _step_push_delete(s)),
        ("push_list_after_delete", lambda: _list_configs(s, "push_list_after_delete")),
        ("error_get_unknown_task", lambda: _step_error_get_unknown(s)),
        ("error_cancel_completed", lambda: _step_error_cancel_completed(s)),
        ("error_subscribe_terminal", lambda: _step_error_subscribe_terminal(s)),
        ("error_push_get_unknown", lambda: _step_error_push_get_unknown(s)),
        ("extended_card", lambda: _step_extended_card(s)),
    ]
    if s.webhook_url is None:
        steps = [(n, c) for n, c in steps if n != "push_send"]
    return steps


async def _count_deliveries(
    webhook: WebhookReceiver, path: str, s: _Session, timeout: float
) -> tuple[int, tuple[str, ...]]:
    def mine() -> list[Any]:
        return [d for d in webhook.deliveries if d.path == path]

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while len(mine()) < EXPECTED_PUSH_DELIVERIES and loop.time() < deadline:
        await asyncio.sleep(0.02)
    found = mine()
    auth = f"{_AUTH_SCHEME} {s.credentials}"
    return len(found), tuple(
        f"{_delivery_event(d.json)} token={d.headers.get('x-a2a-notification-token') == s.token}"
        f" auth={d.headers.get('authorization') == auth}"
        for d in found
    )


async def run_session(
    base_url: str,
    *,
    binding: str = "JSONRPC",
    webhook_url: str | None = None,
    grpc_channel_factory: Callable[[str], Any] | None = None,
    webhook: WebhookReceiver | None = None,
    timeout: float = 20.0,
    webhook_timeout: float = 5.0,
) -> SessionResult:
    """Run ``SCRIPT`` against the agent at ``base_url`` over ``binding``; only fetching the card
    or building the clients raises.  Push steps use a fresh path under ``webhook``'s URL (and
    count what it gets) or ``webhook_url``; with neither, the delivering send is left out."""
    if webhook is not None and webhook_url is None:
        webhook_url = f"{webhook.url}/{uuid.uuid4().hex}"
    async with httpx.AsyncClient(timeout=timeout) as http:
        channels = grpc_channel_factory or grpc.aio.insecure_channel
        plain_factory, stream_factory = (
            ClientFactory(
                ClientConfig(
                    streaming=streams,
                    supported_protocol_bindings=[binding],
                    httpx_client=http,
                    grpc_channel_factory=channels,
                )
            )
            for streams in (False, True)
        )
        card = await A2ACardResolver(http, base_url).get_agent_card()
        plain, streaming = plain_factory.create(card), stream_factory.create(card)
        session = _Session(
            plain,
            streaming,
            _Placeholders(),
            str(uuid.uuid4()),
            webhook_url,
            token=str(uuid.uuid4()),
            credentials=str(uuid.uuid4()),
        )
        session.ids.fixed[webhook_url or _NO_WEBHOOK_URL] = (
            "WEBHOOK-URL" if webhook_url else ("NO-WEBHOOK")
        )
        session.ids.fixed.update({session.token: "TOKEN", session.credentials: "CREDENTIALS"})
        try:
            for name, call in _plan(session, card, timeout):
                session.steps.append(await _guarded(name, call, timeout * 2))
        finally:
            await plain.close()
            await streaming.close()
    count: int | None = None
    deliveries: tuple[str, ...] = ()
    if webhook is not None and webhook_url is not None:
        path = httpx.URL(webhook_url).raw_path.decode()
        count, deliveries = await _count_deliveries(webhook, path, session, webhook_timeout)
    return SessionResult(binding, tuple(session.steps), count, deliveries)
