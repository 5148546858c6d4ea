"""A slow or stalled client cannot hold the recorder, and an oversized request gets 413.

Real sockets against a real recorder in front of the demo agent: a slowloris client trickles
its request head, another stalls its body (a Content-Length larger than what it sends), and
meanwhile an ordinary client is served as usual.
"""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from recorder.capture import read_capture
from recorder.demo import DemoAgent
from recorder.record import RecordingProxy

READ_TIMEOUT = 1.0
CLOSED_WITHIN = 15.0  # generous: the check is that the recorder closes at all


@pytest.fixture(scope="module")
def agent() -> Iterator[DemoAgent]:
    with DemoAgent(enable_grpc=False) as running:
        yield running


def _closed(sock: socket.socket, trickle: bytes = b"") -> bool:
    """Send `trickle` a byte at a time (slowloris); True once the peer closes the socket."""
    sock.settimeout(0.3)
    deadline = time.monotonic() + CLOSED_WITHIN
    sent = 0
    while time.monotonic() < deadline:
        try:
            if sent < len(trickle):
                sock.send(trickle[sent : sent + 1])
                sent += 1
            data = sock.recv(4096)
        except TimeoutError:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return True
        if not data or data.startswith(b"HTTP/1.1 408"):
            return True
    return False


def _served(url: str, count: int) -> list[int]:
    codes = []
    with httpx.Client(timeout=10) as client:
        for _ in range(count):
            codes.append(client.get(f"{url}/.well-known/agent-card.json").status_code)
    return codes


def test_slow_and_stalled_clients_are_cut_off_while_others_are_served(
    agent: DemoAgent, tmp_path: Path
) -> None:
    with RecordingProxy(
        upstream=agent.base_url, out=tmp_path / "c.http", read_timeout=READ_TIMEOUT
    ) as proxy:
        head = b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200
        body = (
            b"POST /a2a/jsonrpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 100\r\n\r\n{"jsonrpc"'
        )
        results: dict[str, bool] = {}
        with (
            socket.create_connection((proxy.host, proxy.port)) as slow,
            socket.create_connection((proxy.host, proxy.port)) as stalled,
        ):
            stalled.sendall(body)
            threads = [
                threading.Thread(target=lambda: results.update(slow=_closed(slow, head))),
                threading.Thread(target=lambda: results.update(stalled=_closed(stalled))),
            ]
            for thread in threads:
                thread.start()
            codes = _served(proxy.url, 5)
            for thread in threads:
                thread.join(CLOSED_WITHIN + 5)
        assert results == {"slow": True, "stalled": True}
        assert codes == [200] * 5
    # Neither half-sent request reached the capture; the served ones did.
    operations = [e.classification.operation for e in read_capture(tmp_path / "c.http").exchanges]
    assert operations == ["AgentCard"] * 5


def test_an_idle_keep_alive_connection_is_closed_and_the_client_reconnects(
    agent: DemoAgent, tmp_path: Path
) -> None:
    with (
        RecordingProxy(
            upstream=agent.base_url, out=tmp_path / "k.http", read_timeout=READ_TIMEOUT
        ) as proxy,
        httpx.Client(timeout=10) as client,
    ):
        first = client.get(f"{proxy.url}/.well-known/agent-card.json")
        time.sleep(READ_TIMEOUT * 2.5)
        second = client.get(f"{proxy.url}/.well-known/agent-card.json")
    assert (first.status_code, second.status_code) == (200, 200)


def test_a_request_larger_than_the_limit_gets_413_and_is_not_forwarded(
    agent: DemoAgent, tmp_path: Path
) -> None:
    out = tmp_path / "big.http"
    message = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"text": "echo " + "x" * 4096}],
    }
    body = {"jsonrpc": "2.0", "id": "1", "method": "SendMessage", "params": {"message": message}}
    with RecordingProxy(upstream=agent.base_url, out=out, max_body_size="2k") as proxy:
        big = httpx.post(
            f"{proxy.url}/a2a/jsonrpc", json=body, timeout=10, headers={"A2A-Version": "1.0"}
        )
        small = httpx.post(
            f"{proxy.url}/a2a/jsonrpc",
            timeout=10,
            headers={"A2A-Version": "1.0"},
            json={**body, "params": {"message": {**message, "parts": [{"text": "echo s"}]}}},
        )
    assert big.status_code == 413 and "body_size_limit" in big.text
    assert small.status_code == 200
    # The refused request never reached the agent: only the small one is in the capture.
    recorded = read_capture(out).exchanges
    assert [e.response.status for e in recorded if e.response] == [200]
