"""The replayer's gRPC face: a grpc.aio server that only translates bytes (I/O shell).

It serves every rpc of `lf.a2a.v1.A2AService` (v1.0) and `a2a.v1.A2AService` (v0.3), read from
the descriptors (`grpc_method`), with raw-bytes handlers: no generated servicer, so one generic
handler covers both services.  A call becomes a capture `Request` (`live_request`), the same
`ReplayService` as the HTTP face decides, and the `GrpcAnswer` is sent: initial metadata, the
messages paced by `Timing`, then the status with its trailing metadata.

Every handler is registered as request-streaming, so that it runs as soon as the call opens
and reads the request message itself, within `Limits.read_timeout`: a client that opens a
call and never sends its message gets DEADLINE_EXCEEDED instead of holding the call for ever.
grpcio's own options bound the rest: the HTTP/2 handshake (`read_timeout`), an idle connection
(`idle_timeout`) and the message size (`max_body_bytes`, RESOURCE_EXHAUSTED).
"""

from __future__ import annotations

import asyncio
import errno
import logging
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import grpc

from recorder._background import GRPC_SERVER_OPTIONS, host_port
from recorder.protocol import grpc_method
from recorder.replay._deliver import Deliverer
from recorder.replay._grpcanswer import GrpcAnswer, live_request
from recorder.replay._limits import Limits
from recorder.replay._service import Client, Miss, ReplayService, Served
from recorder.replay._timing import Pacer, Timing

log = logging.getLogger("a2a_recorder.replay")

STATUS_BY_CODE: dict[int, grpc.StatusCode] = {s.value[0]: s for s in grpc.StatusCode}


class GrpcReplayHandler(grpc.GenericRpcHandler):  # type: ignore[misc]
    """Generic handler: every known A2A rpc path, answered by the `ReplayService`."""

    def __init__(
        self, service: ReplayService, deliverer: Deliverer, timing: Timing, limits: Limits
    ) -> None:
        self.replay = service  # not `service`: grpcio calls the method of that name
        self.deliverer = deliverer
        self.timing = timing
        self.limits = limits

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> Any:
        path = str(getattr(handler_call_details, "method", ""))
        method = grpc_method(path)
        if method is None or method.client_streaming:
            return None  # grpcio answers UNIMPLEMENTED
        if method.server_streaming:
            return grpc.stream_stream_rpc_method_handler(partial(self._stream, path))
        return grpc.stream_unary_rpc_method_handler(partial(self._unary, path))

    async def _unary(self, path: str, requests: AsyncIterator[bytes], context: Any) -> bytes:
        answer = await self._answer(path, requests, context)
        await _start(answer, context)
        first = b""
        for offset, message in answer.messages[:1]:
            await Pacer(self.timing).until(offset)
            first = message
        await _finish(answer, context)
        return first

    async def _stream(
        self, path: str, requests: AsyncIterator[bytes], context: Any
    ) -> AsyncIterator[bytes]:
        answer = await self._answer(path, requests, context)
        await _start(answer, context)
        pacer = Pacer(self.timing)
        for offset, message in answer.messages:
            await pacer.until(offset)
            yield message
        await _finish(answer, context)

    async def _answer(self, path: str, requests: AsyncIterator[bytes], context: Any) -> GrpcAnswer:
        data = await self._read(requests, context)
        request = live_request(path, data, context.invocation_metadata() or ())
        outcome = self.replay.handle(request, Client(str(context.peer())))
        if isinstance(outcome, Miss):
            log.warning("replay miss: gRPC %s: %s", path, outcome.describe())
        if isinstance(outcome, Served):
            await self.deliverer.before(outcome)
            self.deliverer.after(outcome)
        assert isinstance(outcome.answer, GrpcAnswer)
        return outcome.answer

    async def _read(self, requests: AsyncIterator[bytes], context: Any) -> bytes:
        timeout = self.limits.read_timeout
        try:
            return await asyncio.wait_for(anext(aiter(requests)), timeout)
        except TimeoutError:
            await context.abort(
                grpc.StatusCode.DEADLINE_EXCEEDED, f"no request message within {timeout:g} s"
            )
        except StopAsyncIteration:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the call sent no message")
        raise AssertionError("context.abort returns only by raising")


async def _start(answer: GrpcAnswer, context: Any) -> None:
    if answer.initial:
        await context.send_initial_metadata(answer.initial)


async def _finish(answer: GrpcAnswer, context: Any) -> None:
    if answer.code == 0:
        if answer.trailing:
            context.set_trailing_metadata(answer.trailing)
        return
    code = STATUS_BY_CODE.get(answer.code, grpc.StatusCode.UNKNOWN)
    await context.abort(code, answer.details, trailing_metadata=answer.trailing)


async def start_grpc_server(
    service: ReplayService,
    deliverer: Deliverer,
    *,
    host: str,
    port: int,
    timing: Timing,
    limits: Limits,
) -> tuple[grpc.aio.Server, int]:
    """Start the gRPC replay server in the running loop; returns it and its bound port."""
    options = [
        *GRPC_SERVER_OPTIONS,
        ("grpc.max_receive_message_length", limits.max_body_bytes),
        ("grpc.server_handshake_timeout_ms", int(limits.read_timeout * 1000)),
        ("grpc.max_connection_idle_ms", int(limits.idle_timeout * 1000)),
    ]
    server = grpc.aio.server(options=options)
    server.add_generic_rpc_handlers((GrpcReplayHandler(service, deliverer, timing, limits),))
    where = host_port(host, port)
    try:
        bound = server.add_insecure_port(where)
    except RuntimeError:  # grpcio's "Failed to bind to address ..."
        bound = 0
    if not bound:  # older grpcio says so with 0
        raise OSError(
            errno.EADDRINUSE, f"cannot listen for gRPC on {where}: in use or not available"
        )
    await server.start()
    return server, int(bound)
