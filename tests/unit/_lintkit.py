"""Hand-made captures for the lint tests: one clean v1.0 session, and ways to break it.

`good_session()` is a session a spec-faithful agent and client could have recorded: a signed
card, sends over the three bindings, a stream, a subscription, one error per binding, a push
config and its delivery.  Under both spec versions it lints clean.  Every other case is that
session with one exchange changed, built with `recorder.capture` values and classified with
the recorder's own classifier, as a recording would be.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ed25519
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from recorder.capture import Capture, Exchange, GrpcMessage, Request, Response, SseEvent
from recorder.lint import Finding, lint_capture, spec_payload
from recorder.lint._jws import b64url
from recorder.protocol import Classification, classify, interfaces_from_card, parse_json
from recorder.protocol._grpc import encode_status_details

TASK = "9b1c2d3e-0000-4000-8000-000000000001"
CONTEXT = "9b1c2d3e-0000-4000-8000-000000000002"
WEBHOOK = "http://127.0.0.1:9901/webhook"
JSON_TYPE = ("Content-Type", "application/json")
A2A_TYPE = ("Content-Type", "application/a2a+json")
VERSION = ("A2A-Version", "1.0")
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"

# Ed25519 signs deterministically, so the rendered test captures are stable byte for byte.
_KEY = ed25519.Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
JWK = {
    "kty": "OKP", "crv": "Ed25519", "kid": "card-key", "alg": "EdDSA",
    "x": b64url(_KEY.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)),
}  # fmt: skip
KEYS = {"card-key": JWK}


def body(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def sign(
    card: dict[str, Any],
    header: dict[str, Any] | None = None,
    canonical: Callable[[dict[str, Any]], str] = spec_payload,
) -> dict[str, Any]:
    """The card with one EdDSA signature over its canonical form (the spec's, §8.4.1)."""
    protected = b64url(body(header or {"alg": "EdDSA", "typ": "JOSE", "kid": "card-key"}))
    payload = b64url(canonical(card).encode())
    signature = b64url(_KEY.sign(f"{protected}.{payload}".encode()))
    return {**card, "signatures": [{"protected": protected, "signature": signature}]}


def card(**changes: Any) -> dict[str, Any]:
    interfaces = [
        {"url": "http://127.0.0.1:9900/a2a/jsonrpc", "protocolBinding": "JSONRPC",
         "protocolVersion": "1.0"},
        {"url": "http://127.0.0.1:9900/a2a/rest", "protocolBinding": "HTTP+JSON",
         "protocolVersion": "1.0"},
        {"url": "127.0.0.1:9902", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
    ]  # fmt: skip
    found = {
        "name": "lint test agent", "description": "an agent that keeps the rules",
        "supportedInterfaces": interfaces, "version": "1.0.0",
        "capabilities": {"streaming": True, "pushNotifications": True},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "echo", "name": "echo", "description": "echo", "tags": ["t"]}],
    }  # fmt: skip
    found.update(changes)
    return found


def message(text: str = "hi", role: str = "ROLE_USER") -> dict[str, Any]:
    return {"messageId": "m-1", "role": role, "parts": [{"text": text}]}


def task(state: str = "TASK_STATE_COMPLETED") -> dict[str, Any]:
    return {"id": TASK, "contextId": CONTEXT, "status": {"state": state}}


def status_update(state: str) -> dict[str, Any]:
    return {"statusUpdate": {"taskId": TASK, "contextId": CONTEXT, "status": {"state": state}}}


def artifact_update() -> dict[str, Any]:
    artifact = {"artifactId": "a-1", "parts": [{"text": "out"}]}
    return {"artifactUpdate": {"taskId": TASK, "contextId": CONTEXT, "artifact": artifact}}


# ---- exchanges ----


def card_fetch(
    value: dict[str, Any] | None = None,
    *,
    headers: Sequence[tuple[str, str]] = (
        JSON_TYPE,
        ("ETag", 'W/"c1"'),
        ("Cache-Control", "public, max-age=300"),
    ),
    request_headers: Sequence[tuple[str, str]] = (VERSION,),
) -> Exchange:
    return _exchange(
        Request("GET", "/.well-known/agent-card.json", tuple(request_headers)),
        Response(200, "OK", tuple(headers), body(sign(card()) if value is None else value)),
    )


def jsonrpc(
    method: str,
    params: Any,
    *,
    result: Any = None,
    error: Any = None,
    events: Sequence[Any] | None = None,
    request_headers: Sequence[tuple[str, str]] = (JSON_TYPE, VERSION),
    response_type: str = "application/json",
    rpc_id: Any = "r-1",
) -> Exchange:
    request = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}
    if events is not None:
        lines = [
            ("data: " + json.dumps({"jsonrpc": "2.0", "id": rpc_id, "result": e}),) for e in events
        ]
        response = Response(
            200,
            "OK",
            (("Content-Type", "text/event-stream"),),
            events=tuple(SseEvent(i * 1000, ln) for i, ln in enumerate(lines)),
        )
    else:
        answer = {"jsonrpc": "2.0", "id": rpc_id}
        answer.update({"error": error} if error is not None else {"result": result})
        response = Response(200, "OK", (("Content-Type", response_type),), body(answer))
    return _exchange(
        Request("POST", "/a2a/jsonrpc", tuple(request_headers), body(request)), response
    )


def rest(
    verb: str,
    path: str,
    payload: Any = None,
    *,
    status: int = 200,
    answer: Any = None,
    events: Sequence[Any] | None = None,
    request_headers: Sequence[tuple[str, str]] | None = None,
    response_type: str = "application/a2a+json",
) -> Exchange:
    headers = (
        request_headers
        if request_headers is not None
        else ((A2A_TYPE, VERSION) if payload is not None else (VERSION,))
    )
    request = Request(
        verb, "/a2a/rest" + path, tuple(headers), body(payload) if payload is not None else b""
    )
    if events is not None:
        response = Response(
            200,
            "OK",
            (("Content-Type", "text/event-stream"),),
            events=tuple(
                SseEvent(i * 1000, ("data: " + json.dumps(e),)) for i, e in enumerate(events)
            ),
        )
    else:
        reason = "OK" if status < 400 else "Error"
        response = Response(status, reason, (("Content-Type", response_type),), body(answer))
    return _exchange(request, response)


def rest_error(status: int, name: str, reason: str | None, **kw: Any) -> dict[str, Any]:
    details = [{"@type": ERROR_INFO, "reason": reason, "domain": "a2a-protocol.org"}]
    return {
        "error": {
            "code": status,
            "status": name,
            "message": "failed",
            "details": details if reason else [],
        }
    } | kw


def grpc(
    rpc: str,
    request: dict[str, Any],
    answers: Sequence[dict[str, Any]] = (),
    *,
    status: int = 0,
    reason: str | None = None,
    message_text: str = "failed",
    domain: str = "a2a-protocol.org",
    metadata: Sequence[tuple[str, str]] = (("a2a-version", "1.0"),),
) -> Exchange:
    trailers: list[tuple[str, str]] = [("grpc-status", str(status))]
    if status:
        trailers.append(("grpc-message", message_text))
        details = [{"@type": ERROR_INFO, "reason": reason, "domain": domain}]
        status_doc = {"code": status, "message": message_text, "details": details if reason else []}
        trailers.append(("grpc-status-details-bin", encode_status_details(status_doc)))
    return _exchange(
        Request(
            "POST",
            f"/lf.a2a.v1.A2AService/{rpc}",
            (("content-type", "application/grpc"), *metadata),
            http_version="HTTP/2",
            messages=(GrpcMessage(0, json=json.dumps(request)),),
        ),
        Response(
            200,
            "",
            (("content-type", "application/grpc"),),
            http_version="HTTP/2",
            messages=tuple(GrpcMessage(i, json=json.dumps(a)) for i, a in enumerate(answers)),
            trailers=tuple(trailers),
        ),
    )


def delivery(
    payload: Any,
    *,
    headers: Sequence[tuple[str, str]] = (
        A2A_TYPE,
        ("Authorization", "Bearer s3cret"),
        ("Host", "127.0.0.1:9901"),
    ),
    path: str = "/webhook",
) -> Exchange:
    return _exchange(Request("POST", path, tuple(headers), body(payload)), Response(200, "OK"))


def _exchange(request: Request, response: Response | None) -> Exchange:
    return Exchange(0, Classification(), request, response)  # `assemble` classifies


PUSH_CONFIG = {
    "taskId": TASK,
    "id": "cfg-1",
    "url": WEBHOOK,
    "authentication": {"scheme": "Bearer", "credentials": "s3cret"},
}


def good_session() -> list[Exchange]:
    """A clean v1.0 session, exchange by exchange (numbered from 1 when assembled)."""
    send = {"message": message()}
    return [
        card_fetch(),
        jsonrpc("SendMessage", send, result={"task": task()}),
        rest("POST", "/message:send", send, answer={"task": task()}),
        grpc("SendMessage", send, [{"task": task()}]),
        jsonrpc(
            "SendStreamingMessage",
            send,
            events=[
                {"task": task("TASK_STATE_SUBMITTED")},
                status_update("TASK_STATE_WORKING"),
                artifact_update(),
                status_update("TASK_STATE_COMPLETED"),
            ],
        ),
        rest(
            "POST",
            f"/tasks/{TASK}:subscribe",
            {"id": TASK},
            events=[{"task": task("TASK_STATE_WORKING")}, status_update("TASK_STATE_CANCELED")],
        ),
        jsonrpc(
            "GetTask",
            {"id": "nope"},
            error={
                "code": -32001,
                "message": "Task not found",
                "data": [
                    {"@type": ERROR_INFO, "reason": "TASK_NOT_FOUND", "domain": "a2a-protocol.org"}
                ],
            },
        ),
        rest(
            "GET", "/tasks/nope", status=404, answer=rest_error(404, "NOT_FOUND", "TASK_NOT_FOUND")
        ),
        grpc("GetTask", {"id": "nope"}, status=5, reason="TASK_NOT_FOUND"),
        jsonrpc("CreateTaskPushNotificationConfig", PUSH_CONFIG, result=PUSH_CONFIG),
        delivery(status_update("TASK_STATE_COMPLETED")),
        jsonrpc(
            "ListTasks",
            {"contextId": CONTEXT, "status": "TASK_STATE_COMPLETED"},
            result={"tasks": [task()], "nextPageToken": "", "pageSize": 50, "totalSize": 1},
        ),
    ]


def assemble(exchanges: Sequence[Exchange]) -> Capture:
    """Number, time and classify exchanges as the recorder would, the card teaching URLs."""
    interfaces: tuple[Any, ...] = ()
    done = []
    for number, exchange in enumerate(exchanges, 1):
        found = classify(
            exchange.request,
            exchange.response,
            interfaces=interfaces,
            webhook_paths=("/webhook", "/hook2"),
        )
        started = exchange.started_us or number * 1000
        done.append(
            replace(
                exchange,
                number=number,
                classification=found,
                started_us=started,
                duration_us=exchange.duration_us or 500,
            )
        )
        if found.operation == "AgentCard" and exchange.response is not None:
            interfaces = interfaces_from_card(parse_json(exchange.response.body))
    return Capture("2026-12-01T00:00:00.000000Z", "0.1.0", tuple(done))


def lint(exchanges: Sequence[Exchange], spec: str = "1.0.1", **kw: Any) -> list[Finding]:
    kw.setdefault("keys", KEYS)
    return lint_capture(assemble(exchanges), spec=spec, **kw)


def changed(index: int, change: Callable[[Exchange], Exchange]) -> list[Exchange]:
    """The good session with exchange `index` (0-based) changed."""
    session = good_session()
    session[index] = change(session[index])
    return session
