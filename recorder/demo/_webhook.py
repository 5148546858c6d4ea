"""A tiny push-notification webhook that records every POST it receives.

Strategy: a stdlib ``ThreadingHTTPServer`` bound to 127.0.0.1:0 runs in a daemon thread.
Each POST is appended to a lock-guarded list (with a condition so callers can wait for a
count) and answered ``200 {}``; anything else gets ``405``. A body that is not JSON is kept
raw and marked (``json is None``), never a crash. ``stop()`` shuts the server down and
closes its socket, so the port is free again.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

from recorder.protocol import NOT_JSON, parse_json

__all__ = ["Delivery", "WebhookReceiver"]

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


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        length = int(self.headers.get("Content-Length") or 0)
        if length > _MAX_BODY:
            self._answer(413)
            return
        body = self.rfile.read(length)
        headers = {k.lower(): v for k, v in self.headers.items()}
        parsed = parse_json(body)
        document = None if parsed is NOT_JSON else parsed
        self.server.owner._record(Delivery(self.path, headers, body, document, time.monotonic()))
        self._answer(200)

    def do_GET(self) -> None:  # noqa: N802
        self._answer(405)

    def _answer(self, status: int) -> None:
        payload = b"{}"
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return  # keep test output quiet


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: WebhookReceiver


class WebhookReceiver:
    """Record push-notification POSTs on 127.0.0.1 on a free port.

    Use as a context manager (or call ``start()``/``stop()``). ``url`` is the base URL;
    any path under it is accepted and kept in ``Delivery.path``.

    Example::

        with WebhookReceiver() as hook:
            ...  # give hook.url to an agent as a push-config url
            assert hook.wait_for(4, timeout=5)
            assert hook.deliveries[0].headers["x-a2a-notification-token"] == "tok"
    """

    def __init__(self, host: str = "127.0.0.1") -> None:
        self._host = host
        self._lock = threading.Condition()
        self._deliveries: list[Delivery] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("WebhookReceiver is not running; call start() first")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self.port}/webhook"

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
        server = _Server((self._host, 0), _Handler)
        server.owner = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="webhook-receiver",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _record(self, delivery: Delivery) -> None:
        with self._lock:
            self._deliveries.append(delivery)
            self._lock.notify_all()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
