"""A2A clients written from the spec, not with an SDK: raw HTTP for JSON-RPC and HTTP+JSON,
grpcio calls for gRPC, and a new connection (or channel) for every request.

Each client runs the same small test, `run_test`: create a task that waits, read it, subscribe
to it and cancel it while the stream is open, read it again, cancel it again; then read, cancel
and subscribe to ids nobody issued (several shapes), and continue a made-up task.  Every call
gives an outcome string ("state:TASK_STATE_WORKING", "error:TaskNotFound", "stream:task
WORKING,status CANCELED"), so that runs against a live agent and a replay compare with `==`.
"""

from __future__ import annotations

import http.client
import json
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import quote, urlsplit

import grpc
from a2a.types import a2a_pb2
from google.protobuf import json_format
from google.rpc import error_details_pb2, status_pb2

TIMEOUT = 20.0
V1 = "/lf.a2a.v1.A2AService/"
# An error, named the same whatever the binding (spec §5.4 maps codes, statuses and reasons).
ERROR_NAMES = {
    -32001: "TaskNotFound",
    -32002: "TaskNotCancelable",
    -32004: "Unsupported",
    404: "TaskNotFound",
    "NOT_FOUND": "TaskNotFound",
    "TASK_NOT_FOUND": "TaskNotFound",
    "TASK_NOT_CANCELABLE": "TaskNotCancelable",
    "UNSUPPORTED_OPERATION": "Unsupported",
}


def unknown_ids() -> list[str]:
    """Ids nobody issued, in the shapes clients and conformance suites use."""
    return [str(uuid.uuid4()), f"nonexistent-{uuid.uuid4()}", str(uuid.uuid4().int)[:9]]


class SpecClient(Protocol):
    def send(self, text: str, task_id: str | None = None) -> tuple[str, str | None]: ...
    def get(self, task_id: str) -> str: ...
    def cancel(self, task_id: str) -> str: ...
    def subscribe(self, task_id: str, after_first: Callable[[], object]) -> str: ...


def run_test(client: SpecClient, *, probes: bool = True) -> list[tuple[str, str]]:
    """One test: a task's life, then (with `probes`) ids nobody issued; (call, outcome) each."""
    out: list[tuple[str, str]] = []
    outcome, task = client.send("wait")
    out.append(("send", outcome))
    assert task is not None, outcome
    out.append(("get", client.get(task)))
    cancelled: list[str] = []
    out.append(("subscribe", client.subscribe(task, lambda: cancelled.append(client.cancel(task)))))
    out.append(("cancel-while-subscribed", cancelled[0] if cancelled else "-"))
    out.append(("get-after-cancel", client.get(task)))
    out.append(("cancel-again", client.cancel(task)))
    if probes:
        for shape, unknown in enumerate(unknown_ids()):
            out.append((f"get-unknown-{shape}", client.get(unknown)))
            out.append((f"cancel-unknown-{shape}", client.cancel(unknown)))
            out.append((f"subscribe-unknown-{shape}", client.subscribe(unknown, lambda: None)))
        out.append(("continue-bogus", client.send("more", task_id=str(uuid.uuid4()))[0]))
    return out


def _task_outcome(task: dict[str, Any]) -> str:
    return f"state:{task.get('status', {}).get('state')}"


def _event_word(event: dict[str, Any]) -> str:
    if "task" in event:
        return f"task {event['task']['status']['state'].removeprefix('TASK_STATE_')}"
    if "statusUpdate" in event:
        return f"status {event['statusUpdate']['status']['state'].removeprefix('TASK_STATE_')}"
    return next(iter(event), "?")


def _message(text: str, task_id: str | None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    if task_id:
        message["taskId"] = task_id
    return message


# ---- HTTP: one connection per request ----------------------------------------------------


@dataclass
class _Http:
    base: str  # http://host:port

    def open(
        self, method: str, path: str, body: Any = None, accept: str = "application/json"
    ) -> http.client.HTTPResponse:
        parts = urlsplit(self.base)
        connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=TIMEOUT)
        data = json.dumps(body).encode() if body is not None else None
        headers = {"A2A-Version": "1.0", "Accept": accept, "Connection": "close"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=data, headers=headers)
        return connection.getresponse()

    def json(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        response = self.open(method, path, body)
        with response:
            return response.status, json.loads(response.read() or b"null")


def _events(response: http.client.HTTPResponse) -> Iterator[dict[str, Any]]:
    """The JSON documents of an SSE stream, as they arrive."""
    data: list[str] = []
    while True:
        line = response.readline()
        if not line:
            return
        text = line.decode().rstrip("\r\n")
        if text.startswith("data:"):
            data.append(text[5:].strip())
        elif not text and data:
            yield json.loads("\n".join(data))
            data = []


def _stream_outcome(
    events: Iterator[dict[str, Any]],
    unwrap: Callable[[Any], Any],
    after_first: Callable[[], object],
) -> str:
    words: list[str] = []
    meanwhile = threading.Thread(target=after_first)  # on its own connection
    try:
        for document in events:
            payload = unwrap(document)
            if isinstance(payload, str):
                return payload  # an error
            words.append(_event_word(payload))
            if len(words) == 1:
                meanwhile.start()
    finally:
        if meanwhile.is_alive():
            meanwhile.join(TIMEOUT)
    return "stream:" + ",".join(words)


@dataclass
class JsonRpcClient:
    base: str
    path: str = "/a2a/jsonrpc"

    def _call(self, method: str, params: Any) -> Any:
        body = {
            "jsonrpc": "2.0",
            "id": uuid.uuid4().int % 10**9,
            "method": method,
            "params": params,
        }
        return _Http(self.base).json("POST", self.path, body)[1]

    @staticmethod
    def _result(document: Any) -> Any:
        if "error" in document:
            return "error:" + ERROR_NAMES.get(
                document["error"]["code"], str(document["error"]["code"])
            )
        return document["result"]

    def send(self, text: str, task_id: str | None = None) -> tuple[str, str | None]:
        params = {"message": _message(text, task_id), "configuration": {"returnImmediately": True}}
        result = self._result(self._call("SendMessage", params))
        if isinstance(result, str):
            return result, None
        return _task_outcome(result["task"]), result["task"]["id"]

    def get(self, task_id: str) -> str:
        result = self._result(self._call("GetTask", {"id": task_id}))
        return result if isinstance(result, str) else _task_outcome(result)

    def cancel(self, task_id: str) -> str:
        result = self._result(self._call("CancelTask", {"id": task_id}))
        return result if isinstance(result, str) else _task_outcome(result)

    def subscribe(self, task_id: str, after_first: Callable[[], object]) -> str:
        body = {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}}
        response = _Http(self.base).open("POST", self.path, body, accept="text/event-stream")
        with response:
            if "event-stream" not in (response.getheader("content-type") or ""):
                return str(self._result(json.loads(response.read())))
            return _stream_outcome(_events(response), self._result, after_first)


@dataclass
class RestClient:
    base: str
    prefix: str = "/a2a/rest"

    @staticmethod
    def _error(status: int, document: Any) -> str:
        error = document.get("error", {}) if isinstance(document, dict) else {}
        reasons = [d.get("reason") for d in error.get("details", []) if isinstance(d, dict)]
        name = next((ERROR_NAMES[r] for r in reasons if r in ERROR_NAMES), None)
        return "error:" + (name or ERROR_NAMES.get(status, f"HTTP {status}"))

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        status, document = _Http(self.base).json(method, self.prefix + path, body)
        return document if status < 400 else self._error(status, document)

    def send(self, text: str, task_id: str | None = None) -> tuple[str, str | None]:
        body = {"message": _message(text, task_id), "configuration": {"returnImmediately": True}}
        result = self._call("POST", "/message:send", body)
        if isinstance(result, str):
            return result, None
        return _task_outcome(result["task"]), result["task"]["id"]

    def get(self, task_id: str) -> str:
        result = self._call("GET", f"/tasks/{quote(task_id, safe='')}")
        return result if isinstance(result, str) else _task_outcome(result)

    def cancel(self, task_id: str) -> str:
        result = self._call("POST", f"/tasks/{quote(task_id, safe='')}:cancel")
        return result if isinstance(result, str) else _task_outcome(result)

    def subscribe(self, task_id: str, after_first: Callable[[], object]) -> str:
        response = _Http(self.base).open(
            "POST",
            f"{self.prefix}/tasks/{quote(task_id, safe='')}:subscribe",
            accept="text/event-stream",
        )
        with response:
            if response.status >= 400:
                return self._error(response.status, json.loads(response.read() or b"{}"))
            return _stream_outcome(_events(response), lambda d: d, after_first)


# ---- gRPC: one channel per call ----------------------------------------------------------


@dataclass
class GrpcClient:
    target: str
    metadata: tuple[tuple[str, str], ...] = (("a2a-version", "1.0"),)

    def _unary(self, rpc: str, request: Any, reply: Any) -> Any:
        with grpc.insecure_channel(self.target) as channel:
            call = channel.unary_unary(
                V1 + rpc,
                request_serializer=type(request).SerializeToString,
                response_deserializer=reply.FromString,
            )
            try:
                return json_format.MessageToDict(
                    call(request, timeout=TIMEOUT, metadata=self.metadata)
                )
            except grpc.RpcError as error:
                return self._error(error)

    @staticmethod
    def _error(error: Any) -> str:
        """Named by the ErrorInfo in `grpc-status-details-bin` (spec §10.6), else the code."""
        details = dict(error.trailing_metadata() or ()).get("grpc-status-details-bin")
        if isinstance(details, bytes):
            for detail in status_pb2.Status.FromString(details).details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info) and info.reason in ERROR_NAMES:
                    return "error:" + ERROR_NAMES[info.reason]
        code = error.code().name
        return "error:" + ERROR_NAMES.get(code, code)

    def send(self, text: str, task_id: str | None = None) -> tuple[str, str | None]:
        request = json_format.ParseDict(
            {"message": _message(text, task_id), "configuration": {"returnImmediately": True}},
            a2a_pb2.SendMessageRequest(),
        )
        result = self._unary("SendMessage", request, a2a_pb2.SendMessageResponse)
        if isinstance(result, str):
            return result, None
        return _task_outcome(result["task"]), result["task"]["id"]

    def get(self, task_id: str) -> str:
        result = self._unary("GetTask", a2a_pb2.GetTaskRequest(id=task_id), a2a_pb2.Task)
        return result if isinstance(result, str) else _task_outcome(result)

    def cancel(self, task_id: str) -> str:
        result = self._unary("CancelTask", a2a_pb2.CancelTaskRequest(id=task_id), a2a_pb2.Task)
        return result if isinstance(result, str) else _task_outcome(result)

    def subscribe(self, task_id: str, after_first: Callable[[], object]) -> str:
        with grpc.insecure_channel(self.target) as channel:
            call = channel.unary_stream(
                V1 + "SubscribeToTask",
                request_serializer=a2a_pb2.SubscribeToTaskRequest.SerializeToString,
                response_deserializer=a2a_pb2.StreamResponse.FromString,
            )
            stream = call(
                a2a_pb2.SubscribeToTaskRequest(id=task_id), timeout=TIMEOUT, metadata=self.metadata
            )
            try:
                events = (json_format.MessageToDict(m) for m in stream)
                return _stream_outcome(events, lambda d: d, after_first)
            except grpc.RpcError as error:
                return self._error(error)
