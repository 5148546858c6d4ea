"""The recorder with real parts: a2a-sdk 1.3.0 agent and clients, a real mitmproxy, real sockets.

Every server binds 127.0.0.1 on a free port, runs in a background thread with a timeout, and
is stopped at the end of its test.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _helpers import exchanges, free_port, wait_for

from recorder import OptionError
from recorder.capture import Capture, Exchange, read_capture
from recorder.demo import DemoAgent, WebhookReceiver, run_session
from recorder.protocol import PUSH_DELIVERY, Binding
from recorder.record import ProxyStartError, RecordingProxy

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 10.0


def operations(capture: Capture) -> list[str | None]:
    return [e.classification.operation for e in capture.exchanges]


def by_operation(capture: Capture, name: str) -> list[Exchange]:
    return [e for e in capture.exchanges if e.classification.operation == name]


def jsonrpc_stream_body(text: str, message_id: str = "m-1") -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": message_id,
            "method": "SendStreamingMessage",
            "params": {
                "message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}
            },
        }
    ).encode()


A2A_HEADERS = {"A2A-Version": "1.0", "Content-Type": "application/json"}


# -- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def agent() -> Iterator[DemoAgent]:
    with DemoAgent(enable_grpc=False, event_delay=0.05) as running:
        yield running


@pytest.fixture()
def webhook() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as receiver:
        yield receiver


# -- a whole session, both HTTP bindings --------------------------------------------------------

SESSION_OPERATIONS = [
    "AgentCard",
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "ListTasks",
    "SendMessage",
    "SendMessage",
    "CancelTask",
    "SendMessage",
    "CancelTask",
    "SubscribeToTask",
    "SendMessage",
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "GetTask",
    "CancelTask",
    "SubscribeToTask",
    "GetTaskPushNotificationConfig",
    "GetExtendedAgentCard",
]
EXPECTED_ERRORS = {
    "error_get_unknown_task": "TaskNotFoundError",
    "error_cancel_completed": "TaskNotCancelableError",
    "error_subscribe_terminal": "UnsupportedOperationError",
    "error_push_get_unknown": "TaskNotFoundError",
}


@pytest.mark.parametrize("binding", [Binding.JSONRPC, Binding.HTTP_JSON])
def test_session_recorded(
    agent: DemoAgent, webhook: WebhookReceiver, tmp_path: Path, binding: Binding
) -> None:
    out = tmp_path / "session.http"
    with RecordingProxy(upstream=agent.base_url, out=out) as proxy:
        result = asyncio.run(run_session(proxy.url, binding=binding, webhook=webhook, timeout=5))
        assert wait_for(lambda: len(by_operation(read_capture(out), PUSH_DELIVERY)) == 4)
    direct = asyncio.run(run_session(agent.base_url, binding=binding, timeout=5))

    # The client saw what it sees without the recorder (push steps aside: no webhook there).
    assert result.errors == EXPECTED_ERRORS
    assert result.webhook_deliveries == 4
    assert all("token=True auth=True" in d for d in result.deliveries)
    skip = {"push_send", "push_create", "push_get"}
    assert [s for s in result.steps if s.name not in skip] == [
        s for s in direct.steps if s.name not in skip
    ]

    capture = read_capture(out)
    numbers = [e.number for e in capture.exchanges]
    assert numbers == list(range(1, len(numbers) + 1))
    # Every call went through the proxy: the card rewrite worked.  Completion order can swap
    # concurrent calls (the subscribe stream ends when the parallel cancel does).
    recorded = [op for op in operations(capture) if op != PUSH_DELIVERY]
    assert sorted(map(str, recorded)) == sorted(SESSION_OPERATIONS)
    assert recorded[0] == "AgentCard" and recorded[-1] == "GetExtendedAgentCard"
    for exchange in capture.exchanges[1:]:
        if exchange.classification.operation not in (PUSH_DELIVERY,):
            assert exchange.classification.binding == binding
    _check_card(capture, agent, proxy_url=proxy.url)
    _check_stream(capture)
    _check_errors(capture)
    _check_push(capture, webhook)
    _check_secrets(out)


def _check_card(capture: Capture, agent: DemoAgent, proxy_url: str) -> None:
    card_exchange = capture.exchanges[0]
    assert card_exchange.classification.operation == "AgentCard"
    assert "card rewritten" in card_exchange.notes
    assert card_exchange.response is not None
    original = json.loads(card_exchange.response.body)  # the agent's card, not the rewrite
    urls = [i["url"] for i in original["supportedInterfaces"]]
    assert urls and all(u.startswith(agent.base_url) for u in urls)
    assert not any(u.startswith(proxy_url) for u in urls)
    extended = by_operation(capture, "GetExtendedAgentCard")[0]
    assert "card rewritten" in extended.notes


def _check_stream(capture: Capture) -> None:
    stream = by_operation(capture, "SendStreamingMessage")[0]
    assert stream.response is not None and stream.response.body == b""
    data = [line for ev in stream.response.events for line in ev.lines if line.startswith("data:")]
    assert len(data) >= 4  # task, working, three artifacts, completed
    assert all(json.loads(line[5:]) for line in data)
    offsets = [ev.offset_us for ev in stream.response.events]
    assert offsets == sorted(offsets)
    assert stream.response.newline in ("\r\n", "\n")


def _check_errors(capture: Capture) -> None:
    errors = [e.classification.error for e in capture.exchanges if e.classification.error]
    assert errors == [
        "TaskNotFoundError",
        "TaskNotCancelableError",
        "UnsupportedOperationError",
        "TaskNotFoundError",
    ]


def _check_push(capture: Capture, webhook: WebhookReceiver) -> None:
    deliveries = by_operation(capture, PUSH_DELIVERY)
    assert len(deliveries) == 4
    assert all(d.response is not None and d.response.status == 200 for d in deliveries)
    assert all(json.loads(d.request.body) for d in deliveries)
    assert all(any("push relay" in n for n in d.notes) for d in deliveries)
    # The capture holds what the client sent and saw: its own webhook URL, never the relay.
    create = by_operation(capture, "CreateTaskPushNotificationConfig")[0]
    assert create.response is not None
    for body in (create.request.body, create.response.body):
        assert webhook.url.encode() in body
        assert b"__a2a_recorder" not in body


def _check_secrets(out: Path) -> None:
    text = out.read_text()
    capture = read_capture(out)
    create = by_operation(capture, "CreateTaskPushNotificationConfig")[0]
    body = json.loads(create.request.body)
    params = body.get("params", body)
    assert params["token"].startswith("<redacted:")
    assert params["authentication"]["credentials"].startswith("<redacted:")
    assert "<redacted:" in text
    assert "Authorization" in capture.redacted
    delivery = by_operation(capture, PUSH_DELIVERY)[0]
    assert (delivery.request.header("Authorization") or "").startswith("Bearer <redacted:")


# -- streaming: live, spaced, whole -----------------------------------------------------------


def _spaced_stream(url: str, out: Path) -> tuple[list[float], list[float]]:
    """Stream "slow 3" through the recorder; (client-side gaps, capture-offset gaps)."""
    before = len(exchanges(out))
    arrivals: list[float] = []
    with httpx.stream(
        "POST",
        url,
        content=jsonrpc_stream_body("slow 3"),
        headers=A2A_HEADERS,
        timeout=TIMEOUT,
    ) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data:") and "artifactUpdate" in line:
                arrivals.append(time.monotonic())
    assert wait_for(lambda: len(exchanges(out)) == before + 1)
    stream = exchanges(out)[-1]
    assert stream.response is not None
    stamps = [
        ev.offset_us / 1e6
        for ev in stream.response.events
        if any("artifactUpdate" in line for line in ev.lines)
    ]
    assert len(arrivals) == len(stamps) == 3
    return (
        [b - a for a, b in zip(arrivals, arrivals[1:], strict=False)],
        [b - a for a, b in zip(stamps, stamps[1:], strict=False)],
    )


def test_event_spacing_kept(tmp_path: Path) -> None:
    out = tmp_path / "slow.http"
    # The client's clock reads are part of the measurement, and on a shared machine one run may
    # be disturbed: the recorder gets three tries to show the 100 ms it promises.
    tries: list[tuple[list[float], list[float]]] = []
    with (
        DemoAgent(enable_grpc=False, event_delay=0.3) as slow_agent,
        RecordingProxy(upstream=slow_agent.base_url, out=out) as proxy,
    ):
        url = proxy.url + httpx.URL(slow_agent.jsonrpc_url).path
        while len(tries) < 3:
            tries.append(_spaced_stream(url, out))
            if all(abs(gap - 0.3) < 0.1 for gaps in tries[-1] for gap in gaps):
                break
    client_gaps, capture_gaps = tries[-1]
    assert all(abs(gap - 0.3) < 0.1 for gap in client_gaps), tries
    assert all(abs(gap - 0.3) < 0.1 for gap in capture_gaps), tries


def test_fifty_concurrent_streams(agent: DemoAgent, tmp_path: Path) -> None:
    out = tmp_path / "many.http"

    async def one(client: httpx.AsyncClient, url: str, n: int) -> int:
        events = 0
        body = jsonrpc_stream_body(f"slow 2 #{n}", message_id=f"m-{n}")
        async with client.stream("POST", url, content=body, headers=A2A_HEADERS) as response:
            async for line in response.aiter_lines():
                events += line.startswith("data:")
        return events

    async def run_all(url: str) -> list[int]:
        limits = httpx.Limits(max_connections=60)
        async with httpx.AsyncClient(timeout=TIMEOUT, limits=limits) as client:
            return await asyncio.gather(*(one(client, url, n) for n in range(50)))

    with RecordingProxy(upstream=agent.base_url, out=out) as proxy:
        counts = asyncio.run(run_all(proxy.url + httpx.URL(agent.jsonrpc_url).path))
        assert wait_for(lambda: len(exchanges(out)) == 50)
    assert len(set(counts)) == 1 and counts[0] >= 4
    capture = read_capture(out)
    assert operations(capture) == ["SendStreamingMessage"] * 50
    for exchange in capture.exchanges:
        assert exchange.response is not None
        data = [ln for ev in exchange.response.events for ln in ev.lines if ln.startswith("data:")]
        assert len(data) == counts[0]
        assert "completed" in data[-1].lower()


def test_client_hangs_up_mid_stream(tmp_path: Path) -> None:
    out = tmp_path / "hangup.http"
    with (
        DemoAgent(enable_grpc=False, event_delay=0.3) as slow_agent,
        RecordingProxy(upstream=slow_agent.base_url, out=out) as proxy,
    ):
        url = proxy.url + httpx.URL(slow_agent.jsonrpc_url).path
        seen = 0
        with httpx.stream(
            "POST",
            url,
            content=jsonrpc_stream_body("slow 8"),
            headers=A2A_HEADERS,
            timeout=TIMEOUT,
        ) as response:
            for line in response.iter_lines():
                seen += line.startswith("data:")
                if seen == 3:
                    break
        assert wait_for(lambda: bool(exchanges(out)))
    exchange = read_capture(out).exchanges[0]
    assert "client closed" in exchange.notes
    assert exchange.response is not None
    assert 3 <= len(exchange.response.events) < 10
    assert exchange.error


# -- a raw upstream of our own: exact bytes -----------------------------------------------------

BINARY = bytes(range(256)) * 64
PLAIN = b'{"hello": "world", "n": [1, 2, 3]}'
GZIPPED = gzip.compress(PLAIN)
BIG = 50 * 1024 * 1024


class RawUpstream:
    """A tiny HTTP/1.1 server that writes exact response bytes, one connection at a time."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> RawUpstream:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(TIMEOUT)
        self.sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        conn.settimeout(TIMEOUT)
        with conn:
            head, body = _read_request(conn)
            path = head.split(b" ")[1].decode()
            conn.sendall(self.answer(path, body))

    @staticmethod
    def answer(path: str, body: bytes) -> bytes:
        if path == "/binary":
            return _response(b"application/octet-stream", BINARY)
        if path == "/gzip":
            return _response(b"application/json", GZIPPED, b"Content-Encoding: gzip\r\n")
        if path == "/chunked":
            chunks = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in (b"ab", b"\x00" * 7, b"z"))
            return (
                b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + chunks + b"0\r\n\r\n"
            )
        if path == "/hash":
            return _response(b"text/plain", hashlib.sha256(body).hexdigest().encode())
        if path == "/big":
            return _response(b"application/octet-stream", b"\xa5" * BIG)
        if path == "/truncated-sse":
            return (
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
                b'data: one\n\n: ping\n\ndata: {"cut'
            )
        return _response(b"text/plain", b"not found", status=b"404 Not Found")


def _response(
    content_type: bytes, body: bytes, extra: bytes = b"", status: bytes = b"200 OK"
) -> bytes:
    return (
        b"HTTP/1.1 "
        + status
        + b"\r\nContent-Type: "
        + content_type
        + b"\r\n"
        + extra
        + b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
        + body
    )


def _read_request(conn: socket.socket) -> tuple[bytes, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        body += conn.recv(1 << 20)
    return head, body


def test_bytes_forwarded_unchanged(tmp_path: Path) -> None:
    out = tmp_path / "raw.http"
    with (
        RawUpstream() as upstream,
        RecordingProxy(upstream=upstream.url, out=out, record_all=True) as proxy,
        httpx.Client(base_url=proxy.url, timeout=TIMEOUT) as client,
    ):
        assert client.get("/binary").content == BINARY
        with client.stream("GET", "/gzip", headers={"Accept-Encoding": "gzip"}) as response:
            assert response.headers["content-encoding"] == "gzip"
            assert b"".join(response.iter_raw()) == GZIPPED  # not re-encoded, not decoded
        assert client.get("/chunked").content == b"ab" + b"\x00" * 7 + b"z"
        assert wait_for(lambda: len(exchanges(out)) == 3)
    capture = read_capture(out)
    assert [e.classification.operation for e in capture.exchanges] == [None, None, None]
    binary, gz, chunked = capture.exchanges
    assert binary.response is not None and binary.response.body == BINARY
    assert gz.response is not None and gz.response.body == PLAIN
    assert "gzip decoded" in gz.notes
    assert chunked.response is not None and chunked.response.body == b"ab" + b"\x00" * 7 + b"z"


def test_fifty_megabytes_both_ways(tmp_path: Path) -> None:
    out = tmp_path / "big.http"  # non-A2A traffic: forwarded, not recorded
    upload = os.urandom(BIG)
    with (
        RawUpstream() as upstream,
        RecordingProxy(upstream=upstream.url, out=out) as proxy,
        httpx.Client(base_url=proxy.url, timeout=30) as client,
    ):
        assert client.post("/hash", content=upload).text == hashlib.sha256(upload).hexdigest()
        downloaded = client.get("/big").content
    assert len(downloaded) == BIG and downloaded == b"\xa5" * BIG
    assert not out.exists() or not read_capture(out).exchanges


def test_truncated_upstream_stream(tmp_path: Path) -> None:
    out = tmp_path / "cut.http"
    with (
        RawUpstream() as upstream,
        RecordingProxy(upstream=upstream.url, out=out, record_all=True) as proxy,
    ):
        received = httpx.get(proxy.url + "/truncated-sse", timeout=TIMEOUT).content
        assert wait_for(lambda: bool(exchanges(out)))
    assert received == b'data: one\n\n: ping\n\ndata: {"cut'
    exchange = read_capture(out).exchanges[0]
    assert "stream truncated" in exchange.notes
    assert exchange.response is not None
    assert [ev.lines for ev in exchange.response.events] == [
        ("data: one",),
        (": ping",),
        ('data: {"cut',),
    ]
    assert exchange.response.newline == "\n"


# -- card handling ------------------------------------------------------------------------------


def test_rewritten_card_has_its_own_etag_and_answers_if_none_match(
    make_demo_agent: Callable[..., DemoAgent], tmp_path: Path
) -> None:
    agent = make_demo_agent(enable_grpc=False, card_cache_control="public, max-age=60")
    direct = httpx.get(agent.card_url, timeout=TIMEOUT)
    agents_etag = direct.headers["etag"]
    path = httpx.URL(agent.card_url).path
    with RecordingProxy(upstream=agent.base_url, out=tmp_path / "a.http") as proxy:
        # The agent's validator names a card this client never gets: a full answer.
        served = httpx.get(
            proxy.url + path, headers={"If-None-Match": agents_etag}, timeout=TIMEOUT
        )
        assert served.status_code == 200
        etag = served.headers["etag"]
        assert etag != agents_etag and etag.startswith('W/"')  # weak, as the agent's
        assert served.headers["cache-control"] == "public, max-age=60"
        urls = [i["url"] for i in served.json()["supportedInterfaces"]]
        assert all(u.startswith(proxy.url) for u in urls)
        assert int(served.headers["content-length"]) == len(served.content)
        # Its own validator: 304, as the agent would answer for its card.
        again = httpx.get(proxy.url + path, headers={"If-None-Match": etag}, timeout=TIMEOUT)
        assert (again.status_code, again.content) == (304, b"")
        assert again.headers["etag"] == etag
        assert again.headers["cache-control"] == "public, max-age=60"
        same = httpx.get(proxy.url + path, timeout=TIMEOUT)
        assert same.headers["etag"] == etag and same.content == served.content
    captured = read_capture(tmp_path / "a.http").exchanges
    assert [e.response.status for e in captured if e.response] == [200, 200, 200]
    assert "answered 304: If-None-Match matched the card the client holds" in captured[1].notes
    assert captured[1].request.header("If-None-Match") == etag  # what the client sent
    with RecordingProxy(
        upstream=agent.base_url, out=tmp_path / "b.http", card_rewrite=False
    ) as proxy:
        served = httpx.get(proxy.url + path, timeout=TIMEOUT)
        assert served.content == direct.content
        assert served.headers["etag"] == agents_etag
    capture = read_capture(tmp_path / "b.http")
    assert "card rewritten" not in capture.exchanges[0].notes


# -- forward mode -------------------------------------------------------------------------------


def test_forward_mode_one_capture_per_upstream(agent: DemoAgent, tmp_path: Path) -> None:
    out_dir = tmp_path / "captures"
    with RecordingProxy(mode="forward", out=out_dir) as proxy:
        with httpx.Client(proxy=proxy.url, timeout=TIMEOUT) as client:
            card = client.get(agent.card_url)
            assert card.status_code == 200
            # Forward mode leaves the card alone: the client reaches the agent through us anyway.
            assert card.content == httpx.get(agent.card_url, timeout=TIMEOUT).content
            response = client.post(
                agent.jsonrpc_url, content=jsonrpc_stream_body("echo hi"), headers=A2A_HEADERS
            )
            assert "echo hi" in response.text
        port = httpx.URL(agent.base_url).port
        expected = out_dir / f"127.0.0.1_{port}.http"
        assert wait_for(lambda: len(exchanges(expected)) == 2)
    assert operations(read_capture(expected)) == ["AgentCard", "SendStreamingMessage"]
    assert [p.name for p in out_dir.iterdir()] == [expected.name]


def test_forward_mode_split_by_context(agent: DemoAgent, tmp_path: Path) -> None:
    out_dir = tmp_path / "by-context"
    with RecordingProxy(mode="forward", out=out_dir, split="context") as proxy:
        with httpx.Client(proxy=proxy.url, timeout=TIMEOUT) as client:
            for context in ("ctx-a", "ctx-b", "ctx-a"):
                body = json.loads(jsonrpc_stream_body("echo x", message_id=f"m-{context}"))
                body["params"]["message"]["contextId"] = context
                response = client.post(agent.jsonrpc_url, json=body, headers=A2A_HEADERS)
                assert response.is_success
        assert wait_for(lambda: len(list(out_dir.glob("*.http"))) == 2)
    names = sorted(p.name for p in out_dir.glob("*.http"))
    assert [n.rsplit(".", 2)[-2] for n in names] == ["ctx-a", "ctx-b"]
    counts = sorted(len(exchanges(out_dir / n)) for n in names)
    assert counts == [1, 2]


def test_split_context_keeps_a_conversation_in_one_file_and_names_it(
    agent: DemoAgent, tmp_path: Path
) -> None:
    """A first turn names no contextId: the agent's answer does, and the second turn and a
    read of the task go to the same capture; each console line names its capture (issue 30:
    the first turn went to another file, and the lines were numbered per file, unnamed)."""
    with pytest.raises(OptionError, match=r"names a capture file .*give a folder"):
        RecordingProxy(upstream=agent.base_url, out=tmp_path / "s.http", split="context")
    lines: list[str] = []
    out = tmp_path / "s"
    with RecordingProxy(
        upstream=agent.base_url, out=out, split="context", console=lines.append
    ) as proxy:
        url = proxy.url + httpx.URL(agent.jsonrpc_url).path
        first = _send(url, {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "echo a"}]})
        task = first["result"]["task"]
        second = {"messageId": "m-2", "role": "ROLE_USER", "contextId": task["contextId"]}
        _send(url, {**second, "parts": [{"text": "echo b"}]})
        _send(url, {"id": task["id"]}, method="GetTask")
    files = list(out.glob("*.http"))
    assert [f.name.rsplit(".", 2)[-2] for f in files] == [task["contextId"]]
    assert operations(read_capture(files[0])) == ["SendMessage", "SendMessage", "GetTask"]
    written = [line for line in lines if " JSONRPC " in line]
    assert [line.split()[:2] for line in written] == [[files[0].name, f"#{n}"] for n in (1, 2, 3)]


def _send(url: str, params: dict[str, object], method: str = "SendMessage") -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    if method == "SendMessage":
        body["params"] = {"message": params}
    answer = httpx.post(url, json=body, headers=A2A_HEADERS, timeout=TIMEOUT)
    assert answer.is_success, answer.text
    return answer.json()


# -- lifecycle and failures ---------------------------------------------------------------------


def test_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        proxy = RecordingProxy(upstream="http://127.0.0.1:9", listen=("127.0.0.1", port))
        with pytest.raises(ProxyStartError, match="address already in use"):
            proxy.start()


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="upstream"):
        RecordingProxy(upstream=None)
    with pytest.raises(ValueError, match="mode must be one of"):
        RecordingProxy(mode="sideways", upstream="http://127.0.0.1:9")
    # An option is checked against the recorder's table, and named as the caller gave it.
    with pytest.raises(OptionError, match="^split must be one of none, upstream, context"):
        RecordingProxy(upstream="http://127.0.0.1:9", split="weird")
    with pytest.raises(OptionError, match="^read_timeout must be a number, not 'soon'"):
        RecordingProxy(upstream="http://127.0.0.1:9", read_timeout="soon")
    with pytest.raises(TypeError, match="unexpected keyword argument 'read_timout'"):
        RecordingProxy(upstream="http://127.0.0.1:9", read_timout=5)


def test_mitmproxy_options_of_the_proxy_apply_and_those_of_its_tools_are_refused(
    tmp_path: Path,
) -> None:
    # The recorder's master carries only the proxy's addons: an option of one of mitmdump's
    # tools (anticache, map_remote, ...) is a clear start error, never silently ignored.
    with pytest.raises(ProxyStartError, match="Unknown options: anticache .*proxy addons only"):
        RecordingProxy(
            upstream="http://127.0.0.1:9", out=tmp_path / "a.http", mitm_options={"anticache": True}
        ).start()
    with RecordingProxy(
        upstream="http://127.0.0.1:9",
        out=tmp_path / "b.http",
        mitm_options={"body_size_limit": "3m"},
    ) as proxy:
        assert proxy.port > 0


def test_stop_frees_the_port_and_async_use(tmp_path: Path) -> None:
    async def main() -> int:
        async with RecordingProxy(upstream="http://127.0.0.1:9") as proxy:
            port = proxy.port
            with pytest.raises(OSError):
                socket.create_server(("127.0.0.1", port)).close()
        return port

    port = asyncio.run(main())
    socket.create_server(("127.0.0.1", port)).close()  # free again


# -- processes: kill -9 and mitmdump -s -------------------------------------------------------

RECORDER_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from recorder.record import RecordingProxy
    proxy = RecordingProxy(upstream=sys.argv[1], out=Path(sys.argv[2])).start()
    print(proxy.url, flush=True)
    time.sleep(60)
    """
)


def test_kill_9_leaves_a_parseable_capture(tmp_path: Path) -> None:
    out = tmp_path / "killed.http"
    with DemoAgent(enable_grpc=False, event_delay=0.3) as slow_agent:
        process = subprocess.Popen(
            [sys.executable, "-c", RECORDER_SCRIPT, slow_agent.base_url, str(out)],
            stdout=subprocess.PIPE,
            cwd=ROOT,
            text=True,
        )
        try:
            assert process.stdout is not None
            url = process.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:")
            path = httpx.URL(slow_agent.jsonrpc_url).path
            with httpx.Client(timeout=TIMEOUT) as client:
                assert client.get(url + httpx.URL(slow_agent.card_url).path).status_code == 200
                for n in range(3):
                    body = jsonrpc_stream_body(f"echo {n}", message_id=f"m{n}")
                    assert client.post(url + path, content=body, headers=A2A_HEADERS).is_success
                assert wait_for(lambda: len(exchanges(out)) == 4)
                with client.stream(
                    "POST", url + path, content=jsonrpc_stream_body("slow 10"), headers=A2A_HEADERS
                ) as response:
                    lines = response.iter_lines()  # kept: dropping it closes the connection
                    assert next(lines).startswith("data:")
                    os.kill(process.pid, signal.SIGKILL)
                    process.wait(TIMEOUT)
        finally:
            if process.poll() is None:
                process.kill()
            process.wait(TIMEOUT)
            assert process.stdout is not None
            process.stdout.close()
    capture = read_capture(out)
    assert operations(capture) == ["AgentCard"] + ["SendStreamingMessage"] * 3


def test_mitmdump_loads_the_addon_script(agent: DemoAgent, tmp_path: Path) -> None:
    mitmdump = Path(sys.executable).with_name("mitmdump")
    if not mitmdump.exists():
        pytest.skip("mitmdump not installed next to the interpreter")
    out, port = tmp_path / "dump.http", free_port()
    process = subprocess.Popen(
        [
            str(mitmdump),
            "--mode",
            f"reverse:{agent.base_url}",
            "--listen-host",
            "127.0.0.1",
            "-p",
            str(port),
            "-q",
            "--set",
            f"confdir={tmp_path / 'mitm'}",
            "-s",
            str(ROOT / "recorder" / "record" / "addon.py"),
            "--set",
            f"a2a_out={out}",
        ],
        cwd=tmp_path,
    )
    try:
        url = f"http://127.0.0.1:{port}"

        def answered() -> bool:
            try:
                return httpx.get(url + "/.well-known/agent-card.json", timeout=1).is_success
            except httpx.HTTPError:
                return False

        assert wait_for(answered, timeout=TIMEOUT)
        assert wait_for(lambda: bool(exchanges(out)))
    finally:
        process.terminate()
        process.wait(TIMEOUT)
    capture = read_capture(out)
    # A probe that timed out while mitmdump was starting may be there too, with no answer.
    answered_cards = [e for e in capture.exchanges if e.response is not None]
    assert answered_cards and {e.classification.operation for e in capture.exchanges} == {
        "AgentCard"
    }
    assert "card rewritten" in answered_cards[0].notes
