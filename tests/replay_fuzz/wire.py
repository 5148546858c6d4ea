"""A2A on the wire, written from the spec: one logical request, three bindings.

A request is an operation name (`ListTasks`) and its fields in ProtoJSON (`{"contextId": X,
"pageSize": 2}`).  `Wire.call` sends it over JSON-RPC (a POST of an envelope to
`/a2a/jsonrpc`), HTTP+JSON (the route and verb of spec §11.3, path fields in the path, the
others in the query of a GET or the body of a POST) or gRPC (grpcio, with the message classes
a2a-sdk generates for `lf.a2a.v1`), with field names spelled lowerCamel or as in the proto
(`context_id`, which ProtoJSON parsers accept too).  No SDK client is used.

What the client saw comes back as a plain value (an *outcome*):

- HTTP: `{"http": 200, "type": "application/json", "body": ...}`, with the JSON-RPC `id`
  the server echoed replaced by `"<echo>"` when it is the one sent; a stream has `"events"`
  (each `{"data": ...}`, plus `"event"` when named) instead of a body;
- gRPC: `{"grpc": "OK", "reply": ...}` or `{"grpc": "NOT_FOUND", "message": ..., "details":
  [...]}` (the `google.rpc.Status` details of `grpc-status-details-bin`, decoded); a stream
  has `"messages"`;
- a request that got no answer: `{"failed": "ReadTimeout"}`.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import grpc
import httpx
from a2a.types import a2a_pb2
from google.protobuf import json_format, message_factory
from google.rpc import error_details_pb2, status_pb2

from replay_fuzz.program import GRPC, JSONRPC

TIMEOUT = 15.0
JSONRPC_PATH = "/a2a/jsonrpc"
REST_PREFIX = "/a2a/rest"
SERVICE = a2a_pb2.DESCRIPTOR.services_by_name["A2AService"]
GRPC_PREFIX = f"/{SERVICE.full_name}/"
STREAMING = frozenset({"SendStreamingMessage", "SubscribeToTask"})
HEADERS = {"A2A-Version": "1.0"}
GRPC_METADATA = (("a2a-version", "1.0"),)

Outcome = dict[str, Any]
AfterFirst = Callable[[Any], Outcome]  # given the first event's document

# HTTP+JSON routes (spec §11.3): verb, path template; the fields named in the path leave the
# request, the rest go to the query (GET, DELETE) or the body (POST).
ROUTES: dict[str, tuple[str, str]] = {
    "SendMessage": ("POST", "/message:send"),
    "SendStreamingMessage": ("POST", "/message:stream"),
    "GetTask": ("GET", "/tasks/{id}"),
    "ListTasks": ("GET", "/tasks"),
    "CancelTask": ("POST", "/tasks/{id}:cancel"),
    "SubscribeToTask": ("POST", "/tasks/{id}:subscribe"),
    "CreateTaskPushNotificationConfig": ("POST", "/tasks/{taskId}/pushNotificationConfigs"),
    "GetTaskPushNotificationConfig": ("GET", "/tasks/{taskId}/pushNotificationConfigs/{id}"),
    "ListTaskPushNotificationConfigs": ("GET", "/tasks/{taskId}/pushNotificationConfigs"),
    "DeleteTaskPushNotificationConfig": (
        "DELETE",
        "/tasks/{taskId}/pushNotificationConfigs/{id}",
    ),
}
_BODILESS = frozenset({"CancelTask", "SubscribeToTask"})  # as the spec's examples send them
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def snake(name: str) -> str:
    """`contextId` -> `context_id` (the proto's own name, which ProtoJSON accepts too)."""
    return _CAMEL.sub(r"_\1", name).lower()


def spelled(value: Any, as_snake: bool) -> Any:
    """`value` with every key of every object spelled the proto's way when `as_snake`."""
    if not as_snake:
        return value
    if isinstance(value, dict):
        return {snake(k): spelled(v, True) for k, v in value.items()}
    if isinstance(value, list):
        return [spelled(v, True) for v in value]
    return value


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass
class Endpoints:
    """Where one side serves: `http://127.0.0.1:PORT` and the gRPC `127.0.0.1:PORT`; behind
    a recorder, the agent's own addresses too (a redirect of the agent's names them, and the
    recorder passes it untouched: to the client they are the agent as much as the recorder's)."""

    http: str
    grpc: str
    http_aliases: tuple[str, ...] = ()
    grpc_aliases: tuple[str, ...] = ()


@dataclass
class Wire:
    """One client's connections: kept-alive ones (`conn="keep"`) live as long as the client."""

    endpoints: Endpoints
    next_jsonrpc_id: Callable[[], int | str]
    _http: httpx.Client | None = None
    _channel: grpc.Channel | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
        if self._channel is not None:
            self._channel.close()

    # -- connections -------------------------------------------------------------------

    @contextmanager
    def http(self, conn: str) -> Iterator[httpx.Client]:
        if conn == "keep":
            with self._lock:
                if self._http is None:
                    self._http = httpx.Client(base_url=self.endpoints.http, timeout=TIMEOUT)
            yield self._http
            return
        client = httpx.Client(
            base_url=self.endpoints.http, timeout=TIMEOUT, headers={"Connection": "close"}
        )
        with client:
            yield client

    @contextmanager
    def channel(self, conn: str) -> Iterator[grpc.Channel]:
        if conn == "keep":
            with self._lock:
                if self._channel is None:
                    self._channel = grpc.insecure_channel(self.endpoints.grpc)
            yield self._channel
            return
        with grpc.insecure_channel(self.endpoints.grpc) as channel:
            yield channel

    # -- one request -------------------------------------------------------------------

    def call(
        self,
        binding: str,
        operation: str,
        request: dict[str, Any],
        *,
        conn: str = "new",
        as_snake: bool = False,
        verb: str | None = None,
        after_first: AfterFirst | None = None,
    ) -> Outcome:
        """Send `operation` over `binding`; what the client saw.  For a stream, `after_first`
        runs (on a thread of its own) with the first event once it arrived; its outcome is
        kept."""
        try:
            if binding == GRPC:
                return self._grpc(operation, request, conn, after_first)
            if binding == JSONRPC:
                return self._jsonrpc(operation, request, conn, as_snake, after_first)
            return self._rest(operation, request, conn, as_snake, verb, after_first)
        except (httpx.HTTPError, json.JSONDecodeError, UnicodeDecodeError) as error:
            return {"failed": type(error).__name__}

    def _jsonrpc(
        self,
        operation: str,
        request: dict[str, Any],
        conn: str,
        as_snake: bool,
        after_first: AfterFirst | None,
    ) -> Outcome:
        sent_id = self.next_jsonrpc_id()
        envelope = {
            "jsonrpc": "2.0",
            "id": sent_id,
            "method": operation,
            "params": spelled(request, as_snake),
        }
        stream = operation in STREAMING
        headers = {**HEADERS, "Accept": "text/event-stream" if stream else "application/json"}
        with self.http(conn) as client:
            outcome = _http_exchange(
                client, "POST", JSONRPC_PATH, headers, envelope, None, after_first
            )
        return _echoed(outcome, sent_id)

    def _rest(
        self,
        operation: str,
        request: dict[str, Any],
        conn: str,
        as_snake: bool,
        verb: str | None,
        after_first: AfterFirst | None,
    ) -> Outcome:
        method, template = ROUTES[operation]
        method = verb or method
        fields = dict(request)
        path = template
        for name in re.findall(r"{(\w+)}", template):
            path = path.replace("{" + name + "}", quote(str(fields.pop(name, "")), safe=""))
        body: Any = None
        query: dict[str, str] | None = None
        if method in ("GET", "DELETE"):
            query = {k: _query_value(v) for k, v in spelled(fields, as_snake).items()}
        elif operation not in _BODILESS:
            body = spelled(fields, as_snake)
        stream = operation in STREAMING
        headers = {**HEADERS, "Accept": "text/event-stream" if stream else "application/json"}
        with self.http(conn) as client:
            return _http_exchange(
                client, method, REST_PREFIX + path, headers, body, query, after_first
            )

    def raw_http(self, method: str, path: str, conn: str, body: Any = None) -> Outcome:
        """A request to a route or method no table knows (an unknown JSON-RPC method, a GET
        of an unknown route, the card)."""
        try:
            with self.http(conn) as client:
                return _http_exchange(client, method, path, dict(HEADERS), body, None, None)
        except (httpx.HTTPError, json.JSONDecodeError, UnicodeDecodeError) as error:
            return {"failed": type(error).__name__}

    def _grpc(
        self,
        operation: str,
        request: dict[str, Any],
        conn: str,
        after_first: AfterFirst | None,
    ) -> Outcome:
        rpc = SERVICE.methods_by_name[operation]
        request_class = message_factory.GetMessageClass(rpc.input_type)
        reply_class = message_factory.GetMessageClass(rpc.output_type)
        message = json_format.ParseDict(request, request_class())
        with self.channel(conn) as channel:
            if not rpc.server_streaming:
                call = channel.unary_unary(
                    GRPC_PREFIX + operation,
                    request_serializer=request_class.SerializeToString,
                    response_deserializer=reply_class.FromString,
                )
                try:
                    reply = call(message, timeout=TIMEOUT, metadata=GRPC_METADATA)
                except grpc.RpcError as error:
                    return grpc_error(error)
                return {"grpc": "OK", "reply": json_format.MessageToDict(reply)}
            stream = channel.unary_stream(
                GRPC_PREFIX + operation,
                request_serializer=request_class.SerializeToString,
                response_deserializer=reply_class.FromString,
            )
            messages: list[Any] = []
            meanwhile = _Meanwhile(after_first)
            outcome: Outcome = {"grpc": "OK", "messages": messages}
            try:
                for reply in stream(message, timeout=TIMEOUT, metadata=GRPC_METADATA):
                    messages.append(json_format.MessageToDict(reply))
                    meanwhile.first_event(messages[-1])
            except grpc.RpcError as error:
                outcome = {**grpc_error(error), "messages": messages}
            return meanwhile.joined(outcome)

    def raw_grpc(self, rpc: str, conn: str) -> Outcome:
        """A call of an rpc the service does not have, with an empty message."""
        with self.channel(conn) as channel:
            call = channel.unary_unary(GRPC_PREFIX + rpc)
            try:
                reply = call(b"", timeout=TIMEOUT, metadata=GRPC_METADATA)
            except grpc.RpcError as error:
                return grpc_error(error)
            return {"grpc": "OK", "raw": reply.hex()}


def grpc_error(error: Any) -> Outcome:
    """Status code, message and the decoded `grpc-status-details-bin` (spec §10.6)."""
    outcome: Outcome = {"grpc": error.code().name, "message": error.details()}
    details = dict(error.trailing_metadata() or ()).get("grpc-status-details-bin")
    if isinstance(details, bytes):
        decoded: list[Any] = []
        for detail in status_pb2.Status.FromString(details).details:
            info = error_details_pb2.ErrorInfo()
            if detail.Unpack(info):
                decoded.append(json_format.MessageToDict(info))
            else:
                decoded.append({"@type": detail.type_url})
        outcome["details"] = decoded
    return outcome


class _Meanwhile:
    """Runs `after_first` on its own thread once a stream's first event arrived."""

    def __init__(self, after_first: AfterFirst | None) -> None:
        self.after_first = after_first
        self.result: Outcome | None = None
        self.thread: threading.Thread | None = None

    def first_event(self, document: Any) -> None:
        if self.after_first is None or self.thread is not None:
            return
        after_first = self.after_first

        def run() -> None:
            self.result = after_first(document)

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def joined(self, outcome: Outcome) -> Outcome:
        if self.thread is not None:
            self.thread.join(TIMEOUT * 2)
            outcome["meanwhile"] = self.result if self.result is not None else {"failed": "hung"}
        return outcome


def _http_exchange(
    client: httpx.Client,
    method: str,
    path: str,
    headers: dict[str, str],
    body: Any,
    query: dict[str, str] | None,
    after_first: AfterFirst | None,
) -> Outcome:
    content = None if body is None else json.dumps(body).encode()
    if content is not None:
        headers = {**headers, "Content-Type": "application/json"}
    request = client.build_request(method, path, params=query, content=content, headers=headers)
    response = client.send(request, stream=True)
    try:
        kind = response.headers.get("content-type", "")
        outcome: Outcome = {"http": response.status_code, "type": kind}
        if response.headers.get("location"):
            outcome["location"] = response.headers["location"]
        if "text/event-stream" in kind:
            meanwhile = _Meanwhile(after_first)
            events: list[Any] = []
            outcome["events"] = events
            for event in _sse(response.iter_lines()):
                events.append(event)
                meanwhile.first_event(event.get("data"))
            return meanwhile.joined(outcome)
        data = response.read()
        outcome["body"] = _body(data)
        return outcome
    finally:
        response.close()


def _body(data: bytes) -> Any:
    if not data:
        return None
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {"text": data.decode("utf-8", "replace")}


def _sse(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """The events of an SSE stream (comments such as `: ping` are no events)."""
    data: list[str] = []
    name: str | None = None
    for line in lines:
        if line.startswith(":"):
            continue
        if not line:
            if data:
                event: dict[str, Any] = {"data": _body("\n".join(data).encode())}
                if name:
                    event["event"] = name
                yield event
            data, name = [], None
            continue
        key, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if key == "data":
            data.append(value)
        elif key == "event":
            name = value
    if data:
        yield {"data": _body("\n".join(data).encode()), "cut": True}


def _echoed(outcome: Outcome, sent_id: int | str) -> Outcome:
    """The JSON-RPC `id` echoed in the answer (and each stream event) is `<echo>` when it is
    the one sent; any other value stays, so that a wrong echo shows."""

    def fix(document: Any) -> Any:
        if isinstance(document, dict) and "id" in document and "jsonrpc" in document:
            return {**document, "id": "<echo>" if document["id"] == sent_id else document["id"]}
        return document

    if "body" in outcome:
        outcome["body"] = fix(outcome["body"])
    for event in outcome.get("events", ()):
        event["data"] = fix(event["data"])
    return outcome
