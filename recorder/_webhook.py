"""The one webhook receiver: it takes POSTs on a free port and lets its owner answer them.

A stdlib `ThreadingHTTPServer` (HTTP/1.1, chunked bodies read) in a thread its owner starts
and stops (the demo's `WebhookReceiver`, verify's `Receiver`).  Each POST goes to
`answer(post)`, from the server's threads; any other method gets `405`, a body over `max_body`
`413`, unread.  `stop()` frees the port and joins the thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from recorder._errors import StateError

JSON_HEADERS = (("Content-Type", "application/json"),)


@dataclass(frozen=True, slots=True)
class Post:
    """One POST as it came: its path (and query), its headers (names lower-cased), its body."""

    path: str
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True, slots=True)
class Reply:
    """What to answer a POST with (`Content-Length` is added)."""

    status: int
    reason: str | None = None
    headers: tuple[tuple[str, str], ...] = JSON_HEADERS
    body: bytes = b"{}"


TOO_LARGE = Reply(413, "Content Too Large", (), b"")
NOT_ALLOWED = Reply(405)


class WebhookServer:
    """Serves `answer` on `host`, a free port (see the module docstring)."""

    def __init__(
        self, answer: Callable[[Post], Reply], *, name: str, max_body: int, host: str = "127.0.0.1"
    ) -> None:
        self.answer = answer
        self.max_body = max_body
        self._name = name
        self._host = host
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def origin(self) -> str:
        """`http://host:port`; StateError unless running."""
        if self._server is None:
            raise StateError(f"{self._name} is not running; call start() first")
        return f"http://{self._host}:{self._server.server_address[1]}"

    def start(self) -> None:
        server = _Server((self._host, 0), _Handler)
        server.owner = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name=self._name
        )
        self._thread.daemon = True
        self._thread.start()

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: WebhookServer


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # http.server naming
        body = self._body()
        if body is None:
            self._send(TOO_LARGE)
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        self._send(self.server.owner.answer(Post(self.path, headers, body)))

    def do_GET(self) -> None:
        self._send(NOT_ALLOWED)

    def _body(self) -> bytes | None:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return self._chunked()
        length = int(self.headers.get("Content-Length") or 0)
        return None if length > self.server.owner.max_body else self.rfile.read(length)

    def _chunked(self) -> bytes | None:
        data = b""
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                self.rfile.readline()
                return data
            data += self.rfile.read(size)
            self.rfile.readline()
            if len(data) > self.server.owner.max_body:
                return None

    def _send(self, reply: Reply) -> None:
        self.send_response(reply.status, reply.reason)
        for name, value in reply.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)

    def log_message(self, format: str, *args: Any) -> None:
        return  # quiet: the owner says what it received
