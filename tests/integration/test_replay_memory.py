"""What the replayer keeps grows with the journal's byte bound, not with what clients send
(issue 20, finding 9): 500 requests of 1 MiB to a real `a2a-recorder replay` process raise its
resident memory by at most the journal's bound plus 50 MiB.

The journal alone was bounded first; the process still grew by a gigabyte because the replay's
own caches (the reading of a request, its matching key, a remembered decision) kept every large
body they saw.  Measured from `/proc/<pid>/status`, the replayer's own process, not ours.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.integration._helpers import free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = ROOT / "captures" / "a2a-python-1.3.0" / "03-blocking-task.http"
MIB = 1 << 20
JOURNAL_BYTES = 32 * MIB
SLACK = 50 * MIB

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.fixture
def replayer(tmp_path: Path) -> Iterator[tuple[int, str]]:
    port = free_port()
    log = (tmp_path / "replay.log").open("wb")  # a pipe nobody reads would block its writes
    proc = subprocess.Popen(
        [sys.executable, "-m", "recorder", "replay", str(CAPTURE), "--listen",
         f"127.0.0.1:{port}", "--journal-bytes", str(JOURNAL_BYTES)],
        stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        try:
            return httpx.get(f"{url}/.well-known/agent-card.json", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        assert wait_for(up, timeout=30), (tmp_path / "replay.log").read_text()
        yield proc.pid, url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()


def _send(text: str) -> bytes:
    """A SendMessage as a client sends it: a fresh JSON-RPC id and messageId every time."""
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
    body = {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": "SendMessage",
            "params": {"message": message}}  # fmt: skip
    return json.dumps(body).encode()


def test_large_requests_leave_memory_within_the_journal_bound(replayer: tuple[int, str]) -> None:
    pid, url = replayer
    with httpx.Client(base_url=url, timeout=30, headers={"A2A-Version": "1.0"}) as client:
        for _ in range(20):  # warm up: imports, first answers, allocator arenas
            client.post("/a2a/jsonrpc", content=_send("hello"))
        before = _rss(pid)
        for n in range(500):
            filler = (f"{n:04d}" + os.urandom(8).hex()) * (MIB // 20)
            answer = client.post("/a2a/jsonrpc", content=_send(filler[:MIB]))
            assert answer.status_code in (200, 400, 404, 500)
        after = _rss(pid)
        journal = client.get("/__a2a_recorder/requests")
    assert journal.status_code == 200
    grown = after - before
    assert grown <= JOURNAL_BYTES + SLACK, f"grew {grown / MIB:.0f} MiB"


def test_requests_naming_large_ids_leave_memory_within_the_bound(
    replayer: tuple[int, str],
) -> None:
    """Issue 29, finding 8: 2,000 GetTasks whose `id` is 1 MiB (nobody issued it) took the
    replayer to 2.18 GB, linearly: each request's ids were kept whole in a cache of answers."""
    pid, url = replayer
    with httpx.Client(base_url=url, timeout=30, headers={"A2A-Version": "1.0"}) as client:
        for _ in range(20):
            client.post("/a2a/jsonrpc", content=_send("hello"))
        before = _rss(pid)
        for n in range(2000):
            task = (f"{n:05d}" + os.urandom(8).hex()) * (MIB // 21)
            body = {"jsonrpc": "2.0", "id": n, "method": "GetTask", "params": {"id": task[:MIB]}}
            answer = client.post("/a2a/jsonrpc", content=json.dumps(body).encode())
            assert answer.status_code == 200
        after = _rss(pid)
    grown = after - before
    assert grown <= JOURNAL_BYTES + SLACK, f"grew {grown / MIB:.0f} MiB"
