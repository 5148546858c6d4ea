"""Slow and oversized clients against the replayer, with real sockets on 127.0.0.1.

A slowloris client (headers or body trickled, or a Content-Length larger than the body) is
cut off with 408 after the read timeout while other clients are served; a body over the size
bound gets 413, a head over it 431; the gRPC face ends a call whose message never comes with
DEADLINE_EXCEEDED and closes a connection that never speaks HTTP/2.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator

import grpc
import httpx
import pytest

from recorder.capture import Capture, read_capture
from recorder.demo import DemoAgent
from recorder.record import RecordingProxy
from recorder.replay import Replayer

TIMEOUT = 1.0  # the replayer's read timeout in these tests
GRACE = 6.0  # how long a test waits for the cut (the machine may be busy)
LIMITS = {
    "read_timeout": TIMEOUT,
    "max_request_bytes": 64 * 1024,
    "max_head_bytes": 8 * 1024,
    "idle_timeout": 2.0,
}


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> Capture:
    out = tmp_path_factory.mktemp("limits") / "card.http"
    with (
        DemoAgent(event_delay=0.05) as agent,
        RecordingProxy(upstream=agent.base_url, out=out, grpc_upstream=agent.grpc_target) as proxy,
    ):
        httpx.get(
            f"{proxy.url}/.well-known/agent-card.json", timeout=5, headers={"A2A-Version": "1.0"}
        ).raise_for_status()
    return read_capture(out)


@pytest.fixture
def replayer(capture: Capture) -> Iterator[Replayer]:
    with Replayer([capture], grpc_port=0, **LIMITS) as running:
        yield running


def _connect(replayer: Replayer) -> socket.socket:
    sock = socket.create_connection((replayer.host, replayer.port), timeout=GRACE + TIMEOUT)
    return sock


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def _card_ok(replayer: Replayer) -> bool:
    reply = httpx.get(f"{replayer.url}/.well-known/agent-card.json", timeout=5)
    return reply.status_code == 200 and "supportedInterfaces" in reply.json()


class Trickle(threading.Thread):
    """Sends `data` one byte every `gap` seconds until the server closes the connection."""

    def __init__(self, sock: socket.socket, data: bytes, gap: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.sock, self.data, self.gap = sock, data, gap

    def run(self) -> None:
        for byte in self.data:
            try:
                self.sock.send(bytes([byte]))
            except OSError:
                return
            time.sleep(self.gap)


HEAD = b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\n\r\n"
POST = b"POST /a2a/jsonrpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"


@pytest.mark.parametrize(
    "case", ["trickled headers", "trickled body", "short body", "silent connection"]
)
def test_a_slow_client_gets_408_after_the_timeout_while_others_are_served(
    replayer: Replayer, case: str
) -> None:
    sock = _connect(replayer)
    body = b'{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{}}'
    started = time.monotonic()
    if case == "trickled headers":
        Trickle(sock, HEAD * 4).start()
    elif case == "trickled body":
        sock.sendall(POST + b"Content-Length: %d\r\n\r\n" % len(body))
        Trickle(sock, body).start()
    elif case == "short body":
        sock.sendall(POST + b"Content-Length: %d\r\n\r\n" % (len(body) + 50) + body)
    served = [_card_ok(replayer) for _ in range(3)]  # others are served meanwhile
    answer = _read_all(sock)
    elapsed = time.monotonic() - started
    sock.close()
    assert served == [True, True, True]
    assert elapsed >= TIMEOUT * 0.9
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout"), answer[:200]


def test_a_body_over_the_bound_gets_413_and_a_huge_head_431(replayer: Replayer) -> None:
    sock = _connect(replayer)
    sock.sendall(POST + b"Content-Length: %d\r\n\r\n" % (LIMITS["max_request_bytes"] + 1))
    assert _read_all(sock).startswith(b"HTTP/1.1 413 Content Too Large")
    sock.close()
    sock = _connect(replayer)  # a chunked body that never says how long it is
    sock.sendall(POST + b"Transfer-Encoding: chunked\r\n\r\n")
    chunk = b"%x\r\n%s\r\n" % (4096, b"x" * 4096)
    try:
        for _ in range(LIMITS["max_request_bytes"] // 4096 * 2):
            sock.sendall(chunk)
    except OSError:
        pass  # cut off while sending, as it should be
    assert _read_all(sock).startswith(b"HTTP/1.1 413 Content Too Large")
    sock.close()
    sock = _connect(replayer)
    sock.sendall(
        b"GET / HTTP/1.1\r\nX-Big: " + b"a" * (LIMITS["max_head_bytes"] + 10) + b"\r\n\r\n"
    )
    assert _read_all(sock).startswith(b"HTTP/1.1 431")
    sock.close()
    assert _card_ok(replayer)


def test_a_client_within_the_limits_is_not_cut(replayer: Replayer) -> None:
    # Requests that take less than the timeout each, on one keep-alive connection, for longer
    # than the timeout in all: the deadline is per request, not per connection.
    with httpx.Client(base_url=replayer.url, timeout=5) as client:
        deadline = time.monotonic() + TIMEOUT * 2.5
        count = 0
        while time.monotonic() < deadline:
            reply = client.get("/.well-known/agent-card.json")
            assert reply.status_code == 200
            count += 1
            time.sleep(TIMEOUT / 4)
    assert count >= 5


def test_a_grpc_call_whose_message_never_comes_ends_with_deadline_exceeded(
    replayer: Replayer,
) -> None:
    assert replayer.grpc_target is not None
    target = replayer.grpc_target

    async def stalled() -> tuple[grpc.StatusCode, float]:
        async def never() -> Iterator[bytes]:  # type: ignore[misc]
            await asyncio.sleep(3600)
            yield b""

        async with grpc.aio.insecure_channel(target) as channel:
            call = channel.stream_unary("/lf.a2a.v1.A2AService/GetTask")
            started = time.monotonic()
            try:
                await call(never(), timeout=GRACE * 2)
            except grpc.aio.AioRpcError as error:
                return error.code(), time.monotonic() - started
        raise AssertionError("the stalled call was answered")

    async def served() -> bytes:
        async with grpc.aio.insecure_channel(target) as channel:
            call = channel.unary_unary("/lf.a2a.v1.A2AService/GetExtendedAgentCard")
            try:
                return bytes(await call(b"", timeout=5))
            except grpc.aio.AioRpcError as error:
                return json.dumps({"code": error.code().name}).encode()

    async def both() -> tuple[tuple[grpc.StatusCode, float], bytes]:
        return await asyncio.gather(stalled(), served())

    (code, elapsed), other = asyncio.run(both())
    assert code is grpc.StatusCode.DEADLINE_EXCEEDED
    assert TIMEOUT * 0.9 <= elapsed < GRACE * 2
    assert other  # the other call got its answer (the capture has no such call: a miss)


def test_a_grpc_connection_that_never_speaks_http2_is_closed(replayer: Replayer) -> None:
    assert replayer.grpc_target is not None
    host, _, port = replayer.grpc_target.rpartition(":")
    sock = socket.create_connection((host, int(port)), timeout=GRACE * 3)
    started = time.monotonic()
    _read_all(sock)  # returns once the server has closed the connection
    sock.close()
    assert time.monotonic() - started < GRACE * 3
