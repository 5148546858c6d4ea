"""Child processes for the recorder benchmarks, and each one's CPU time from /proc.

Every server runs in a process of its own (the demo agent, plain mitmdump, `mitmdump -w`, the
recorder's CLI), so no two share a GIL and each one's CPU can be read on its own.  Each binds
127.0.0.1 only; mitmdump gets a free port picked here, the agent and the recorder pick their own
(port 0) and say where they listen.  A child's stdout and stderr go to a log file, never to a
pipe that nobody reads (a full pipe would stall the child); readiness is read from that log,
and its tail is shown when a child fails to start.  Every child is stopped by its pid on the way
out: SIGTERM (the recorder and mitmdump stop in order on it), then SIGKILL after a timeout.

`cpu_seconds(pid)` is utime + stime of the whole process (every thread, alive or gone) from
`/proc/<pid>/stat`, in clock ticks (`SC_CLK_TCK`, usually 100 per second): a reading is
good to one tick, so a measured stretch should hold many ticks.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".venv" / "bin"
START_TIMEOUT = 30.0
STOP_TIMEOUT = 15.0
TICK = 1.0 / os.sysconf("SC_CLK_TCK")
RECORDER_READY = re.compile(r"point A2A clients at (http://\S+)")


class ChildFailed(RuntimeError):
    """A child process did not start, or died while it was needed."""


@dataclass
class Child:
    """One running server: its process, where it listens and where its output goes."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path
    url: str = ""

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def tail(self, lines: int = 15) -> str:
        text = self.log.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])


def cpu_seconds(pid: int) -> float:
    """utime + stime of process `pid` (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) * TICK  # fields 14 and 15 of proc(5)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def stop(child: Child, sig: signal.Signals = signal.SIGTERM) -> None:
    """Ask the child to stop with `sig`; SIGKILL it if it has not within STOP_TIMEOUT."""
    if child.alive():
        with contextlib.suppress(ProcessLookupError):
            child.process.send_signal(sig)
    try:
        child.process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        child.process.kill()
        child.process.wait(timeout=STOP_TIMEOUT)


@contextlib.contextmanager
def running(
    name: str, command: list[str], logs: Path, ready: Callable[[Child], str | None]
) -> Iterator[Child]:
    """Start `command`; yield once `ready(child)` returns its URL; stop it on the way out."""
    log = logs / f"{name}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    child = Child(name, process, log)
    try:
        child.url = wait_ready(child, ready)
        yield child
    finally:
        stop(child)


def wait_ready(child: Child, ready: Callable[[Child], str | None]) -> str:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        url = ready(child)
        if url:
            return url
        if not child.alive():
            raise ChildFailed(
                f"{child.name} exited with {child.process.returncode}:\n{child.tail()}"
            )
        time.sleep(0.05)
    raise ChildFailed(f"{child.name} did not start within {START_TIMEOUT:.0f} s:\n{child.tail()}")


# -- the servers --------------------------------------------------------------------------------


def demo_agent(logs: Path, event_delay: float) -> contextlib.AbstractContextManager[Child]:
    """The a2a-sdk 1.3.0 demo agent (JSON-RPC and HTTP+JSON; no gRPC)."""
    command = [
        str(VENV_BIN / "python"),
        "-m",
        "recorder.demo",
        "agent",
        "--no-grpc",
        "--event-delay",
        str(event_delay),
    ]

    def ready(child: Child) -> str | None:
        text = child.log.read_text(encoding="utf-8", errors="replace")
        for line in text.split("\n")[:-1]:  # whole lines only
            if line.startswith('{"base_url"'):
                url: str = json.loads(line)["base_url"]
                return url
        return None

    return running("agent", command, logs, ready)


def recorder_command(upstream: str, out: Path) -> list[str]:
    """The recorder as a user runs it (`--quiet`: no console line per exchange)."""
    return [
        str(VENV_BIN / "a2a-recorder"),
        "record",
        "--upstream",
        upstream,
        "--listen",
        "127.0.0.1:0",
        "--out",
        str(out),
        "--quiet",
        "--force",
    ]


def recorder(
    logs: Path, upstream: str, out: Path, name: str = "recorder"
) -> contextlib.AbstractContextManager[Child]:
    def ready(child: Child) -> str | None:
        found = RECORDER_READY.search(child.log.read_text(encoding="utf-8", errors="replace"))
        return found.group(1) if found else None

    return running(name, recorder_command(upstream, out), logs, ready)


def mitmdump(
    logs: Path, name: str, upstream: str, *extra: str
) -> contextlib.AbstractContextManager[Child]:
    """`mitmdump --mode reverse:<upstream> -q` (plus `extra`), on a free port."""
    port = free_port()
    command = [
        str(VENV_BIN / "mitmdump"),
        "--mode",
        f"reverse:{upstream}",
        "--listen-host",
        "127.0.0.1",
        "--listen-port",
        str(port),
        "--set",
        f"confdir={logs / ('conf-' + name)}",
        "-q",
        *extra,
    ]

    def ready(child: Child) -> str | None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        except OSError:
            return None
        return f"http://127.0.0.1:{port}"

    return running(name, command, logs, ready)


def default_sigint() -> None:
    """Let our children take SIGINT: a background job of a shell starts with it ignored, and
    an ignored signal stays ignored across exec, while a handled one is reset to default."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
