"""uvicorn's HTTP/1.1 protocol with what the replayer needs beyond it (I/O).

uvicorn has a keep-alive timeout (idle between requests) but none for reading a request: a
client that trickles its headers, or sends a `Content-Length` larger than its body, holds a
connection for ever (slowloris).  ASGI has no way to set a reason phrase, and a2a-sdk 0.3's
HTTP+JSON client shows nothing of an error response but its status line.
`limited_protocol(limits)` is uvicorn's httptools protocol with these additions:

- a *read deadline*: from the connection's first byte, or the next request's, the whole
  request (head and body) must arrive within `read_timeout` seconds; otherwise the client gets
  `408 Request Timeout` and the connection is closed.  A connection that sends nothing at all
  is closed after the same time.
- a *size bound*: a head larger than `max_head_bytes` gets `431`, a body (declared or sent)
  larger than `max_body_bytes` gets `413 Content Too Large`, and the connection is closed
  (after a short drain, so that the client reads the answer instead of a reset).
- a *reason phrase*: an `http.response.start` message with a `"reason"` (bytes) gets that
  phrase on its status line instead of the standard one;
- a *dropped connection*: a `{"type": DROP, "reset": bool}` message ends the connection where
  the answer stands: closed (a FIN after what was sent: the client sees an answer cut off)
  or, with `reset`, reset (SO_LINGER 0: an RST, nothing more sent).  The fault profiles' cut
  and reset (`_faults`).  Another ASGI server refuses the message as unknown and closes the
  connection: a drop too, with an error logged;
- *no upgrades*: the replayer speaks neither h2c nor WebSocket, so an upgrade offer is
  ignored and the request answered over HTTP/1.1, as RFC 9110 §7.8 says a server may.  The
  Java SDK's client (java.net.http) offers `Upgrade: h2c` on every cleartext request, body
  included.  httptools stops at the end of an offering head (as if the body were the new
  protocol's) and uvicorn would drop the rest; `_NoUpgradeParser` takes what follows the head
  into a fresh parser instead, behind a made-up head that frames the body as the client's
  head did (`Content-Length` or chunked), whose own callbacks go nowhere.

This builds on uvicorn's `HttpToolsProtocol` and `RequestResponseCycle`, which uvicorn does not
document as public: pyproject.toml bounds uvicorn above, and the install tests run the
SDK-free tests of this face (`tests/integration/test_replay_http_face.py`) at the lowest and
the newest uvicorn it allows.

The gRPC face gets the same bounds from grpcio's options and its handler (`_grpcserver`).
"""

from __future__ import annotations

import re
import socket
import struct
from asyncio import TimerHandle, Transport
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import (
    STATUS_LINE,
    HttpToolsProtocol,
    RequestResponseCycle,
)

from recorder.replay._limits import Limits

LINGER = 2.0  # seconds a refused connection is drained before it is closed
DROP = "a2a-recorder.drop"  # the ASGI message that drops the connection (see above)
_REASONS = {
    408: b"Request Timeout",
    413: b"Content Too Large",
    431: b"Request Header Fields Too Large",
}


def limited_protocol(limits: Limits) -> type[HttpToolsProtocol]:
    """uvicorn's HTTP/1.1 protocol class with `limits` enforced."""
    return type("LimitedHttpProtocol", (_LimitedProtocol,), {"limits": limits})


class _LimitedProtocol(HttpToolsProtocol):
    limits: Limits = Limits()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The request being read must be complete by `_due`; one timer per connection checks,
        # re-armed only when it fires early (not one timer per request).
        self._due: float | None = None
        self._timer: TimerHandle | None = None
        self._in_head = True  # reading a request's head
        self._head_bytes = 0  # bytes received while reading it (bodies pipelined along count)
        self._body_bytes = 0
        self._refused = False
        self._framing: bytes | None = None  # a declined upgrade's body still to come, framed so
        self._parser = _NoUpgradeParser(self)
        self.parser = self._parser  # type: ignore[assignment]  # what uvicorn feeds and asks

    def connection_made(self, transport: Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._timer is not None:
            self._timer.cancel()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if self._in_head:  # counted per chunk, not per header: this runs on every request
            self._head_bytes += len(data)
            if self._head_bytes - len(data) > self.limits.max_head_bytes:
                self._refuse(431)
                return
        super().data_received(data)

    def on_message_begin(self) -> None:
        self._in_head, self._body_bytes = True, 0
        self._arm()
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._in_head = False
        read, self._head_bytes = self._head_bytes, 0
        if self._refused:
            return
        if read > self.limits.max_head_bytes and self._head_size() > self.limits.max_head_bytes:
            self._refuse(431)  # (counted only when what was read could be that big)
            return
        for name, value in self.headers:
            if name == b"content-length":
                if value.isdigit() and int(value) > self.limits.max_body_bytes:
                    self._refuse(413)
                    return
                break
        if self._parser.offers_upgrade():
            self._framing = _body_framing(self.headers)
        super().on_headers_complete()
        if type(self.cycle) is RequestResponseCycle:
            self.cycle.__class__ = _ReasonCycle  # the same object, with `send` reading "reason"

    def _head_size(self) -> int:
        return len(self.url) + sum(len(n) + len(v) for n, v in self.headers)

    def on_body(self, body: bytes) -> None:
        self._body_bytes += len(body)
        if self._body_bytes > self.limits.max_body_bytes:
            self._refuse(413)
        if not self._refused:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if self._framing is not None:
            return  # httptools ends an upgrade offer at its head; its body comes after
        self._disarm()
        if not self._refused:
            super().on_message_complete()

    def take_framing(self) -> bytes | None:
        """The head that frames the body of a declined upgrade offer, if it has one (once)."""
        framing, self._framing = self._framing, None
        return framing

    def _arm(self) -> None:
        self._due = self.loop.time() + self.limits.read_timeout
        if self._timer is None:
            self._timer = self.loop.call_at(self._due, self._check)

    def _disarm(self) -> None:
        self._due = None

    def _check(self) -> None:
        self._timer = None
        if self._due is None or self.transport.is_closing():
            return
        if self.loop.time() < self._due:  # a later request: wait for its deadline
            self._timer = self.loop.call_at(self._due, self._check)
            return
        self._due = None
        if (
            self.cycle is not None
            and not self.cycle.response_complete
            and (self.cycle.response_started)
        ):
            self.transport.close()  # an answer is on its way: nothing else can be said
            return
        self._refuse(408)

    def _refuse(self, status: int) -> None:
        """Answer `status` with a short text and close, whatever was read so far."""
        if self._refused:
            return
        self._refused = True
        self._disarm()
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True  # the app's receive() then says so
            self.cycle.message_event.set()
        text = f"{status} {_REASONS[status].decode()}: see the replayer's limits\n".encode()
        self.transport.write(
            b"HTTP/1.1 %d %s\r\ncontent-type: text/plain\r\ncontent-length: %d"
            b"\r\nconnection: close\r\n\r\n%s" % (status, _REASONS[status], len(text), text)
        )
        # A lingering close: closing with unread bytes would reset the connection and lose
        # the answer, so the write side is shut and what still comes is read and dropped.
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER, self.transport.close)


def _body_framing(headers: list[tuple[bytes, bytes]]) -> bytes | None:
    """A head saying how the body is framed, as these (lower-case) headers frame it; None when
    there is no body.  Chunked wins over a length (RFC 9112 §6.3)."""
    length = None
    for name, value in headers:
        if name == b"transfer-encoding" and value.strip().lower().endswith(b"chunked"):
            return b"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n"
        if name == b"content-length" and value.strip().isdigit() and int(value) > 0:
            length = value.strip()
    return b"POST / HTTP/1.1\r\ncontent-length: %s\r\n\r\n" % length if length else None


class _NoUpgradeParser:
    """httptools' request parser for a server that takes no upgrade: see the module docstring.

    uvicorn asks it `should_upgrade()` (never, here) and feeds it; after an offering head, the
    rest of the connection goes to a fresh parser.
    """

    def __init__(self, protocol: _LimitedProtocol) -> None:
        self._protocol = protocol
        self._inner = httptools.HttpRequestParser(protocol)

    def offers_upgrade(self) -> bool:
        """The request being read offered an upgrade (ask once its head is complete)."""
        return bool(self._inner.should_upgrade())

    def should_upgrade(self) -> bool:
        return False

    def feed_data(self, data: bytes) -> None:
        try:
            self._inner.feed_data(data)
        except httptools.HttpParserUpgrade as exc:
            rest = data[exc.args[0] :]
            framing = self._protocol.take_framing()
            if framing is None:
                self._inner = httptools.HttpRequestParser(self._protocol)
                self.feed_data(rest)
            else:
                self._inner = httptools.HttpRequestParser(_BodyAfterHead(self._protocol))
                self.feed_data(framing + rest)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _BodyAfterHead:
    """Parser callbacks for a made-up head and then the connection's bytes: the head's own
    callbacks are dropped, everything after it goes to `protocol`."""

    def __init__(self, protocol: _LimitedProtocol) -> None:
        self._protocol = protocol
        self._in_made_up_head = True

    def on_message_begin(self) -> None:
        if not self._in_made_up_head:
            self._protocol.on_message_begin()

    def on_url(self, url: bytes) -> None:
        if not self._in_made_up_head:
            self._protocol.on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        if not self._in_made_up_head:
            self._protocol.on_header(name, value)

    def on_headers_complete(self) -> None:
        if self._in_made_up_head:
            self._in_made_up_head = False
        else:
            self._protocol.on_headers_complete()

    def on_body(self, body: bytes) -> None:
        self._protocol.on_body(body)

    def on_message_complete(self) -> None:
        self._protocol.on_message_complete()


_PHRASE_JUNK = re.compile(rb"[^\t\x20-\x7e]")


def reason_phrase(text: str, limit: int = 400) -> bytes:
    """A reason phrase that a status line can carry (printable ASCII, shortened)."""
    data = _PHRASE_JUNK.sub(b"?", text.encode("ascii", "replace"))
    return data if len(data) <= limit else data[: limit - 3] + b"..."


class _ReasonCycle(RequestResponseCycle):
    """uvicorn's request cycle, sending the head with the first body bytes (one write, not
    two) and with the start message's `reason` as the status line's phrase."""

    _held: Any = None

    async def send(self, message: Any) -> None:
        if message.get("type") == DROP:
            await self._drop(bool(message.get("reset")))
            return
        if message.get("type") == "http.response.start" and not self.response_started:
            self._held = message
            return
        start, self._held = self._held, None
        if start is None:
            await super().send(message)
            return
        buffered = _Buffered(self.transport, start)
        self.transport = buffered  # type: ignore[assignment]
        try:
            await super().send(start)
            await super().send(message)
        finally:
            self.transport = buffered.inner
            buffered.flush()

    async def _drop(self, reset: bool) -> None:
        """End the connection where the answer stands: closed after what was sent, or reset."""
        if self._held is not None and not reset:  # the head, then nothing more
            await self.send({"type": "http.response.body", "body": b"", "more_body": True})
        self._held = None
        self.keep_alive = False
        self.disconnected = True  # uvicorn then neither completes nor complains
        if reset:
            sock = self.transport.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.transport.abort()
        else:
            self.transport.close()


class _Buffered:
    """Collects what a cycle writes (the head, then body bytes) to write it at once; closes
    only after that.  The first status line gets the start message's reason, if it has one."""

    def __init__(self, inner: Transport, start: Any) -> None:
        self.inner = inner
        self._chunks: list[bytes] = []
        self._close = False
        reason = start.get("reason")
        status = int(start["status"])
        self._old = STATUS_LINE.get(status, b"") if reason else b""
        self._new = (
            b"HTTP/1.1 %d %s\r\n" % (status, reason_phrase(reason.decode("latin-1")))
            if reason
            else b""
        )

    def write(self, data: bytes) -> None:
        if self._old and data.startswith(self._old):
            data = self._new + data[len(self._old) :]
            self._old = b""
        self._chunks.append(data)

    def close(self) -> None:
        self._close = True

    def flush(self) -> None:
        if self._chunks:
            self.inner.write(b"".join(self._chunks))
            self._chunks = []
        if self._close:
            self.inner.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
