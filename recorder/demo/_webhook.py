"""A tiny push-notification webhook that records every POST it receives (`recorder._webhook`'s
server on 127.0.0.1, a free port); a body that is not JSON is kept raw, with ``json`` None.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Self

from recorder._background import Service
from recorder._webhook import Post, Reply, WebhookServer
from recorder.protocol import NOT_JSON, parse_json

# Bodies larger than this are refused (413): a webhook for tests, not a sink.
_MAX_BODY = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Delivery:
    """One POST the receiver got: path, headers (lower-cased names), body, arrival time."""

    path: str
    headers: dict[str, str]
    body: bytes
    json: Any
    arrived: float = field(compare=False)


class WebhookReceiver(Service):
    """Records push-notification POSTs to any path under ``url`` (a context manager)."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self._lock = threading.Condition()
        self._deliveries: list[Delivery] = []
        self._server = WebhookServer(
            self._record, name="WebhookReceiver", max_body=_MAX_BODY, host=host
        )

    @property
    def port(self) -> int:
        return int(self._server.origin.rpartition(":")[2])

    @property
    def url(self) -> str:
        return f"{self._server.origin}/webhook"

    @property
    def deliveries(self) -> list[Delivery]:
        """A snapshot copy of the deliveries so far, in arrival order."""
        with self._lock:
            return list(self._deliveries)

    def clear(self) -> None:
        with self._lock:
            self._deliveries.clear()

    def wait_for(self, n: int, timeout: float = 5.0) -> bool:
        """Block until at least ``n`` deliveries arrived; False on timeout."""
        with self._lock:
            return self._lock.wait_for(lambda: len(self._deliveries) >= n, timeout)

    def start(self) -> Self:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def _record(self, post: Post) -> Reply:
        parsed = parse_json(post.body)
        document = None if parsed is NOT_JSON else parsed
        delivery = Delivery(post.path, post.headers, post.body, document, time.monotonic())
        with self._lock:
            self._deliveries.append(delivery)
            self._lock.notify_all()
        return Reply(200)
