"""A2A client loads for the recorder benchmarks, sent the way real clients send them.

Each request carries a fresh JSON-RPC `id` and a fresh `messageId` (uuid4, as the a2a-sdk
client does).  Reads ask for tasks that this run created through the same path (`TaskPool`),
picked at random, never one fixed task.  A worker is one keep-alive `httpx.AsyncClient`
holding one connection, as an SDK client does; `run()` spreads N exchanges over C workers on
one event loop and returns a `Sample` per exchange.

Every answer is checked: status 200, the JSON-RPC id echoed, the task completed and holding
the message sent, a stream ending on its terminal state with every artifact update.  A wrong
answer raises `WrongAnswer`, and so does a transport error: timing wrong answers measures
nothing.  The clock runs from just before the request is sent (its body already encoded) to
the end of the answer; a stream also notes each event's arrival, at the blank line that ends
the event (where an SSE client dispatches it).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

JSONRPC_PATH = "/a2a/jsonrpc"
REST_TASKS = "/a2a/rest/tasks/"
HEADERS = {"A2A-Version": "1.0", "Content-Type": "application/json"}
TIMEOUT = 30.0
COMPLETED = "TASK_STATE_COMPLETED"
STREAM_ARTIFACTS = 5  # `slow 5`: Task, working, 5 artifact updates, completed = 8 events
STREAM_TEXT = f"slow {STREAM_ARTIFACTS}"

Json = dict[str, Any]


class WrongAnswer(RuntimeError):
    """An answer that is not what the agent gives for this request (or no answer at all)."""


@dataclass(frozen=True, slots=True)
class Sample:
    """One exchange as the client saw it: seconds to the end of the answer, each stream event's
    arrival in seconds from the send, and a key naming the request (its JSON-RPC id, or
    `GET <path>`)."""

    latency: float
    key: str
    events: tuple[float, ...] = ()


class TaskPool:
    """Ids of the tasks created through one path, for that path's reads."""

    def __init__(self, seed: int = 0) -> None:
        self._ids: list[str] = []
        self._random = random.Random(seed)

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, task_id: str) -> None:
        self._ids.append(task_id)

    def pick(self) -> str:
        if not self._ids:
            raise WrongAnswer("no task to read yet: send messages first")
        return self._random.choice(self._ids)


Exchange = Callable[[httpx.AsyncClient, TaskPool], Awaitable[Sample]]


@dataclass(frozen=True, slots=True)
class Load:
    name: str  # as `--only` takes it
    label: str  # as the tables show it
    exchange: Exchange
    reads: bool = False  # it reads tasks, so the pool must hold some first
    streams: bool = False


# -- requests and checks ------------------------------------------------------------------------


def user_message(text: str) -> Json:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}


def rpc_request(method: str, params: Json) -> tuple[str, bytes]:
    """A JSON-RPC request with a fresh id: (id, encoded body)."""
    rid = str(uuid.uuid4())
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    return rid, json.dumps(body).encode()


def answer_json(response: httpx.Response, what: str) -> Json:
    if response.status_code != 200:
        raise WrongAnswer(f"{what}: status {response.status_code}: {response.text[:300]}")
    try:
        body: Json = response.json()
    except ValueError as exc:
        raise WrongAnswer(f"{what}: not JSON: {response.text[:300]}") from exc
    return body


def rpc_result(body: Json, rid: str, what: str) -> Json:
    if body.get("id") != rid or not isinstance(body.get("result"), dict):
        raise WrongAnswer(f"{what}: not the result for id {rid}: {json.dumps(body)[:300]}")
    result: Json = body["result"]
    return result


def completed_task(task: Any, what: str, task_id: str | None = None) -> Json:
    """`task` if it is a completed Task (with id `task_id`, when given)."""
    state = task.get("status", {}).get("state") if isinstance(task, dict) else None
    if state != COMPLETED or (task_id is not None and task.get("id") != task_id):
        raise WrongAnswer(
            f"{what}: expected completed task {task_id or ''}, got {json.dumps(task)[:300]}"
        )
    checked: Json = task
    return checked


# -- the exchanges ------------------------------------------------------------------------------


async def send_message(client: httpx.AsyncClient, tasks: TaskPool) -> Sample:
    message = user_message(f"echo {uuid.uuid4().hex[:8]}")
    rid, body = rpc_request("SendMessage", {"message": message})
    started = time.perf_counter()
    response = await client.post(JSONRPC_PATH, content=body)
    latency = time.perf_counter() - started
    result = rpc_result(answer_json(response, "SendMessage"), rid, "SendMessage")
    task = completed_task(result.get("task"), "SendMessage")
    if task.get("history", [{}])[0].get("messageId") != message["messageId"]:
        raise WrongAnswer(f"SendMessage: the task does not hold message {message['messageId']}")
    tasks.add(task["id"])
    return Sample(latency, rid)


async def get_task(client: httpx.AsyncClient, tasks: TaskPool) -> Sample:
    task_id = tasks.pick()
    rid, body = rpc_request("GetTask", {"id": task_id})
    started = time.perf_counter()
    response = await client.post(JSONRPC_PATH, content=body)
    latency = time.perf_counter() - started
    completed_task(rpc_result(answer_json(response, "GetTask"), rid, "GetTask"), "GetTask", task_id)
    return Sample(latency, rid)


async def rest_get_task(client: httpx.AsyncClient, tasks: TaskPool) -> Sample:
    path = REST_TASKS + tasks.pick()
    started = time.perf_counter()
    response = await client.get(path)
    latency = time.perf_counter() - started
    completed_task(answer_json(response, f"GET {path}"), f"GET {path}", path[len(REST_TASKS) :])
    return Sample(latency, f"GET {path}")


async def send_streaming(client: httpx.AsyncClient, tasks: TaskPool) -> Sample:
    rid, body = rpc_request("SendStreamingMessage", {"message": user_message(STREAM_TEXT)})
    started = time.perf_counter()
    async with client.stream("POST", JSONRPC_PATH, content=body) as response:
        if response.status_code != 200:
            await response.aread()
            answer_json(response, "SendStreamingMessage")
        arrivals, events = await read_events(response, started)
    latency = time.perf_counter() - started
    check_stream(response, events, rid)
    return Sample(latency, rid, tuple(arrivals))


async def read_events(response: httpx.Response, started: float) -> tuple[list[float], list[str]]:
    """Each event's data and arrival time (seconds from `started`)."""
    arrivals: list[float] = []
    events: list[str] = []
    data: list[str] = []
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:
            arrivals.append(time.perf_counter() - started)
            events.append("\n".join(data))
            data = []
    return arrivals, events


def check_stream(response: httpx.Response, events: list[str], rid: str) -> None:
    what = "SendStreamingMessage"
    if not response.headers.get("content-type", "").startswith("text/event-stream"):
        raise WrongAnswer(f"{what}: content-type {response.headers.get('content-type')}")
    try:
        results = [rpc_result(json.loads(data), rid, what) for data in events]
    except ValueError as exc:
        raise WrongAnswer(f"{what}: an event is not JSON: {exc}") from exc
    artifacts = sum("artifactUpdate" in result for result in results)
    last = results[-1].get("statusUpdate", {}) if results else {}
    if (
        not results
        or "task" not in results[0]
        or artifacts != STREAM_ARTIFACTS
        or last.get("status", {}).get("state") != COMPLETED
    ):
        raise WrongAnswer(
            f"{what}: expected a task, {STREAM_ARTIFACTS} artifact updates and "
            f"a completed status, got {[list(r) for r in results]}"
        )


LOADS: dict[str, Load] = {
    load.name: load
    for load in (
        Load("SendMessage", "JSON-RPC SendMessage", send_message),
        Load("GetTask", "JSON-RPC GetTask", get_task, reads=True),
        Load("REST-GetTask", "HTTP+JSON GET task", rest_get_task, reads=True),
        Load(
            "SendStreamingMessage",
            f"JSON-RPC SSE stream ({STREAM_TEXT})",
            send_streaming,
            streams=True,
        ),
    )
}


# -- running ------------------------------------------------------------------------------------


def clients(base_url: str, count: int) -> list[httpx.AsyncClient]:
    """`count` keep-alive clients of one connection each."""
    return [
        httpx.AsyncClient(
            base_url=base_url,
            headers=HEADERS,
            timeout=TIMEOUT,
            limits=httpx.Limits(max_connections=1),
        )
        for _ in range(count)
    ]


async def exchange(load: Load, client: httpx.AsyncClient, tasks: TaskPool) -> Sample:
    try:
        return await load.exchange(client, tasks)
    except httpx.HTTPError as exc:
        raise WrongAnswer(
            f"{load.label} via {client.base_url}: {type(exc).__name__}: {exc}"
        ) from exc


async def run(
    loads: Sequence[Load],
    workers: Sequence[httpx.AsyncClient],
    tasks: TaskPool,
    count: int,
    on_sample: Callable[[Sample], None] | None = None,
) -> list[Sample]:
    """`count` exchanges over the workers, each cycling through `loads`; the first wrong
    answer stops them all and is raised."""
    samples: list[Sample] = []
    todo = count

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal todo
        turn = 0
        while todo > 0:
            todo -= 1
            sample = await exchange(loads[turn % len(loads)], client, tasks)
            turn += 1
            samples.append(sample)
            if on_sample is not None:
                on_sample(sample)

    try:
        async with asyncio.TaskGroup() as group:
            for client in workers:
                group.create_task(worker(client))
    except* WrongAnswer as wrong:
        raise wrong.exceptions[0] from None
    return samples
