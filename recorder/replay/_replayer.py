"""`Replayer`: the replay service behind its HTTP and gRPC faces, on a thread of its own."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Sequence
from typing import Self

from recorder._background import BackgroundLoop, bind_socket, host_port, serve_asgi
from recorder.capture import Capture
from recorder.protocol import Binding
from recorder.redaction import NO_RULES, Rules
from recorder.replay._grpcserver import start_grpc_server
from recorder.replay._journal import MAX_BYTES, Journal
from recorder.replay._limits import Limits
from recorder.replay._mint import IdFactory
from recorder.replay._report import Report
from recorder.replay._runner import Runner
from recorder.replay._server import ReplayApp
from recorder.replay._service import ReplayService
from recorder.replay._state import MAX_SESSIONS
from recorder.replay._timing import Timing
from recorder.replay._uvicorn import limited_protocol
from recorder.replay._versions import ServeVersion

DEFAULT_LIMITS = Limits()


class Replayer:
    """A replay server on its own thread: `with Replayer([capture]) as r: use(r.url)`.

    gRPC: a grpc.aio server on `grpc_port` (0 = a free port) runs next to the HTTP one, in the
    same loop and on the same service, when `grpc_port` is given or the captures hold any gRPC
    exchange; `.grpc_target` is its `host:port` (None when it does not run), and the served
    card's GRPC interfaces point at it.

    `.report` is what `--strict` checks; `.journal` holds every request received and every
    push delivery made (`.journal.requests`, `.journal.deliveries`).  `limits` bounds read
    times and request sizes; `max_sessions` how many client sessions are remembered; `ids`
    mints the ids handed out (seed it to replay the same bytes); `journal_bytes` the bytes
    the journal keeps; `serve_version` (`1.0`, `0.3`, `both`) the protocol versions it speaks,
    translating a capture of the other version (default: as recorded).  What the replayer
    serves about itself (the journal, the report) is
    redacted with the recorder's rules, what the captures say was redacted, and `redaction`
    (`Rules(keep_secrets=True)` turns it off).
    """

    def __init__(
        self,
        captures: Sequence[Capture],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        timing: Timing | str = "none",
        on_miss: str | None = None,
        grpc_port: int | None = None,
        limits: Limits = DEFAULT_LIMITS,
        max_sessions: int = MAX_SESSIONS,
        ids: IdFactory | None = None,
        redaction: Rules = NO_RULES,
        journal_bytes: int = MAX_BYTES,
        serve_version: ServeVersion | str | None = None,
    ) -> None:
        self.timing = Timing.parse(timing) if isinstance(timing, str) else timing
        self.limits = limits
        self.service = ReplayService(
            captures,
            max_sessions=max_sessions,
            ids=ids,
            redaction=redaction,
            journal_bytes=journal_bytes,
            serve_version=ServeVersion(serve_version) if serve_version else None,
        )
        self.runner = Runner(self.service, self.timing, forward=on_miss)
        self.app = ReplayApp(self.runner, timing=self.timing)
        self._sock: socket.socket = bind_socket(host, port)
        self.host = host
        self.port: int = self._sock.getsockname()[1]
        self.grpc_target: str | None = None
        has_grpc = any(
            e.classification.binding is Binding.GRPC
            for capture in captures
            for e in capture.exchanges
        )
        self._grpc_port = grpc_port if grpc_port is not None else (0 if has_grpc else None)
        self.service.serve_at(self.url)
        self._runner = BackgroundLoop(self._main, name="a2a-replay")

    @property
    def url(self) -> str:
        return f"http://{host_port(self.host, self.port)}"

    @property
    def report(self) -> Report:
        return self.service.report

    @property
    def journal(self) -> Journal:
        return self.service.journal

    async def _main(self, ready: Callable[[], None], stop: asyncio.Event) -> None:
        protocol = limited_protocol(self.limits)
        if self._grpc_port is None:
            await self._serve_http(protocol, ready, stop)
            return
        server, port = await start_grpc_server(
            self.runner,
            host=self.host,
            port=self._grpc_port,
            timing=self.timing,
            limits=self.limits,
        )
        self.grpc_target = host_port(self.host, port)
        self.service.serve_at(self.url, self.grpc_target)
        try:
            await self._serve_http(protocol, ready, stop)
        finally:
            await server.stop(grace=0.5)
            self.grpc_target = None

    async def _serve_http(
        self, protocol: type[asyncio.Protocol], ready: Callable[[], None], stop: asyncio.Event
    ) -> None:
        try:
            await serve_asgi(self.app, self._sock, ready, stop, http=protocol)
        finally:
            await self.runner.close()

    def start(self) -> Self:
        self._runner.start()
        return self

    def stop(self) -> None:
        self._runner.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
