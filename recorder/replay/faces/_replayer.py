"""`Replayer`: the replay service behind its HTTP and gRPC faces, on a thread of its own."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import socket
from collections.abc import Callable, Sequence
from typing import Any, Self

from recorder._background import BackgroundLoop, Service, bind_socket, host_port
from recorder._errors import OptionError
from recorder.capture import Capture
from recorder.options import FORWARD, REPLAY
from recorder.protocol import Binding, parse_fault
from recorder.redaction import NO_RULES, Rules
from recorder.replay.core import Journal, ReplayService, Report, ServeVersion
from recorder.replay.faces._grpcserver import start_grpc_server
from recorder.replay.faces._http import Connection, serve_http
from recorder.replay.faces._limits import Limits
from recorder.replay.faces._runner import Runner
from recorder.replay.faces._server import ReplayHttp
from recorder.replay.faces._timing import Timing
from recorder.script import IdFactory

log = logging.getLogger("a2a_recorder.replay")


class Replayer(Service):
    """A replay server on its own thread: `with Replayer([capture]) as r: use(r.url)`.

    A gRPC face runs beside the HTTP one when `grpc_port` is given (0: a free port) or the captures
    hold gRPC (`.grpc_target`, where served cards point).  `.report` is what `--strict` checks,
    `.journal` what was received and delivered.  `ids` mints the ids handed out;
    `rewrite_cards=False` serves cards as recorded; `serve(ready, stop)` runs in the caller's loop.
    The other keyword arguments are `recorder.options.REPLAY`'s: OptionError names one that cannot
    be used, TypeError an unknown one, FaultSpecError a fault spec no exchange can take."""

    def __init__(
        self,
        captures: Sequence[Capture],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        grpc_port: int | None = None,
        ids: IdFactory | None = None,
        redaction: Rules = NO_RULES,
        rewrite_cards: bool = True,
        **options: Any,
    ) -> None:
        self.rewrite_cards = rewrite_cards
        self.options = REPLAY.settings(options)
        if self.options["on_miss"] == FORWARD:
            raise OptionError("{on_miss}: forward needs the agent's URL: forward=URL")
        if self.options["faults"] and self.options["serve_version"] is not None:
            # a faulted answer, and a cut stream's continuation, are not translated (yet)
            raise OptionError("{faults}: not with {serve_version}: replay in the recorded version")
        self.timing = Timing.parse(self.options["timing"])
        self.limits = Limits.of(self.options)
        if self.options["keep_secrets"]:
            redaction = dataclasses.replace(redaction, keep_secrets=True)
        served = self.options["serve_version"]
        self.service = ReplayService(
            captures,
            max_sessions=self.options["max_sessions"],
            ids=ids,
            redaction=redaction,
            journal_bytes=self.options["journal_bytes"],
            faults=[parse_fault(text) for text in self.options["faults"]],
            serve_version=ServeVersion(served) if served else None,
            credentials=self.options["credentials"],
        )
        self.runner = Runner(self.service, self.timing, forward=self.options["on_miss"])
        self.face = ReplayHttp(self.runner, timing=self.timing)
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
        self._serve_at()
        self._runner = BackgroundLoop(self.serve, name="a2a-replay")

    @property
    def url(self) -> str:
        return f"http://{host_port(self.host, self.port)}"

    @property
    def report(self) -> Report:
        return self.service.report

    @property
    def journal(self) -> Journal:
        return self.service.journal

    def _serve_at(self) -> None:
        """Point the served cards at this replayer (unless they are served as recorded)."""
        if self.rewrite_cards:
            self.service.serve_at(self.url, self.grpc_target)

    async def serve(self, ready: Callable[[], None], stop: asyncio.Event) -> None:
        """Serve in the running loop, calling `ready()` once listening, until `stop` is set."""
        if self._grpc_port is None:
            await self._serve_http(ready, stop)
            return
        server, port = await start_grpc_server(
            self.runner,
            host=self.host,
            port=self._grpc_port,
            timing=self.timing,
            limits=self.limits,
        )
        self.grpc_target = host_port(self.host, port)
        self._serve_at()
        try:
            await self._serve_http(ready, stop)
        finally:
            await server.stop(grace=0.5)
            self.grpc_target = None

    def connection(self, connections: set[Connection]) -> Connection:
        """One HTTP connection to this replayer (the fleet's proxy makes its own)."""
        return Connection(self.face, self.limits, connections)

    async def _serve_http(self, ready: Callable[[], None], stop: asyncio.Event) -> None:
        watch = asyncio.create_task(self._given_up(stop))
        try:
            await serve_http(self._sock, self.connection, ready, stop)
        finally:
            watch.cancel()
            await self.runner.close()

    async def _given_up(self, stop: asyncio.Event) -> None:
        """Once stopping, the answers still on their way are given up (`Runner.stop`)."""
        await stop.wait()
        if held := self.runner.stop():
            log.warning("stopping: %d answers in flight given up", held)

    def start(self) -> Self:
        self._runner.start()
        return self

    def stop(self) -> None:
        self._runner.stop()
