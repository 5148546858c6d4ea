"""A small A2A agent as a pure model, for the replay service's unit tests (no sockets).

`ModelAgent` answers JSON-RPC v1.0 requests the way an a2a-sdk 1.3.0 agent does (task
objects, `{"task": ...}` send results, ListTasks pages listing every task in its store,
push configs under their client-chosen ids, TaskNotFound and friends as JSON-RPC errors, its
own error for a method it does not know and for a body it cannot read), keeping its tasks in
a dict.  It is both the recording (a `Recording` runs clients' operations against one agent
and keeps each exchange as a capture `Exchange`) and the oracle (a fresh agent per client, with
the same tasks from before, says what a live agent would have shown that client).

`Client` builds requests as a client written from the spec would: a fresh JSON-RPC id and
messageId on every request, its own headers, a new connection per request, and the ids it
chooses itself (`context`, push config ids) the same on every run.  Its connections take
ports from `ports`; clients given one small cycle of ports reuse each other's, as clients of
one host do once a connection closes.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from recorder.capture import Capture, Exchange, Request, Response
from recorder.protocol import Binding, Interface, classify

Json = Any
PATH = "/a2a/jsonrpc"
JSON_HEADERS = (("content-type", "application/json"),)
# The endpoint, as the recorder knows it (from the card, or from a known request it carried).
INTERFACES = (Interface(f"http://127.0.0.1:9{PATH}", Binding.JSONRPC),)
EPHEMERAL = itertools.count(20000)  # ports no two connections share, unless a test says so
ERRORS = {
    "TaskNotFound": (-32001, "Task not found", "TASK_NOT_FOUND"),
    "TaskNotCancelable": (-32002, "Task cannot be canceled", "TASK_NOT_CANCELABLE"),
    "Unsupported": (-32004, "This operation is not supported", "UNSUPPORTED_OPERATION"),
}
TERMINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_CANCELED", "TASK_STATE_FAILED"}
# The agent's own words for what it cannot serve (the JS SDK's, as in the issue).
UNKNOWN_METHOD = {"code": -32601, "message": "Invalid method."}
PARSE_ERROR = {"code": -32700, "message": "Invalid JSON payload."}


# Every id the model makes (the agent's, the clients' own) comes from here: a test that seeds
# it (`seed_ids`) runs the same bytes again.
_IDS = random.Random()


def seed_ids(seed: int) -> None:
    _IDS.seed(seed)


def new_uuid() -> uuid.UUID:
    return uuid.UUID(int=_IDS.getrandbits(128), version=4)


class AgentError(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _copy(value: Json) -> Json:
    return json.loads(json.dumps(value))


def preexisting(count: int) -> dict[str, Json]:
    """Tasks an agent holds before any recording (the same ids in every agent made with them)."""
    return {
        f"pre-{n}": {
            "id": f"pre-{n}",
            "contextId": f"pre-ctx-{n}",
            "status": {"state": "TASK_STATE_COMPLETED"},
        }
        for n in range(1, count + 1)
    }


@dataclass
class ModelAgent:
    """Tasks by id; `slow` tasks complete after two GetTasks; `artifact_id` names every
    artifact (an agent that calls its artifact `art-echo` in every task), else a fresh one."""

    tasks: dict[str, Json] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    polls_left: dict[str, int] = field(default_factory=dict)
    configs: dict[str, dict[str, Json]] = field(default_factory=dict)  # task -> id -> config
    artifact_id: str | None = None

    @classmethod
    def holding(cls, count: int, **options: Any) -> ModelAgent:
        tasks = preexisting(count)
        return cls(tasks=tasks, order=list(reversed(tasks)), **options)

    def answer(self, body: Json) -> Json:
        method, params = body["method"], body.get("params") or {}
        handler = getattr(self, "_" + method, None)
        if handler is None:
            return {"error": UNKNOWN_METHOD, "id": body.get("id"), "jsonrpc": "2.0"}
        try:
            result = handler(params)
        except AgentError as error:
            code, message, reason = ERRORS[error.name]
            info = {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason,
                "domain": "a2a-protocol.org",
                "metadata": {},
            }
            return {
                "error": {"code": code, "message": message, "data": [info]},
                "id": body.get("id"),
                "jsonrpc": "2.0",
            }
        return {"result": result, "id": body.get("id"), "jsonrpc": "2.0"}

    def _SendMessage(self, params: Json) -> Json:  # the A2A method name
        message = dict(params["message"])
        if message.get("taskId"):
            task = self._task(message["taskId"])
            if task["status"]["state"] in TERMINAL:
                raise AgentError("Unsupported")
            task["history"].append(message)
            return {"task": _copy(task)}
        text = message["parts"][0]["text"]
        task_id, context = str(new_uuid()), message.get("contextId") or str(new_uuid())
        message.update(taskId=task_id, contextId=context)
        state = {"wait": "TASK_STATE_WORKING", "slow": "TASK_STATE_WORKING"}.get(
            text.split()[0], "TASK_STATE_COMPLETED"
        )
        task = {
            "id": task_id,
            "contextId": context,
            "status": {"state": state},
            "history": [message],
        }
        if state == "TASK_STATE_COMPLETED":
            artifact = self.artifact_id or str(new_uuid())
            task["artifacts"] = [
                {"artifactId": artifact, "name": "echo", "parts": [{"text": text}]}
            ]
        if text.startswith("slow"):
            self.polls_left[task_id] = 2
        self.tasks[task_id] = task
        self.order.insert(0, task_id)
        return {"task": _copy(task)}

    def _GetTask(self, params: Json) -> Json:
        task = self._task(params["id"])
        left = self.polls_left.get(task["id"])
        if left is not None:
            self.polls_left[task["id"]] = left - 1
            if left == 1:
                task["status"] = {"state": "TASK_STATE_COMPLETED"}
                del self.polls_left[task["id"]]
        return _copy(task)

    def _CancelTask(self, params: Json) -> Json:
        task = self._task(params["id"])
        if task["status"]["state"] in TERMINAL:
            raise AgentError("TaskNotCancelable")
        task["status"] = {"state": "TASK_STATE_CANCELED"}
        return _copy(task)

    def _SubscribeToTask(self, params: Json) -> Json:  # one event, as a body
        task = self._task(params["id"])
        if task["status"]["state"] in TERMINAL:
            raise AgentError("Unsupported")
        return {"task": _copy(task)}

    def _ListTasks(self, params: Json) -> Json:
        ids = [
            t
            for t in self.order
            if not params.get("contextId") or self.tasks[t]["contextId"] == params["contextId"]
        ]
        listed = [{k: v for k, v in self.tasks[t].items() if k != "artifacts"} for t in ids]
        return {
            "tasks": _copy(listed),
            "nextPageToken": "",
            "pageSize": 50,
            "totalSize": len(listed),
        }

    def _CreateTaskPushNotificationConfig(self, params: Json) -> Json:
        self._task(params["taskId"])
        config = {k: params[k] for k in ("taskId", "id", "url", "token") if k in params}
        self.configs.setdefault(params["taskId"], {})[params["id"]] = config
        return _copy(config)

    def _GetTaskPushNotificationConfig(self, params: Json) -> Json:
        found = self.configs.get(params["taskId"], {}).get(params["id"])
        if found is None:
            raise AgentError("TaskNotFound")
        return _copy(found)

    def _task(self, task_id: str) -> Json:
        if task_id not in self.tasks:
            raise AgentError("TaskNotFound")
        return self.tasks[task_id]


def unreadable(body: bytes) -> Json:
    """The agent's answer to a body it cannot read as a JSON-RPC request."""
    return {"error": PARSE_ERROR, "id": None, "jsonrpc": "2.0"}


# ---- a client's operations -------------------------------------------------------------------

# (operation, argument): "send" TEXT (a new task), "send-ctx" TEXT (in the client's own
# context), "get"/"cancel"/"subscribe"/"follow" N (the client's n-th task; "follow" sends a
# message to it), "config" N (a push config for its n-th task, under the client's own config
# id), "get-config" N, "probe-get"/"probe-cancel" ID (an id nobody issued; None: a fresh one),
# "bogus" (a message continuing a made-up task), "list" / "list-ctx" (all / the client's own
# context), "unknown" METHOD, "raw" BYTES (a body sent as it is).
Op = tuple[str, Any]


@dataclass
class Client:
    """Builds a client's requests: fresh ids everywhere, its own headers and connections."""

    name: str
    identity: bool = True  # send an Authorization header of its own
    context: str = "conv-1"  # the context id it chooses, the same on every run
    config: str = "cfg-1"  # the push config id it chooses
    tasks: list[str] = field(default_factory=list)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    ports: Iterator[int] = field(default_factory=lambda: EPHEMERAL)

    def request(self, op: Op) -> Request:
        kind, arg = op
        if kind == "raw":
            return Request("POST", PATH, self._headers(), arg)
        method, params = self._call(kind, arg)
        body = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        return Request("POST", PATH, self._headers(), json.dumps(body).encode())

    def _call(self, kind: str, arg: Any) -> tuple[str, Json]:
        if kind in ("send", "send-ctx", "bogus", "follow"):
            return "SendMessage", {"message": self._message(kind, arg)}
        if kind in ("get", "cancel", "subscribe"):
            method = {"get": "GetTask", "cancel": "CancelTask", "subscribe": "SubscribeToTask"}
            return method[kind], {"id": self.tasks[arg]}
        if kind.startswith("probe-"):
            method = {"probe-get": "GetTask", "probe-cancel": "CancelTask"}[kind]
            return method, {"id": arg or str(new_uuid())}
        if kind == "config":
            params = {"taskId": self.tasks[arg], "id": self.config}
            return "CreateTaskPushNotificationConfig", {
                **params,
                "url": f"http://127.0.0.1:9/hook/{new_uuid().hex[:8]}",
                "token": new_uuid().hex,
            }
        if kind == "get-config":
            return "GetTaskPushNotificationConfig", {"taskId": self.tasks[arg], "id": self.config}
        if kind == "unknown":
            return arg, {}
        return "ListTasks", {"contextId": self.context} if kind == "list-ctx" else {}

    def _message(self, kind: str, arg: Any) -> Json:
        text = "more" if kind in ("bogus", "follow") else arg
        message: Json = {
            "messageId": str(new_uuid()),
            "role": "ROLE_USER",
            "parts": [{"text": text}],
        }
        if kind == "send-ctx":
            message["contextId"] = self.context
        if kind == "bogus":
            message["taskId"] = f"made-up-{new_uuid().hex[:6]}"
        if kind == "follow":
            message["taskId"] = self.tasks[arg]
        return message

    def _headers(self) -> tuple[tuple[str, str], ...]:
        headers = [
            ("content-type", "application/json"),
            ("a2a-version", "1.0"),
            ("user-agent", "spec-client/1"),
        ]
        if self.identity:
            headers.append(("authorization", f"Bearer {self.name}"))
        return tuple(headers)

    def connection(self) -> str:
        return f"127.0.0.1:{next(self.ports)}"

    def saw(self, op: Op, answer: Json) -> None:
        """Remember the tasks this client was handed (its n-th task is `tasks[n]`)."""
        if op[0] in ("send", "send-ctx") and "result" in answer:
            self.tasks.append(answer["result"]["task"]["id"])


def response(document: Json) -> Response:
    return Response(200, "OK", JSON_HEADERS, json.dumps(document).encode())


@dataclass
class Recording:
    """Clients' operations run against one agent, kept as a capture."""

    agent: ModelAgent = field(default_factory=ModelAgent)
    exchanges: list[Exchange] = field(default_factory=list)

    def run(self, client: Client, ops: list[Op]) -> list[Json]:
        return [self.step(client, op) for op in ops]

    def step(self, client: Client, op: Op) -> Json:
        request = client.request(op)
        try:
            body = json.loads(request.body)
        except ValueError:
            body = None
        if isinstance(body, dict) and "method" in body:
            answer = self.agent.answer(body)
        else:
            answer = unreadable(request.body)
        reply = response(answer)
        number = len(self.exchanges) + 1
        self.exchanges.append(
            Exchange(
                number,
                classify(request, reply, interfaces=INTERFACES),
                request,
                reply,
                started_us=number * 1000,
                duration_us=500,
            )
        )
        client.saw(op, answer)
        return answer

    def capture(self) -> Capture:
        return Capture("2026-01-01T00:00:00.000000Z", "test", tuple(self.exchanges))


# ---- comparing what clients saw ------------------------------------------------------------

# Fresh values: UUIDs, and the hex of webhook paths and tokens (`Client._call`).
_UUID = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32}|(?<=hook/)[0-9a-f]{8}"
)


class Placeholders:
    """Ids to `<idN>` by first appearance, and the JSON-RPC ids dropped: two runs of the same
    operations, by a live agent or a replay, compare equal."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def __call__(self, value: Json) -> Json:
        if isinstance(value, dict):
            return {k: self(v) for k, v in value.items() if k != "id" or "jsonrpc" not in value}
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, str):
            return _UUID.sub(
                lambda m: self.seen.setdefault(m[0], f"<id{len(self.seen) + 1}>"), value
            )
        return value

    def knows(self, value: str) -> bool:
        return value in self.seen


def normalised(answers: list[Json]) -> list[Json]:
    placeholders = Placeholders()
    return [placeholders(a) for a in answers]


LISTS = ("list", "list-ctx")


def as_live(ops: list[Op], replayed: list[Json], live: list[Json]) -> list[str]:
    """Where a client's replayed answers differ from the live ones (empty: they agree).

    Every answer but a listing must be the same, ids aside.  A listing must hold the client's
    own tasks as live did, and the tasks from before; it may hold other clients' tasks too,
    as a live agent they all used would.
    """
    mine, theirs = Placeholders(), Placeholders()
    wrong = []
    for n, (op, got, want) in enumerate(zip(ops, replayed, live, strict=True)):
        if op[0] in LISTS and "result" in want:
            got_items = [mine(t) for t in got.get("result", {}).get("tasks", []) if _own(t, mine)]
            want_items = [theirs(t) for t in want["result"]["tasks"]]
            if sorted(map(json.dumps, got_items)) != sorted(map(json.dumps, want_items)):
                wrong.append(f"{n} {op}: listed {got_items} live {want_items}")
        elif mine(got) != theirs(want):
            wrong.append(f"{n} {op}: replayed {got} live {want}")
    return wrong


def _own(task: Json, placeholders: Placeholders) -> bool:
    return not _UUID.fullmatch(task.get("id", "")) or placeholders.knows(task["id"])
