"""What happens around one answer, the same for every transport (I/O).

A turn: the service decides (`decide`); a miss to forward or deliveries recorded before the
answer are awaited (`waits`, `complete`); the face sends the answer; `end` makes the later
deliveries.  With `--on-miss forward URL` an HTTP miss gets the live answer of that URL (a gRPC
call is never forwarded).  A stopping replayer gives up every answer on its way at once, as a
server going away does: no 500, no traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import httpx

from recorder.capture import Request
from recorder.replay.core import (
    INTERNAL,
    NO_SHAPE,
    Answer,
    Client,
    GrpcAnswer,
    HttpAnswer,
    Miss,
    Outcomes,
    ReplayService,
    Served,
    Shape,
    error_answer,
)
from recorder.replay.faces._deliver import Deliverer, Queued
from recorder.replay.faces._timing import Timing
from recorder.script import wire_bytes

log = logging.getLogger("a2a_recorder.replay")

FORWARD_TIMEOUT = 30.0
FORWARD_DROPPED = frozenset(
    {"content-length", "transfer-encoding", "content-encoding", "connection"}
)
MISDIRECTED = HttpAnswer(
    415, "", (("content-type", "text/plain"),), b"gRPC is served on the replayer's gRPC port\n"
)


@dataclass(slots=True)  # made per request: not frozen, which costs
class Turn:
    """One request's answer, and what the runner still has to do after it is sent."""

    answer: Answer
    outcome: Outcomes | None = None  # None: the answer came from the forward target
    deliveries: tuple[Queued, ...] = ()  # its push deliveries, queued in their webhooks' order

    @property
    def http(self) -> HttpAnswer:
        return self.answer if isinstance(self.answer, HttpAnswer) else MISDIRECTED

    @property
    def shape(self) -> Shape:
        """How to send it (delays, a cut, a reset: what a fault profile asked)."""
        return self.outcome.shape if isinstance(self.outcome, Served) else NO_SHAPE

    @property
    def grpc(self) -> GrpcAnswer:
        if isinstance(self.answer, GrpcAnswer):
            return self.answer
        return error_answer(INTERNAL, "an HTTP answer for a gRPC call", [])


class Runner:
    """The turns of one replay service's requests (see the module docstring)."""

    def __init__(self, service: ReplayService, timing: Timing, forward: str | None = None) -> None:
        self.service = service
        self.deliverer = Deliverer(service, timing)
        self.forward = forward
        service.forwarding = forward is not None
        self._answering: set[asyncio.Task[object]] = set()
        self._stopping = False

    async def begin(self, request: Request, client: Client) -> Turn:
        return await self.complete(self.decide(request, client), request)

    def decide(self, request: Request, client: Client) -> Turn:
        outcome = self.service.handle(request, client)
        if isinstance(outcome, Miss):
            text = outcome.report.describe(quoting=False)
            log.warning("replay miss: %s", self.service.journal.said(request, text))
        if isinstance(outcome, Served) and outcome.deliveries:
            return Turn(outcome.answer, outcome, self.deliverer.queue(outcome.deliveries))
        return Turn(outcome.answer, outcome)

    def waits(self, turn: Turn) -> bool:
        """Whether `complete` has something to wait for."""
        outcome = turn.outcome
        if isinstance(outcome, Miss):
            return self.forward is not None
        return isinstance(outcome, Served) and any(d.before for d in outcome.deliveries)

    async def complete(self, turn: Turn, request: Request) -> Turn:
        """A miss forwarded (HTTP), and the deliveries recorded before the answer made."""
        outcome = turn.outcome
        if isinstance(outcome, Miss) and self.forward and not request.messages:
            forwarded = await self._forward(request, outcome)
            if forwarded is not None:
                return Turn(forwarded)
        if isinstance(outcome, Served) and turn.deliveries:
            await self.deliverer.before(outcome, turn.deliveries)
        return turn

    def end(self, turn: Turn) -> None:
        if isinstance(turn.outcome, Served) and turn.deliveries:
            self.deliverer.after(turn.outcome, turn.deliveries)

    async def close(self) -> None:
        await self.deliverer.close()

    @contextlib.asynccontextmanager
    async def answering(self, give_up: Callable[[], Awaitable[object]]) -> AsyncIterator[None]:
        """Around one answer: if the replayer stops meanwhile, it ends with `give_up()`."""
        task = asyncio.current_task()
        assert task is not None
        self._answering.add(task)
        try:
            yield
        except asyncio.CancelledError:
            if not self._stopping:
                raise
            task.uncancel()
            await give_up()
        finally:
            self._answering.discard(task)

    def stop(self) -> int:
        """Give up every answer on its way (see the module docstring); how many there were."""
        self._stopping = True
        for task in self._answering:
            task.cancel()
        return len(self._answering)

    async def _forward(self, request: Request, miss: Miss) -> HttpAnswer | None:
        assert self.forward is not None
        url = self.forward.rstrip("/") + request.target
        headers = [
            (wire_bytes(k), wire_bytes(v))
            for k, v in request.headers
            if k.lower() not in ("host", "content-length")
        ]
        try:
            async with httpx.AsyncClient(timeout=FORWARD_TIMEOUT) as client:
                upstream = await client.request(
                    request.method, url, headers=headers, content=request.body
                )
        except httpx.HTTPError as exc:
            log.warning(self.service.journal.said(request, f"forwarding failed: {exc}"))
            self.service.forwarded(miss, None, f"{type(exc).__name__}: {exc}")
            return None
        self.service.forwarded(miss, upstream.status_code)
        return HttpAnswer(
            upstream.status_code,
            upstream.reason_phrase,
            tuple((k, v) for k, v in upstream.headers.items() if k.lower() not in FORWARD_DROPPED),
            upstream.content,
        )
