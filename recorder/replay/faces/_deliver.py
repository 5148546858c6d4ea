"""Making the push deliveries the service planned: POSTs to the client's webhook (I/O).

`before` makes, and waits for, the deliveries recorded before the answer (a client checking
its webhook when a blocking send returns sees them all); `after` makes the rest in the
background, paced as recorded.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

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

    async def before(self, served: Served) -> None:
        early = [d for d in served.deliveries if d.before]
        if early:
            await self._run(served, early)

    def after(self, served: Served) -> None:
        late = [d for d in served.deliveries if not d.before]
        if late:
            task = asyncio.ensure_future(self._run(served, late))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _run(self, served: Served, deliveries: Iterable[PlannedDelivery]) -> None:
        pacer = Pacer(self.timing)
        # Straight to the webhook, never through HTTP_PROXY: the client's process may have
        # set it to a fleet's forward proxy (`_fleet`), which routes only to replayed agents.
        async with httpx.AsyncClient(timeout=DELIVERY_TIMEOUT, trust_env=False) as client:
            for planned in deliveries:
                await pacer.until(planned.offset_us)
                await self._post(client, planned, served.journal)

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
