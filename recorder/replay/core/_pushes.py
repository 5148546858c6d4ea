"""Push deliveries to make on replay, and webhooks no delivery reached (pure).

A step's recorded deliveries are planned with the live webhook, token and ids (`plan`).  A
webhook no delivery reached is said at the end (`Webhooks.unreached`), and the replay is not
clean, when the recording could not have seen its deliveries (a push config set over gRPC).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from recorder.capture import Exchange, Headers
from recorder.protocol import NOTE_TO_RELAY, Binding, IdKind
from recorder.script import Step, Swap, delivery_url

DELIVERY_HEADERS_DROPPED = frozenset({"host", "content-length", "transfer-encoding", "connection"})
MAX_WEBHOOKS = 1000


@dataclass(frozen=True, slots=True)
class PlannedDelivery:
    """A recorded push delivery to make, with the live webhook and values."""

    exchange: Exchange
    url: str | None  # None: the client registered no webhook for it
    headers: Headers
    body: bytes
    offset_us: int  # from the start of the request that set it off, as recorded
    before: bool  # it completed before that request's answer did, in the recording


def plan(step: Step, deliveries: tuple[Exchange, ...], swap: Swap) -> tuple[PlannedDelivery, ...]:
    trigger = step.exchange
    end = trigger.started_us + trigger.duration_us
    return tuple(
        PlannedDelivery(
            d,
            swap.lookup(delivery_url(d.request)),
            tuple(
                (k, swap.text(v))
                for k, v in d.request.headers
                if k.lower() not in DELIVERY_HEADERS_DROPPED
            ),
            swap.body(d.request.body),
            d.started_us - trigger.started_us,
            d.started_us + d.duration_us <= end,
        )
        for d in deliveries
    )


class Webhooks:
    """Webhooks live clients set where the recording could not see deliveries, and which got one."""

    def __init__(self) -> None:
        self._set: dict[str, str] = {}  # live webhook URL -> what set it
        self._reached: set[str] = set()
        self._lock = threading.Lock()

    def served(self, step: Step, webhooks: list[str], has_deliveries: bool) -> None:
        """A step served to a request that set these live webhooks."""
        exchange = step.exchange
        if has_deliveries or exchange.classification.binding is not Binding.GRPC:
            return
        if any(note.startswith(NOTE_TO_RELAY) for note in exchange.notes):
            return  # relayed: the capture holds every delivery the agent made (here none)
        with self._lock:
            for url in webhooks:
                if len(self._set) < MAX_WEBHOOKS:
                    what = step.exchange.classification.operation
                    self._set.setdefault(url, f"#{step.number} {what}")

    def reached(self, url: str | None) -> None:
        if url:
            with self._lock:
                self._reached.add(url)

    def unreached(self) -> list[str]:
        with self._lock:
            return [
                f"push config set by a live request answered from {what} (webhook {url}): no "
                "delivery was made, and the recording holds none: it was set over gRPC, whose "
                "deliveries the recorder did not relay; record again to replay them"
                for url, what in self._set.items()
                if url not in self._reached
            ]


def webhook_slots(step: Step) -> list[int]:
    """The slots of a step's request that hold a webhook URL."""
    return [n for n, r in enumerate(step.slots) if r.slot.kind is IdKind.WEBHOOK]
