"""Real SDK clients against faulted replays, and what the recordings hold, as protos.

`py(card, binding, action)` drives the a2a-sdk 1.3.0 client of this venv; `js(binding, jobs)`
the @a2a-js/sdk 1.3.0 client (`js/faults.mjs`, one node process for a list of jobs).  Both
return the same `Run`: the events (as `StreamResponse` protos), how the call ended, and for
`resume` what a `SubscribeToTask` to the task then gave; for `send`, the retry of a failed
call.  Requests are built as the corpus's clients built them (`scripts/peers`), so a corpus
capture answers them.

`sdk_fold(events)` is the task the events leave, as a2a-sdk's own `TaskManager` applies them
(the oracle for "the client ends with the recorded task"; the replayer's own fold is not used
to check itself).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import grpc
import httpx
from a2a.client import A2ACardResolver, ClientCallContext, ClientConfig, ClientFactory
from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore, TaskManager
from a2a.types.a2a_pb2 import (
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
)
from google.protobuf import json_format

from recorder.capture import Exchange, read_capture
from recorder.protocol import Binding, event_data, parse_json

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CAPTURES = ROOT / "captures"
CARD = "/.well-known/agent-card.json"
BINDING_FOLDERS = {"JSONRPC": "", "HTTP+JSON": "http-json/", "GRPC": "grpc/"}
sys.path.insert(0, str(ROOT / "scripts" / "peers"))
from envs import ENVS, is_built  # noqa: E402

JS_ENV = ENVS["a2a-js-1.3.x"]
JS_BUILT = is_built(JS_ENV) and shutil.which("node") is not None
PY_SDK = "a2a-sdk 1.3.0"
JS_SDK = "@a2a-js/sdk 1.3.0"


def corpus(sdk: str, binding: str, scenario: str) -> Path:
    return CAPTURES / sdk / f"{BINDING_FOLDERS[binding]}{scenario}.http"


@dataclass
class Run:
    events: list[StreamResponse] = field(default_factory=list)
    error: str | None = None
    resumed: list[StreamResponse] | None = None
    resume_error: str | None = None
    retry: list[StreamResponse] | None = None
    retry_error: str | None = None
    times: list[float] = field(default_factory=list)  # seconds from the call to each event


# -- what the recording holds -----------------------------------------------------------------


def recorded_events(path: Path, operation: str = "SendStreamingMessage") -> list[StreamResponse]:
    """The recorded answer of the first `operation` exchange, each event as a proto."""
    exchange = next(
        e for e in read_capture(path).exchanges if e.classification.operation == operation
    )
    return [proto(d) for d in _documents(exchange)]


def _documents(exchange: Exchange) -> list[Any]:
    response = exchange.response
    assert response is not None
    if response.events:
        texts = [event_data(e.lines) for e in response.events]
    elif response.messages:
        texts = [m.json or "" for m in response.messages]
    else:
        texts = [response.body.decode()]
    documents = [parse_json(t) for t in texts]
    if exchange.classification.binding is Binding.JSONRPC:
        documents = [d["result"] for d in documents]
    return documents


# Ids that differ from one client to the next: those it chose (echoed back by the agent) and
# the task's, which the replay mints afresh for every client after the first.
SESSION_IDS = ("contextId", "messageId", "id", "taskId")


def as_sent(recorded: list[StreamResponse], seen: list[StreamResponse]) -> list[StreamResponse]:
    """`recorded` with this client's session ids (its context and message ids, its task's id)
    where the recording has the recorded client's, read off the first event both hold: what
    the agent would have sent this client.  Everything else must be equal."""
    recorded = at_ms(recorded)
    if not seen or not recorded:
        return recorded
    pairs: dict[str, str] = {}
    _pair(json_format.MessageToDict(recorded[0]), json_format.MessageToDict(seen[0]), pairs)
    return [proto(_swapped(json_format.MessageToDict(e), pairs)) for e in recorded]


def at_ms(events: list[StreamResponse]) -> list[StreamResponse]:
    """Timestamps to the millisecond: @a2a-js/sdk keeps no finer (a JS Date), so both
    clients' events and the recording are compared at that precision."""
    out = []
    for event in events:
        copied = StreamResponse()
        copied.CopyFrom(event)
        for status in _statuses(copied):
            status.timestamp.nanos -= status.timestamp.nanos % 1_000_000
        out.append(copied)
    return out


def _statuses(event: StreamResponse) -> list[Any]:
    member = event.WhichOneof("payload")
    if member in ("task", "status_update"):
        found = getattr(event, member).status
        return [found] if found.HasField("timestamp") else []
    return []


def _pair(old: Any, new: Any, pairs: dict[str, str]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key, value in old.items():
            if key in SESSION_IDS and isinstance(new.get(key), str):
                pairs.setdefault(value, new[key])
            _pair(value, new.get(key), pairs)
    elif isinstance(old, list) and isinstance(new, list):
        for a, b in zip(old, new, strict=False):
            _pair(a, b, pairs)


def _swapped(value: Any, pairs: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: _swapped(v, pairs) for k, v in value.items()}
    if isinstance(value, list):
        return [_swapped(v, pairs) for v in value]
    return pairs.get(value, value) if isinstance(value, str) else value


def proto(document: Any) -> StreamResponse:
    """A StreamResponse, or a SendMessage answer (a bare Task) as one holding it."""
    if isinstance(document, dict) and "id" in document and "status" in document:
        document = {"task": document}
    return json_format.ParseDict(document, StreamResponse(), ignore_unknown_fields=True)


async def _fold(events: list[StreamResponse]) -> Task | None:
    manager = TaskManager(InMemoryTaskStore(), ServerCallContext(), None, None, None)
    task: Task | None = None
    for event in events:
        member = event.WhichOneof("payload")
        if member in ("task", "status_update", "artifact_update"):
            copied = StreamResponse()
            copied.CopyFrom(event)  # the manager changes what it is given
            task = await manager.save_task_event(getattr(copied, member))
    return task


def sdk_fold(events: list[StreamResponse]) -> Task | None:
    """The task `events` leave, as a2a-sdk's TaskManager applies them."""
    return asyncio.run(_fold(events))


# -- the a2a-sdk 1.3.0 client -----------------------------------------------------------------


def said(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def py(card_url: str, binding: str, action: str, timeout: float | None = None) -> Run:
    """One `action` (stream, resume, send) of a fresh a2a-sdk client."""
    return asyncio.run(_py(card_url, binding, action, timeout))


async def _py(card_url: str, binding: str, action: str, timeout: float | None) -> Run:
    async with httpx.AsyncClient(timeout=30.0) as http:
        card = await A2ACardResolver(http, card_url[: -len(CARD)]).get_agent_card()
        config = ClientConfig(
            streaming=action != "send",
            supported_protocol_bindings=[binding],
            grpc_channel_factory=grpc.aio.insecure_channel,
            httpx_client=http,
        )
        client = ClientFactory(config).create(card)
        context = ClientCallContext(timeout=timeout) if timeout else None
        try:
            return await _ACTIONS[action](client, context)
        finally:
            await client.close()


def _request(text: str) -> SendMessageRequest:
    message = Message(
        message_id=str(uuid.uuid4()),
        role=Role.ROLE_USER,
        context_id=str(uuid.uuid4()),
        parts=[Part(text=text)],
    )
    return SendMessageRequest(message=message)


async def _collect(stream: Any, run: Run, start: float) -> tuple[list[StreamResponse], str | None]:
    events: list[StreamResponse] = []
    try:
        async for event in stream:
            events.append(event)
            run.times.append(time.monotonic() - start)
    except Exception as exc:  # what the client raises is what the test looks at
        return at_ms(events), said(exc)
    return at_ms(events), None


async def _stream(client: Any, context: Any) -> Run:
    run = Run()
    stream = client.send_message(_request("slow 3"), context=context)
    run.events, run.error = await _collect(stream, run, time.monotonic())
    return run


async def _resume(client: Any, context: Any) -> Run:
    run = await _stream(client, context)
    task = next((_task_id(e) for e in run.events if _task_id(e)), None)
    if run.error and task:
        again = client.subscribe(SubscribeToTaskRequest(id=task), context=context)
        run.resumed, run.resume_error = await _collect(again, Run(), time.monotonic())
    return run


async def _send(client: Any, context: Any) -> Run:
    run = Run()
    request = _request("echo hello")
    start = time.monotonic()
    run.events, run.error = await _collect(
        client.send_message(request, context=context), run, start
    )
    if run.error:
        retry = client.send_message(request, context=context)
        run.retry, run.retry_error = await _collect(retry, Run(), time.monotonic())
    return run


_ACTIONS = {"stream": _stream, "resume": _resume, "send": _send}


def _task_id(event: StreamResponse) -> str:
    member = event.WhichOneof("payload")
    if member == "task":
        return str(event.task.id)
    return (
        str(getattr(event, member).task_id)
        if member in ("status_update", "artifact_update")
        else ""
    )


# -- the @a2a-js/sdk 1.3.0 client -------------------------------------------------------------


class Job(NamedTuple):
    card: str  # its URL
    action: str  # stream, resume, send
    timeout: float | None = None  # seconds each call may take (an AbortSignal.timeout)


def js(binding: str, jobs: list[Job]) -> list[Run]:
    """Each job with a fresh @a2a-js/sdk client, in one node process."""
    env = {**os.environ, "A2A_PEER_NODE_ENV": str(JS_ENV.path)}
    payload = json.dumps([job._asdict() for job in jobs])
    done = subprocess.run(
        ["node", str(HERE / "js" / "faults.mjs"), binding, payload],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    return [_js_run(r) for r in results]


def _js_run(result: dict[str, Any]) -> Run:
    assert "failed" not in result, result["failed"]
    if "result" in result:  # send
        return Run(
            events=at_ms([proto(result["result"])]) if result["result"] else [],
            error=result["error"],
            retry=at_ms([proto(result["retry"])]) if result["retry"] else None,
            retry_error=result["retryError"],
            times=[t / 1000 for t in result["times"]],
        )
    resumed = result.get("resumed")
    return Run(
        events=at_ms([proto(e) for e in result["events"]]),
        error=result["error"],
        resumed=at_ms([proto(e) for e in resumed]) if resumed is not None else None,
        resume_error=result.get("resumeError"),
        times=[t / 1000 for t in result.get("times", [])],
    )
