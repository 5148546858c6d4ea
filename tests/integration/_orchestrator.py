"""A small orchestrator on the a2a-sdk 1.3.0 client, calling three agents by skill.

`run_orchestrator(urls)` reads each agent's card, picks for every step of `PLAN` the agent
whose card lists the step's skill, and calls it with the real SDK client on the step's
binding: `echo` as a blocking send over JSON-RPC with a push config (the agent POSTs the
task's updates to the orchestrator's webhook), `slow` streamed over gRPC, `message` over
HTTP+JSON.  Its `Outcome` holds what the orchestrator saw, with ids (which a replay may mint
anew) replaced by placeholders in first-seen order, so that a live run and a replayed one
compare with `==`.

Proxying: `proxy=URL` sends its HTTP through that proxy (httpx `proxy=`) and its gRPC
through CONNECT to it (the channel option `grpc.http_proxy`); without it, the SDK's own
defaults apply, which read the environment (`HTTP_PROXY` for httpx, `grpc_proxy` or
`http_proxy` for grpcio).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import grpc
import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import (
    AgentCard,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    TaskPushNotificationConfig,
    TaskState,
)

from recorder.demo import WebhookReceiver

TIMEOUT = 15.0
# (skill, text, binding, streaming, push): one step of the orchestrator's plan.
PLAN: tuple[tuple[str, str, str, bool, bool], ...] = (
    ("echo", "echo paris", "JSONRPC", False, True),
    ("slow", "slow 2", "GRPC", True, False),
    ("message", "message booked", "HTTP+JSON", False, False),
)
SKILLS = tuple(step[0] for step in PLAN)
PUSHES = 4  # submitted, working, artifact, completed: what a2a-sdk 1.3.0 delivers for echo


@dataclass(frozen=True)
class Outcome:
    """What the orchestrator saw: per step, the agent, and the events it got; the pushes."""

    steps: tuple[tuple[str, str, tuple[str, ...]], ...]
    pushes: tuple[str, ...]


@dataclass
class _Ids:
    seen: dict[str, str] = field(default_factory=dict)

    def __call__(self, value: str) -> str:
        if value and value not in self.seen:
            self.seen[value] = f"ID-{len(self.seen) + 1}"
        return self.seen.get(value, "")


def _state(state: int) -> str:
    return str(TaskState.Name(state)).removeprefix("TASK_STATE_").lower()


def _event(ev: StreamResponse, ids: _Ids) -> str:
    kind = ev.WhichOneof("payload") or "empty"
    if kind == "task":
        texts = [p.text for a in ev.task.artifacts for p in a.parts]
        return f"task {ids(ev.task.id)} {_state(ev.task.status.state)} {texts}"
    if kind == "status_update":
        return f"status {ids(ev.status_update.task_id)} {_state(ev.status_update.status.state)}"
    if kind == "artifact_update":
        return f"artifact {[p.text for p in ev.artifact_update.artifact.parts]}"
    if kind == "message":
        return f"message {[p.text for p in ev.message.parts]}"
    return kind


Channels = Callable[[str], grpc.aio.Channel]


def _channels(proxy: str | None) -> Channels:
    if proxy is None:
        return grpc.aio.insecure_channel
    return lambda target: grpc.aio.insecure_channel(target, options=[("grpc.http_proxy", proxy)])


async def run_orchestrator(
    urls: Sequence[str],
    webhook: WebhookReceiver,
    proxy: str | None = None,
    channels: Channels | None = None,
) -> Outcome:
    """Run `PLAN` against the agents at `urls` (see the module docstring); `channels` makes
    its gRPC channels instead."""
    ids = _Ids()
    channels = channels or _channels(proxy)
    hook = f"{webhook.url}/{uuid.uuid4().hex}"
    proxies = {"proxy": proxy} if proxy else {}
    async with httpx.AsyncClient(timeout=TIMEOUT, **proxies) as http:  # type: ignore[arg-type]
        cards = [await A2ACardResolver(http, url).get_agent_card() for url in urls]
        by_skill = {skill.id: card for card in cards for skill in card.skills}
        steps = []
        for skill, text, binding, streaming, push in PLAN:
            card = by_skill[skill]
            events = await _call(card, http, channels, text, binding, streaming, push, hook)
            steps.append((skill, card.name, tuple(_event(e, ids) for e in events)))
    pushes = await _pushes(webhook, hook, ids)
    return Outcome(tuple(steps), pushes)


async def _call(
    card: AgentCard,
    http: httpx.AsyncClient,
    channels: Channels,
    text: str,
    binding: str,
    streaming: bool,
    push: bool,
    hook: str,
) -> list[StreamResponse]:
    config = ClientConfig(
        streaming=streaming,
        supported_protocol_bindings=[binding],
        httpx_client=http,
        grpc_channel_factory=channels,
    )
    client = ClientFactory(config).create(card)
    message = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)])
    configuration = SendMessageConfiguration(
        task_push_notification_config=TaskPushNotificationConfig(url=hook, token="t0ken")
        if push
        else None
    )
    request = SendMessageRequest(message=message, configuration=configuration)
    try:
        async with asyncio.timeout(TIMEOUT):
            return [ev async for ev in client.send_message(request)]
    finally:
        await client.close()


async def _pushes(webhook: WebhookReceiver, hook: str, ids: _Ids) -> tuple[str, ...]:
    path = httpx.URL(hook).raw_path.decode()
    deadline = asyncio.get_running_loop().time() + TIMEOUT
    while asyncio.get_running_loop().time() < deadline:
        got = [d for d in webhook.deliveries if d.path == path]
        if len(got) >= PUSHES:
            break
        await asyncio.sleep(0.05)
    return tuple(_push(d.json, d.headers.get("x-a2a-notification-token", "")) for d in got)


def _push(body: object, token: str) -> str:
    """A delivery as `kind state token`: a StreamResponse in proto-JSON, one key."""
    if not isinstance(body, dict) or len(body) != 1:
        return f"malformed {token}"
    kind, payload = next(iter(body.items()))
    status = payload.get("status") if isinstance(payload, dict) else None
    state = status.get("state", "") if isinstance(status, dict) else ""
    return f"{kind} {state} {token}"
