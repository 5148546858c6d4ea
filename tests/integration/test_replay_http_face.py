"""The replayer's HTTP/1.1 face on raw sockets: upgrade offers, pipelining, limits.

The Java SDK's client (java.net.http, HTTP_2 preferred) sends every cleartext request with
`Connection: Upgrade, HTTP2-Settings`, `Upgrade: h2c` and an `HTTP2-Settings` header, body
included.  A server that does not speak h2c must ignore the offer and answer over HTTP/1.1
(RFC 9110 §7.8); the live agents do, and the recorder's mitmproxy strips the headers before the
capture.  httptools stops parsing at the end of an offering head, and a server on it that does
nothing more drops the body: the replay then answered a JSON-RPC parse error with a null id
instead of the recorded result.

The face is our own asyncio protocol on httptools (`recorder/replay/faces/_http.py`); these tests
need no A2A SDK, so the install tests run them at the lowest httptools pyproject.toml allows.
"""

from __future__ import annotations

import json
import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from recorder.capture import read_capture
from recorder.replay import Replayer

CAPTURE = Path(__file__).resolve().parents[2] / "captures/a2a-python-1.3.0/03-blocking-task.http"
# What java.net.http adds to a cleartext request when it prefers HTTP/2 (JDK 17).
H2C_OFFER = (
    "Connection: Upgrade, HTTP2-Settings\r\n"
    "Upgrade: h2c\r\n"
    "HTTP2-Settings: AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA\r\n"
)
WEBSOCKET_OFFER = (
    "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
)


@pytest.fixture(scope="module")
def replayer() -> Iterator[Replayer]:
    with Replayer([read_capture(CAPTURE)], timing="none") as running:
        yield running


def _address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def _send_message(request_id: str) -> tuple[str, bytes]:
    capture = read_capture(CAPTURE)
    exchange = next(e for e in capture.exchanges if e.classification.operation == "SendMessage")
    body = json.loads(exchange.request.body)
    body["id"] = request_id
    # A client of its own each time (the replayer tells clients apart by their ids).
    body["params"]["message"].update(contextId=str(uuid.uuid4()), messageId=str(uuid.uuid4()))
    return exchange.request.target, json.dumps(body).encode()


def _head(path: str, extra: str, framing: str, method: str = "POST") -> bytes:
    return (
        f"{method} {path} HTTP/1.1\r\nHost: agent\r\nContent-Type: application/json\r\n"
        f"A2A-Version: 1.0\r\n{framing}{extra}\r\n"
    ).encode()


def _chunked(body: bytes) -> bytes:
    half = len(body) // 2
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (body[:half], body[half:])) + (
        b"0\r\n\r\n"
    )


def _exchange(
    url: str, *parts: bytes, pause: float = 0.0, answers: int = 1
) -> list[tuple[str, bytes]]:
    """Send `parts` (with `pause` seconds between them) on one connection, and read `answers`
    (status line, body) answers, each with a Content-Length, or until the server closes."""
    with socket.create_connection(_address(url), timeout=10) as sock:
        for index, part in enumerate(parts):
            if index and pause:
                time.sleep(pause)
            sock.sendall(part)
        data = b""
        while len(found := _answers(data)) < answers and (chunk := sock.recv(65536)):
            data += chunk
    return found


def _answers(data: bytes) -> list[tuple[str, bytes]]:
    """The complete answers at the start of `data`."""
    found = []
    while b"\r\n\r\n" in data:
        head, _, rest = data.partition(b"\r\n\r\n")
        status, *lines = head.decode("latin-1").split("\r\n")
        length = next(
            int(v) for n, _, v in (x.partition(":") for x in lines) if n.lower() == "content-length"
        )
        if len(rest) < length:
            break
        found.append((status, rest[:length]))
        data = rest[length:]
    return found


def _assert_recorded(answer: tuple[str, bytes], request_id: str) -> None:
    status, body = answer
    assert status.startswith("HTTP/1.1 200"), status
    got = json.loads(body)
    assert got["id"] == request_id, got
    assert got["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", got


@pytest.mark.parametrize(
    "offer",
    [
        pytest.param("", id="plain"),
        pytest.param(H2C_OFFER, id="h2c-offer"),
        pytest.param(WEBSOCKET_OFFER, id="websocket-offer"),
    ],
)
def test_an_upgrade_offer_is_ignored_and_the_body_read(replayer: Replayer, offer: str) -> None:
    path, body = _send_message("r-1")
    head = _head(path, offer, f"Content-Length: {len(body)}\r\n")
    (answer,) = _exchange(replayer.url, head + body)
    _assert_recorded(answer, "r-1")


def test_a_chunked_body_after_an_offer(replayer: Replayer) -> None:
    path, body = _send_message("r-chunked")
    head = _head(path, H2C_OFFER, "Transfer-Encoding: chunked\r\n")
    (answer,) = _exchange(replayer.url, head, _chunked(body), pause=0.2)
    _assert_recorded(answer, "r-chunked")


def test_the_body_arriving_after_the_head(replayer: Replayer) -> None:
    path, body = _send_message("r-late")
    head = _head(path, H2C_OFFER, f"Content-Length: {len(body)}\r\n")
    (answer,) = _exchange(replayer.url, head, body[:10], body[10:], pause=0.2)
    _assert_recorded(answer, "r-late")


def test_requests_after_an_offer_on_the_same_connection(replayer: Replayer) -> None:
    """Pipelined in one write: a card fetch offering h2c (no body), a send offering h2c, a
    plain send; each gets its own answer, in order."""
    path, first = _send_message("r-a")
    _, second = _send_message("r-b")
    card = _head("/.well-known/agent-card.json", H2C_OFFER, "", method="GET")
    offered = _head(path, H2C_OFFER, f"Content-Length: {len(first)}\r\n") + first
    plain = _head(path, "", f"Content-Length: {len(second)}\r\n") + second
    card_answer, *sends = _exchange(replayer.url, card + offered + plain, answers=3)
    assert card_answer[0].startswith("HTTP/1.1 200") and json.loads(card_answer[1])["name"]
    _assert_recorded(sends[0], "r-a")
    _assert_recorded(sends[1], "r-b")


def test_a_body_over_the_limit_is_refused_with_its_reason() -> None:
    with Replayer([read_capture(CAPTURE)], max_request_bytes=1024) as small:
        path, body = _send_message("r-big")
        body = body.replace(b'"r-big"', b'"r-big' + b"x" * 1024 + b'"')  # over 1 KiB
        for offer in ("", H2C_OFFER):
            head = _head(path, offer, f"Content-Length: {len(body)}\r\n")
            ((status, text),) = _exchange(small.url, head + body)
            assert status == "HTTP/1.1 413 Content Too Large", (offer, status)
            assert b"limits" in text
