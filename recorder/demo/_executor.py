"""The demo agent's executor: what it does with a message, by the first word of its text.

A command (``COMMANDS``) emits the task, its status updates and artifacts through the SDK's
``TaskUpdater``, paced by the event delay.  ``noise_seed`` makes the agent LLM-like: every
artifact's text gets a few words from a seeded generator.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import Message, Part, Role, Task, TaskState, TaskStatus

DEFAULT_EVENT_DELAY = 0.3


@dataclass(slots=True)
class _Run:
    """What one command needs: the updater, the queue, the argument and the pacing."""

    ctx: RequestContext
    queue: EventQueue
    updater: TaskUpdater
    arg: str
    delay: float
    artifact_names: Mapping[str, str] = field(default_factory=dict)
    extra_status: bool = False
    sampler: random.Random | None = None

    def artifact(self, name: str) -> str:
        """The name an artifact goes out under (`DemoAgent(artifact_names=...)` renames)."""
        return self.artifact_names.get(name, name)

    def artifact_text(self, text: str) -> list[Part]:
        """An artifact's parts: one text part, with sampled words when the agent is noisy."""
        if self.sampler is None:
            return _text_part(text)
        words = self.sampler.choices(_WORDS, k=self.sampler.randint(3, 8))
        return _text_part(f"{text} ({' '.join(words)})")

    async def open_task(self, state: TaskState) -> None:
        """Emit the initial Task (required before status events) unless it already exists."""
        if self.ctx.current_task is not None:
            return
        history = [self.ctx.message] if self.ctx.message is not None else []
        await self.queue.enqueue_event(
            Task(
                id=self.updater.task_id,
                context_id=self.updater.context_id,
                status=TaskStatus(state=state),
                history=history,
            )
        )


def _text_part(text: str) -> list[Part]:
    return [Part(text=text)]


# What a noisy agent samples its words from (`DemoAgent(noise_seed=...)`).
_WORDS = (
    "sure", "here", "is", "the", "result", "certainly", "happy", "to", "help", "done",
    "as", "requested", "let", "me", "know", "anything", "else", "great", "question", "okay",
)  # fmt: skip


def _agent_message(run: _Run, text: str) -> Message:
    return Message(
        message_id=str(uuid.uuid4()),
        role=Role.ROLE_AGENT,
        parts=_text_part(text),
        context_id=run.updater.context_id,
    )


async def _echo(run: _Run) -> None:
    await run.open_task(TaskState.TASK_STATE_SUBMITTED)
    await run.updater.start_work()
    await run.updater.add_artifact(
        run.artifact_text(f"echo {run.arg}".rstrip()), name=run.artifact("echo")
    )
    await run.updater.complete()


async def _slow(run: _Run) -> None:
    count = int(run.arg) if run.arg.strip().isdigit() else 3
    await run.open_task(TaskState.TASK_STATE_SUBMITTED)
    await run.updater.start_work()
    for i in range(1, count + 1):
        await asyncio.sleep(run.delay)
        await run.updater.add_artifact(
            run.artifact_text(f"chunk {i}"), name=run.artifact(f"chunk-{i}")
        )
    if run.extra_status:  # DemoAgent(extra_status=True): one status event more
        await run.updater.start_work()
    await run.updater.complete()


async def _wait(run: _Run) -> None:
    # Working from the first event, so a return-immediately send sees a stable state.
    await run.open_task(TaskState.TASK_STATE_WORKING)
    await asyncio.Event().wait()  # until the framework cancels this coroutine


async def _message(run: _Run) -> None:
    await run.queue.enqueue_event(_agent_message(run, run.arg))


async def _fail(run: _Run) -> None:
    await run.open_task(TaskState.TASK_STATE_SUBMITTED)
    await run.updater.start_work()
    await run.updater.failed(run.updater.new_agent_message(_text_part("failed on request")))


async def _whoami(run: _Run) -> None:
    # Says back what the request carried, credentials included: the recorder must keep them
    # out of the capture even when an agent echoes them.
    state = run.ctx.call_context.state if run.ctx.call_context is not None else {}
    headers = state.get("headers") or {}
    lines = [f"{name}: {value}" for name, value in sorted(headers.items())]
    lines.append(f"query: {_REQUEST_QUERY.get()}")
    await run.open_task(TaskState.TASK_STATE_SUBMITTED)
    await run.updater.start_work()
    await run.updater.add_artifact(run.artifact_text("\n".join(lines)), name=run.artifact("whoami"))
    await run.updater.complete()


async def _unknown(run: _Run) -> None:
    await run.queue.enqueue_event(
        _agent_message(run, f"unknown command; try one of: {', '.join(COMMANDS)}")
    )


_Command = Callable[[_Run], Awaitable[None]]

# First word of the user's text -> behaviour; the description doubles as the card skill.
COMMANDS: dict[str, tuple[_Command, str]] = {
    "echo": (_echo, "echo X: task completes with the artifact 'echo X'"),
    "slow": (_slow, "slow N: working, N artifact updates spaced by the event delay, completed"),
    "wait": (_wait, "wait: task stays working until canceled"),
    "message": (_message, "message X: replies with a Message 'X', no task"),
    "fail": (_fail, "fail: task ends failed"),
    "whoami": (_whoami, "whoami: task completes with the request's headers and query"),
}

# The request's query string, for `whoami` (the SDK's call context has the headers only).
_REQUEST_QUERY: ContextVar[str] = ContextVar("a2a_demo_query", default="")


class QueryKeeper:
    """ASGI middleware: the query string of the request being served, for the executor."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        token = _REQUEST_QUERY.set(scope.get("query_string", b"").decode("latin-1"))
        try:
            await self.app(scope, receive, send)
        finally:
            _REQUEST_QUERY.reset(token)


class DemoExecutor(AgentExecutor):
    """Runs the command named by the first word of the user's text (see ``COMMANDS``)."""

    def __init__(
        self,
        event_delay: float = DEFAULT_EVENT_DELAY,
        artifact_names: Mapping[str, str] | None = None,
        extra_status: bool = False,
        noise_seed: int | None = None,
        skills: tuple[str, ...] | None = None,
    ) -> None:
        self.event_delay = event_delay
        self.artifact_names = dict(artifact_names or {})
        self.extra_status = extra_status
        self.sampler = random.Random(noise_seed) if noise_seed is not None else None
        self.commands = {
            name: command for name, command in COMMANDS.items() if skills is None or name in skills
        }

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        verb, _, arg = context.get_user_input().strip().partition(" ")
        command = self.commands.get(verb.lower(), (_unknown, ""))[0]
        updater = TaskUpdater(event_queue, str(context.task_id), str(context.context_id))
        await command(
            _Run(
                context,
                event_queue,
                updater,
                arg.strip(),
                self.event_delay,
                self.artifact_names,
                self.extra_status,
                self.sampler,
            )
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, str(context.task_id), str(context.context_id)).cancel()
