"""The replayer's gRPC face: a grpc.aio server that answers A2A rpcs from the capture.

It serves every rpc of `lf.a2a.v1.A2AService` (v1.0) and `a2a.v1.A2AService` (v0.3), read from
the descriptors (`grpc_method`), with raw-bytes method handlers: no generated servicer, so one
generic handler covers both services.  Each call goes through the same `ReplayApp` as HTTP
requests (one `Engine`, one set of conversations, one report), so a capture that holds
JSON-RPC, HTTP+JSON and gRPC exchanges replays all three at once:

request bytes -> proto-JSON (`decode_message`) -> capture `Request` -> `classify` ->
`engine.match` -> `engine.mint_ids` -> each recorded message's JSON with ids swapped ->
`encode_message` -> sent with the `Timing` pacing -> the recorded status, message and
`grpc-status-details-bin` (so an SDK client raises the same A2A error).

A miss ends the call with INTERNAL, the `Miss.describe()` text and an ErrorInfo whose reason is
`REPLAY_NO_MATCH`.  A recorded message that no longer encodes ends the call with INTERNAL too.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import grpc

from recorder._background import host_port
from recorder.capture import GrpcMessage, Headers, Request, Response
from recorder.protocol import classify, rewrite_card, rewrite_grpc_interfaces
from recorder.protocol._grpc import (
    DETAILS_HEADER,
    MESSAGE_HEADER,
    STATUS_HEADER,
    GrpcCodecError,
    decode_binary_header,
    decode_grpc_message,
    decode_message,
    decode_status_details,
    encode_message,
    encode_status_details,
    grpc_method,
    is_binary_header,
)
from recorder.replay._engine import Match, Miss
from recorder.replay._respond import substitute_json_text, substitute_text
from recorder.replay._timing import Pacer

if TYPE_CHECKING:
    from recorder.replay._server import ReplayApp

log = logging.getLogger("a2a_recorder.replay")

MISS_REASON = "REPLAY_NO_MATCH"
MISS_DOMAIN = "a2a-recorder"
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
STATUS_BY_CODE: dict[int, grpc.StatusCode] = {s.value[0]: s for s in grpc.StatusCode}
# Metadata grpcio writes itself (or refuses from an application): never replayed.
RESERVED_METADATA = frozenset(
    {"content-type", "te", "user-agent", "date", "content-length", "grpc-encoding",
     "grpc-accept-encoding", STATUS_HEADER, MESSAGE_HEADER, DETAILS_HEADER}
)
CARD_TYPE_SUFFIX = ".AgentCard"

Metadata = tuple[tuple[str, str | bytes], ...]


@dataclass(frozen=True, slots=True)
class Reply:
    """What one call sends: initial metadata, timed messages, then the status."""

    initial: Metadata
    messages: tuple[tuple[int, bytes], ...]
    code: grpc.StatusCode
    details: str
    trailing: Metadata


# --- pure parts --------------------------------------------------------------------------------


def live_request(path: str, data: bytes, metadata: Iterable[tuple[str, str | bytes]]) -> Request:
    """A capture `Request` for a live call, as the recorder would have captured it."""
    headers: list[tuple[str, str]] = [("content-type", "application/grpc")]
    for key, value in metadata:
        text = base64.b64encode(value).decode().rstrip("=") if isinstance(value, bytes) else value
        headers.append((key, text))
    found = decode_message(path, data, "request")
    message = (GrpcMessage(0, json=found[1], type_name=found[0]) if found is not None
               else GrpcMessage(0, raw=data))
    return Request("POST", path, tuple(headers), http_version="HTTP/2", messages=(message,))


def recorded_status(response: Response) -> tuple[int, str, bytes | None]:
    """(`grpc-status`, decoded `grpc-message`, details bytes) from trailers or trailers-only."""
    fields = {k.lower(): v for k, v in (*response.headers, *response.trailers)}
    raw_code = fields.get(STATUS_HEADER, "0").strip()
    code = int(raw_code) if raw_code.isascii() and raw_code.isdigit() else 2  # UNKNOWN
    details = fields.get(DETAILS_HEADER)
    try:
        blob = decode_binary_header(details) if details is not None else None
    except ValueError:
        blob = None
    return code, decode_grpc_message(fields.get(MESSAGE_HEADER, "")), blob


def _swap_details(blob: bytes, mapping: dict[str, str]) -> bytes:
    status = decode_status_details(blob)
    if status is None:
        return blob
    try:
        swapped = json.loads(substitute_json_text(json.dumps(status), mapping))
        return decode_binary_header(encode_status_details(swapped))
    except (GrpcCodecError, ValueError):
        return blob


def _application_metadata(headers: Headers) -> Metadata:
    out: list[tuple[str, str | bytes]] = []
    for key, value in headers:
        name = key.lower()
        if name.startswith(":") or name in RESERVED_METADATA:
            continue
        if is_binary_header(name):
            try:
                out.append((name, decode_binary_header(value)))
            except ValueError:
                continue
        else:
            out.append((name, value))
    return tuple(out)


def build_reply(found: Match, rewrite: Callable[[str, str | None], str]) -> Reply:
    """The recorded answer with live ids; `rewrite(json, type_name)` fixes served cards.

    Raises `GrpcCodecError` when a recorded message does not encode (a raw one is sent as is).
    """
    response = found.recorded.exchange.response
    assert response is not None
    mapping = found.conversation.to_live
    messages: list[tuple[int, bytes]] = []
    for message in response.messages:
        if message.json is None or message.type_name is None:
            messages.append((message.offset_us, message.raw or b""))
            continue
        text = rewrite(substitute_json_text(message.json, mapping), message.type_name)
        messages.append((message.offset_us, encode_message(message.type_name, text)))
    code, text, blob = recorded_status(response)
    trailing = _application_metadata(response.trailers)
    if blob is not None:
        trailing = (*trailing, (DETAILS_HEADER, _swap_details(blob, mapping)))
    return Reply(_application_metadata(response.headers), tuple(messages),
                 STATUS_BY_CODE.get(code, grpc.StatusCode.UNKNOWN),
                 substitute_text(text, mapping), trailing)


def miss_reply(miss: Miss) -> Reply:
    """INTERNAL with the miss described and an ErrorInfo `REPLAY_NO_MATCH`."""
    text = miss.describe()
    nearest = f"#{miss.nearest.number}" if miss.nearest else ""
    status = {"code": grpc.StatusCode.INTERNAL.value[0], "message": text,
              "details": [{"@type": ERROR_INFO, "reason": MISS_REASON, "domain": MISS_DOMAIN,
                           "metadata": {"nearest": nearest}}]}
    blob = decode_binary_header(encode_status_details(status))
    return Reply((), (), grpc.StatusCode.INTERNAL, text, ((DETAILS_HEADER, blob),))


# --- the server --------------------------------------------------------------------------------


class GrpcReplayHandler(grpc.GenericRpcHandler):  # type: ignore[misc]
    """Generic handler: every known A2A rpc path, answered by the `ReplayApp`'s engine."""

    def __init__(self, app: ReplayApp) -> None:
        self.app = app

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> Any:
        path = str(getattr(handler_call_details, "method", ""))
        method = grpc_method(path)
        if method is None or method.client_streaming:
            return None  # grpcio answers UNIMPLEMENTED
        if method.server_streaming:
            return grpc.unary_stream_rpc_method_handler(partial(self._stream, path))
        return grpc.unary_unary_rpc_method_handler(partial(self._unary, path))

    async def _unary(self, path: str, data: bytes, context: Any) -> bytes:
        reply = self._reply(path, data, context)
        await self._start(reply, context)
        first = b""
        for offset, message in reply.messages[:1]:
            await Pacer(self.app.timing).until(offset)
            first = message
        await self._finish(reply, context)
        return first

    async def _stream(self, path: str, data: bytes, context: Any) -> AsyncIterator[bytes]:
        reply = self._reply(path, data, context)
        await self._start(reply, context)
        pacer = Pacer(self.app.timing)
        for offset, message in reply.messages:
            await pacer.until(offset)
            yield message
        await self._finish(reply, context)

    def _reply(self, path: str, data: bytes, context: Any) -> Reply:
        request = live_request(path, data, context.invocation_metadata() or ())
        classification = classify(request, interfaces=self.app.interfaces)
        found = self.app.engine.match(request, classification, client=str(context.peer()))
        if isinstance(found, Miss):
            text = found.describe()
            self.app.report.misses.append(f"POST {path}: {text}")
            log.warning("replay miss: gRPC %s: %s", path, text)
            return miss_reply(found)
        self.app.engine.mint_ids(found)
        if self.app.deliver and found.recorded.deliveries:
            self.app._spawn(self.app._deliver(found, found.recorded.deliveries))
        try:
            return build_reply(found, self._rewrite_card)
        except GrpcCodecError as err:
            text = f"recorded exchange #{found.recorded.exchange.number} does not encode: {err}"
            return Reply((), (), grpc.StatusCode.INTERNAL, text, ())

    def _rewrite_card(self, text: str, type_name: str | None) -> str:
        if not (type_name or "").endswith(CARD_TYPE_SUFFIX):
            return text
        body = text.encode()
        for upstream in self.app.upstreams:
            body = rewrite_card(body, upstream, self.app.base_url).body
        if self.app.grpc_target:
            body = rewrite_grpc_interfaces(body, self.app.grpc_target).body
        return body.decode()

    @staticmethod
    async def _start(reply: Reply, context: Any) -> None:
        if reply.initial:
            await context.send_initial_metadata(reply.initial)

    @staticmethod
    async def _finish(reply: Reply, context: Any) -> None:
        if reply.code is grpc.StatusCode.OK:
            if reply.trailing:
                context.set_trailing_metadata(reply.trailing)
            return
        await context.abort(reply.code, reply.details, trailing_metadata=reply.trailing)


async def start_grpc_server(app: ReplayApp, host: str, port: int) -> tuple[grpc.aio.Server, int]:
    """Start the gRPC replay server in the running loop; returns it and its bound port."""
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((GrpcReplayHandler(app),))
    bound = server.add_insecure_port(host_port(host, port))
    if not bound:
        raise OSError(f"cannot bind the gRPC replay port {host}:{port}")
    await server.start()
    return server, int(bound)
