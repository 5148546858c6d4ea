"""Each lint rule against a hand-made capture that breaks it and one that keeps it.

Every case is the clean session of `_lintkit.good_session()` with one exchange replaced or
added.  A breaking case must fire its rule and no rule it does not name in `also`; a keeping
case must fire nothing at all.  `test_every_rule_has_cases` makes sure no rule goes untested.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import pytest
from _lintkit import (
    A2A_TYPE,
    CONTEXT,
    ERROR_INFO,
    JSON_TYPE,
    PUSH_CONFIG,
    TASK,
    VERSION,
    artifact_update,
    body,
    card,
    card_fetch,
    changed,
    delivery,
    good_session,
    grpc,
    jsonrpc,
    lint,
    message,
    rest,
    rest_error,
    sign,
    status_update,
    task,
)

from recorder.capture import Exchange, Response, SseEvent
from recorder.lint import RULE_IDS, sdk_payload
from recorder.protocol import Severity

SEND = {"message": message()}


@dataclass(frozen=True)
class Case:
    rule: str
    name: str
    build: Callable[[], Sequence[Exchange]]
    fires: bool = True
    spec: str = "1.0.1"
    expect: str = ""  # text the finding's message, expected or actual must contain
    also: frozenset[str] = frozenset()
    severity: Severity | None = None


def at(index: int, exchange: Exchange) -> Callable[[], list[Exchange]]:
    return lambda: changed(index, lambda _: exchange)


def plus(*exchanges: Exchange) -> Callable[[], list[Exchange]]:
    return lambda: [*good_session(), *exchanges]


def card_at(value: dict[str, object], **kw: object) -> Callable[[], list[Exchange]]:
    return at(0, card_fetch(value, **kw))  # type: ignore[arg-type]


def _events(exchange: Exchange, *lines: tuple[str, ...]) -> Exchange:
    assert exchange.response is not None
    events = tuple(SseEvent(i, ln) for i, ln in enumerate(lines))
    return replace(exchange, response=replace(exchange.response, events=events))


def _stream(*events: dict[str, object], name: str = "SendStreamingMessage") -> Exchange:
    return jsonrpc(name, SEND if name != "SubscribeToTask" else {"id": TASK}, events=events)


def _cancelled(exchange: Exchange) -> Exchange:
    """A gRPC call as the recorder writes one whose stream was reset (code 8: CANCEL)."""
    assert exchange.response is not None
    return replace(
        exchange,
        response=replace(exchange.response, trailers=()),
        notes=("stream reset (code 8)",),
        error="HTTP/2 stream reset, error code 8",
    )


def _tampered() -> dict[str, object]:
    signed = sign(card())
    return {**signed, "description": "changed after signing"}


def _sdk_signed() -> dict[str, object]:
    """A card signed the way both 1.3.0 SDKs sign (empty values dropped), with an empty list."""
    return sign(card(defaultOutputModes=[]), canonical=sdk_payload)


def _grpc_error(status: int, reason: str, domain: str = "a2a-protocol.org") -> Exchange:
    return grpc("GetTask", {"id": "nope"}, status=status, reason=reason, domain=domain)


def _late_config(authorization: str | None) -> Callable[[], list[Exchange]]:
    """A blocking send with an inline push config completes after the delivery it caused."""
    config = {
        "url": "http://127.0.0.1:9901/hook2",
        "authentication": {"scheme": "Bearer", "credentials": "inline"},
    }
    send = jsonrpc(
        "SendMessage",
        {"message": message(), "configuration": {"taskPushNotificationConfig": config}},
        result={"task": task()},
    )
    send = replace(send, started_us=12_000, duration_us=5_000)  # ends after the delivery
    headers = [A2A_TYPE, ("Host", "127.0.0.1:9901")]
    headers += [("Authorization", authorization)] if authorization else []
    hook = delivery(status_update("TASK_STATE_COMPLETED"), headers=headers, path="/hook2")
    return lambda: [*good_session(), hook, send]  # listed in completion order


def _query_version() -> list[Exchange]:
    return changed(
        7,
        lambda _: rest(
            "GET",
            "/tasks/nope?A2A-Version=1.0",
            status=404,
            request_headers=(),
            answer=rest_error(404, "NOT_FOUND", "TASK_NOT_FOUND"),
        ),
    )


_ERR = {"code": -32001, "message": "Task not found"}
_INFO = {"@type": ERROR_INFO, "reason": "TASK_NOT_FOUND", "domain": "a2a-protocol.org"}
_TENANT_CARD = card(
    supportedInterfaces=[
        {
            "url": "http://127.0.0.1:9900/a2a/jsonrpc",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
            "tenant": "acme",
        },
        {
            "url": "http://127.0.0.1:9900/a2a/rest",
            "protocolBinding": "HTTP+JSON",
            "protocolVersion": "1.0",
        },
        {"url": "127.0.0.1:9902", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
    ]
)
_V03_CARD = card(
    supportedInterfaces=[
        *card()["supportedInterfaces"],  # type: ignore[misc]
        {
            "url": "http://127.0.0.1:9900/a2a/jsonrpc",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "0.3",
        },
    ]
)
_V03_TASK = {"kind": "task", "id": TASK, "contextId": CONTEXT, "status": {"state": "completed"}}


def _tenant_session(tenant: str | None) -> list[Exchange]:
    params = {**SEND, "tenant": tenant} if tenant else SEND
    return [card_fetch(sign(_TENANT_CARD)), jsonrpc("SendMessage", params, result={"task": task()})]


def _v03(
    params: dict[str, object],
    result: dict[str, object],
    headers: Sequence[tuple[str, str]] = (JSON_TYPE,),
) -> Callable[[], list[Exchange]]:
    """A v0.3 JSON-RPC send to an agent whose card declares JSON-RPC 0.3 too."""
    return lambda: [
        card_fetch(sign(_V03_CARD)),
        jsonrpc("message/send", params, result=result, request_headers=headers),
    ]


CASES: tuple[Case, ...] = (
    # ---- content types ----
    Case("content-type.request", "REST body sent as application/json",
         at(2, rest("POST", "/message:send", SEND, request_headers=(JSON_TYPE, VERSION),
                    answer={"task": task()})), expect="application/a2a+json"),
    Case("content-type.request", "v1.0.0 takes application/json over HTTP+JSON",
         at(2, rest("POST", "/message:send", SEND, request_headers=(JSON_TYPE, VERSION),
                    answer={"task": task()})), fires=False, spec="1.0.0"),
    Case("content-type.request", "JSON-RPC body sent as application/a2a+json",
         at(1, jsonrpc("SendMessage", SEND, result={"task": task()},
                       request_headers=(A2A_TYPE, VERSION))), spec="1.0.0"),
    Case("content-type.request", "push delivery sent as application/json",
         at(10, delivery(status_update("TASK_STATE_COMPLETED"), headers=(
             JSON_TYPE, ("Authorization", "Bearer s3cret"), ("Host", "127.0.0.1:9901"))))),
    Case("content-type.response", "REST error sent as application/json (the reference SDK)",
         at(7, rest("GET", "/tasks/nope", status=404, response_type="application/json",
                    answer=rest_error(404, "NOT_FOUND", "TASK_NOT_FOUND"))),
         expect="error body"),
    Case("content-type.response", "a stream typed application/json",
         at(4, _events(replace(_stream({"task": task()}), response=Response(
             200, "OK", (("Content-Type", "application/json"),))),
             ("data: " + json.dumps({"jsonrpc": "2.0", "id": "r-1", "result": {
                 "task": task()}}),))), expect="text/event-stream"),
    Case("content-type.response", "charset parameters are fine",
         at(2, rest("POST", "/message:send", SEND, answer={"task": task()},
                    response_type="application/a2a+json; charset=utf-8")), fires=False),
    # ---- versions ----
    Case("version.header", "JSON-RPC request without A2A-Version",
         at(1, jsonrpc("SendMessage", SEND, result={"task": task()},
                       request_headers=(JSON_TYPE,))), also=frozenset({"version.unsupported"})),
    Case("version.header", "gRPC call without a2a-version metadata",
         at(3, grpc("SendMessage", SEND, [{"task": task()}], metadata=())),
         expect="metadata", also=frozenset({"version.unsupported"})),
    Case("version.header", "the version as a query parameter (§3.6.1)", _query_version,
         fires=False),
    Case("version.format", "A2A-Version with a patch number",
         at(1, jsonrpc("SendMessage", SEND, result={"task": task()},
                       request_headers=(JSON_TYPE, ("A2A-Version", "1.0.0")))),
         expect="Major.Minor"),
    Case("version.format", "on the card fetch too",
         card_at(sign(card()), request_headers=(("A2A-Version", "v1"),)),
         also=frozenset({"card.cache-control", "card.etag", "card.signature-typ"})),
    Case("version.names", "A2A-Version 1.0 on a v0.3 method",
         _v03({"message": {**message(), "role": "user", "kind": "message"}}, _V03_TASK,
              headers=(JSON_TYPE, VERSION)), expect="message/send"),
    Case("version.names", "A2A-Version 0.3 on a v0.3 method",
         _v03({"message": {**message(), "role": "user", "kind": "message"}}, _V03_TASK,
              headers=(JSON_TYPE, ("A2A-Version", "0.3"))), fires=False),
    Case("version.unsupported", "version 2.0 answered with a success",
         at(1, jsonrpc("SendMessage", SEND, result={"task": task()},
                       request_headers=(JSON_TYPE, ("A2A-Version", "2.0")))),
         expect="VersionNotSupportedError"),
    Case("version.unsupported", "version 2.0 answered with VersionNotSupportedError",
         at(1, jsonrpc("SendMessage", SEND, request_headers=(JSON_TYPE, ("A2A-Version", "2.0")),
                       error={"code": -32009, "message": "no", "data": [
                           {"@type": ERROR_INFO, "reason": "VERSION_NOT_SUPPORTED",
                            "domain": "a2a-protocol.org"}]})), fires=False),
    Case("version.unsupported", "a declared version refused",
         at(8, _grpc_error(9, "VERSION_NOT_SUPPORTED")), expect="refused"),
    # ---- the card declares what is served ----
    Case("card.declares-binding", "gRPC served, no GRPC interface in the card",
         card_at(sign(card(supportedInterfaces=card()["supportedInterfaces"][:2]))),  # type: ignore[index]
         expect="GRPC"),
    # ---- JSON-RPC ----
    Case("jsonrpc.request", "a request without an id",
         at(1, jsonrpc("SendMessage", SEND, result={"task": task()}, rpc_id=None)),
         also=frozenset({"jsonrpc.response"})),
    Case("jsonrpc.response", "the response answers another id",
         at(1, replace(jsonrpc("SendMessage", SEND, result={"task": task()}),
                       response=Response(200, "OK", (JSON_TYPE,), body(
                           {"jsonrpc": "2.0", "id": "other", "result": {"task": task()}})))),
         expect="'other'"),
    Case("jsonrpc.response", "a stream event without its envelope",
         at(4, _events(_stream(), ("data: " + json.dumps({"task": task()}),))),
         also=frozenset({"stream.first-event", "stream.early-close"})),
    # ---- errors ----
    Case("error.jsonrpc", "error.data is an object, not an array",
         at(6, jsonrpc("GetTask", {"id": "nope"}, error={**_ERR, "data": _INFO})),
         also=frozenset({"error.jsonrpc-errorinfo"})),
    Case("error.jsonrpc", "a data item without @type",
         at(6, jsonrpc("GetTask", {"id": "nope"},
                       error={**_ERR, "data": [_INFO, {"reason": "x"}]})), expect="@type"),
    Case("error.http-json", "error.code is not the HTTP status",
         at(7, rest("GET", "/tasks/nope", status=404,
                    answer=rest_error(404, "NOT_FOUND", "TASK_NOT_FOUND") | {"error": {
                        "code": 400, "status": "NOT_FOUND", "message": "x",
                        "details": [_INFO]}})), expect="404"),
    Case("error.http-json", "an error that is not a google.rpc.Status",
         at(7, rest("GET", "/tasks/nope", status=404, answer={"detail": "Not Found"})),
         expect="google.rpc.Status"),
    Case("error.grpc", "no grpc-message",
         at(8, grpc("GetTask", {"id": "nope"}, status=5, reason="TASK_NOT_FOUND",
                    message_text="")), expect="grpc-message"),
    Case("error.errorinfo", "an ErrorInfo from another domain (gRPC)",
         at(8, _grpc_error(5, "TASK_NOT_FOUND", domain="example.com")), expect="domain"),
    Case("error.errorinfo", "HTTP 409 with no ErrorInfo (v1.0.0)",
         at(7, rest("POST", f"/tasks/{TASK}:cancel", {"id": TASK}, status=409,
                    answer=rest_error(409, "FAILED_PRECONDITION", None))), spec="1.0.0",
         expect="ErrorInfo"),
    Case("error.jsonrpc-errorinfo", "no ErrorInfo: SHOULD in v1.0.1",
         at(6, jsonrpc("GetTask", {"id": "nope"}, error=_ERR)), severity=Severity.SHOULD),
    Case("error.jsonrpc-errorinfo", "no ErrorInfo: MUST in v1.0.0",
         at(6, jsonrpc("GetTask", {"id": "nope"}, error=_ERR)), spec="1.0.0",
         severity=Severity.MUST),
    Case("error.jsonrpc-errorinfo", "a reason another code names",
         at(6, jsonrpc("GetTask", {"id": "nope"}, error={**_ERR, "data": [
             {**_INFO, "reason": "TASK_NOT_CANCELABLE"}]})), expect="TaskNotCancelableError"),
    Case("error.mapping", "TaskNotCancelable as HTTP 400 under v1.0.0 (409 there)",
         plus(rest("POST", f"/tasks/{TASK}:cancel", {"id": TASK}, status=400,
                   answer=rest_error(400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"))),
         spec="1.0.0", expect="HTTP 409"),
    Case("error.mapping", "TaskNotCancelable as HTTP 400 under v1.0.1",
         plus(rest("POST", f"/tasks/{TASK}:cancel", {"id": TASK}, status=400,
                   answer=rest_error(400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"))),
         fires=False),
    Case("error.mapping", "TaskNotCancelable as HTTP 409 under v1.0.1",
         plus(rest("POST", f"/tasks/{TASK}:cancel", {"id": TASK}, status=409,
                   answer=rest_error(409, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"))),
         expect="HTTP 400"),
    Case("error.mapping", "UnsupportedOperation as FAILED_PRECONDITION under v1.0.0",
         plus(_grpc_error(9, "UNSUPPORTED_OPERATION")), spec="1.0.0", expect="UNIMPLEMENTED"),
    # ---- names ----
    Case("names.enums", "a v0.3 task state in a v1.0 answer",
         at(1, jsonrpc("SendMessage", SEND, result={"task": task("completed")})),
         expect="TASK_STATE_COMPLETED", also=frozenset({"stream.first-event"})),
    Case("names.enums", "a v0.3 role in a v1.0 request",
         at(2, rest("POST", "/message:send", {"message": message(role="user")},
                    answer={"task": task()})), expect="ROLE_USER"),
    Case("names.enums", "a number for an enum",
         at(3, grpc("SendMessage", SEND, [{"task": task()} | {"task": {
             **task(), "status": {"state": 3}}}])), expect="a number"),
    Case("names.enums", "a v0.3 state in a REST query",
         plus(rest("GET", "/tasks?status=working",
                   answer={"tasks": [], "nextPageToken": "", "pageSize": 0, "totalSize": 0})),
         expect="TASK_STATE_WORKING"),
    Case("names.enums", "a v1.0 state in a v0.3 JSON-RPC answer",
         _v03({"message": {**message(), "role": "user", "kind": "message"}},
              {**_V03_TASK, "status": {"state": "TASK_STATE_COMPLETED"}}),
         expect="completed"),
    Case("names.enums", "v0.3 forms in a v0.3 JSON-RPC exchange",
         _v03({"message": {**message(), "role": "user", "kind": "message"}}, _V03_TASK),
         fires=False),
    Case("names.camel-case", "a snake_case field",
         at(2, rest("POST", "/message:send", {"message": {
             "message_id": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
                    answer={"task": task()})), expect="messageId"),
    Case("names.camel-case", "a snake_case query parameter",
         plus(rest("GET", f"/tasks/{TASK}?history_length=2", answer=task())),
         expect="historyLength"),
    Case("names.legacy", "kind in a v1.0 task",
         at(1, jsonrpc("SendMessage", SEND, result={"task": {**task(), "kind": "task"}})),
         expect="kind"),
    Case("names.legacy", "v0.3 card fields for a client that asked for 1.0",
         card_at(sign(card(url="http://127.0.0.1:9900/a2a/jsonrpc",
                           preferredTransport="JSONRPC"))), expect="preferredTransport"),
    Case("names.legacy", "v0.3 card fields for a client that named no version",
         card_at(sign(card(url="http://127.0.0.1:9900/a2a/jsonrpc")), request_headers=()),
         fires=False),
    # ---- fields ----
    Case("fields.required", "a task without its id",
         at(2, rest("POST", "/message:send", SEND, answer={"task": {
             "contextId": CONTEXT, "status": {"state": "TASK_STATE_COMPLETED"}}})),
         expect="Task has no id"),
    Case("fields.required", "a message with no parts",
         at(1, jsonrpc("SendMessage", {"message": {**message(), "parts": []}},
                       result={"task": task()})), expect="empty"),
    Case("fields.required", "a status update without contextId (gRPC)",
         plus(grpc("SubscribeToTask", {"id": TASK}, [
             {"task": task("TASK_STATE_WORKING")},
             {"statusUpdate": {"taskId": TASK, "status": {"state": "TASK_STATE_CANCELED"}}}])),
         expect="gRPC"),
    Case("fields.required", "a card without skills",
         card_at(sign({k: v for k, v in card().items() if k != "skills"})), expect="skills"),
    Case("fields.oneof", "a StreamResponse with two members",
         at(4, _stream({"task": task("TASK_STATE_SUBMITTED"), "message": message()},
                       status_update("TASK_STATE_COMPLETED"))), expect="task, message"),
    Case("fields.oneof", "an empty SendMessageResponse",
         at(2, rest("POST", "/message:send", SEND, answer={})), expect="none"),
    Case("fields.oneof", "a part with text and url",
         at(1, jsonrpc("SendMessage", {"message": {**message(), "parts": [
             {"text": "a", "url": "http://x"}]}}, result={"task": task()}))),
    # ---- streams ----
    Case("stream.first-event", "a stream that begins with a status update",
         at(4, _stream(status_update("TASK_STATE_WORKING"),
                       status_update("TASK_STATE_COMPLETED"))), expect="statusUpdate"),
    Case("stream.first-event", "a subscription that begins with a message",
         plus(rest("POST", f"/tasks/{TASK}:subscribe", {"id": TASK}, events=[
             {"message": message(role="ROLE_AGENT")}])), expect="task"),
    Case("stream.message-only", "a message stream that goes on",
         at(4, _stream({"message": message(role="ROLE_AGENT")},
                       status_update("TASK_STATE_COMPLETED"))), expect="2 events"),
    Case("stream.after-terminal", "an artifact after completion",
         at(4, _stream({"task": task("TASK_STATE_SUBMITTED")},
                       status_update("TASK_STATE_COMPLETED"), artifact_update())),
         expect="artifactUpdate"),
    Case("stream.after-terminal", "one final task snapshot (§11.7 MAY)",
         at(4, _stream({"task": task("TASK_STATE_SUBMITTED")},
                       status_update("TASK_STATE_COMPLETED"), {"task": task()})), fires=False),
    Case("stream.early-close", "a stream that closes while working",
         at(4, _stream({"task": task("TASK_STATE_SUBMITTED")},
                       status_update("TASK_STATE_WORKING"))), expect="TASK_STATE_WORKING"),
    Case("stream.early-close", "a stream that closes at input-required",
         at(4, _stream({"task": task("TASK_STATE_SUBMITTED")},
                       status_update("TASK_STATE_INPUT_REQUIRED"))), fires=False),
    Case("stream.early-close", "a stream the recorder saw cut short",
         at(4, replace(_stream({"task": task("TASK_STATE_SUBMITTED")}),
                       notes=("stream truncated",))), fires=False),
    Case("stream.early-close", "a stream in flight when the recorder shut down",
         at(4, replace(_stream({"task": task("TASK_STATE_SUBMITTED")},
                               status_update("TASK_STATE_WORKING")),
                       notes=("cut by recorder shutdown",),
                       error="cut: the recorder shut down before the exchange ended")),
         fires=False),
    Case("stream.early-close", "a gRPC stream the client cancelled (RST_STREAM CANCEL)",
         plus(_cancelled(grpc("SendStreamingMessage", SEND, [
             {"task": task("TASK_STATE_SUBMITTED")},
             status_update("TASK_STATE_WORKING")]))), fires=False),
    Case("stream.early-close", "a gRPC stream that closes while working",
         plus(grpc("SendStreamingMessage", SEND, [
             {"task": task("TASK_STATE_SUBMITTED")},
             status_update("TASK_STATE_WORKING")])),
         expect="TASK_STATE_WORKING"),
    # ---- the card ----
    Case("card.interface-url", "a relative interface URL",
         card_at(sign(card(supportedInterfaces=[
             {"url": "/a2a/jsonrpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
             *card()["supportedInterfaces"][1:]]))),  # type: ignore[index]
         expect="/a2a/jsonrpc"),
    Case("card.interface-url", "gRPC as an absolute URL of another scheme",
         card_at(sign(card(supportedInterfaces=[
             *card()["supportedInterfaces"][:2],  # type: ignore[index]
             {"url": "grpcs://grpc.example.com:443", "protocolBinding": "GRPC",
              "protocolVersion": "1.0"}]))), fires=False),
    Case("card.binding-name", "a custom binding that is no URI",
         card_at(sign(card(supportedInterfaces=[
             *card()["supportedInterfaces"],  # type: ignore[misc]
             {"url": "wss://x.example/ws", "protocolBinding": "WEBSOCKET",
              "protocolVersion": "1.0"}]))), expect="WEBSOCKET"),
    Case("card.binding-name", "v1.0.0 has no such rule",
         card_at(sign(card(supportedInterfaces=[
             *card()["supportedInterfaces"],  # type: ignore[misc]
             {"url": "wss://x.example/ws", "protocolBinding": "WEBSOCKET",
              "protocolVersion": "1.0"}]))), fires=False, spec="1.0.0"),
    Case("card.binding-name", "a custom binding named by a URI",
         card_at(sign(card(supportedInterfaces=[
             *card()["supportedInterfaces"],  # type: ignore[misc]
             {"url": "wss://x.example/ws", "protocolBinding": "https://x.example/ws/v1",
              "protocolVersion": "1.0"}]))), fires=False),
    Case("card.protocol-version", "a patch number in protocolVersion",
         card_at(sign(card(supportedInterfaces=[
             {**card()["supportedInterfaces"][0], "protocolVersion": "1.0.0"},  # type: ignore[index]
             *card()["supportedInterfaces"][1:]]))), expect="1.0.0"),  # type: ignore[index]
    Case("card.cache-control", "no Cache-Control",
         card_at(sign(card()), headers=(JSON_TYPE, ("ETag", 'W/"1"')))),
    Case("card.cache-control", "Cache-Control without max-age",
         card_at(sign(card()), headers=(JSON_TYPE, ("ETag", 'W/"1"'),
                                        ("Cache-Control", "no-cache"))), expect="no-cache"),
    Case("card.etag", "no ETag",
         card_at(sign(card()), headers=(JSON_TYPE, ("Cache-Control", "max-age=60")))),
    Case("card.signature-header", "a protected header without kid",
         card_at(sign(card(), {"alg": "EdDSA", "typ": "JOSE"})), expect="kid"),
    Case("card.signature-typ", "a protected header without typ",
         card_at(sign(card(), {"alg": "EdDSA", "kid": "card-key"})), expect="typ"),
    Case("card.signature-verifies", "a card the recorder rewrote is judged as the agent sent it",
         at(0, replace(card_fetch(), notes=("card rewritten",))), fires=False),
    Case("card.signature-verifies", "a card changed after signing",
         card_at(_tampered()), expect="does not verify"),
    Case("card.signature-verifies", "a card signed as the SDKs sign (empty values dropped)",
         card_at(_sdk_signed()), expect="both 1.3.0 SDKs",
         also=frozenset({"fields.required"})),
    # ---- push deliveries ----
    Case("push.authentication", "a delivery without Authorization",
         at(10, delivery(status_update("TASK_STATE_COMPLETED"), headers=(
             A2A_TYPE, ("X-A2A-Notification-Token", "t"), ("Host", "127.0.0.1:9901")))),
         expect="X-A2A-Notification-Token sent"),
    Case("push.authentication", "a delivery with other credentials",
         at(10, delivery(status_update("TASK_STATE_COMPLETED"), headers=(
             A2A_TYPE, ("Authorization", "Bearer other"), ("Host", "127.0.0.1:9901")))),
         expect="Bearer s3cret"),
    Case("push.authentication", "a config that asks for no authentication",
         lambda: [*changed(9, lambda _: jsonrpc(
             "CreateTaskPushNotificationConfig",
             {k: v for k, v in PUSH_CONFIG.items() if k != "authentication"},
             result=PUSH_CONFIG))[:10],
                  delivery(status_update("TASK_STATE_COMPLETED"), headers=(
                      A2A_TYPE, ("Host", "127.0.0.1:9901")))], fires=False),
    Case("push.authentication", "an inline config whose send completes after its delivery",
         _late_config(None)),
    Case("push.authentication", "the same, authenticated",
         _late_config("Bearer inline"), fires=False),
    # ---- tenants ----
    Case("tenant.interface", "no tenant where the interface sets one",
         lambda: _tenant_session(None), expect="'acme'"),
    Case("tenant.interface", "the interface's tenant", lambda: _tenant_session("acme"),
         fires=False),
    Case("tenant.interface", "a tenant the interface does not declare",
         at(1, jsonrpc("SendMessage", {**SEND, "tenant": "t-1"}, result={"task": task()})),
         expect="declares none"),
    Case("tenant.interface", "v1.0.0 states no tenant rule",
         at(1, jsonrpc("SendMessage", {**SEND, "tenant": "t-1"}, result={"task": task()})),
         fires=False, spec="1.0.0"),
    # ---- the guide ----
    Case("guide.subscribe-verb", "a client that subscribes with GET",
         at(5, rest("GET", f"/tasks/{TASK}:subscribe", events=[
             {"task": task("TASK_STATE_WORKING")}, status_update("TASK_STATE_CANCELED")])),
         expect="POST"),
    Case("guide.subscribe-verb", "a server that refuses POST",
         plus(rest("POST", f"/tasks/{TASK}:subscribe", {"id": TASK}, status=405,
                   answer=rest_error(405, "UNIMPLEMENTED", None))),
         expect="HTTP 405", also=frozenset({"content-type.response"})),
)  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[f"{c.rule}: {c.name}" for c in CASES])
def test_rule(case: Case) -> None:
    findings = lint(case.build(), case.spec)
    fired = {f.rule for f in findings}
    if not case.fires:
        assert findings == [], [f"{f.rule}: {f.message}" for f in findings]
        return
    assert case.rule in fired, [f"{f.rule}: {f.message}" for f in findings]
    assert fired <= {case.rule} | case.also, [f"{f.rule}: {f.message}" for f in findings]
    mine = [f for f in findings if f.rule == case.rule]
    if case.expect:
        assert any(case.expect in f"{f.message} {f.expected} {f.actual}" for f in mine), mine
    if case.severity is not None:
        assert {f.severity for f in mine} == {case.severity}


def test_the_good_session_is_clean_under_both_specs() -> None:
    for spec in ("1.0.0", "1.0.1"):
        assert lint(good_session(), spec) == []


def test_the_exports_are_complete_and_sorted() -> None:
    import recorder.lint as lint_pkg

    names = list(lint_pkg.__all__)
    assert names == sorted(names, key=lambda n: (not n.isupper(), n))
    assert all(hasattr(lint_pkg, name) for name in names)
    assert {"Finding", "LintContext", "Linter", "lint_capture", "lint_exchange"} <= set(names)


def test_every_rule_has_cases() -> None:
    breaking = {c.rule for c in CASES if c.fires}
    keeping = {c.rule for c in CASES if not c.fires}
    assert set(RULE_IDS) <= breaking
    # A rule no case keeps explicitly is kept by the good session, which runs every rule.
    assert keeping <= set(RULE_IDS)


def _challenged(exchange: Exchange, challenge: bool = True) -> Exchange:
    """The exchange answered by auth middleware: 401, a plain JSON body, a challenge."""
    headers = [JSON_TYPE, *([("WWW-Authenticate", 'Bearer realm="a2a"')] if challenge else [])]
    answer = Response(401, "Unauthorized", tuple(headers), body({"detail": "Not authenticated"}))
    return replace(exchange, response=answer)


def test_an_http_auth_challenge_is_no_broken_binding_answer() -> None:
    """A 401 with WWW-Authenticate is the HTTP layer's answer, before any binding read the
    request (issue 30: four MUST findings for a broken JSON-RPC response)."""
    send = jsonrpc("SendMessage", {"message": message()}, result={"task": task()})
    rest_send = rest("POST", "/message:send", {"message": message()}, answer={"task": task()})
    for exchange in (send, rest_send):
        assert lint([card_fetch(), _challenged(exchange)]) == []
        unexplained = lint([card_fetch(), _challenged(exchange, challenge=False)])
        assert any(f.severity is Severity.MUST for f in unexplained), unexplained
