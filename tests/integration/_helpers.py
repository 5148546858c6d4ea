"""Small helpers the integration tests share: free ports, polling with a deadline, captures."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path

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
    """The exchanges recorded so far; none while the capture file does not exist yet."""
    return read_capture(path).exchanges if path.exists() else ()
