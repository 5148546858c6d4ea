"""Running a plan: each send when what it waits for has happened live (asyncio, no sockets).

A send waits until (1) every earlier send not concurrent with it has completed; (2) each
concurrent stream has given as many live events, and the webhooks as many deliveries, as in the
recording by then; (3) every issued id it names has a live counterpart, or its issuer completed
without one (then it is not sent, and says why); and keeps its recorded distance from each
concurrent start.  Waits 2 and the pacing are bounded (`wait_limit`), what never comes is
noted.  A poll run is repeated until it reports the last recorded poll's state.  The
`Transport` is the only I/O, so tests drive the schedule with a fake one.
"""

from __future__ import annotations

import asyncio
import functools
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Protocol

from recorder._errors import PlaceholderError, Unsendable
from recorder.protocol import Json
from recorder.script import Step, answer_documents
from recorder.verify._live import LiveIds, poll_states
from recorder.verify._outgoing import Outgoing
from recorder.verify._plan import Plan, Send, end_us
from recorder.verify._result import NotSent
from recorder.verify._send import LiveAnswer

WAIT_FLOOR = 5.0  # seconds a happens-before wait lasts at least (an event, a delivery)
WAIT_FACTOR = 3.0  # ... or this many times as long as it took in the recording
POLL_GAP = (0.01, 1.0)  # bounds of the pause between two live polls, seconds


class Transport(Protocol):
    async def send(
        self, step: Step, out: Outgoing, timeout: float, on_document: Callable[[int, Json], None]
    ) -> LiveAnswer: ...

    def received(self, webhook: str) -> int: ...


Prepare = Callable[[Step, dict[str, str]], Outgoing]
TIMEOUT = 10.0  # seconds per exchange and per wait: verify's default (`--timeout`)


@dataclass
class Schedule:
    plan: Plan
    ids: LiveIds
    transport: Transport
    prepare: Prepare
    timeout: float = TIMEOUT
    not_sent: list[NotSent] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sent: int = 0  # requests that went out (each poll counts)
    completed: set[int] = field(default_factory=set)
    pending: set[int] = field(default_factory=set)  # started, not completed
    events: dict[int, int] = field(default_factory=dict)  # live documents seen per exchange
    started_at: dict[int, float] = field(default_factory=dict)  # loop time each send began
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _numbers: frozenset[int] = field(init=False)  # every exchange the plan sends

    def __post_init__(self) -> None:
        self._numbers = frozenset(n for send in self.plan.sends for n in send.numbers)

    def changed(self) -> None:
        """Something happened (thread-safe through `call_soon_threadsafe`)."""
        self._changed.set()

    async def run(self) -> None:
        tasks = []
        for send in self.plan.sends:
            await self._until_ready(send)
            self.pending |= send.numbers
            self.started_at.update(dict.fromkeys(send.numbers, asyncio.get_running_loop().time()))
            tasks.append(asyncio.create_task(self._do(send)))
        await asyncio.gather(*tasks)
        await self._until_delivered()

    async def until(self, ready: Callable[[], bool], limit: float | None = None) -> bool:
        loop = asyncio.get_running_loop()
        deadline = None if limit is None else loop.time() + limit
        while not ready():
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                return False
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                return ready()
        return True

    def wait_limit(self, recorded_us: int = 0) -> float:
        return max(WAIT_FLOOR, min(self.timeout, WAIT_FACTOR * recorded_us / 1e6))

    async def _until_ready(self, send: Send) -> None:
        await self.until(lambda: self.pending <= send.concurrent)
        await self._paced(send)
        for number, count in send.events:
            came = await self.until(
                functools.partial(self._streamed, number, count),
                self.wait_limit(send.waits_us.get(number, 0)),
            )
            if not came:
                self.notes.append(
                    f"#{send.steps[0].number} went out without waiting for "
                    f"#{number}'s event {count}: it did not come"
                )
        for webhook, count in send.deliveries:
            came = await self.until(
                functools.partial(self._delivered, webhook, count), self.wait_limit()
            )
            if not came:
                self.notes.append(
                    f"#{send.steps[0].number} went out before delivery {count} to {webhook} came"
                )
        await self.until(lambda: self._ids_settled(send.steps[0]))

    async def _paced(self, send: Send) -> None:
        """As long after each concurrent exchange started as in the recording (a cancel comes
        after its subscription is set up, even one that has said nothing yet)."""
        loop = asyncio.get_running_loop()
        due = [
            self.started_at[n] + min(gap / 1e6, self.wait_limit(gap))
            for n, gap in send.waits_us.items()
            if n in self.started_at
        ]
        delay = max(due, default=0.0) - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)

    def _streamed(self, number: int, count: int) -> bool:
        return number in self.completed or self.events.get(number, 0) >= count

    def _delivered(self, webhook: str, count: int) -> bool:
        return self.transport.received(webhook) >= count

    def _ids_settled(self, step: Step) -> bool:
        return all(
            m.issuer is None or m.issuer in self.completed or m.issuer not in self._numbers
            for m in self.ids.missing(step)
        )

    async def _until_delivered(self) -> None:
        for webhook, found in self.plan.deliveries.items():
            came = await self.until(
                functools.partial(self._delivered, webhook, len(found)), self.wait_limit()
            )
            if not came:
                got = self.transport.received(webhook)
                self.notes.append(f"{webhook}: {got} of {len(found)} recorded push deliveries came")

    async def _do(self, send: Send) -> None:
        try:
            await self._send(send)
        finally:
            self.completed |= send.numbers
            self.pending -= send.numbers
            self.changed()

    async def _send(self, send: Send) -> None:
        first = send.steps[0]
        missing = self.ids.missing(first)
        if missing:
            self._not_sent(send, self._missing_reason(missing[0].value, missing[0].issuer))
            return
        try:
            out = self.prepare(first, self.ids.mapping(first))
        except (Unsendable, PlaceholderError, ValueError) as exc:
            self._not_sent(send, str(exc))
            return
        answer = await (self._poll(send, out) if send.is_poll else self._once(first, out))
        self.ids.learn(send.step, answer.documents, answer.success)
        if answer.error:
            self.notes.append(f"#{send.step.number} {_operation(send.step)}: {answer.error}")

    async def _once(self, step: Step, out: Outgoing, learn: bool = True) -> LiveAnswer:
        limit = max(self.timeout, WAIT_FACTOR * step.exchange.duration_us / 1e6)

        def on_document(index: int, document: Json) -> None:
            if learn:
                self.ids.learn_document(step, index, document)
            self.events[step.number] = index + 1
            self.changed()

        self.sent += 1
        try:
            async with asyncio.timeout(limit):
                return await self.transport.send(step, out, limit, on_document)
        except TimeoutError:
            return LiveAnswer(error=f"no complete answer within {limit:g} s")

    async def _poll(self, send: Send, out: Outgoing) -> LiveAnswer:
        """Repeat the poll until it reports what the last recorded poll did (or time is up)."""
        wanted = poll_states(answer_documents(send.step.exchange.response))
        steps = send.steps
        span = (end_us(steps[-1].exchange) - steps[0].exchange.started_us) / 1e6
        gaps = [b.exchange.started_us - a.exchange.started_us for a, b in pairwise(steps)]
        pause = min(max(statistics.median(gaps) / 1e6, POLL_GAP[0]), POLL_GAP[1])
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(self.timeout, 2 * span)
        while True:
            answer = await self._once(send.step, out, learn=False)
            if answer.error or poll_states(answer.documents) == wanted:
                return answer
            if loop.time() + pause > deadline:
                self.notes.append(
                    f"#{send.step.number} {_operation(send.step)}: polled until "
                    f"time was up; the recorded state never came"
                )
                return answer
            await asyncio.sleep(pause)

    def _not_sent(self, send: Send, reason: str) -> None:
        for step in send.steps:
            self.not_sent.append(NotSent(step.number, _operation(step), reason))

    def _missing_reason(self, value: str, issuer: int | None) -> str:
        if issuer is None:
            return f"it names {value}, which the client chose in a request that was not sent"
        if issuer not in self._numbers:
            return f"it names {value}, handed out by #{issuer}, which verify did not send"
        sent = next((s for s in self.not_sent if s.number == issuer), None)
        if sent is not None:
            return f"it names {value}, handed out by #{issuer}, which was not sent"
        return (
            f"it names {value}, handed out by #{issuer}, whose live answer had no id in its place"
        )


def _operation(step: Step) -> str:
    return step.exchange.classification.operation or step.exchange.request.method
