"""Bytes UTF-8 cannot hold, and lone surrogates, are recorded like anything else.

A real recorder in front of the demo agent gets a request whose path is not UTF-8 and one
whose JSON holds lone surrogates (`"\\ud800"` is valid JSON text); both are recorded, numbered
without a gap, and read back exactly.
"""

from __future__ import annotations

import re
import socket
from pathlib import Path

from _helpers import exchanges, wait_for
from click.testing import CliRunner

from recorder.capture import read_capture
from recorder.cli import main
from recorder.demo import DemoAgent
from recorder.record import RecordingProxy
from recorder.replay import Replayer

SURROGATES = b'{"jsonrpc":"2.0","id":"\\ud800","method":"GetTask","params":{"id":"\\udfff"}}'


def _raw(host: str, port: int, request: bytes) -> bytes:
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        match = re.search(rb"content-length: *(\d+)", head, re.IGNORECASE)
        while match and len(rest) < int(match.group(1)):
            chunk = sock.recv(65536)
            if not chunk:
                break
            rest += chunk
        return head


ODD_REQUESTS = (
    b"GET /a2a/rest/tasks/\xff\xfe HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\n\r\n",
    b"GET /a2a/rest/tasks/%FF HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\n\r\n",
    b"POST /a2a/jsonrpc HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\n"
    b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(SURROGATES) + SURROGATES,
)


def _status(head: bytes) -> bytes:
    return head.split(b"\r\n", 1)[0]


def record_odd_requests(out: Path) -> list[bytes]:
    """Three requests: a path with byte 0xFF raw, one with %FF, a JSON body with surrogates;
    the status lines the agent answered."""
    with (
        DemoAgent(enable_grpc=False) as agent,
        RecordingProxy(upstream=agent.base_url, out=out) as proxy,
    ):
        answered = [_status(_raw(proxy.host, proxy.port, request)) for request in ODD_REQUESTS]
        assert all(line.startswith(b"HTTP/1.1 ") for line in answered), answered
        assert wait_for(lambda: len(exchanges(out)) == 3)
    return answered


def test_odd_bytes_are_recorded_without_a_gap(tmp_path: Path) -> None:
    out = tmp_path / "odd.http"
    record_odd_requests(out)
    raw, escaped, surrogates = read_capture(out).exchanges
    assert [e.number for e in (raw, escaped, surrogates)] == [1, 2, 3]
    assert raw.request.target == "/a2a/rest/tasks/\udcff\udcfe"  # byte for byte, kept
    assert raw.classification.task_id == "\udcff\udcfe"
    assert escaped.request.target == "/a2a/rest/tasks/%FF"
    assert escaped.classification.task_id == "\udcff"  # the byte %FF names
    assert surrogates.request.body == SURROGATES
    assert surrogates.classification.operation == "GetTask"
    text = out.read_text(encoding="utf-8")  # the file itself is plain UTF-8
    assert "GET /a2a/rest/tasks/%FF%FE HTTP/1.1" in text
    assert '# exact: target "/a2a/rest/tasks/\\udcff\\udcfe"' in text


def test_show_replay_and_diff_work_on_the_file_and_the_replayer_answers_alike(
    tmp_path: Path,
) -> None:
    out = tmp_path / "odd.http"
    live = record_odd_requests(out)
    runner = CliRunner()
    table = runner.invoke(main, ["show", str(out)])
    assert table.exit_code == 0 and "GetTask" in table.output, table.output
    lines = runner.invoke(main, ["show", "--json", str(out)])
    assert lines.exit_code == 0 and len(lines.output.splitlines()) == 3
    assert runner.invoke(main, ["show", str(out), "3"]).exit_code == 0
    same = runner.invoke(main, ["diff", str(out), str(out)])
    assert same.exit_code == 0, same.output
    capture = read_capture(out)
    with Replayer([capture]) as replayer:
        host, port = replayer.host, replayer.port
        replayed = [_status(_raw(host, port, request)) for request in ODD_REQUESTS]
        assert replayer.report.misses == []
    assert replayed == live  # the same requests, the same answers, from the capture
