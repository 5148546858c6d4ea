"""A fleet's forward-proxy face: clients use it as their HTTP proxy (I/O shell).

Every way in is routed by the authority the client names (`_route`): a proxied HTTP request
(`HTTP_PROXY`) to that agent's HTTP face, request by request; a CONNECT (grpcio's
`grpc_proxy`) spliced untouched to its gRPC face when the tunnel opens with HTTP/2, else its
HTTP face (TLS is refused); HTTP/2 with prior knowledge is held until its first `:authority`.
An unknown authority gets `502` with why, kept for the report (`Unrouted`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from recorder.capture import Request
from recorder.replay.core import Client
from recorder.replay.faces import LINGER, REPORT_PATH, Connection, Limits, Output
from recorder.replay.fleet._route import (
    EMPTY_SETTINGS,
    AckFilter,
    Route,
    Routes,
    TunnelKind,
    Unrouted,
    connect_target,
    h2_authority,
    opening,
    request_authority,
    same_authority,
    tls_text,
    tunnel_kind,
    unknown_text,
)

if TYPE_CHECKING:
    from recorder.replay.faces import Replayer

NO_AUTHORITY = "an HTTP/2 connection whose first request names no :authority"
ESTABLISHED = b"HTTP/1.1 200 Connection established\r\n\r\n"
TEXT = [(b"content-type", b"text/plain; charset=utf-8")]
JSON = [(b"content-type", b"application/json")]


class ProxyFace:
    """The forward proxy's answers to proxied requests, and what its CONNECT tunnels need."""

    def __init__(
        self,
        routes: Routes,
        agents: Sequence[Replayer],
        unrouted: Unrouted,
        report: Callable[[], dict[str, Any]],
    ) -> None:
        self.routes = routes
        self.agents = agents
        self.unrouted = unrouted
        self.report = report
        self.own = ""  # the proxy's own authority, once it listens

    def answer(self, request: Request, client: Client, out: Output) -> Awaitable[None] | None:
        where = request_authority(
            request.target.encode("utf-8", "surrogateescape"), request.header("host")
        )
        route = self.routes.find(where) if where else None
        if route is not None:
            parts = urlsplit(request.target)
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            local = Request(
                request.method, target, request.headers, request.body, request.http_version
            )
            return self.agents[route.agent].face.answer(local, client, out)
        asks_report = request.method == "GET" and urlsplit(request.target).path == REPORT_PATH
        if where and same_authority(where, self.own) and asks_report:
            out.whole(200, "OK", JSON, json.dumps(self.report()).encode())
            return None
        why = unknown_text(where, self.routes) if where else "the request names no host"
        self.unrouted.add(request.method, where or "-", why)
        out.whole(502, "Bad Gateway", TEXT, f"a2a-recorder fleet: {why}\n".encode())
        return None

    def address(self, route: Route, kind: TunnelKind) -> tuple[str, int] | None:
        """Where a tunnel of `kind` to the agent of `route` goes (None: nowhere)."""
        agent = self.agents[route.agent]
        if kind == "http":
            return agent.host, agent.port
        target = agent.grpc_target
        if kind != "grpc" or target is None:
            return None
        host, _, port = target.rpartition(":")
        return host.strip("[]"), int(port)


class ProxyConnection(Connection):
    """HTTP/1.1 as the replayer serves it; a CONNECT makes the connection a tunnel."""

    def __init__(self, face: ProxyFace, limits: Limits, connections: set[Connection]) -> None:
        super().__init__(face, limits, connections)
        self.proxy = face
        self._between = True  # between requests: the next bytes start one
        self._probe = b""  # the first bytes of a request, fewer than "CONNECT " has
        self._head: bytearray | None = None  # a CONNECT head being read
        self._h2: bytearray | None = None  # HTTP/2 to the proxy, until its first :authority
        self._tunnel: _Tunnel | None = None
        self._done = False  # answered and closing

    def data_received(self, data: bytes) -> None:
        if self._done:
            return
        if self._tunnel is not None:
            self._tunnel.from_client(data)
            return
        if self._head is None and self._h2 is None and self._between and not self._busy:
            data, self._probe = self._probe + data, b""
            kind = opening(data)
            if kind is None:
                self._probe = data
                return
            if kind == "connect":
                self._head = bytearray()
            elif kind == "h2":
                self._h2 = bytearray()
                self.transport.write(EMPTY_SETTINGS)
        if self._head is not None:
            self._read_connect(data)
        elif self._h2 is not None:
            self._read_h2(data)
        else:
            super().data_received(data)

    def on_message_begin(self) -> None:
        self._between = False
        super().on_message_begin()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._between = True

    def _read_connect(self, data: bytes) -> None:
        assert self._head is not None
        self._head += data
        end = self._head.find(b"\r\n\r\n")
        if end < 0:
            if len(self._head) > self.limits.max_head_bytes:
                self._close_with(431, "Request Header Fields Too Large", "CONNECT head too large")
            return
        head, rest = bytes(self._head[: end + 4]), bytes(self._head[end + 4 :])
        self._head = None
        self._due = None
        self._connect(head, rest)

    def _read_h2(self, data: bytes) -> None:
        """HTTP/2 to the proxy itself: held until its first `:authority`, then tunnelled there."""
        assert self._h2 is not None
        self._h2 += data
        where = h2_authority(bytes(self._h2))
        if where is None and len(self._h2) <= self.limits.max_head_bytes:
            return
        held, self._h2 = bytes(self._h2), None
        self._due = None
        route = self.proxy.routes.find(where) if where else None
        if route is None:
            why = unknown_text(where, self.proxy.routes) if where else NO_AUTHORITY
            self.proxy.unrouted.add("HTTP/2", where or "-", why)
            self._done = True
            self.transport.close()  # an HTTP/2 client reads this as UNAVAILABLE
            return
        assert where is not None
        self._tunnel = _Tunnel(self, where, route, AckFilter().feed)
        self._tunnel.from_client(held)

    def _connect(self, head: bytes, rest: bytes) -> None:
        face = self.proxy
        where = connect_target(head)
        if where is None:
            self._close_with(400, "Bad Request", "expected CONNECT host:port HTTP/1.1")
            return
        route = face.routes.find(where)
        if route is None or route.scheme == "https":
            why = unknown_text(where, face.routes) if route is None else tls_text(where)
            face.unrouted.add("CONNECT", where, why)
            self._close_with(502, "Bad Gateway", f"a2a-recorder fleet: {why}")
            return
        self.transport.write(ESTABLISHED)
        self._tunnel = _Tunnel(self, where, route)
        self._tunnel.from_client(rest)

    def _close_with(self, status: int, reason: str, text: str) -> None:
        """Answer `status` with `text` and close (a lingering close, as `_refuse`)."""
        self._done = True
        self._due = None
        body = f"{text}\n".encode()
        self.transport.write(
            b"HTTP/1.1 %d %s\r\ncontent-type: text/plain; charset=utf-8\r\n"
            b"content-length: %d\r\nconnection: close\r\n\r\n%s"
            % (status, reason.encode(), len(body), body)
        )
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER, self.transport.close)

    def pause_writing(self) -> None:
        if self._tunnel is not None:
            self._tunnel.pause(True)
            return
        super().pause_writing()

    def resume_writing(self) -> None:
        if self._tunnel is not None:
            self._tunnel.pause(False)
            return
        super().resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._tunnel is not None:
            self._tunnel.close()
        super().connection_lost(exc)


class _Tunnel:
    """One CONNECT tunnel, bytes untouched: the agent's listener is chosen by its first bytes, and
    what the client sends until it is connected is held."""

    def __init__(
        self,
        front: ProxyConnection,
        where: str,
        route: Route,
        through: Callable[[bytes], bytes] | None = None,
    ) -> None:
        self.front = front
        self.where = where
        self.route = route
        self.through = through  # what the client's bytes pass through on their way
        self._held = bytearray()
        self._opening: asyncio.Task[None] | None = None
        self._back: asyncio.Transport | None = None

    def from_client(self, data: bytes) -> None:
        if self.through is not None:
            data = self.through(data)
        if self._back is not None:
            self._back.write(data)
            return
        self._held += data
        if self._opening is not None:
            return
        kind = tunnel_kind(bytes(self._held))
        if kind is None:
            return
        address = self.front.proxy.address(self.route, kind)
        if address is None:
            why = tls_text(self.where) if kind == "tls" else "the agent has no gRPC face"
            self._give_up(why)
            return
        self._opening = self.front.loop.create_task(self._open(address))

    async def _open(self, address: tuple[str, int]) -> None:
        client = self.front.transport
        try:
            back, _ = await self.front.loop.create_connection(
                lambda: _Back(client), address[0], address[1]
            )
        except OSError as exc:
            self._give_up(f"the agent's listener {address[0]}:{address[1]} refused: {exc}")
            return
        if client.is_closing():
            back.close()
            return
        back.write(bytes(self._held))
        self._held.clear()
        self._back = back

    def _give_up(self, why: str) -> None:
        self.front.proxy.unrouted.add("CONNECT", self.where, why)
        self.front.transport.close()

    def pause(self, paused: bool) -> None:
        """The client reads slower than the agent writes (or caught up again)."""
        if self._back is not None:
            (self._back.pause_reading if paused else self._back.resume_reading)()

    def close(self) -> None:
        if self._opening is not None and not self._opening.done():
            self._opening.cancel()
        if self._back is not None:
            self._back.close()


class _Back(asyncio.Protocol):
    """The tunnel's connection to the agent's listener: what comes back goes to the client."""

    def __init__(self, client: asyncio.Transport) -> None:
        self.client = client

    def data_received(self, data: bytes) -> None:
        self.client.write(data)

    def eof_received(self) -> bool | None:
        if self.client.can_write_eof():
            self.client.write_eof()
        return True  # keep the other direction open until the client closes

    def connection_lost(self, exc: Exception | None) -> None:
        self.client.close()

    def pause_writing(self) -> None:
        self.client.pause_reading()

    def resume_writing(self) -> None:
        self.client.resume_reading()
