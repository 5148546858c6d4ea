"""Capture factories for the diff tests: realistic A2A sessions built in code.

`session(seed, ...)` builds one run of a small scenario (card fetch, SendMessage, GetTask polls,
push-config create and delete, a stream).  Two seeds give the same scenario with different ids,
timestamps and ports, which is what two real recordings of one scenario look like.  The tests at
the bottom check the factory itself, so that the diff tests stand on known ground.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from recorder.capture import Capture, Exchange, GrpcMessage, Request, Response, SseEvent
from recorder.protocol import AGENT_CARD, Binding, Classification, Version

JSON_HEADERS = (("Content-Type", "application/json"),)


def ident(seed: str, name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{seed}/{name}"))


def body(value: Any) -> bytes:
    return json.dumps(value, indent=2).encode()


def classification(
    op: str,
    binding: Binding = Binding.JSONRPC,
    version: str = "1.0",
    method: str | None = None,
    **ids: str,
) -> Classification:
    return Classification(
        binding=binding, operation=op, method=method or op, version=Version(version), **ids
    )


def exchange(
    number: int, c: Classification, request: Request, response: Response | None, started_us: int = 0
) -> Exchange:
    return Exchange(number, c, request, response, started_us=started_us, duration_us=1_000)


def server_headers(seed: str, length: int, content_type: str = "application/json") -> tuple:
    return (
        ("Date", f"Mon, 0{len(seed) % 9 + 1} Jan 2026 10:00:00 GMT"),
        ("Server", "uvicorn"),
        ("Content-Type", content_type),
        ("Content-Length", str(length)),
    )


def request_headers(seed: str, port: int, version: str = "1.0") -> tuple:
    headers = [("Host", f"127.0.0.1:{port}"), ("User-Agent", f"python-httpx/{seed}")]
    headers.append(("Content-Type", "application/json"))
    if version == "1.0":
        headers.append(("A2A-Version", "1.0"))
    return tuple(headers)


# -- bodies in both versions (a2a-wire.md §7) ---------------------------------------------------


def task_v1(seed: str, state: str = "TASK_STATE_COMPLETED", stamp: str = "") -> dict[str, Any]:
    t, c, m = ident(seed, "task"), ident(seed, "ctx"), ident(seed, "msg")
    return {
        "id": t,
        "contextId": c,
        "status": {
            "state": state,
            "timestamp": stamp or f"2026-01-0{len(seed) % 9 + 1}T10:00:00.123Z",
        },
        "artifacts": [{"artifactId": ident(seed, "art"), "parts": [{"text": "echo hi"}]}],
        "history": [
            {
                "messageId": m,
                "role": "ROLE_USER",
                "parts": [{"text": "hi"}],
                "contextId": c,
                "taskId": t,
            }
        ],
    }


def task_v03(seed: str, state: str = "completed") -> dict[str, Any]:
    t, c, m = ident(seed, "task"), ident(seed, "ctx"), ident(seed, "msg")
    return {
        "kind": "task",
        "id": t,
        "contextId": c,
        "status": {"state": state, "timestamp": f"2026-01-0{len(seed) % 9 + 1}T10:00:00.123456Z"},
        "artifacts": [
            {"artifactId": ident(seed, "art"), "parts": [{"kind": "text", "text": "echo hi"}]}
        ],
        "history": [
            {
                "kind": "message",
                "messageId": m,
                "role": "user",
                "parts": [{"kind": "text", "text": "hi"}],
                "contextId": c,
                "taskId": t,
            }
        ],
    }


def card(port: int) -> dict[str, Any]:
    return {
        "name": "echo",
        "description": "echo",
        "version": "1.0.0",
        "supportedInterfaces": [
            {
                "url": f"http://127.0.0.1:{port}/a2a/jsonrpc",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            }
        ],
        "capabilities": {"streaming": True, "pushNotifications": True},
        "skills": [{"id": "e", "name": "e", "description": "e", "tags": ["e"]}],
    }


def card_exchange(n: int, seed: str, port: int) -> Exchange:
    data = body(card(port))
    c = Classification(
        binding=Binding.HTTP, operation=AGENT_CARD, method="GET /.well-known/agent-card.json"
    )
    return exchange(
        n,
        c,
        Request("GET", "/.well-known/agent-card.json", request_headers(seed, port)),
        Response(200, "OK", server_headers(seed, len(data)), data),
    )


def send_exchange(
    n: int, seed: str, port: int, version: str = "1.0", rpc_id: Any = None
) -> Exchange:
    rpc_id = rpc_id if rpc_id is not None else ident(seed, f"rpc{n}")
    if version == "1.0":
        message = {"messageId": ident(seed, "msg"), "role": "ROLE_USER", "parts": [{"text": "hi"}]}
        params = {"message": message, "configuration": {}}
        method, result = "SendMessage", {"task": task_v1(seed)}
    else:
        message = {
            "kind": "message",
            "messageId": ident(seed, "msg"),
            "role": "user",
            "parts": [{"kind": "text", "text": "hi"}],
        }
        params = {"message": message, "configuration": {"blocking": True}}
        method, result = "message/send", task_v03(seed)
    req = body({"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params})
    resp = body({"jsonrpc": "2.0", "id": rpc_id, "result": result})
    c = classification("SendMessage", version=version, method=method)
    return exchange(
        n,
        c,
        Request("POST", "/a2a/jsonrpc", request_headers(seed, port, version), req),
        Response(200, "OK", server_headers(seed, len(resp)), resp),
    )


def get_task_exchange(n: int, seed: str, port: int) -> Exchange:
    rpc_id = ident(seed, f"rpc{n}")
    t = ident(seed, "task")
    req = body({"jsonrpc": "2.0", "id": rpc_id, "method": "GetTask", "params": {"id": t}})
    resp = body({"jsonrpc": "2.0", "id": rpc_id, "result": task_v1(seed)})
    return exchange(
        n,
        classification("GetTask", task_id=t),
        Request("POST", "/a2a/jsonrpc", request_headers(seed, port), req),
        Response(200, "OK", server_headers(seed, len(resp)), resp),
    )


def push_create_exchange(n: int, seed: str, port: int, status: int = 200) -> Exchange:
    t, cfg = ident(seed, "task"), ident(seed, "cfg")
    config = {
        "taskId": t,
        "url": f"http://127.0.0.1:{port + 1}/webhook",
        "token": ident(seed, "tok"),
    }
    resp = body({"id": cfg, **config})
    return exchange(
        n,
        classification("CreateTaskPushNotificationConfig", Binding.HTTP_JSON, task_id=t),
        Request(
            "POST",
            f"/a2a/rest/tasks/{t}/pushNotificationConfigs",
            request_headers(seed, port),
            body(config),
        ),
        Response(
            status,
            "OK" if status == 200 else "Created",
            server_headers(seed, len(resp), "application/a2a+json"),
            resp,
        ),
    )


def push_delete_exchange(n: int, seed: str, port: int, status: int = 200) -> Exchange:
    t, cfg = ident(seed, "task"), ident(seed, "cfg")
    resp = b"{}" if status == 200 else b""
    return exchange(
        n,
        classification(
            "DeleteTaskPushNotificationConfig", Binding.HTTP_JSON, task_id=t, config_id=cfg
        ),
        Request(
            "DELETE",
            f"/a2a/rest/tasks/{t}/pushNotificationConfigs/{cfg}",
            request_headers(seed, port),
        ),
        Response(
            status,
            "OK" if status == 200 else "No Content",
            server_headers(seed, len(resp), "application/a2a+json"),
            resp,
        ),
    )


def stream_exchange(
    n: int,
    seed: str,
    port: int,
    newline: str = "\n",
    pings: int = 0,
    states: tuple[str, ...] = ("TASK_STATE_WORKING", "TASK_STATE_COMPLETED"),
) -> Exchange:
    rpc_id = ident(seed, f"rpc{n}")
    t, c = ident(seed, "task"), ident(seed, "ctx")
    message = {"messageId": ident(seed, "msg"), "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    req = body(
        {
            "jsonrpc": "2.0",
            "id": rpc_id,
            "method": "SendStreamingMessage",
            "params": {"message": message},
        }
    )
    results = [{"task": task_v1(seed, "TASK_STATE_SUBMITTED")}]
    results += [
        {"statusUpdate": {"taskId": t, "contextId": c, "status": {"state": s}}} for s in states
    ]
    events = [
        SseEvent(i * 1000, (f"data: {json.dumps({'jsonrpc': '2.0', 'id': rpc_id, 'result': r})}",))
        for i, r in enumerate(results)
    ]
    events += [SseEvent(90_000 + i, (": ping",)) for i in range(pings)]
    return exchange(
        n,
        classification("SendStreamingMessage", streaming=True),
        Request("POST", "/a2a/jsonrpc", request_headers(seed, port), req),
        Response(
            200,
            "OK",
            (("Content-Type", "text/event-stream"),),
            b"",
            events=tuple(events),
            newline=newline,
        ),
    )


def grpc_get_task_exchange(
    n: int, seed: str, service: str = "lf.a2a.v1", status: str = "0"
) -> Exchange:
    t = ident(seed, "task")
    rpc = "GetTask"
    state = "TASK_STATE_COMPLETED" if service == "lf.a2a.v1" else "TASK_STATE_CANCELLED"
    request_json = json.dumps({"id": t} if service == "lf.a2a.v1" else {"name": f"tasks/{t}"})
    response_json = json.dumps(
        {"id": t, "contextId": ident(seed, "ctx"), "status": {"state": state}}
    )
    return exchange(
        n,
        classification(
            rpc,
            Binding.GRPC,
            version="1.0" if service == "lf.a2a.v1" else "0.3",
            method=f"/{service}.A2AService/{rpc}",
        ),
        Request(
            "POST",
            f"/{service}.A2AService/{rpc}",
            ((":authority", f"127.0.0.1:{4000 + len(seed)}"), ("content-type", "application/grpc")),
            http_version="HTTP/2",
            messages=(GrpcMessage(0, json=request_json),),
        ),
        Response(
            200,
            "",
            (("content-type", "application/grpc"),),
            http_version="HTTP/2",
            messages=(GrpcMessage(10, json=response_json),),
            trailers=(("grpc-status", status), ("grpc-message", "")),
        ),
    )


def capture(*exchanges: Exchange, seed: str = "s") -> Capture:
    renumbered = tuple(
        Exchange(
            i,
            e.classification,
            e.request,
            e.response,
            e.started_us,
            e.duration_us,
            e.notes,
            e.error,
        )
        for i, e in enumerate(exchanges, 1)
    )
    return Capture(
        started=f"2026-01-01T10:00:0{len(seed) % 9}.000000Z",
        recorder_version="0.1.0",
        exchanges=renumbered,
    )


def session(seed: str, *, port: int = 8080, polls: int = 1, version: str = "1.0") -> Capture:
    """A card fetch, one SendMessage, `polls` GetTask polls, push-config create and delete."""
    exchanges = [card_exchange(1, seed, port), send_exchange(2, seed, port, version)]
    exchanges += [get_task_exchange(3 + i, seed, port) for i in range(polls)]
    exchanges += [push_create_exchange(0, seed, port), push_delete_exchange(0, seed, port)]
    return capture(*exchanges, seed=seed)


# -- the factory's own checks -------------------------------------------------------------------


def test_two_seeds_give_different_volatile_values() -> None:
    a, b = session("run-a", port=8080), session("run-b", port=9191)
    assert a.exchanges[1].request.body != b.exchanges[1].request.body
    assert ident("run-a", "task") != ident("run-b", "task")
    assert [e.classification.operation for e in a.exchanges] == [
        e.classification.operation for e in b.exchanges
    ]


def test_session_numbers_exchanges_from_one() -> None:
    c = session("x", polls=3)
    assert [e.number for e in c.exchanges] == list(range(1, len(c.exchanges) + 1))
    assert sum(e.classification.operation == "GetTask" for e in c.exchanges) == 3
