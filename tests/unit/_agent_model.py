"""A small A2A agent as a pure model, for the replay service's unit tests (no sockets).

`ModelAgent` answers JSON-RPC v1.0 requests the way an a2a-sdk 1.3.0 agent does (task
objects, `{"task": ...}` send results, ListTasks pages, TaskNotFound and friends as JSON-RPC
errors), keeping its tasks in a dict.  It is both the recording (a `Recording` runs a
client's operations against one agent and keeps each exchange as a capture `Exchange`) and
the oracle (a fresh agent per client says what a live agent would have shown that client).

`Client` builds requests as a client written from the spec would: a fresh JSON-RPC id and
messageId on every request, its own headers, a new connection per request.  Its connections
take ports from `ports`; clients given one small cycle of ports reuse each other's, as
clients of one host do once a connection closes.
"""

from __future__ import annotations

import itertools
import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from recorder.capture import Capture, Exchange, Request, Response
from recorder.protocol import classify

Json = Any
PATH = "/a2a/jsonrpc"
JSON_HEADERS = (("content-type", "application/json"),)
EPHEMERAL = itertools.count(20000)  # ports no two connections share, unless a test says so
ERRORS = {
    "TaskNotFound": (-32001, "Task not found", "TASK_NOT_FOUND"),
    "TaskNotCancelable": (-32002, "Task cannot be canceled", "TASK_NOT_CANCELABLE"),
}
TERMINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_CANCELED", "TASK_STATE_FAILED"}


class AgentError(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


@dataclass
class ModelAgent:
    """Tasks by id; `slow` tasks complete after `polls` GetTasks."""

    tasks: dict[str, Json] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    polls_left: dict[str, int] = field(default_factory=dict)

    def answer(self, body: Json) -> Json:
        method, params = body["method"], body.get("params") or {}
        try:
            result = getattr(self, "_" + method)(params)
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

    def _SendMessage(self, params: Json) -> Json:  # noqa: N802 - the A2A method name
        message = dict(params["message"])
        if message.get("taskId"):
            task = self._task(message["taskId"])
            task["history"].append(message)
            return {"task": task}
        text = message["parts"][0]["text"]
        task_id, context = str(uuid.uuid4()), message.get("contextId") or str(uuid.uuid4())
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
            task["artifacts"] = [
                {"artifactId": str(uuid.uuid4()), "name": "echo", "parts": [{"text": text}]}
            ]
        if text.startswith("slow"):
            self.polls_left[task_id] = 2
        self.tasks[task_id] = task
        self.order.insert(0, task_id)
        return {"task": json.loads(json.dumps(task))}

    def _GetTask(self, params: Json) -> Json:  # noqa: N802
        task = self._task(params["id"])
        left = self.polls_left.get(task["id"])
        if left is not None:
            self.polls_left[task["id"]] = left - 1
            if left == 1:
                task["status"] = {"state": "TASK_STATE_COMPLETED"}
                del self.polls_left[task["id"]]
        return json.loads(json.dumps(task))

    def _CancelTask(self, params: Json) -> Json:  # noqa: N802
        task = self._task(params["id"])
        if task["status"]["state"] in TERMINAL:
            raise AgentError("TaskNotCancelable")
        task["status"] = {"state": "TASK_STATE_CANCELED"}
        return json.loads(json.dumps(task))

    def _ListTasks(self, params: Json) -> Json:  # noqa: N802
        ids = [
            t
            for t in self.order
            if not params.get("contextId") or self.tasks[t]["contextId"] == params["contextId"]
        ]
        listed = [{k: v for k, v in self.tasks[t].items() if k != "artifacts"} for t in ids]
        return {
            "tasks": json.loads(json.dumps(listed)),
            "nextPageToken": "",
            "pageSize": 50,
            "totalSize": len(listed),
        }

    def _task(self, task_id: str) -> Json:
        if task_id not in self.tasks:
            raise AgentError("TaskNotFound")
        return self.tasks[task_id]


# ---- a client's operations -------------------------------------------------------------------

# (operation, argument): "send" TEXT, "get"/"cancel" TASK (the index of the client's n-th
# task), "probe-get"/"probe-cancel" (an id nobody issued), "bogus" (a message continuing a
# made-up task), "list" (no filter).
Op = tuple[str, Any]


@dataclass
class Client:
    """Builds a client's requests: fresh ids everywhere, its own headers and connections."""

    name: str
    identity: bool = True  # send an Authorization header of its own
    tasks: list[str] = field(default_factory=list)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    ports: Iterator[int] = field(default_factory=lambda: EPHEMERAL)

    def request(self, op: Op) -> Request:
        kind, arg = op
        params: Json
        if kind == "send":
            message = {
                "messageId": str(uuid.uuid4()),
                "role": "ROLE_USER",
                "parts": [{"text": arg}],
            }
            params, method = {"message": message}, "SendMessage"
        elif kind == "bogus":
            message = {
                "messageId": str(uuid.uuid4()),
                "role": "ROLE_USER",
                "taskId": f"made-up-{uuid.uuid4().hex[:6]}",
                "parts": [{"text": "more"}],
            }
            params, method = {"message": message}, "SendMessage"
        elif kind in ("get", "cancel"):
            method = {"get": "GetTask", "cancel": "CancelTask"}[kind]
            params = {"id": self.tasks[arg]}
        elif kind.startswith("probe-"):
            params = {"id": arg or str(uuid.uuid4())}
            method = {"probe-get": "GetTask", "probe-cancel": "CancelTask"}[kind]
        else:
            params, method = {}, "ListTasks"
        body = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        headers = [
            ("content-type", "application/json"),
            ("a2a-version", "1.0"),
            ("user-agent", "spec-client/1"),
        ]
        if self.identity:
            headers.append(("authorization", f"Bearer {self.name}"))
        return Request("POST", PATH, tuple(headers), json.dumps(body).encode())

    def connection(self) -> str:
        return f"127.0.0.1:{next(self.ports)}"

    def saw(self, op: Op, answer: Json) -> None:
        """Remember the tasks this client was handed (its n-th task is `tasks[n]`)."""
        if op[0] == "send" and "result" in answer:
            self.tasks.append(answer["result"]["task"]["id"])


def response(document: Json) -> Response:
    return Response(200, "OK", JSON_HEADERS, json.dumps(document).encode())


@dataclass
class Recording:
    """One client's operations run against one agent, kept as a capture."""

    agent: ModelAgent = field(default_factory=ModelAgent)
    exchanges: list[Exchange] = field(default_factory=list)

    def run(self, client: Client, ops: list[Op]) -> list[Json]:
        answers = []
        for op in ops:
            request = client.request(op)
            answer = self.agent.answer(json.loads(request.body))
            reply = response(answer)
            number = len(self.exchanges) + 1
            self.exchanges.append(
                Exchange(
                    number,
                    classify(request, reply),
                    request,
                    reply,
                    started_us=number * 1000,
                    duration_us=500,
                )
            )
            client.saw(op, answer)
            answers.append(answer)
        return answers

    def capture(self) -> Capture:
        return Capture("2026-01-01T00:00:00.000000Z", "test", tuple(self.exchanges))


# ---- comparing what clients saw ------------------------------------------------------------

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def normalised(answers: list[Json]) -> list[Json]:
    """Answers with ids numbered in first-seen order and JSON-RPC ids dropped: two runs of
    the same operations, by a live agent or a replay, compare equal."""
    seen: dict[str, str] = {}

    def walk(value: Json) -> Json:
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items() if k != "id" or "jsonrpc" not in value}
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, str):
            return _UUID.sub(lambda m: seen.setdefault(m.group(0), f"<id{len(seen) + 1}>"), value)
        return value

    return [walk(a) for a in answers]
