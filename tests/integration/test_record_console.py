"""What a person watching the recorder sees: a line per exchange, warnings, a summary."""

from __future__ import annotations

import contextlib
import http.server
import re
import threading
import uuid
from pathlib import Path

import httpx
import pytest
from _helpers import free_port

from recorder.demo import DemoAgent
from recorder.record import RecordingProxy


def _send(url: str, text: str) -> httpx.Response:
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
    body = {"jsonrpc": "2.0", "id": "1", "method": "SendMessage", "params": {"message": message}}
    return httpx.post(f"{url}/a2a/jsonrpc", json=body, headers={"A2A-Version": "1.0"}, timeout=10)


def test_a_line_per_exchange_and_a_summary(tmp_path: Path) -> None:
    lines: list[str] = []
    with (
        DemoAgent(enable_grpc=False) as agent,
        RecordingProxy(
            upstream=agent.base_url, out=tmp_path / "c.http", console=lines.append
        ) as proxy,
    ):
        httpx.get(f"{proxy.url}/.well-known/agent-card.json", timeout=10)
        task = _send(proxy.url, "echo hi").json()["result"]["task"]["id"]
        failed = _send(proxy.url, "fail").json()["result"]["task"]["id"]
        httpx.get(
            f"{proxy.url}/a2a/rest/tasks/nonexistent", headers={"A2A-Version": "1.0"}, timeout=10
        )
    card, sent, fail, missing, summary = lines
    assert re.fullmatch(r"#1 HTTP AgentCard 200 \d+ ms", card), card
    assert re.fullmatch(rf"#2 JSONRPC SendMessage task {task[:8]}… COMPLETED \d+ ms", sent), sent
    assert fail.startswith(f"#3 JSONRPC SendMessage task {failed[:8]}… FAILED ")
    assert missing.startswith("#4 HTTP+JSON GetTask task nonexist… TaskNotFoundError ")
    assert summary.startswith("recorded 4 exchanges (1 error, ")
    assert summary.endswith(f"to {tmp_path / 'c.http'}")


def test_an_unreachable_upstream_is_a_warning_once(tmp_path: Path) -> None:
    lines: list[str] = []
    port = free_port()  # nothing listens there
    with RecordingProxy(
        upstream=f"http://127.0.0.1:{port}", out=tmp_path / "down.http", console=lines.append
    ) as proxy:
        answers = [
            httpx.get(f"{proxy.url}/.well-known/agent-card.json", timeout=10) for _ in range(3)
        ]
    assert [a.status_code for a in answers] == [502] * 3
    warnings = [line for line in lines if line.startswith("warning:")]
    assert len(warnings) == 2, lines  # the card at start, then the upstream once
    assert f"could not fetch the agent card of http://127.0.0.1:{port}" in warnings[0]
    assert f"cannot reach 127.0.0.1:{port}" in warnings[1]


class _NotFound(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_error(404)

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("upstream", ["down", "404"])
def test_a_card_that_cannot_be_fetched_at_start_is_said(upstream: str, tmp_path: Path) -> None:
    """The recorder fetches the upstream's card at start to learn its API keys; when it
    cannot, the console says so before any exchange (issue 30: the warning was logged
    before the console listened, and nobody saw it)."""
    lines: list[str] = []
    with contextlib.ExitStack() as stack:
        port = free_port()
        if upstream == "404":
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
            stack.callback(server.server_close)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            stack.callback(server.shutdown)
            port = server.server_address[1]
        out = tmp_path / "c.http"
        stack.enter_context(
            RecordingProxy(upstream=f"http://127.0.0.1:{port}", out=out, console=lines.append)
        )
    said = [line for line in lines if "could not fetch the agent card" in line]
    assert len(said) == 1 and said[0].startswith("warning: "), lines
    assert ("HTTP 404" in said[0]) == (upstream == "404") and "--card" in said[0]
    assert lines[-1] == "recorded 0 exchanges (0 errors, 0 bytes, 0 with redactions)", lines


def test_no_console_prints_nothing(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    with (
        DemoAgent(enable_grpc=False) as agent,
        RecordingProxy(upstream=agent.base_url, out=tmp_path / "q.http") as proxy,
    ):
        assert httpx.get(f"{proxy.url}/.well-known/agent-card.json", timeout=10).status_code == 200
    out, err = capfd.readouterr()
    assert "AgentCard" not in out + err and "recorded 1 exchanges" not in out + err


def test_lint_prints_findings_under_their_exchange(tmp_path: Path) -> None:
    lines: list[str] = []
    with (
        DemoAgent(enable_grpc=False) as agent,
        RecordingProxy(
            upstream=agent.base_url, out=tmp_path / "l.http", console=lines.append, lint="1.0.1"
        ) as proxy,
    ):
        httpx.get(
            f"{proxy.url}/a2a/rest/tasks/nonexistent", headers={"A2A-Version": "1.0"}, timeout=10
        )
        _send(proxy.url, "echo fine")
    missing = lines.index(next(line for line in lines if line.startswith("#1 ")))
    # a2a-sdk sends HTTP+JSON errors as application/json (A2A §11.1 says application/a2a+json)
    assert lines[missing + 1].startswith("  ! SHOULD content-type.response: ")
    sent = next(i for i, line in enumerate(lines) if line.startswith("#2 "))
    assert not lines[sent + 1].startswith("  !")  # a clean exchange has no finding


def test_the_flush_and_stats_commands(tmp_path: Path) -> None:
    out = tmp_path / "s.http"
    with (
        DemoAgent(enable_grpc=False) as agent,
        RecordingProxy(upstream=agent.base_url, out=out) as proxy,
    ):
        _send(proxy.url, "echo one")
        httpx.get(
            f"{proxy.url}/a2a/rest/tasks/nonexistent", headers={"A2A-Version": "1.0"}, timeout=10
        )
        save = proxy.addons.save
        save.flush()  # returns once every open capture is on disk
        assert save.stats() == (
            f"2 exchanges, 1 errors, {save.totals.bytes} bytes, 0 redacted; captures: {out}"
        )
        assert save.totals.bytes == out.stat().st_size - len(out.read_text().split("\n\n")[0]) - 2
