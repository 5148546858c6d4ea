"""Small helpers the integration tests share: free ports, polling with a deadline, captures,
the SDK peers' runner."""

from __future__ import annotations

import importlib.util
import re
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from recorder.capture import Exchange, read_capture


def free_port() -> int:
    """A port free on 127.0.0.1 right now (for servers that want a port number up front)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Poll `predicate` until it holds or `timeout` seconds pass; its last answer."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def exchanges(path: Path) -> tuple[Exchange, ...]:
    """The exchanges recorded so far; none while the capture file does not exist yet, or has
    been created and its first lines are still being written (a reader polling a live
    capture can see it empty: the writer creates it, then writes)."""
    if not path.exists() or path.stat().st_size == 0:
        return ()
    return read_capture(path).exchanges


def load_peers_run() -> ModuleType:
    """`scripts/peers/run.py` as a module (it is a script, not part of the package)."""
    path = Path(__file__).resolve().parents[2] / "scripts" / "peers" / "run.py"
    spec = importlib.util.spec_from_file_location("peers_run", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while loading
    spec.loader.exec_module(module)
    return module


# --- normalising what differs between two runs of the same session ---------------------------

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
_CONFIG_ID = re.compile(r"\bcfg-[0-9a-f]{8}\b")
_ADDRESS = re.compile(r"(127\.0\.0\.1|localhost|\[::1\]):\d+")
# a2a-go puts the time of the call in every error's ErrorInfo; a client that shows the error's
# data (a2a-sdk 0.3) shows it.
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")
# Fields that only say how the process ended, not what the client saw.
_DROPPED = frozenset({"stderr"})


@dataclass
class _Ids:
    """Volatile ids numbered in first-seen order, so the same session gives the same names."""

    seen: dict[str, str] = field(default_factory=dict)

    def name(self, match: re.Match[str]) -> str:
        return self.seen.setdefault(match.group(0), f"<id{len(self.seen) + 1}>")


def normalise(summary: Any) -> Any:
    """The summary with ids numbered in first-seen order, host:port made `<addr>` and
    timestamps `<time>`."""
    ids = _Ids()

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items() if k not in _DROPPED}
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, str):
            value = _UUID.sub(ids.name, value)
            value = _CONFIG_ID.sub(ids.name, value)
            value = _TIMESTAMP.sub("<time>", value)
            return _ADDRESS.sub("<addr>", value)
        return value

    return walk(summary)


# A non-blocking send returns the task in whatever state it has reached, and polling sees the
# states that happen to be current: two live runs agree only on where the task ends.
_TIMING_SCENARIOS = frozenset({"04-polling"})


def timing_free(summary: dict[str, Any]) -> Any:
    """`normalise(summary)` less what two live runs of one scenario may differ in by timing."""
    out = normalise(summary)
    steps = out.get("steps") or []
    if out.get("scenario") in _TIMING_SCENARIOS and steps:
        out.pop("states", None)
        for s in steps:
            s.pop("events", None)
        for s in steps[:-1]:
            s.pop("state", None)
    return out


def without_wording(summary: Any) -> Any:
    """Error classes stay, the agent's wording goes. Two live runs may word one error two ways:
    a2a-go says "cancelation failed: setup failed" or "... canceler setup failed" by timing."""
    for step in summary.get("steps") or []:
        step.pop("message", None)
    return summary
