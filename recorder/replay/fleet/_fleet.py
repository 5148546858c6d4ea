"""A fleet: the captures of a folder replayed at once, one replayer per agent (I/O shell).

Each agent gets a `Replayer` of its own (its own sessions, deliveries, journal and report, as
when replayed alone); all run in one event loop.  In reverse mode each agent listens on its own
port and its cards point there; in forward mode clients use `proxy_url` as their HTTP proxy and
cards are served as recorded.  `report_json()` adds the requests no agent answered.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, Self

from recorder._background import BackgroundLoop, Service, bind_socket, host_port
from recorder._errors import OptionError
from recorder._files import replace_file
from recorder.capture import Capture, check_regular, file_kind
from recorder.replay.core import Journal, Report
from recorder.replay.faces import Connection, Replayer, serve_http
from recorder.replay.fleet._proxy import ProxyConnection, ProxyFace
from recorder.replay.fleet._route import AgentPlan, Routes, Unrouted, plan_agents

LOOPBACK = "127.0.0.1"
# Beside a capture, the pytest plugin keeps a re-recording it rejected and a drifting
# session: by-products, not agents of the fleet.
BY_PRODUCTS = (".rejected.http", ".drift.http")


PORTS_KEYS = frozenset({"mode", "proxy", "agents"})  # a ports file's (`Fleet.ports_json`)
MAX_PORTS_BYTES = 16 << 20


def ports_file_problem(path: Path) -> str | None:
    """Why a ports file may not be written to `path` (None: it may): only a new file, an empty one
    or an earlier run's ports file is ours to replace, never a link, device, FIFO or folder."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None if path.parent.is_dir() else f"there is no folder {path.parent}"
    except OSError as exc:
        return exc.strerror or str(exc)
    if stat.S_ISLNK(mode):
        return "it is a symbolic link"
    if not stat.S_ISREG(mode):
        return f"it is {file_kind(mode)}"
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_PORTS_BYTES)
        document = json.loads(data) if data else dict.fromkeys(PORTS_KEYS)
    except OSError as exc:
        return exc.strerror or str(exc)
    except ValueError:
        document = None
    ours = isinstance(document, dict) and set(document) == PORTS_KEYS
    return None if ours else "it holds something else than a ports file"


def fleet_paths(folder: Path) -> list[Path]:
    """The captures of a fleet's folder in name order: `*.http` files, neither hidden nor
    by-products; OSError names one that is no regular file (refused, never skipped silently)."""
    paths = sorted(
        p
        for p in folder.glob("*.http")
        if not p.name.startswith(".") and not p.name.endswith(BY_PRODUCTS) and not p.is_dir()
    )
    for path in paths:
        check_regular(path)
    return paths


class FleetAgent:
    """One agent of a running fleet: where it is, and its replayer's report and journal."""

    def __init__(self, plan: AgentPlan, replayer: Replayer, forward: bool) -> None:
        self.plan = plan
        self.replayer = replayer
        self.forward = forward

    @property
    def name(self) -> str:
        return self.plan.name

    @property
    def card_name(self) -> str | None:
        return self.plan.card_name

    @property
    def upstreams(self) -> tuple[str, ...]:
        return self.plan.upstreams

    @property
    def url(self) -> str:
        """The base URL a client calls: the replayer's (reverse), or the recorded one (forward)."""
        if not self.forward:
            return self.replayer.url
        recorded = (f"{s}://{w}" for s, w in self.plan.authorities if s in ("http", "https"))
        return next(recorded, self.replayer.url)

    @property
    def grpc_target(self) -> str | None:
        """The `host:port` a gRPC client calls, as `url` (None: no gRPC face)."""
        if not self.forward:
            return self.replayer.grpc_target
        return next((w for s, w in self.plan.authorities if s == "grpc"), None)

    @property
    def report(self) -> Report:
        return self.replayer.report

    @property
    def journal(self) -> Journal:
        return self.replayer.journal

    def served(self, upstream: str) -> str:
        """Where a recorded upstream (`http://host:port`, `grpc://host:port`) is served."""
        if self.forward:
            return upstream
        if upstream.startswith(("grpc://", "grpcs://")):
            return self.replayer.grpc_target or ""
        return self.replayer.url

    def row(self) -> tuple[str, str, str, str, str]:
        """Its line in the fleet's table."""
        recorded = " ".join(self.upstreams) or "-"
        return (self.name, self.card_name or "-", recorded, self.url, self.grpc_target or "-")

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "card": self.card_name,
            "captures": [str(p) for p in self.plan.paths],
            "upstreams": list(self.upstreams),
            "url": self.url,
            "grpc": self.grpc_target,
            "replayer": self.replayer.url,
            "replayer_grpc": self.replayer.grpc_target,
        }


class Fleet(Service):
    """Every agent of `found` replayed on one thread: behind one proxy on `host:port` (`forward`),
    else each on `host`, at `port + i` (0: free ports).  `options` go to every `Replayer`.

    Raises ValueError when `found` is empty, OptionError for `faults` (a profile is one agent's),
    OSError when a port cannot be bound."""

    def __init__(
        self,
        found: Sequence[tuple[Path, Capture]],
        *,
        forward: bool = False,
        host: str = LOOPBACK,
        port: int = 0,
        **options: Any,
    ) -> None:
        plans = plan_agents(found)
        if not plans:
            raise ValueError("a fleet needs at least one capture")
        self.forward = forward
        if options.get("faults"):  # a #N names one capture's exchange, not every agent's
            raise OptionError("{faults}: a fleet takes none; replay one agent's captures")
        self.routes = Routes(plans)
        self.unrouted = Unrouted()
        self.agents = [
            FleetAgent(plan, self._replayer(plan, i, host, port, options), forward)
            for i, plan in enumerate(plans)
        ]
        self.limits = self.agents[0].replayer.limits  # the same options: the same limits
        self._sock = bind_socket(host, port) if forward else None
        self.host = host
        self.port = self._sock.getsockname()[1] if self._sock is not None else 0
        replayers = [a.replayer for a in self.agents]
        self.face = (
            ProxyFace(self.routes, replayers, self.unrouted, self.report_json) if forward else None
        )
        self._loop = BackgroundLoop(self._main, name="a2a-fleet")

    def _replayer(
        self, plan: AgentPlan, index: int, host: str, port: int, options: dict[str, Any]
    ) -> Replayer:
        where = (LOOPBACK, 0) if self.forward else (host, port + index if port else 0)
        return Replayer(
            plan.captures,
            host=where[0],
            port=where[1],
            grpc_port=0,  # always: a gRPC call never reaches a live agent, it is a miss
            rewrite_cards=not self.forward,
            **options,
        )

    @property
    def proxy_url(self) -> str | None:
        """The forward proxy's URL, for HTTP_PROXY (None in reverse mode)."""
        return f"http://{host_port(self.host, self.port)}" if self.forward else None

    @property
    def urls(self) -> dict[str, str]:
        """Each recorded upstream, and where it is served now."""
        return {u: a.served(u) for a in self.agents for u in a.upstreams}

    def agent(self, key: str) -> FleetAgent:
        """The agent named `key`: its capture's name, its card's name, or a recorded upstream."""
        for agent in self.agents:
            if key in (agent.name, agent.card_name, *agent.upstreams):
                return agent
        names = ", ".join(a.name for a in self.agents)
        raise KeyError(f"no agent {key!r} in this fleet (it has {names})")

    # -- what --strict checks ---------------------------------------------------------------

    @property
    def clean(self) -> bool:
        return not self.unrouted.count and all(a.report.clean for a in self.agents)

    def report_json(self) -> dict[str, Any]:
        return {
            "agents": {a.name: a.report.as_json() for a in self.agents},
            "unrouted": [r.line() for r in self.unrouted.requests],
            "clean": self.clean,
        }

    # -- where everything is ------------------------------------------------------------------

    def ports_json(self) -> dict[str, Any]:
        mode = "forward" if self.forward else "reverse"
        agents = [a.as_json() for a in self.agents]
        return {"mode": mode, "proxy": self.proxy_url, "agents": agents}

    def write_ports(self, path: Path) -> None:
        """`ports_json()` to `path` atomically; FileExistsError when it is not ours to replace."""
        problem = ports_file_problem(path)
        if problem is not None:
            raise FileExistsError(f"{path}: {problem}")
        text = json.dumps(self.ports_json(), indent=2) + "\n"
        replace_file(path, text.encode(), mode=0o600)  # readable by its owner only

    def table(self) -> str:
        """One line per agent: its name, card, recorded upstreams, and where it is served."""
        head = ("AGENT", "CARD", "RECORDED AGAINST", "SERVED AT", "gRPC")
        rows = [head, *(a.row() for a in self.agents)]
        widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
        lines = ("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows)
        return "\n".join(line.rstrip() for line in lines)

    # -- running ----------------------------------------------------------------------------

    async def _main(self, ready: Callable[[], None], stop: asyncio.Event) -> None:
        tasks: list[asyncio.Task[None]] = []
        try:
            for agent in self.agents:
                tasks.append(await _started(agent.replayer.serve, stop))
            if self.face is not None and self._sock is not None:
                self.face.own = host_port(self.host, self.port)
                sock, face, limits = self._sock, self.face, self.limits

                def connection(connections: set[Connection]) -> Connection:
                    return ProxyConnection(face, limits, connections)

                async def front(up: Callable[[], None], stop: asyncio.Event) -> None:
                    await serve_http(sock, connection, up, stop)

                tasks.append(await _started(front, stop))
            ready()
            await stop.wait()
        finally:
            stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)

    def start(self) -> Self:
        self._loop.start()
        return self

    def stop(self) -> None:
        self._loop.stop()


Serve = Callable[[Callable[[], None], asyncio.Event], Coroutine[Any, Any, None]]


async def _started(serve: Serve, stop: asyncio.Event) -> asyncio.Task[None]:
    """`serve(ready, stop)` as a task, once it said it is ready; its error if it ended first."""
    up = asyncio.Event()
    task = asyncio.create_task(serve(up.set, stop))
    waiting = asyncio.create_task(up.wait())
    await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
    if up.is_set():
        return task
    waiting.cancel()
    await task  # raises what stopped it
    raise RuntimeError("a replayer of the fleet stopped while starting")
