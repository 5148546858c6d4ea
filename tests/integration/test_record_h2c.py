"""An h2c upgrade offer through the recorder: kept in the capture, and said to be taken out.

The Java SDK's JDK HttpClient offers `Upgrade: h2c` on every cleartext request. mitmproxy
relays HTTP/1.1 only, so the recorder must take the offer out before the request goes on (or
the agent could switch protocols mid-connection). The capture keeps the request as the client
sent it, with a note that the agent never saw those headers, and a client with an HTTP/1.1
answer is none the wiser. A raw socket client sends the offer exactly as the JDK does.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

from _helpers import exchanges, wait_for
from _tiny_agents import Answer, TinyAgent, TinyRequest, json_head

from recorder.capture import read_capture
from recorder.record import RecordingProxy

TIMEOUT = 10.0
BODY = json.dumps(
    {"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": {"id": "t-1"}}
).encode()
OFFER = (("Connection", "Upgrade, HTTP2-Settings"), ("HTTP2-Settings", "AAEAAEAAAAIAAAAAAAMAAAAA"))
ANSWER = json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"id": "t-1"}}).encode()


def _agent() -> TinyAgent:
    async def handle(request: TinyRequest, answer: Answer) -> None:
        await answer(200, json_head(len(ANSWER)), [ANSWER])

    return TinyAgent(handle)


def _send_with_offer(port: int) -> bytes:
    head = [
        "POST /a2a/jsonrpc HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        *(f"{name}: {value}" for name, value in OFFER),
        "Upgrade: h2c",
        "Content-Type: application/json",
        f"Content-Length: {len(BODY)}",
    ]
    raw = ("\r\n".join(head) + "\r\n\r\n").encode() + BODY
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        sock.sendall(raw)
        got = b""
        while ANSWER not in got:
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
    return got


def test_an_h2c_offer_is_recorded_as_sent_and_noted_as_taken_out(tmp_path: Path) -> None:
    out = tmp_path / "h2c.http"
    with _agent() as agent, RecordingProxy(upstream=agent.base_url, out=out) as proxy:
        port = int(proxy.url.rsplit(":", 1)[1])
        got = _send_with_offer(port)
        assert wait_for(lambda: len(exchanges(out)) == 1, timeout=TIMEOUT)
    assert got.startswith(b"HTTP/1.1 200") and got.endswith(ANSWER)
    seen = agent.requests[0].headers
    assert "upgrade" not in seen and "http2-settings" not in seen  # the agent never saw it
    exchange = read_capture(out).exchanges[0]
    kept = {name.lower(): value for name, value in exchange.request.headers}
    assert kept["upgrade"] == "h2c"
    assert kept["http2-settings"] == OFFER[1][1]
    assert kept["connection"] == OFFER[0][1]
    assert any("h2c" in note and "not passed on" in note for note in exchange.notes)


def test_a_request_without_an_offer_has_no_such_note(tmp_path: Path) -> None:
    out = tmp_path / "plain.http"
    with _agent() as agent, RecordingProxy(upstream=agent.base_url, out=out) as proxy:
        port = int(proxy.url.rsplit(":", 1)[1])
        head = (
            f"POST /a2a/jsonrpc HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(BODY)}\r\n\r\n"
        )
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
            sock.sendall(head.encode() + BODY)
            sock.recv(65536)
        assert wait_for(lambda: len(exchanges(out)) == 1, timeout=TIMEOUT)
    exchange = read_capture(out).exchanges[0]
    assert not any("h2c" in note for note in exchange.notes)
