"""The replayer's HTTP/1.1 connections: httptools parses, a face answers (I/O).

An asyncio protocol of our own with only what the replayer needs: requests answered in order
(a face that must wait answers in a task of its own); a read deadline per request (`408`) and
an idle one (`KEEP_ALIVE`); size bounds (`431`, `413`) answered before a short drain (`LINGER`)
so the client reads the answer, not a reset; any reason phrase (a2a-sdk 0.3 shows only the
status line); connections dropped (FIN) or reset (RST) as faults ask.  No upgrade is spoken
(RFC 9110 §7.8): java.net.http offers `Upgrade: h2c` on every cleartext request, and httptools
stops at such a head, so the rest goes to a fresh parser behind a head framing it the same.
"""

from __future__ import annotations

import asyncio
import re
import socket
import struct
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol

import httptools

from recorder.capture import Request
from recorder.replay.core import Client
from recorder.replay.faces._limits import Limits

LINGER = 2.0  # seconds a refused connection is drained before it is closed
KEEP_ALIVE = 5.0  # seconds an idle connection between requests stays open
_REFUSALS = {
    408: b"Request Timeout",
    413: b"Content Too Large",
    431: b"Request Header Fields Too Large",
}
_PHRASE_JUNK = re.compile(rb"[^\t\x20-\x7e]")


class Face(Protocol):
    """What answers a connection's requests: at once (None), or in a task (an awaitable)."""

    def answer(self, request: Request, client: Client, out: Output) -> Awaitable[None] | None: ...


def reason_phrase(text: str, limit: int = 400) -> bytes:
    """A reason phrase that a status line can carry (printable ASCII, shortened)."""
    if text.isascii() and text.isprintable() and len(text) <= limit:
        return text.encode()  # most phrases ("OK")
    data = _PHRASE_JUNK.sub(b"?", text.encode("ascii", "replace"))
    return data if len(data) <= limit else data[: limit - 3] + b"..."


class Output:
    """How a face writes one answer on its connection."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._chunked = False
        self.finished = False

    def head(
        self,
        status: int,
        reason: str,
        headers: list[tuple[bytes, bytes]],
        length: int | None,
    ) -> None:
        """The status line and headers; `length` None: the body goes out chunked."""
        lines = [b"HTTP/1.1 %d %s\r\n" % (status, reason_phrase(reason))]
        lines += [b"%s: %s\r\n" % pair for pair in headers]
        if length is None:
            self._chunked = True
            lines.append(b"transfer-encoding: chunked\r\n")
        else:
            lines.append(b"content-length: %d\r\n" % length)
        if not self._connection.keep_alive:
            lines.append(b"connection: close\r\n")
        lines.append(b"\r\n")
        self._connection.write(b"".join(lines))

    def body(self, data: bytes) -> None:
        if not data:
            return
        self._connection.write(b"%x\r\n%s\r\n" % (len(data), data) if self._chunked else data)

    def end(self) -> None:
        if self.finished:
            return
        self.finished = True
        if self._chunked:
            self._connection.write(b"0\r\n\r\n")
        self._connection.answered()

    def whole(
        self, status: int, reason: str, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> None:
        """A whole answer, head and body in one write."""
        lines = [b"HTTP/1.1 %d %s\r\n" % (status, reason_phrase(reason))]
        lines += [b"%s: %s\r\n" % pair for pair in headers]
        lines.append(b"content-length: %d\r\n" % len(body))
        if not self._connection.keep_alive:
            lines.append(b"connection: close\r\n")
        lines += [b"\r\n", body]
        self._connection.write(b"".join(lines))
        self.finished = True
        self._connection.answered()

    def drop(self, reset: bool = False) -> None:
        """End the connection where the answer stands: closed after what was sent, or reset."""
        self.finished = True
        self._connection.drop(reset)

    async def drain(self) -> None:
        """Wait while the client reads slower than the answer is written."""
        await self._connection.drained()


class Connection(asyncio.Protocol):
    """One client's HTTP/1.1 connection (see the module docstring)."""

    transport: asyncio.Transport  # once connected

    def __init__(self, face: Face, limits: Limits, connections: set[Connection]) -> None:
        self.face = face
        self.limits = limits
        self.connections = connections
        self.loop = asyncio.get_running_loop()
        self.client = Client()
        self.keep_alive = True
        self.task: asyncio.Task[None] | None = None  # an answer written in the background
        self._parser = _NoUpgradeParser(self)
        self._queue: deque[Request] = deque()
        self._url = bytearray()
        self._headers: list[tuple[bytes, bytes]] = []
        self._body: list[bytes] = []
        self._body_bytes = 0
        self._head_bytes = 0
        self._in_head = True
        self._busy = False  # an answer is being written
        self._answering = False  # inside `_next`: an answer given at once frees the turn there
        self._method, self._version = "GET", "HTTP/1.1"
        self._idle = False
        self._closing = False
        self._refused = False
        self._framing: bytes | None = None  # a declined upgrade's body still to come, framed
        self._paused: asyncio.Future[None] | None = None
        self._due: float | None = None  # the request being read must be complete by then
        self._timer: asyncio.TimerHandle | None = None

    # -- asyncio -------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.client = Client.at(transport.get_extra_info("peername"))
        self.connections.add(self)
        self._arm(self.limits.read_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self.connections.discard(self)
        self._closing = True
        if self._timer is not None:
            self._timer.cancel()
        if self.task is not None and not self.task.done():
            self.task.cancel()
        if self._paused is not None and not self._paused.done():
            self._paused.set_result(None)

    def data_received(self, data: bytes) -> None:
        if self._refused or self._closing:
            return
        if self._in_head:  # counted per chunk, not per header: this runs on every request
            self._head_bytes += len(data)
            if self._head_bytes - len(data) > self.limits.max_head_bytes:
                self._refuse(431)
                return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError:
            self._refuse_with(400, b"Bad Request", b"400 Bad Request: not HTTP/1.1 as it reads\n")

    def pause_writing(self) -> None:
        if self._paused is None or self._paused.done():
            self._paused = self.loop.create_future()

    def resume_writing(self) -> None:
        if self._paused is not None and not self._paused.done():
            self._paused.set_result(None)

    async def drained(self) -> None:
        if self._paused is not None:
            await self._paused

    def close(self) -> None:
        """Close at once (the replayer stops)."""
        self._closing = True
        if hasattr(self, "transport"):
            self.transport.close()

    # -- httptools' callbacks --------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._in_head, self._body_bytes = True, 0
        self._url.clear()
        self._headers = []
        self._body = []
        self._arm(self.limits.read_timeout)

    def on_url(self, url: bytes) -> None:
        self._url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        self._in_head = False
        read, self._head_bytes = self._head_bytes, 0
        if self._refused:
            return
        limit = self.limits.max_head_bytes
        if read > limit and len(self._url) + sum(len(n) + len(v) for n, v in self._headers) > limit:
            self._refuse(431)  # (counted only when what was read could be that big)
            return
        parser = self._parser.inner
        self._method = parser.get_method().decode("ascii", "replace")
        self._version = f"HTTP/{parser.get_http_version()}"
        if not parser.should_keep_alive():
            self.keep_alive = False
        for name, value in self._headers:
            lowered = name.lower()
            if lowered == b"content-length":
                if value.strip().isdigit() and int(value) > self.limits.max_body_bytes:
                    self._refuse(413)
                    return
            elif lowered == b"expect" and value.strip().lower() == b"100-continue":
                self.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        if self._parser.inner.should_upgrade():  # an upgrade offer, its head complete
            self._framing = _body_framing(self._headers)

    def on_body(self, body: bytes) -> None:
        self._body_bytes += len(body)
        if self._body_bytes > self.limits.max_body_bytes:
            self._refuse(413)
        elif not self._refused:
            self._body.append(body)

    def on_message_complete(self) -> None:
        if self._framing is not None or self._refused:
            return  # httptools ends an upgrade offer at its head; its body comes after
        self._due = None
        headers = tuple(
            [
                (k.decode("utf-8", "surrogateescape"), v.decode("utf-8", "surrogateescape"))
                for k, v in self._headers
            ]
        )
        target = _text(bytes(self._url))
        body = b"".join(self._body)
        self._queue.append(Request(self._method, target, headers, body, self._version))
        if not self._busy:
            self._next()

    def take_framing(self) -> bytes | None:
        """The head that frames the body of a declined upgrade offer, if it has one (once)."""
        framing, self._framing = self._framing, None
        return framing

    # -- answering -------------------------------------------------------------------------

    def _next(self) -> None:
        self._answering = True
        try:
            while self._queue and not self._busy and not self._closing:
                request = self._queue.popleft()
                self._busy = True
                waiting = self.face.answer(request, self.client, Output(self))
                if waiting is not None:
                    self.task = self.loop.create_task(self._wait(waiting))
        finally:
            self._answering = False

    async def _wait(self, answering: Awaitable[None]) -> None:
        try:
            await answering
        except asyncio.CancelledError:
            self.close()
        if self._busy and not self._closing:
            self.drop(False)  # the face ended without an answer: nothing else can be said

    def answered(self) -> None:
        """One answer went out whole: the next request's turn, or the connection closes."""
        self._busy = False
        if not self.keep_alive:
            self.close()
            return
        if self._queue:
            if not self._answering:
                self.loop.call_soon(self._next)
        elif self._due is None:  # no next request begun: idle until one does
            self._arm(KEEP_ALIVE, idle=True)

    def write(self, data: bytes) -> None:
        if not self._closing:
            self.transport.write(data)

    def drop(self, reset: bool) -> None:
        self._busy = False
        self._closing = True
        if reset:
            sock = self.transport.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.transport.abort()
        else:
            self.transport.close()

    # -- deadlines and refusals --------------------------------------------------------------

    def _arm(self, seconds: float, *, idle: bool = False) -> None:
        self._due = self.loop.time() + seconds
        self._idle = idle
        if self._timer is None:
            self._timer = self.loop.call_at(self._due, self._check)

    def _check(self) -> None:
        self._timer = None
        if self._due is None or self._closing:
            return
        if self.loop.time() < self._due:  # a later request: wait for its deadline
            self._timer = self.loop.call_at(self._due, self._check)
            return
        self._due = None
        if self._busy:
            return  # an answer is on its way: its own pace
        if self._idle:
            self.close()  # idle between requests: closed as a keep-alive timeout closes
            return
        self._refuse(408)

    def _refuse(self, status: int) -> None:
        """Answer `status` with a short text and close, whatever was read so far."""
        text = f"{status} {_REFUSALS[status].decode()}: see the replayer's limits\n"
        self._refuse_with(status, _REFUSALS[status], text.encode())

    def _refuse_with(self, status: int, reason: bytes, text: bytes) -> None:
        if self._refused:
            return
        self._refused = True
        self._due = None
        if not self._busy:
            self.transport.write(
                b"HTTP/1.1 %d %s\r\ncontent-type: text/plain\r\ncontent-length: %d"
                b"\r\nconnection: close\r\n\r\n%s" % (status, reason, len(text), text)
            )
        # A lingering close: closing with unread bytes would reset the connection and lose
        # the answer, so the write side is shut and what still comes is read and dropped.
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER, self.close)


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _body_framing(headers: list[tuple[bytes, bytes]]) -> bytes | None:
    """A head framing the body as these headers do (None: no body); chunked wins (RFC 9112 §6.3)."""
    length = None
    for name, value in headers:
        lowered = name.lower()
        if lowered == b"transfer-encoding" and value.strip().lower().endswith(b"chunked"):
            return b"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n"
        if lowered == b"content-length" and value.strip().isdigit() and int(value) > 0:
            length = value.strip()
    return b"POST / HTTP/1.1\r\ncontent-length: %s\r\n\r\n" % length if length else None


class _NoUpgradeParser:
    """httptools' request parser that takes no upgrade (see the module docstring)."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self.inner = httptools.HttpRequestParser(connection)

    def feed_data(self, data: bytes) -> None:
        try:
            self.inner.feed_data(data)
        except httptools.HttpParserUpgrade as exc:
            rest = data[exc.args[0] :]
            framing = self._connection.take_framing()
            if framing is None:
                self.inner = httptools.HttpRequestParser(self._connection)
                self.feed_data(rest)
            else:
                self.inner = httptools.HttpRequestParser(_BodyAfterHead(self._connection, self))
                self.feed_data(framing + rest)


class _BodyAfterHead:
    """Callbacks for a made-up head, dropped, then the connection's bytes, passed on."""

    def __init__(self, connection: Connection, parser: _NoUpgradeParser) -> None:
        self._connection = connection
        self._parser = parser
        self._in_made_up_head = True

    def on_message_begin(self) -> None:
        if not self._in_made_up_head:
            self._connection.on_message_begin()

    def on_url(self, url: bytes) -> None:
        if not self._in_made_up_head:
            self._connection.on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        if not self._in_made_up_head:
            self._connection.on_header(name, value)

    def on_headers_complete(self) -> None:
        if self._in_made_up_head:
            self._in_made_up_head = False
        else:
            self._connection.on_headers_complete()

    def on_body(self, body: bytes) -> None:
        self._connection.on_body(body)

    def on_message_complete(self) -> None:
        self._connection.on_message_complete()


async def serve_http(
    sock: socket.socket,
    make: Callable[[set[Connection]], Connection],
    ready: Callable[[], None],
    stop: asyncio.Event,
) -> None:
    """Serve HTTP connections (`make` builds one) on `sock` until `stop` is set."""
    loop = asyncio.get_running_loop()
    connections: set[Connection] = set()
    server = await loop.create_server(lambda: make(connections), sock=sock)
    ready()
    try:
        await stop.wait()
    finally:
        server.close()
        for connection in list(connections):
            connection.close()
        await server.wait_closed()
