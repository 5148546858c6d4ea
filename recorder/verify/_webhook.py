"""Verify's own webhook: it takes the agent's push deliveries and answers as the recorded one did.

Each recorded webhook URL gets a live URL on this receiver: its path kept (a second webhook
with the same path gets a `/hook-N` prefix), its origin ours.  The k-th delivery to it is
answered with the k-th recorded delivery's response (the last one again after that; `200 {}`
when none was recorded), and counted, so that the plan can wait for deliveries.

The recorder's push relay puts its own URL in every push config (HTTP and gRPC alike), and
forwards each delivery here; the recorder records it.

Deliveries are compared only for webhooks the recording holds deliveries to: a recording with
none cannot tell an agent that did not deliver from a recorder that did not see it (gRPC by a
recorder older than its gRPC relay, without the push proxy).  `_run` leaves the others out of
the comparison and says how many there were.

A stdlib `ThreadingHTTPServer` on 127.0.0.1 on a free port, in a daemon thread; `notify` is
called (from its threads) after every delivery.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit

from recorder._background import url_key
from recorder.capture import Exchange, Response

DEFAULT_ANSWER = Response(200, "OK", (("Content-Type", "application/json"),), b"{}")
_HOP = frozenset(
    {
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authorization",
        "date",
        "server",
    }
)
MAX_BODY = 16 * 1024 * 1024


class Receiver:
    """The two listeners and what they have received (see the module docstring)."""

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
        self._server: ThreadingHTTPServer | None = None

    # -- addresses ------------------------------------------------------------------------------

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
        if self._server is None:
            raise RuntimeError("the receiver is not running")
        host, port = self._server.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else host
        return f"http://{name}:{port}"

    # -- answering ------------------------------------------------------------------------------

    def answer(self, path: str) -> Response:
        key = self._paths.get(path)
        if key is None:
            return Response(
                404,
                "Not Found",
                (("Content-Type", "application/json"),),
                b'{"error":"no such webhook"}',
            )
        with self._lock:
            k = self._counts.get(key, 0)
            self._counts[key] = k + 1
            self.relayed += 1
        self.notify()
        found = self.recorded.get(key, ())
        answered = found[min(k, len(found) - 1)].response if found else None
        return answered or DEFAULT_ANSWER

    # -- running --------------------------------------------------------------------------------

    def start(self) -> Self:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.receiver = self
        self._server = server
        threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="verify-webhook",
            daemon=True,
        ).start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    receiver: Receiver


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        body = self._body()
        if body is None:
            self._send(Response(413, "Content Too Large", (), b""))
            return
        self._send(self.server.receiver.answer(self.path))

    def _body(self) -> bytes | None:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return self._chunked()
        length = int(self.headers.get("Content-Length") or 0)
        return None if length > MAX_BODY else self.rfile.read(length)

    def _chunked(self) -> bytes | None:
        data = b""
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                self.rfile.readline()
                return data
            data += self.rfile.read(size)
            self.rfile.readline()
            if len(data) > MAX_BODY:
                return None

    def _send(self, response: Response) -> None:
        self.send_response(response.status, response.reason or None)
        for name, value in response.headers:
            if name.lower() not in _HOP:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        self.end_headers()
        self.wfile.write(response.body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return
