"""Run an asyncio service in a daemon thread with its own loop (the one threading shell).

The CLI, the pytest plugin and the tests are synchronous, the servers asyncio: a
`BackgroundLoop` starts a service in a thread, waits until it is ready, raises a start-up
failure in the caller's thread, and stops it for real (ports freed).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import socket
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Self
from urllib.parse import urlsplit

from recorder._errors import StartError, StateError

StartTimeout = 15.0


def host_port(host: str, port: int) -> str:
    """`host:port`, with an IPv6 host in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def url_key(url: str) -> str:
    """A URL compared loosely: scheme and host case and a default port do not matter."""
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        port = parts.port or (default_port(scheme) if scheme in ("http", "https") else 0)
    except ValueError:
        return url
    query = f"?{parts.query}" if parts.query else ""
    where = host_port((parts.hostname or "").lower(), port)
    return f"{parts.scheme.lower()}://{where}{parts.path or '/'}{query}"


# grpcio's default SO_REUSEPORT would let a second server bind a live port and take half its
# calls; without it, the second is refused ("address in use"), as any listener is.
GRPC_SERVER_OPTIONS: tuple[tuple[str, int], ...] = (("grpc.so_reuseport", 0),)


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket; port 0 picks a free one (read it back from getsockname)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit this; without it keep-alive requests wait ~40 ms on delayed ACKs.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(512)
    sock.setblocking(False)
    return sock


def run_to_end[T](work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """`work()`'s coroutine run to its end in a loop of its own (in a thread of its own when
    the caller's loop is running), and its result."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work())
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="a2a-run") as pool:
        return pool.submit(asyncio.run, work()).result()


class Service:
    """A server its owner starts and stops: `with` starts it, and stops it at the end."""

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class BackgroundLoop(Service):
    """Runs `main(ready, stop)` in a thread; `main` calls `ready()` once serving, then awaits.
    `start()` raises a failure before that as `failure` makes it (default: a `StartError`)."""

    def __init__(
        self,
        main: Callable[[Callable[[], None], asyncio.Event], Awaitable[None]],
        name: str,
        *,
        failure: Callable[[BaseException], Exception] | None = None,
    ) -> None:
        self._main = main
        self._name = name
        self._failure = failure or self._start_error
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            raise StateError(f"{self._name} is not running")
        return self._loop

    def start(self, timeout: float = StartTimeout) -> Self:
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            self.stop()
            raise self._failure(TimeoutError(f"did not start within {timeout:.0f} s"))
        if self._error is not None:
            self._thread.join(timeout)
            raise self._failure(self._error)
        return self

    def _start_error(self, error: BaseException) -> Exception:
        failure = StartError(f"{self._name} failed to start: {error}")
        failure.__cause__ = error
        return failure

    def stop(self, timeout: float = StartTimeout) -> None:
        loop, stop, thread = self._loop, self._stop, self._thread
        if loop is not None and stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stop.set)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        self._thread = None

    def _run(self) -> None:
        try:
            asyncio.run(self._amain())
        except BaseException as exc:  # handed to the starting thread
            self._error = exc
        finally:
            self._ready.set()

    async def _amain(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        await self._main(self._ready.set, self._stop)
