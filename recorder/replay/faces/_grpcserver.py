"""The replayer's gRPC face: a grpc.aio server that only translates bytes (I/O shell).

One generic raw-bytes handler serves every rpc of the v1.0 and v0.3 services.  Every handler
is request-streaming, so it runs as the call opens and reads the message within
`Limits.read_timeout` (a client that never sends it gets DEADLINE_EXCEEDED).  grpcio gives a
handler no way to drop or reset the connection itself.
"""

from __future__ import annotations

import asyncio
import errno
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import grpc

from recorder._background import GRPC_SERVER_OPTIONS, host_port
from recorder.protocol import grpc_method
from recorder.replay.core import Client, GrpcAnswer, live_request
from recorder.replay.faces._limits import Limits
from recorder.replay.faces._runner import Runner, Turn
from recorder.replay.faces._timing import Pacer, Timing

STATUS_BY_CODE: dict[int, grpc.StatusCode] = {s.value[0]: s for s in grpc.StatusCode}


class GrpcReplayHandler(grpc.GenericRpcHandler):  # type: ignore[misc]
    """Generic handler: every rpc path, answered through the `Runner`; a path the tables do not know
    is answered as a stream (the same frames on the wire whatever the rpc's kind)."""

    def __init__(self, runner: Runner, timing: Timing, limits: Limits) -> None:
        self.runner = runner
        self.timing = timing
        self.limits = limits

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> Any:
        path = str(getattr(handler_call_details, "method", ""))
        method = grpc_method(path)
        if method is not None and method.client_streaming:
            return None  # grpcio answers UNIMPLEMENTED
        if method is None or method.server_streaming:
            return grpc.stream_stream_rpc_method_handler(partial(self._stream, path))
        return grpc.stream_unary_rpc_method_handler(partial(self._unary, path))

    async def _unary(self, path: str, requests: AsyncIterator[bytes], context: Any) -> bytes:
        async with self.runner.answering(lambda: _given_up(context)):
            turn = await self._turn(path, requests, context)
            context.add_done_callback(lambda _: self.runner.end(turn))
            answer = turn.grpc
            if turn.shape.delay:
                await asyncio.sleep(turn.shape.delay)
            await _start(answer, context)
            first = b""
            for offset, message in answer.messages[:1]:
                await Pacer(self.timing).until(offset)
                first = message
            await _finish(answer, context)
            return first
        return b""  # given up: the call ended UNAVAILABLE

    async def _stream(
        self, path: str, requests: AsyncIterator[bytes], context: Any
    ) -> AsyncIterator[bytes]:
        async with self.runner.answering(lambda: _given_up(context)):
            turn = await self._turn(path, requests, context)
            answer, shape = turn.grpc, turn.shape
            if shape.delay:
                await asyncio.sleep(shape.delay)
            await _start(answer, context)
            pacer = Pacer(self.timing)
            for n, (offset, message) in enumerate(answer.messages):
                await pacer.until(offset)
                if n and shape.gap:
                    await asyncio.sleep(shape.gap)
                yield message
            self.runner.end(turn)
            await _finish(answer, context)

    async def _turn(self, path: str, requests: AsyncIterator[bytes], context: Any) -> Turn:
        data = await self._read(requests, context)
        request = live_request(path, data, context.invocation_metadata() or ())
        return await self.runner.begin(request, Client.peer(str(context.peer())))

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


async def _given_up(context: Any) -> None:
    await context.abort(grpc.StatusCode.UNAVAILABLE, "the replayer stopped")


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
    runner: Runner,
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
    server.add_generic_rpc_handlers((GrpcReplayHandler(runner, timing, limits),))
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
