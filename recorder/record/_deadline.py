"""The deadline addon: a slow or stalled client cannot hold a connection open for ever.

mitmproxy's `tcp_timeout` (600 s of silence) is reset by every byte of a slowloris client, so a
request's head must be complete `a2a_read_timeout` seconds after the connection opened (or the
previous response ended), and its body as long after its head; else the connection is closed
and logged.  Arming only notes the due time (it runs on every request); one sweep closes what is
due.  The agent's streams and gRPC connections are not limited.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from mitmproxy import ctx, http
from mitmproxy.proxy.mode_specs import RegularMode, ReverseMode

from recorder.options import RECORD
from recorder.record._flows import field_value
from recorder.record._options import AddonOptionError, addon_options, declare, touched

logger = logging.getLogger(__name__)

OPTIONS = addon_options("read_timeout")
HTTP_SCHEMES = frozenset({"http", "https"})


@dataclass
class _Deadline:
    due: float | None = None  # loop time; None when nothing is awaited
    what: str = ""


class Deadlines:
    """mitmproxy addon; see the module docstring."""

    name = "a2a_deadlines"  # mitmproxy names addons by class; ours carry the a2a_ prefix

    def __init__(self) -> None:
        self.timeout: float = RECORD.by_name["read_timeout"].default
        self._deadlines: dict[str, _Deadline] = {}  # client connection id -> its deadline
        self._sweeping: asyncio.TimerHandle | None = None

    def load(self, loader: Any) -> None:
        declare(loader, OPTIONS)

    def configure(self, updated: set[str]) -> None:
        if not touched(updated, OPTIONS):
            return
        if ctx.options.a2a_read_timeout < 0:
            raise AddonOptionError("{read_timeout} must not be negative")
        self.timeout = float(ctx.options.a2a_read_timeout)

    # -- hooks --------------------------------------------------------------------------------

    def client_connected(self, client: Any) -> None:
        if _speaks_http(client):
            self._arm(client.id, "request head")

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        self._disarm(flow.client_conn.id)
        length = field_value(flow.request, b"content-length") or ""
        chunked = "chunked" in (field_value(flow.request, b"transfer-encoding") or "").lower()
        if length not in ("", "0") or chunked:
            self._arm(flow.client_conn.id, "request body")

    def request(self, flow: http.HTTPFlow) -> None:
        self._disarm(flow.client_conn.id)

    def http_connect(self, flow: http.HTTPFlow) -> None:
        self._disarm(flow.client_conn.id)  # a tunnel: what it carries has deadlines of its own

    def response(self, flow: http.HTTPFlow) -> None:
        # HTTP/1 keep-alive: the next request's head is due in time too.  Not after CONNECT or
        # an upgrade, where the connection stops carrying HTTP requests.
        if (
            flow.request.http_version.startswith("HTTP/1")
            and flow.request.method != "CONNECT"
            and flow.websocket is None
            and flow.response is not None
            and flow.response.status_code != 101
        ):
            self._arm(flow.client_conn.id, "next request head")

    def tcp_start(self, flow: Any) -> None:
        self._disarm(flow.client_conn.id)

    def client_disconnected(self, client: Any) -> None:
        self._deadlines.pop(client.id, None)

    # -- deadlines ------------------------------------------------------------------------------

    def _arm(self, connection: str, what: str) -> None:
        if not self.timeout:
            return
        loop: asyncio.AbstractEventLoop = ctx.master.event_loop
        deadline = self._deadlines.setdefault(connection, _Deadline())
        deadline.due, deadline.what = loop.time() + self.timeout, what
        if self._sweeping is None:
            self._sweeping = loop.call_later(self._period, self._sweep)

    def _disarm(self, connection: str) -> None:
        deadline = self._deadlines.get(connection)
        if deadline is not None:
            deadline.due = None

    @property
    def _period(self) -> float:
        return max(0.1, self.timeout / 4)  # a deadline is met at most a quarter late

    def _sweep(self) -> None:
        self._sweeping = None
        loop: asyncio.AbstractEventLoop = ctx.master.event_loop
        now, armed = loop.time(), False
        for connection, deadline in list(self._deadlines.items()):
            if deadline.due is None:
                continue
            if deadline.due <= now:
                deadline.due = None
                self._expire(connection, deadline.what)
            else:
                armed = True
        if armed:
            self._sweeping = loop.call_later(self._period, self._sweep)

    def _expire(self, connection: str, what: str) -> None:
        proxyserver: Any = ctx.master.addons.get("proxyserver")  # type: ignore[no-untyped-call]
        handler = proxyserver.connections.get(connection)
        if handler is None:
            return
        # As mitmproxy's own inactivity timeout does: cancel the client's connection handler.
        io = handler.transports.get(handler.client)
        if io is not None and io.handler is not None:
            logger.info(
                "closing %s: no %s within %.1f s", handler.client.peername, what, self.timeout
            )
            io.handler.cancel("a2a read timeout")


def _speaks_http(client: Any) -> bool:
    mode = getattr(client, "proxy_mode", None)
    if isinstance(mode, RegularMode):
        return True
    return isinstance(mode, ReverseMode) and mode.scheme in HTTP_SCHEMES
