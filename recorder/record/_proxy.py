"""Run mitmproxy in-process with the recording addons: the shell the CLI and the tests use.

Facts this module is built around (mitmproxy 12):
- The master must be built inside the loop that runs it: `_serve()` builds it, in the caller's
  loop (`async with`) or in a thread of its own (`with`, `start()`).
- The master carries only the addons a proxy needs (`PROXY_ADDONS`): mitmproxy calls every
  addon for every event, and mitmdump's 30-odd tools cost about a quarter of the recorder's CPU
  (`scripts/profile-record`).  Their options are unknown here: `mitm_options` naming one is a
  `ProxyStartError`.  Nor is `errorcheck` loaded (its `sys.exit(1)` would take the caller's
  loop down): the errors logged at start become a `ProxyStartError`.
- Once listening, mitmproxy only logs what goes wrong (`Addon error: ...`): the ledger listens
  until the master shuts down (`RecordingAddons.listen`), so every error is counted and shown.
- The port is free only once the listeners are closed (`mode` emptied) before `shutdown()`.
- Only mitmproxy's published interfaces (tests/unit/test_import_graph.py); `confdir` is always
  given (a temporary one by default), so nothing is written to the home folder; and one global
  `mitmproxy.ctx`, so one `RecordingProxy` per process at a time.
- gRPC (`grpc_upstream`) is a second mode of the same master, `reverse:tcp://` or
  `reverse:tls://`, decoded by `GrpcTap` (`_grpcrecord`); in forward mode, `H2cTunnels` hands
  the tap the h2c tunnels gRPC clients open through CONNECT.  `push_proxy` is a third mode,
  `regular@host:port`, a forward proxy for the agent's deliveries (as HTTP_PROXY; NO_PROXY must
  not exclude the webhook host).  mitmproxy refuses two modes on one address, port 0 included,
  so a port 0 is resolved to a free port first.
- Stopping keeps every exchange: the listeners close, what is in flight is cut and written
  (`cut by recorder shutdown`), the client connections are closed here (nothing is left for the
  loop's teardown to cancel), and only then does the master shut down, which finalises the
  captures (`Save`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import tempfile
from collections.abc import Callable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any, Self
from urllib.parse import urlsplit

from mitmproxy import exceptions, options
from mitmproxy.addons.block import Block
from mitmproxy.addons.core import Core
from mitmproxy.addons.next_layer import NextLayer
from mitmproxy.addons.proxyserver import Proxyserver
from mitmproxy.addons.tlsconfig import TlsConfig
from mitmproxy.addons.update_alt_svc import UpdateAltSvc
from mitmproxy.master import Master

from recorder._background import BackgroundLoop, Service, host_port
from recorder._errors import OptionError, ProxyStartError, StateError
from recorder.options import RECORD, mitm_value, split_for
from recorder.record._addons import recording_addons
from recorder.record._grpcrecord import (
    GrpcRelay,
    GrpcTap,
    GrpcUpstream,
    H2cTunnels,
    parse_grpc_upstream,
)
from recorder.record._h2c import RefuseH2c
from recorder.record._ledger import Ledger
from recorder.record._sinks import out_problem
from recorder.record._state import mode_spec
from recorder.redaction import BeforeRecord

STARTUP_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0
DRAIN_TIMEOUT = 3.0  # for the cut connections to wind down at stop
FORWARD_SPEC = "regular"  # the forward proxy's mitmproxy mode (its address: listen_host/port)
# mitmdump's defaults that make the proxy, in their order there: options, the block on
# non-local clients, h2c upgrades taken out (our own, which keeps them in the capture: `_h2c`),
# servers, layers, TLS, Alt-Svc rewriting.
PROXY_ADDONS: tuple[Callable[[], object], ...] = (
    Core,
    Block,
    RefuseH2c,
    Proxyserver,
    NextLayer,
    TlsConfig,
    UpdateAltSvc,
)


class Mode(StrEnum):
    REVERSE = "reverse"
    FORWARD = "forward"


class _ErrorLog(logging.Handler):
    """Collects mitmproxy's error log lines during startup."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        # mitmproxy's own advice names its command line (`--mode ...`), not ours: left out.
        lines = record.getMessage().splitlines()
        self.messages.append(" ".join(x for x in lines if not x.startswith("Try specifying")))


class RecordingProxy(Service):
    """An in-process mitmproxy that records A2A traffic to capture files.

    Reverse mode (`upstream` required): clients talk to `.url` as if it were the agent; the
    capture is the file `out`.  Forward mode: clients use `.url` as HTTP_PROXY; `out` is a
    directory with a capture per upstream (`split="upstream"`) or per A2A context
    (`split="context"`).  `listen` defaults to a free port.

    Example::

        with RecordingProxy(upstream="http://127.0.0.1:8080", out=Path("s.http")) as proxy:
            run_client(proxy.url)

    `async with` runs it in the caller's loop instead of a thread.  The other keyword
    arguments are the recorder's options (`recorder.options.RECORD`, as `a2a-recorder record
    --help` lists them); besides them, `console` receives the lines a person watching sees
    (default: none), `before_record(exchange)` may change or drop each exchange before it is
    redacted (`_redaction`), `confdir` and `mitm_options` are mitmproxy's.

    Raises `OptionError` (a ValueError) naming a bad option as a keyword argument, TypeError
    for an unknown one, `ProxyStartError` when the proxy cannot start.
    """

    def __init__(
        self,
        mode: Mode | str = Mode.REVERSE,
        upstream: str | None = None,
        listen: tuple[str, int] = ("127.0.0.1", 0),
        out: Path | str | None = None,
        *,
        console: Callable[[str], None] | None = None,
        before_record: BeforeRecord | None = None,
        confdir: Path | str | None = None,
        mitm_options: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> None:
        self.mode = _mode(mode)
        self.options = RECORD.settings(options)
        grpc_upstream = self.options["grpc_upstream"]
        self.grpc_upstream: GrpcUpstream | None = (
            parse_grpc_upstream(grpc_upstream) if grpc_upstream else None
        )
        self.grpc_listen = self.options["grpc_listen"] or (listen[0], 0)
        self._grpc_mode: str | None = None
        self._grpc_at: tuple[str, int] | None = None  # where it listens, port 0 resolved
        self._grpc_address: tuple[str, int] | None = None
        self.push_proxy: tuple[str, int] | None = self.options["push_proxy"]
        self._push_mode: str | None = None
        self._push_at: tuple[str, int] | None = None
        self._push_address: tuple[str, int] | None = None
        self.upstream = _check_upstream(self.mode, upstream)
        self.listen = listen
        self.out = Path(out) if out is not None else None
        self.split = self.options["split"] or split_for(forward=self.mode is Mode.FORWARD)
        self.addons = recording_addons(console)
        self.addons.redaction.before_record = before_record
        self._addon_options = self._mitm_values(quiet=console is None)
        self._confdir = Path(confdir) if confdir is not None else None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._mitm_options = dict(mitm_options or {})
        self._address: tuple[str, int] | None = None
        self._runner: BackgroundLoop | None = None  # started with `start()`
        self._task: asyncio.Task[None] | None = None  # or with `start_async()`
        self._stop: asyncio.Event | None = None  # the caller's loop's, with `start_async()`

    def _mitm_values(self, *, quiet: bool) -> dict[str, Any]:
        """The mitmproxy options the table's rows set (the addons' `a2a_*`, and mitmproxy's
        own `body_size_limit`: a larger request gets 413 unread, a larger response (not a
        stream) 502; streams are never bounded).  An `out` that cannot be written to is an
        OptionError now, rather than mitmproxy's error at start."""
        values = {**self.options, "out": self.out, "split": self.split, "quiet": quiet}
        problem = out_problem(self.out, self.split, values["existing"])
        if problem:
            raise OptionError(problem)
        return {
            str(option.mitm_name): mitm_value(values[option.name])
            for option in RECORD
            if option.mitm_name is not None
        }

    # -- public API -----------------------------------------------------------------------------

    @property
    def host(self) -> str:
        return self._bound()[0]

    @property
    def port(self) -> int:
        return self._bound()[1]

    @property
    def url(self) -> str:
        """`http://host:port` of the listening proxy (the real port when 0 was asked for)."""
        return f"http://{host_port(self.host, self.port)}"

    @property
    def ledger(self) -> Ledger:
        """What was lost, failed or left out so far (`ledger.clean`: nothing lost or failed)."""
        return self.addons.ledger

    @property
    def grpc_target(self) -> str | None:
        """`host:port` of the gRPC listener (None without `grpc_upstream`)."""
        if self.grpc_upstream is None:
            return None
        if self._grpc_address is None:
            raise StateError("RecordingProxy is not running")
        return host_port(*self._grpc_address)

    @property
    def push_proxy_url(self) -> str | None:
        """`http://host:port` of the forward proxy for the agent's deliveries (None without
        `push_proxy`); the real port when 0 was asked for."""
        if self.push_proxy is None:
            return None
        if self._push_address is None:
            raise StateError("RecordingProxy is not running")
        return f"http://{host_port(*self._push_address)}"

    def start(self, timeout: float = STARTUP_TIMEOUT) -> Self:
        """Start in a background thread; return once listening.  Raises ProxyStartError."""
        if self._runner is not None:
            raise StateError("RecordingProxy already started")
        self._runner = BackgroundLoop(self._serve, name="a2a-recorder", failure=_start_failure)
        self._runner.start(timeout)
        return self

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop a proxy started with `start()`, free its port and close its captures."""
        if self._runner is not None:
            self._runner.stop(timeout)

    async def start_async(self, timeout: float = STARTUP_TIMEOUT) -> RecordingProxy:
        """Start in the running loop; return once listening.  Raises ProxyStartError."""
        ready, self._stop = asyncio.Event(), asyncio.Event()
        self._task = asyncio.create_task(self._serve(ready.set, self._stop))
        waiting = asyncio.create_task(ready.wait())
        await asyncio.wait({self._task, waiting}, timeout=timeout, return_when="FIRST_COMPLETED")
        waiting.cancel()
        if not ready.is_set() or self._task.done():
            failure = self._task.exception() if self._task.done() else None
            await self.stop_async()
            raise _start_failure(failure or ProxyStartError("proxy did not start"))
        return self

    async def stop_async(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._task is not None:
            await asyncio.wait({self._task}, timeout=STOP_TIMEOUT)
            if self._task.done() and not self._task.cancelled():
                self._task.exception()  # retrieved here; startup failures are re-raised above
            self._task = None

    async def __aenter__(self) -> RecordingProxy:
        return await self.start_async()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop_async()

    # -- running --------------------------------------------------------------------------------

    def _bound(self) -> tuple[str, int]:
        if self._address is None:
            raise StateError("RecordingProxy is not running")
        return self._address

    async def _serve(self, ready: Callable[[], None], stop: asyncio.Event) -> None:
        errors, log = _ErrorLog(), logging.getLogger("mitmproxy")
        log.addHandler(errors)
        try:
            master = self._build_master()
        except (exceptions.OptionsError, ValueError, KeyError) as exc:
            log.removeHandler(errors)
            self.addons.close()  # an addon configured before the failure may hold a lock
            raise _option_failure(exc) from None
        run = asyncio.create_task(master.run())
        try:
            await self._await_listening(master, run, errors)
            log.removeHandler(errors)
            self.addons.listen()
            ready()
            await asyncio.wait(
                {run, asyncio.create_task(stop.wait())}, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            log.removeHandler(errors)
            await self._shutdown(master, run)
            self.addons.close()

    def _build_master(self) -> Any:  # master.Master; untyped in mitmproxy
        opts: Any = options.Options()
        before = set(logging.getLogger().handlers)
        master: Any = Master(opts)
        # What the master hangs on the root logger (its log events) goes with a master that
        # never runs: a later log record in this process would fail on its closed loop.
        handlers = [h for h in logging.getLogger().handlers if h not in before]
        master.addons.add(_Running(), *(make() for make in PROXY_ADDONS))
        taken = {self.listen[1]} - {0}  # ports given to the modes so far
        # The gRPC taps go first: at stop, their calls in flight reach the save addon before
        # it finalises the captures.
        if self.grpc_upstream is not None:
            self._grpc_at = _resolved(self.grpc_listen, taken)
            self._grpc_mode = self.grpc_upstream.mode(self._grpc_at)
            relay = self.addons.push.grpc_relay if self.mode is Mode.REVERSE else None
            master.addons.add(self._tap(self._grpc_listener_origin, relay))
        if self.mode is Mode.FORWARD:
            tunnels = H2cTunnels(FORWARD_SPEC)
            master.addons.add(tunnels, self._tap(tunnels.origin))
        master.addons.add(self.addons, self.addons.audit)
        if self.push_proxy is not None:
            host, port = self._push_at = _resolved(self.push_proxy, taken)
            self._push_mode = f"regular@{host}:{port}"
            self.addons.push.push_proxy_mode = self._push_mode
            # The upstream a capture names if a delivery happens to open it.
            self.addons.push.push_upstream = (
                self.grpc_upstream.origin if self.grpc_upstream is not None else self.upstream
            )
        try:
            opts.update(**self._options())
        except BaseException:
            for handler in handlers:
                logging.getLogger().removeHandler(handler)
            raise
        return master

    def _tap(self, origin: Callable[[Any], str | None], relay: GrpcRelay | None = None) -> GrpcTap:
        return GrpcTap(origin, self.addons.record_grpc, relay)

    def _grpc_listener_origin(self, flow: Any) -> str | None:
        if self.grpc_upstream is None or mode_spec(flow.client_conn) != self._grpc_mode:
            return None
        return self.grpc_upstream.origin

    def _options(self) -> dict[str, Any]:
        mode = f"reverse:{self.upstream}" if self.mode is Mode.REVERSE else FORWARD_SPEC
        host, port = self.listen
        modes = [m for m in (mode, self._grpc_mode, self._push_mode) if m is not None]
        return {
            "mode": modes,
            "listen_host": host,
            "listen_port": port,
            "confdir": str(self._confdir_path()),
            "connection_strategy": "lazy",
            **self._mitm_options,
            **self._addon_options,
        }

    def _confdir_path(self) -> Path:
        if self._confdir is not None:
            return self._confdir
        self._tmp = tempfile.TemporaryDirectory(prefix="a2a-recorder-mitm-")
        return Path(self._tmp.name)

    async def _await_listening(
        self, master: Any, run: asyncio.Task[None], errors: _ErrorLog
    ) -> None:
        """Until mitmproxy says it runs (its `running` hook comes once its servers started or
        failed to); then every mode must listen, and nothing be logged as an error."""
        running = asyncio.create_task(master.addons.get("running").event.wait())
        await asyncio.wait({run, running}, return_when=asyncio.FIRST_COMPLETED)
        running.cancel()
        addresses = [a[:2] for a in master.addons.get("proxyserver").listen_addrs()]
        extra = {at[1]: at for at in (self._grpc_at, self._push_at) if at is not None}
        main = [a for a in addresses if a[1] not in extra]
        if run.done() or errors.messages or not main or extra.keys() - {a[1] for a in addresses}:
            detail = "; ".join(errors.messages) or _task_failure(run) or "proxy stopped"
            raise ProxyStartError(f"proxy could not start: {detail}")
        self._address = main[0]
        if self.mode is Mode.REVERSE:  # where gRPC push configs' deliveries go
            self.addons.push.relay_origin = self.url
        if self._grpc_at is not None:
            self._grpc_address = next(a for a in addresses if a[1] == self._grpc_at[1])
            self.addons.cards.grpc_target = self.grpc_target
        if self._push_at is not None:
            self._push_address = next(a for a in addresses if a[1] == self._push_at[1])

    async def _shutdown(self, master: Any, run: asyncio.Task[None]) -> None:
        """Close the listeners (no modes: mitmproxy stops their servers; the port is free
        only then), cut what is in flight, then shut the master down (`Save` finalises)."""
        proxyserver = master.addons.get("proxyserver")
        with contextlib.suppress(exceptions.OptionsError):
            master.options.update(mode=[])
        if not await _until(lambda: not proxyserver.listen_addrs(), STOP_TIMEOUT):
            logging.getLogger(__name__).warning("proxy servers did not stop cleanly")
        self.addons.save.begin_stop()
        await _close_connections(proxyserver)
        master.shutdown()
        await asyncio.wait({run}, timeout=STOP_TIMEOUT)
        if not run.done():
            run.cancel()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


class _Running:
    """Hears mitmproxy's `running` hook: the master ran its servers' start-up."""

    name = "running"

    def __init__(self) -> None:
        self.event = asyncio.Event()

    def running(self) -> None:
        self.event.set()


async def _until(done: Callable[[], bool], timeout: float) -> bool:
    """Poll `done()` until it holds (True) or `timeout` seconds passed (False)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not done():
        if asyncio.get_running_loop().time() >= deadline:
            return False
        await asyncio.sleep(0.01)
    return True


async def _close_connections(proxyserver: Any) -> None:
    """Cancel every client connection's handler, as mitmproxy's idle timeout does, and give
    them a moment to wind down (their flows end in `error`, written as cut)."""
    for handler in list(proxyserver.connections.values()):
        io = handler.transports.get(handler.client)
        if io is not None and io.handler is not None:
            io.handler.cancel("the recorder is shutting down")
    await _until(lambda: not proxyserver.connections, DRAIN_TIMEOUT)


def _mode(mode: Mode | str) -> Mode:
    try:
        return Mode(mode)
    except ValueError:
        raise ValueError(
            f"mode must be one of {', '.join(m.value for m in Mode)}, not {mode!r}"
        ) from None


def _check_upstream(mode: Mode, upstream: str | None) -> str | None:
    if mode is Mode.FORWARD:
        return None
    if not upstream:
        raise OptionError("reverse mode needs {upstream}, the agent's URL (http://HOST:PORT)")
    parts = urlsplit(upstream)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise OptionError(f"{{upstream}} must be an http(s) URL with a host, not {upstream!r}")
    return f"{parts.scheme}://{parts.netloc}"


def _resolved(listen: tuple[str, int], taken: set[int]) -> tuple[str, int]:
    """`listen` with port 0 replaced by a port that is free now (see the module docstring)
    and not one already `taken` by another mode of this proxy: each probe socket is closed
    before the next, so two probes can get the same port."""
    host, chosen = listen
    port = chosen
    # A port the caller chose is kept: mitmproxy names a clash itself.
    while not chosen and (not port or port in taken):
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.bind((host, 0))
            port = int(sock.getsockname()[1])
    taken.add(port)
    return host, port


def _task_failure(task: asyncio.Task[None]) -> str | None:
    if not task.done() or task.cancelled():
        return None
    failure = task.exception()
    return f"{type(failure).__name__}: {failure}" if failure else None


def _option_failure(exc: Exception) -> Exception:
    """An option mitmproxy or an addon refused: ours as the caller names them (the addons'
    errors name them as mitmdump does), mitmproxy's own said as such."""
    if isinstance(exc, OptionError):
        return OptionError(exc.template)
    return ProxyStartError(f"bad proxy options: {_option_error(exc)}")


def _start_failure(failure: BaseException) -> Exception:
    """What `start()` raises for a failure in the proxy's thread."""
    if isinstance(failure, OptionError | ProxyStartError):
        return failure
    error = ProxyStartError(str(failure))
    error.__cause__ = failure
    return error


def _option_error(exc: Exception) -> str:
    if isinstance(exc, KeyError):  # mitmproxy's "Unknown options: ..."
        return (
            f"{exc.args[0]} (the recorder runs mitmproxy's proxy addons only, not "
            "mitmdump's tools such as anticache, map_remote or save_stream_file)"
        )
    return str(exc)
