"""The recorded capture as a plan of sends: what to send, in what order, after what (pure).

Steps go out in the order their requests started.  A `Send` waits for what had happened in the
recording when its request started: the earlier exchanges that had completed, as many events of
a `concurrent` stream as had arrived, and the push deliveries done by then.  A run of identical
polls (the diff's rule) is one `Send` of several steps.  Push deliveries are expected, not sent;
an exchange recorded without a response is `Plan.skipped`.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from recorder._background import url_key
from recorder.capture import Capture, Exchange
from recorder.diff import POLL_OPERATIONS
from recorder.protocol import PUSH_DELIVERY, event_data
from recorder.script import Script, Step, delivery_url, load_script


@dataclass(frozen=True, slots=True)
class Send:
    """One request to send (or, for a poll run, to repeat), and what must happen first."""

    steps: tuple[Step, ...]  # one step, or a run of identical polls (compared: the last)
    concurrent: frozenset[int] = frozenset()  # earlier exchanges still running at its start
    events: tuple[tuple[int, int], ...] = ()  # (exchange, events it had streamed by then)
    deliveries: tuple[tuple[str, int], ...] = ()  # (webhook key, deliveries done by then)
    waits_us: Mapping[int, int] = field(default_factory=dict)  # exchange -> recorded gap

    @property
    def step(self) -> Step:
        """The step whose answer is compared and learnt from (a poll run's last)."""
        return self.steps[-1]

    @property
    def numbers(self) -> frozenset[int]:
        return frozenset(s.number for s in self.steps)

    @property
    def is_poll(self) -> bool:
        return len(self.steps) > 1


@dataclass(frozen=True, slots=True)
class Skipped:
    exchange: Exchange
    reason: str


@dataclass(frozen=True)
class Plan:
    script: Script
    sends: tuple[Send, ...]
    skipped: tuple[Skipped, ...] = ()
    # Recorded deliveries by the key of the webhook they went to (`url_key`), in order.
    deliveries: Mapping[str, tuple[Exchange, ...]] = field(default_factory=dict)

    @property
    def numbers(self) -> frozenset[int]:
        """The recorded exchanges verify sends or expects."""
        sent = {n for s in self.sends for n in s.numbers}
        return frozenset(sent | {d.number for ds in self.deliveries.values() for d in ds})


def make_plan(capture: Capture) -> Plan:
    script = load_script([capture])
    deliveries = _deliveries(capture.exchanges)
    sends = _fold_polls(_sends(script.steps, deliveries))
    in_script = {s.number for s in script.steps}
    skipped = tuple(
        Skipped(e, _why_not(e))
        for e in capture.exchanges
        if e.number not in in_script and e.classification.operation != PUSH_DELIVERY
    )
    return Plan(script, tuple(sends), skipped, deliveries)


def _why_not(exchange: Exchange) -> str:
    cause = f" ({exchange.error})" if exchange.error else ""
    return f"recorded without a response{cause}: nothing to compare it with"


def end_us(exchange: Exchange) -> int:
    return exchange.started_us + exchange.duration_us


def _sends(steps: Sequence[Step], deliveries: Mapping[str, tuple[Exchange, ...]]) -> list[Send]:
    running: list[tuple[int, int, Step]] = []  # heap of (end, number, step) of earlier steps
    ends = {key: sorted(end_us(d) for d in found) for key, found in deliveries.items()}
    sends: list[Send] = []
    for step in steps:
        start = step.exchange.started_us
        while running and running[0][0] <= start:
            heapq.heappop(running)
        concurrent = [s for _, _, s in running]
        events = tuple((s.number, n) for s in concurrent if (n := events_by(s.exchange, start)))
        done = tuple(
            (key, n) for key, times in ends.items() if (n := bisect.bisect_right(times, start))
        )
        waits = {s.number: start - s.exchange.started_us for s in concurrent}
        sends.append(Send((step,), frozenset(s.number for s in concurrent), events, done, waits))
        heapq.heappush(running, (end_us(step.exchange), step.number, step))
    return sends


def events_by(exchange: Exchange, at_us: int) -> int:
    """How many data events (or gRPC messages) the exchange surely had streamed by `at_us`:
    offsets count from the response head, whose time the capture does not hold, so it is put as
    late as it can have been, and an event a later request caused is never waited for."""
    response = exchange.response
    if response is None:
        return 0
    offsets = [e.offset_us for e in response.events if event_data(e.lines)]
    offsets += [m.offset_us for m in response.messages]
    if not offsets:
        return 0
    head = end_us(exchange) - max(offsets)
    return sum(1 for offset in offsets if head + offset < at_us)


def _fold_polls(sends: Iterable[Send]) -> list[Send]:
    folded: list[Send] = []
    for send in sends:
        last = folded[-1] if folded else None
        if last is not None and _continues(last, send):
            folded[-1] = Send(
                (*last.steps, send.step),
                last.concurrent,
                last.events,
                last.deliveries,
                last.waits_us,
            )
        else:
            folded.append(send)
    return folded


def _continues(run: Send, send: Send) -> bool:
    """Whether `send` repeats the poll `run` ends with, nothing new running beside it."""
    step, previous = send.step, run.step
    return (
        step.exchange.classification.operation in POLL_OPERATIONS
        and step.key == previous.key
        and previous.number not in send.concurrent
        and send.concurrent <= run.concurrent
    )


def _deliveries(exchanges: Iterable[Exchange]) -> dict[str, tuple[Exchange, ...]]:
    found: dict[str, list[Exchange]] = {}
    ordered = sorted(exchanges, key=lambda e: (e.started_us, e.number))
    for exchange in ordered:
        if exchange.classification.operation == PUSH_DELIVERY:
            found.setdefault(url_key(delivery_url(exchange.request)), []).append(exchange)
    return {key: tuple(found[key]) for key in found}
