"""Verify's own webhook: it takes the agent's push deliveries and answers as the recorded one did.

Each recorded webhook URL gets a live URL here (its path kept, `/hook-N` before a path already
taken).  The k-th delivery to it gets the k-th recorded delivery's response (then the last
again; `200` when none was recorded), and is counted for the plan to wait on.  The recorder's
push relay forwards every delivery here, and records it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Self
from urllib.parse import urlsplit

from recorder._background import Service, url_key
from recorder._webhook import Post, Reply, WebhookServer
from recorder.capture import Exchange

DEFAULT_ANSWER = Reply(200, "OK")
NO_SUCH_WEBHOOK = Reply(404, "Not Found", body=b'{"error":"no such webhook"}')
_HOP = frozenset({
    "host", "content-length", "transfer-encoding", "connection", "keep-alive", "proxy-connection",
    "proxy-authorization", "date", "server",
})  # fmt: skip
MAX_BODY = 16 * 1024 * 1024


class Receiver(Service):
    """The webhook's listener, its URLs for the recorded webhooks, and what came to each."""

    def __init__(
        self,
        recorded: Mapping[str, tuple[Exchange, ...]],
        notify: Callable[[], None] = lambda: None,
    ) -> None:
        self.recorded = recorded  # webhook key -> recorded deliveries, in order
        self.notify = notify
        self._paths: dict[str, str] = {}  # our path (and query) -> recorded webhook key
        self._by_key: dict[str, str] = {}  # recorded webhook key -> our path
        self._counts: dict[str, int] = {}
        self.relayed = 0  # deliveries that reached us (the recorder carried them)
        self._lock = threading.Lock()
        self._server = WebhookServer(self._answer, name="verify-webhook", max_body=MAX_BODY)

    def live_url(self, recorded_url: str) -> str:
        """Our URL for a recorded webhook."""
        key = url_key(recorded_url)
        path = self._by_key.get(key) or self._allocate(key, recorded_url)
        return self.origin + path

    def _allocate(self, key: str, url: str) -> str:
        parts = urlsplit(url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if path in self._paths:
            path = f"/hook-{len(self._by_key) + 1}{path}"
        self._paths[path] = key
        self._by_key[key] = path
        return path

    def webhook_of(self, url: str) -> str | None:
        """The recorded webhook (its key) that one of our URLs stands for, or None."""
        parts = urlsplit(url)
        return self._paths.get((parts.path or "/") + (f"?{parts.query}" if parts.query else ""))

    def received(self, key: str) -> int:
        with self._lock:
            return self._counts.get(key, 0)

    @property
    def origin(self) -> str:
        return self._server.origin

    def _answer(self, post: Post) -> Reply:
        key = self._paths.get(post.path)
        if key is None:
            return NO_SUCH_WEBHOOK
        with self._lock:
            k = self._counts.get(key, 0)
            self._counts[key] = k + 1
            self.relayed += 1
        self.notify()
        found = self.recorded.get(key, ())
        answered = found[min(k, len(found) - 1)].response if found else None
        if answered is None:
            return DEFAULT_ANSWER
        headers = tuple((n, v) for n, v in answered.headers if n.lower() not in _HOP)
        return Reply(answered.status, answered.reason or None, headers, answered.body)

    def start(self) -> Self:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()
