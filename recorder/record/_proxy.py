"""Run mitmproxy in-process with the recording addons: the shell the CLI and the tests use.

- The master is built inside the loop that runs it (`_serve()`), with only the addons a proxy
  needs (`PROXY_ADDONS`: mitmdump's other tools cost a quarter of the CPU); no `errorcheck`,
  whose `sys.exit(1)` would end the caller's loop: errors logged at start are a
  `ProxyStartError`, and later ones are counted by the ledger (`RecordingAddons.listen`).
- `confdir` is always given (a temporary one by default), so nothing reaches the home folder;
  mitmproxy's one global `ctx` allows one `RecordingProxy` per process at a time.
- gRPC (`grpc_upstream`, decoded by `GrpcTap`) and the push proxy are further modes of the same
  master; mitmproxy refuses two modes on one address, so a port 0 is resolved first.
- Stopping keeps every exchange: listeners close, what is in flight is cut and written, client
  connections are closed here, and only then does the master shut down and finalise captures.
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
# mitmdump's defaults that make a proxy, in their order; `RefuseH2c` is ours (`_h2c`).
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

    Reverse mode (`upstream` required): clients talk to `.url` as the agent, and `out` is the
    capture; forward mode: `.url` is an HTTP_PROXY and `out` a folder, a capture per `split`.
    `console` gets the lines a person watching sees, `before_record` may change or drop each
    exchange before redaction, the other keyword arguments are `recorder.options.RECORD`'s;
    `with` runs it in a thread, `async with` in the caller's loop.
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
        """The mitmproxy options the table's rows set; an unwritable `out` is an OptionError now."""
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
        return self._bound(self._address)[0]

    @property
    def port(self) -> int:
        return self._bound(self._address)[1]

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
        return host_port(*self._bound(self._grpc_address))

    @property
    def push_proxy_url(self) -> str | None:
        """`http://host:port` of the deliveries' forward proxy (None without `push_proxy`)."""
        if self.push_proxy is None:
            return None
        return f"http://{host_port(*self._bound(self._push_address))}"

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

    @staticmethod
    def _bound(address: tuple[str, int] | None) -> tuple[str, int]:
        """A listener's address, once the proxy is running."""
        if address is None:
            raise StateError("RecordingProxy is not running")
        return address

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
        # The gRPC taps go first: at stop, their calls in flight reach Save before it finalises.
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
        """Until mitmproxy's `running` hook; then every mode must listen, and no error be logged."""
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
        """Close the listeners (frees the port), cut what is in flight, shut the master down."""
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
    deadline = asyncio.get_running_loop().time() + timeout
    while not done():
        if asyncio.get_running_loop().time() >= deadline:
            return False
        await asyncio.sleep(0.01)
    return True


async def _close_connections(proxyserver: Any) -> None:
    """Cancel every client connection's handler, as mitmproxy's idle timeout does."""
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
    """`listen` with port 0 replaced by a free port not already `taken` by another mode (each
    probe socket is closed before the next, so two probes can get the same port)."""
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
    """An option refused: ours as the caller names them, mitmproxy's own said as such."""
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
