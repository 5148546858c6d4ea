"""Run mitmproxy in-process with the recording addon: the shell the CLI and the tests use.

Facts this module is built around (mitmproxy 12):
- The master must be built inside the event loop that runs it, so the proxy is built in
  `_serve()`, either in the caller's running loop (`async with`) or in a background thread with a
  loop of its own (`with`, `start()`).
- The master carries only the addons a proxy needs (`PROXY_ADDONS`), not mitmdump's 30-odd
  tools (playback, map and modify, flow saving, ...): mitmproxy visits every addon of the chain
  for every event of every flow, and with the whole set that dispatch alone was about a quarter
  of the recorder's CPU (`scripts/profile-record`).  Options of the tools left out are unknown
  here, so `mitm_options` naming one is a `ProxyStartError`.
- A startup error (port taken, bad mode) is logged; mitmdump's `errorcheck` addon would turn
  it into `sys.exit(1)` and take the caller's loop down, so it is not loaded and the logged
  errors become a `ProxyStartError` instead.
- Once listening, mitmproxy still only logs what goes wrong (an exception in an addon hook is
  `Addon error: ...`, and the exchange goes on without the rest of the hook's addons), and
  without mitmdump's terminal log nobody reads that log: the addon set's fault ledger listens
  from then until the master is shut down (`RecordingAddons.listen`), so every error is
  counted, shown and in `faults` (see `_faults`).
- Stopping must empty the server set (`servers.update([])`) before `shutdown()`, or the
  listening port stays bound.
- `confdir` is always passed (a temporary directory unless given), so nothing is written to the
  home folder.
- mitmproxy keeps one global context (`mitmproxy.ctx`), so run one `RecordingProxy` per process
  at a time.
- gRPC (`grpc_upstream`) is a second mode in the same master, `reverse:tcp://` (plaintext) or
  `reverse:tls://` (TLS), decoded by `GrpcTap` (see `_grpcrecord`).  mitmproxy refuses two
  modes on the same address, port 0 included, so a requested port 0 is resolved to a free port
  first.  In forward mode, gRPC clients that use the proxy tunnel h2c through CONNECT;
  `H2cTunnels` hands those tunnels to the tap.
- Push deliveries that cannot go through the relay (a gRPC push config in forward mode,
  where the agent POSTs straight to the webhook) are recorded with `push_proxy`: a third mode,
  `regular@host:port`, a forward HTTP proxy the agent is started with as HTTP_PROXY /
  HTTPS_PROXY (NO_PROXY must not exclude the webhook host; `localhost` and `127.0.0.1` are
  often in it).  Its port 0 is resolved first too.  Flows through it are deliveries or, unless
  `record_all`, left out of the capture (see `PushAddon`).
- Stopping keeps every exchange: the listeners close, every exchange still in flight is cut
  and written as such (noted `cut by recorder shutdown`), the client connections are closed
  here (so nothing is left for the loop's teardown to cancel), and only then does the master
  shut down, which finalises the captures (`Save`).

Exceptions: `OptionError` (a ValueError) for an option that cannot be used,
`ProxyStartError(RuntimeError)` when the proxy cannot start.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import tempfile
import threading
from collections.abc import Callable, Mapping
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from mitmproxy import exceptions, options
from mitmproxy.addons.block import Block
from mitmproxy.addons.core import Core
from mitmproxy.addons.next_layer import NextLayer
from mitmproxy.addons.proxyserver import Proxyserver
from mitmproxy.addons.tlsconfig import TlsConfig
from mitmproxy.addons.update_alt_svc import UpdateAltSvc
from mitmproxy.master import Master

from recorder._background import host_port
from recorder._errors import OptionError, ProxyStartError
from recorder.options import RECORD, mitm_value, split_for
from recorder.record._addons import recording_addons
from recorder.record._faults import Faults
from recorder.record._grpcrecord import (
    GrpcRelay,
    GrpcTap,
    GrpcUpstream,
    H2cTunnels,
    mode_spec,
    parse_grpc_upstream,
)
from recorder.record._h2c import RefuseH2c
from recorder.record._sinks import out_problem
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


class RecordingProxy:
    """An in-process mitmproxy that records A2A traffic to capture files.

    Reverse mode (`upstream` required): clients talk to `.url` as if it were the agent; the
    capture is the file `out`.  Forward mode: clients use `.url` as HTTP_PROXY; `out` is a
    directory with one capture per upstream (`split="upstream"`, the default) or per A2A
    context (`split="context"`).  `listen` defaults to a free port (`.url` says which).

    Example::

        with RecordingProxy(upstream="http://127.0.0.1:8080", out=Path("s.http")) as proxy:
            run_client(proxy.url)

    `async with` runs the proxy in the caller's loop instead of a thread.

    The other keyword arguments are the recorder's options, each with its default and help
    in one table, `recorder.options.RECORD` (the same as `a2a-recorder record --help`):
    `existing` (`refuse`, `append` or `overwrite` a capture that holds exchanges),
    `read_timeout`, `max_body_size`, `grpc_upstream`, `push_proxy`, `keep_secrets`,
    `redact_headers`, `card`, `lint`, ...  Besides them: `console` receives one line per
    exchange written, warnings and a summary at stop (default: nothing is printed);
    `before_record(exchange)` may change or drop each exchange before it is redacted and
    written (see `_redaction`); `confdir` is mitmproxy's (default: a temporary one);
    `mitm_options` sets mitmproxy's own options.

    Raises `OptionError` (a ValueError) for an option that cannot be used, naming it as a
    keyword argument, TypeError for an unknown one, and `ProxyStartError` when the proxy
    cannot start.
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
        self._grpc_address: tuple[str, int] | None = None
        self.push_proxy: tuple[str, int] | None = self.options["push_proxy"]
        self._push_mode: str | None = None
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
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._task: asyncio.Task[None] | None = None

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
    def faults(self) -> Faults:
        """What was lost, failed or left out so far (`faults.clean`: nothing lost or failed)."""
        return self.addons.faults

    @property
    def grpc_target(self) -> str | None:
        """`host:port` of the gRPC listener (None without `grpc_upstream`)."""
        if self.grpc_upstream is None:
            return None
        if self._grpc_address is None:
            raise RuntimeError("RecordingProxy is not running")
        return host_port(*self._grpc_address)

    @property
    def push_proxy_url(self) -> str | None:
        """`http://host:port` of the forward proxy for the agent's deliveries (None without
        `push_proxy`); the real port when 0 was asked for."""
        if self.push_proxy is None:
            return None
        if self._push_address is None:
            raise RuntimeError("RecordingProxy is not running")
        return f"http://{host_port(*self._push_address)}"

    def start(self, timeout: float = STARTUP_TIMEOUT) -> RecordingProxy:
        """Start in a background thread; return once listening.  Raises ProxyStartError."""
        if self._thread is not None:
            raise RuntimeError("RecordingProxy already started")
        self._thread = threading.Thread(target=self._thread_main, name="a2a-recorder", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            self.stop()
            raise ProxyStartError(f"proxy did not start within {timeout} s")
        if self._failure is not None:
            self._thread.join(STOP_TIMEOUT)
            raise _start_failure(self._failure)
        return self

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop a proxy started with `start()`, free its port and close its captures."""
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stop.set)
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    async def start_async(self, timeout: float = STARTUP_TIMEOUT) -> RecordingProxy:
        """Start in the running loop; return once listening.  Raises ProxyStartError."""
        self._task = asyncio.create_task(self._serve())
        ready = asyncio.create_task(asyncio.to_thread(self._ready.wait, timeout))
        await asyncio.wait({self._task, ready}, return_when=asyncio.FIRST_COMPLETED)
        if self._task.done() and self._failure is None:
            self._failure = self._task.exception() or ProxyStartError("proxy stopped at once")
        if self._failure is not None or not self._ready.is_set():
            await self.stop_async()
            raise _start_failure(self._failure or ProxyStartError("proxy did not start"))
        return self

    async def stop_async(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._task is not None:
            await asyncio.wait({self._task}, timeout=STOP_TIMEOUT)
            if self._task.done() and not self._task.cancelled():
                self._task.exception()  # retrieved here; startup failures are re-raised above
            self._task = None

    def __enter__(self) -> RecordingProxy:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> RecordingProxy:
        return await self.start_async()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop_async()

    # -- running --------------------------------------------------------------------------------

    def _bound(self) -> tuple[str, int]:
        if self._address is None:
            raise RuntimeError("RecordingProxy is not running")
        return self._address

    def _thread_main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # noqa: BLE001 - reported to the starting thread
            self._failure = self._failure or exc
        finally:
            self._ready.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        errors = _ErrorLog()
        logging.getLogger("mitmproxy").addHandler(errors)
        try:
            master = self._build_master()
        except (exceptions.OptionsError, ValueError, KeyError) as exc:
            logging.getLogger("mitmproxy").removeHandler(errors)
            self.addons.close()  # an addon configured before the failure may hold a lock
            self._failure = _option_failure(exc)
            self._ready.set()
            return
        run = asyncio.create_task(master.run())
        try:
            await self._await_listening(master, run, errors)
            logging.getLogger("mitmproxy").removeHandler(errors)
            self.addons.listen()
            self._ready.set()
            await asyncio.wait(
                {run, asyncio.create_task(self._stop.wait())},
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            logging.getLogger("mitmproxy").removeHandler(errors)
            await self._shutdown(master, run)
            self.addons.close()
            self._ready.set()

    def _build_master(self) -> Any:  # master.Master; untyped in mitmproxy
        opts: Any = options.Options()
        master: Any = Master(opts)
        master.addons.add(*(make() for make in PROXY_ADDONS))
        taken = {self.listen[1]} - {0}  # ports given to the modes so far
        # The gRPC taps go first: at stop, their calls in flight reach the save addon before
        # it finalises the captures.
        if self.grpc_upstream is not None:
            self._grpc_mode = self.grpc_upstream.mode(_resolved(self.grpc_listen, taken))
            relay = self.addons.push.grpc_relay if self.mode is Mode.REVERSE else None
            master.addons.add(self._tap(self._grpc_listener_origin, relay))
        if self.mode is Mode.FORWARD:
            tunnels = H2cTunnels(FORWARD_SPEC)
            master.addons.add(tunnels, self._tap(tunnels.origin))
        master.addons.add(self.addons, self.addons.audit)
        if self.push_proxy is not None:
            host, port = _resolved(self.push_proxy, taken)
            self._push_mode = f"regular@{host}:{port}"
            self.addons.push.push_proxy_mode = self._push_mode
            # The upstream a capture names if a delivery happens to open it.
            self.addons.push.push_upstream = (
                self.grpc_upstream.origin if self.grpc_upstream is not None else self.upstream
            )
        try:
            opts.update(**self._options())
        except BaseException:
            # The master's log handler would outlive it, and any later log record in this
            # process would fail on the master's closed loop.
            master._legacy_log_events.uninstall()
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
        proxyserver = master.addons.get("proxyserver")
        while not run.done():
            addresses = proxyserver.listen_addrs()
            if addresses and proxyserver.is_running and self._all_listening(proxyserver):
                self._address = self._main_address(proxyserver)
                if self.mode is Mode.REVERSE:  # where gRPC push configs' deliveries go
                    self.addons.push.relay_origin = self.url
                if self._grpc_mode is not None:
                    host, port = proxyserver.servers[self._grpc_mode].listen_addrs[0][:2]
                    self._grpc_address = (host, port)
                    self.addons.cards.grpc_target = self.grpc_target
                if self._push_mode is not None:
                    host, port = proxyserver.servers[self._push_mode].listen_addrs[0][:2]
                    self._push_address = (host, port)
                return
            if errors.messages:
                break
            await asyncio.sleep(0.01)
        detail = "; ".join(errors.messages) or _task_failure(run) or "proxy stopped"
        self._failure = ProxyStartError(f"proxy could not start: {detail}")
        raise self._failure

    def _all_listening(self, proxyserver: Any) -> bool:
        return all(server.listen_addrs for server in proxyserver.servers)

    def _main_address(self, proxyserver: Any) -> tuple[str, int]:
        for server in proxyserver.servers:
            extra = server.mode.full_spec in (self._grpc_mode, self._push_mode)
            if not extra and server.listen_addrs:
                host, port = server.listen_addrs[0][:2]
                return host, port
        host, port = proxyserver.listen_addrs()[0][:2]
        return host, port

    async def _shutdown(self, master: Any, run: asyncio.Task[None]) -> None:
        proxyserver = master.addons.get("proxyserver")
        try:
            await asyncio.wait_for(proxyserver.servers.update([]), STOP_TIMEOUT)
        except (TimeoutError, Exception):  # noqa: BLE001 - still shut the master down
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


async def _close_connections(proxyserver: Any) -> None:
    """Cancel every client connection's handler, as mitmproxy's idle timeout does, and give
    them a moment to wind down (their flows end in `error`, written as cut)."""
    for handler in list(proxyserver.connections.values()):
        io = handler.transports.get(handler.client)
        if io is not None and io.handler is not None:
            io.handler.cancel("the recorder is shutting down")
    deadline = asyncio.get_running_loop().time() + DRAIN_TIMEOUT
    while proxyserver.connections and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.01)


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
