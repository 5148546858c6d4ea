"""Every listener the tool opens refuses a port in use (issue 20).

The port is held the way a grpcio server holds one (listening, SO_REUSEPORT set): grpcio's own
default would let a second server bind it too, and the calls would be split between the two.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest

from recorder.capture import read_capture
from recorder.demo import DemoAgent
from recorder.record import ProxyStartError, RecordingProxy
from recorder.replay import Replayer

ROOT = Path(__file__).resolve().parents[2]
GRPC_CAPTURE = ROOT / "tests" / "data" / "grpc-send.http"
HTTP_CAPTURE = ROOT / "tests" / "data" / "jsonrpc-send.http"


@pytest.fixture
def held_port() -> Iterator[int]:
    """A port held as grpcio holds one: listening, with SO_REUSEPORT."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


@pytest.fixture
def grpc_agent_port() -> Iterator[int]:
    """The port of a running grpcio server with grpcio's default options (a user's agent)."""
    server = grpc.server(ThreadPoolExecutor(max_workers=1))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield port
    server.stop(grace=None)


def _replay(grpc_port: int | None = None, port: int = 0) -> None:
    captures = [read_capture(GRPC_CAPTURE)]
    Replayer(captures, port=port, grpc_port=grpc_port).start().stop()


def _record(**listeners: tuple[str, int]) -> None:
    upstream = "http://127.0.0.1:9"
    options = {"grpc_upstream": "127.0.0.1:9"} if "grpc_listen" in listeners else {}
    RecordingProxy(upstream=upstream, **options, **listeners).start().stop()  # type: ignore[arg-type]


def _demo(**ports: int) -> None:
    DemoAgent(**ports).start().stop()


LISTENERS: dict[str, Callable[[int], None]] = {
    "replay HTTP": lambda port: _replay(port=port),
    "replay gRPC": lambda port: _replay(grpc_port=port),
    "record proxy": lambda port: _record(listen=("127.0.0.1", port)),
    "record gRPC": lambda port: _record(grpc_listen=("127.0.0.1", port)),
    "record push proxy": lambda port: _record(push_proxy=("127.0.0.1", port)),
    "demo agent HTTP": lambda port: _demo(http_port=port),
    "demo agent gRPC": lambda port: _demo(grpc_port=port),
}


@pytest.mark.parametrize("listener", list(LISTENERS))
def test_every_listener_refuses_a_port_in_use(listener: str, held_port: int) -> None:
    with pytest.raises((OSError, RuntimeError, ProxyStartError)) as refused:
        LISTENERS[listener](held_port)
    said = str(refused.value).lower()
    assert "in use" in said or "failed to bind" in said, said


def test_replay_grpc_listen_on_a_live_agents_port_is_refused(grpc_agent_port: int) -> None:
    """The finding: `replay --grpc-listen` on the port a live grpcio agent holds said
    "replaying gRPC at ..." and both served; now it exits 2 saying why."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "recorder",
            "replay",
            str(GRPC_CAPTURE),
            "--listen",
            "127.0.0.1:0",
            "--grpc-listen",
            f"127.0.0.1:{grpc_agent_port}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 2, done.stderr
    assert f"cannot listen for gRPC on 127.0.0.1:{grpc_agent_port}" in done.stderr
    assert "replaying" not in done.stderr


def test_record_on_a_port_in_use_says_only_why_it_could_not_start(
    held_port: int, tmp_path: Path
) -> None:
    """No 'recorded 0 exchanges ... to nothing' before the error: nothing ever listened."""
    command = [sys.executable, "-m", "recorder", "record", "--upstream", "http://127.0.0.1:9"]
    command += ["--listen", f"127.0.0.1:{held_port}", "--out", str(tmp_path / "c.http")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert "in use" in done.stderr, done.stderr
    assert "recorded 0 exchanges" not in done.stderr, done.stderr
