"""Making the push deliveries the service planned: POSTs to the client's webhook (I/O).

`before` makes, and waits for, the deliveries recorded before the answer (a client checking
its webhook when a blocking send returns sees them all); `after` makes the rest in the
background, paced as recorded.  Deliveries to one webhook are made in the order they were
planned, as an agent that awaits each POST makes them: a later request's delivery waits for
an earlier request's that is still paced.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from functools import partial

import httpx

from recorder.capture import Request
from recorder.replay.core import PlannedDelivery, ReplayService, Served
from recorder.replay.faces._timing import Pacer, Timing
from recorder.script import wire_bytes

log = logging.getLogger("a2a_recorder.replay")
DELIVERY_TIMEOUT = 10.0


class Deliverer:
    def __init__(self, service: ReplayService, timing: Timing) -> None:
        self.service = service
        self.timing = timing
        self._tasks: set[asyncio.Task[None]] = set()
        self._last: dict[str | None, asyncio.Future[None]] = {}  # per webhook: the last queued

    def queue(self, deliveries: tuple[PlannedDelivery, ...]) -> tuple[Queued, ...]:
        """Each delivery with the one queued before it to the same webhook, to wait for: queued
        when the request is decided, so the order holds whenever its answer ends."""
        loop = asyncio.get_running_loop()
        queued = []
        for planned in deliveries:
            done = loop.create_future()
            queued.append(Queued(planned, self._last.get(planned.url), done))
            self._last[planned.url] = done
            done.add_done_callback(partial(self._forget, planned.url))
        return tuple(queued)

    def _forget(self, url: str | None, done: asyncio.Future[None]) -> None:
        """A webhook's queue ends with its last delivery made (a replayer runs for long)."""
        if self._last.get(url) is done:
            del self._last[url]

    async def before(self, served: Served, queued: tuple[Queued, ...]) -> None:
        early = [q for q in queued if q.planned.before]
        if early:
            await self._run(served, early)

    def after(self, served: Served, queued: tuple[Queued, ...]) -> None:
        late = [q for q in queued if not q.planned.before]
        if late:
            task = asyncio.ensure_future(self._run(served, late))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _run(self, served: Served, deliveries: list[Queued]) -> None:
        pacer = Pacer(self.timing)
        try:
            # Straight to the webhook, never through HTTP_PROXY: the client's process may have
            # set it to a fleet's forward proxy (`_fleet`), which routes only to replayed agents.
            async with httpx.AsyncClient(timeout=DELIVERY_TIMEOUT, trust_env=False) as client:
                for queued in deliveries:
                    if queued.after is not None:  # (bounded: a request given up never ends)
                        await asyncio.wait((queued.after,), timeout=DELIVERY_TIMEOUT)
                    await pacer.until(queued.planned.offset_us)
                    await self._post(client, queued.planned, served.journal)
                    queued.done.set_result(None)
        finally:  # given up (a stopping replayer): nothing waits on these any longer
            for queued in deliveries:
                if not queued.done.done():
                    queued.done.set_result(None)

    async def _post(
        self, client: httpx.AsyncClient, planned: PlannedDelivery, request: int
    ) -> None:
        number = planned.exchange.number
        if planned.url is None:
            log.warning("push delivery #%d: the client registered no webhook for it", number)
            self.service.delivered(planned, request, None, error="no live webhook registered")
            return
        try:
            headers = [(wire_bytes(k), wire_bytes(v)) for k, v in planned.headers]
            reply = await client.post(planned.url, headers=headers, content=planned.body)
        except httpx.HTTPError as exc:
            sent = Request("POST", planned.url, planned.headers, planned.body)
            log.warning(self.service.journal.said(sent, f"push delivery #{number} failed: {exc}"))
            self.service.delivered(planned, request, None, error=f"{type(exc).__name__}: {exc}")
            return
        self.service.delivered(planned, request, reply.status_code, reply.content)


@dataclass(frozen=True, slots=True)
class Queued:
    """A planned delivery in its webhook's order."""

    planned: PlannedDelivery
    after: asyncio.Future[None] | None  # the delivery planned before it to the same webhook
    done: asyncio.Future[None]
