"""The command line as a user runs it: real processes, real signals, real exit codes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from _helpers import free_port
from click.testing import CliRunner

from recorder.capture import read_capture
from recorder.cli import main
from recorder.demo import DemoAgent
from recorder.record import RecordingProxy

ROOT = Path(__file__).parent.parent.parent
DATA = ROOT / "tests" / "data"
CAPTURES = ROOT / "captures"


@contextmanager
def command(*args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """Run `a2a-recorder ARGS` until it prints its first line on stderr; yield (process, line)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "recorder", *args],
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stderr is not None
        yield process, process.stderr.readline()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)


def stop(process: subprocess.Popen[str]) -> tuple[int, str]:
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=20)
    return process.returncode, err


def send(url: str, text: str) -> httpx.Response:
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    return httpx.post(f"{url}/a2a/jsonrpc", json=body, headers={"A2A-Version": "1.0"}, timeout=10)


def test_show_prints_a_table_and_json() -> None:
    runner = CliRunner()
    table = runner.invoke(main, ["show", str(DATA / "rest-send.http")])
    assert table.exit_code == 0
    assert "SendMessage" in table.output and "HTTP+JSON" in table.output
    output = runner.invoke(main, ["show", "--json", str(DATA / "rest-send.http")]).output
    rows = [json.loads(line) for line in output.splitlines()]  # JSON Lines
    assert rows[0]["operation"] == "SendMessage"
    assert rows[0]["status"] == 200


def test_show_names_file_and_line_of_a_damaged_capture(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.http"
    lines = (DATA / "rest-send.http").read_text().splitlines(keepends=True)
    damaged.write_text(
        "".join(line.replace("HTTP/1.1 200 OK", "HTTP/1.1 2x0 OK") for line in lines)
    )
    result = CliRunner().invoke(main, ["show", str(damaged)])
    assert result.exit_code == 2
    assert f"{damaged}:" in result.output
    assert "Traceback" not in result.output


def test_record_writes_what_crossed_and_stops_on_sigterm(tmp_path: Path) -> None:
    out = tmp_path / "cli.http"
    port = free_port()
    with (
        DemoAgent(enable_grpc=False) as agent,
        command(
            "record",
            "--upstream",
            agent.base_url,
            "--listen",
            f"127.0.0.1:{port}",
            "--out",
            str(out),
        ) as (process, first),
    ):
        assert f"http://127.0.0.1:{port}" in first
        reply = send(f"http://127.0.0.1:{port}", "echo from the cli")
        code, err = stop(process)
    assert reply.json()["result"]["task"]["artifacts"][0]["parts"][0]["text"] == "echo from the cli"
    assert code == 0, err
    exchanges = read_capture(out).exchanges
    assert [e.classification.operation for e in exchanges] == ["SendMessage"]
    assert "#1 JSONRPC SendMessage task " in err and "COMPLETED" in err
    assert "recorded 1 exchange (0 errors" in err
    # The capture now holds an exchange: starting again over it is refused, and --append
    # goes on numbering after it.
    with command(
        "record",
        "--upstream",
        "http://127.0.0.1:9",
        "--listen",
        f"127.0.0.1:{free_port()}",
        "--out",
        str(out),
    ) as (refused, line):
        assert refused.wait(30) == 2
        assert "already holds recorded exchanges" in line + refused.communicate()[1]
    with (
        DemoAgent(enable_grpc=False) as agent,
        command(
            "record",
            "--upstream",
            agent.base_url,
            "--listen",
            f"127.0.0.1:{port}",
            "--out",
            str(out),
            "--append",
            "--quiet",
        ) as (process, first),
    ):
        send(f"http://127.0.0.1:{port}", "echo again")
        code, err = stop(process)
    assert code == 0 and "#2" not in err
    assert [e.number for e in read_capture(out).exchanges] == [1, 2]


def test_replay_strict_exits_1_naming_what_was_never_served() -> None:
    port = free_port()
    capture = DATA / "sessions" / "demo-session-jsonrpc.http"
    with command("replay", str(capture), "--listen", f"127.0.0.1:{port}", "--strict") as (
        process,
        first,
    ):
        assert f"http://127.0.0.1:{port}" in first
        card = httpx.get(f"http://127.0.0.1:{port}/.well-known/agent-card.json", timeout=5)
        code, err = stop(process)
    assert card.json()["supportedInterfaces"][0]["url"].startswith(f"http://127.0.0.1:{port}")
    assert code == 1
    report = json.loads(err[err.index("{") :])
    assert "#2 SendMessage" in report["unserved"]
    assert "#1 AgentCard" not in report["unserved"]


def test_replay_strict_exits_1_on_an_answer_the_replayer_wrote_itself() -> None:
    # Everything recorded is served, nothing misses; but one request got an answer the
    # capture does not hold (the agent's answer to a body that is not JSON was never recorded).
    port = free_port()
    capture = DATA / "jsonrpc-send.http"
    recorded = read_capture(capture).exchanges[0].request
    with command("replay", str(capture), "--listen", f"127.0.0.1:{port}", "--strict") as (
        process,
        _,
    ):
        url = f"http://127.0.0.1:{port}/a2a/jsonrpc"
        headers = {"content-type": "application/json", "a2a-version": "1.0"}
        sent = httpx.post(url, content=recorded.body, headers=headers, timeout=5)
        refused = httpx.post(url, content=b"{not json", headers=headers, timeout=5)
        code, err = stop(process)
    assert "result" in sent.json() and refused.json()["error"]["code"] == -32700
    assert code == 1
    assert "1 answers were not recorded but written by the replayer" in err
    report = json.loads(err[err.index("{") :])
    assert report["unserved"] == [] and report["unmatched"] == []
    assert report["synthesized"] == [
        "request 2, POST /a2a/jsonrpc: refused as an a2a-sdk agent refuses it: "
        "a body that is not JSON, at a JSON-RPC endpoint"
    ]


async def _sdk_clients(url: str, clients: int, sends: int) -> list[str]:
    """`clients` a2a-sdk clients one after the other (each fetches the card), each sending
    `sends` messages; the task states they saw."""
    from a2a.client import ClientConfig, create_client
    from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest

    states = []
    for _ in range(clients):
        client = await create_client(url, client_config=ClientConfig(streaming=False))
        try:
            for _ in range(sends):
                request = SendMessageRequest(
                    message=Message(
                        message_id=str(uuid.uuid4()),
                        role=Role.ROLE_USER,
                        parts=[Part(text="echo x")],
                    )
                )
                async for event in client.send_message(request):
                    states.append(str(event.task.status.state))
        finally:
            await client.close()
    return states


def test_replay_strict_exits_0_when_the_client_fetched_the_card_fewer_times(tmp_path: Path) -> None:
    capture = tmp_path / "cards.http"
    with (
        DemoAgent(enable_grpc=False) as agent,
        RecordingProxy(upstream=agent.base_url, out=capture) as proxy,
    ):
        live = asyncio.run(_sdk_clients(proxy.url, clients=4, sends=1))
    operations = [e.classification.operation for e in read_capture(capture).exchanges]
    assert operations.count("AgentCard") == 4 and operations.count("SendMessage") == 4
    port = free_port()
    with command("replay", str(capture), "--listen", f"127.0.0.1:{port}", "--strict") as (
        process,
        _,
    ):
        replayed = asyncio.run(_sdk_clients(f"http://127.0.0.1:{port}", clients=1, sends=4))
        code, err = stop(process)
    assert replayed == live
    assert code == 0, err


def test_replay_refuses_a_bad_timing() -> None:
    result = CliRunner().invoke(main, ["replay", str(DATA / "rest-send.http"), "--timing", "x0"])
    assert result.exit_code == 2
    assert "timing" in result.output


@pytest.mark.parametrize("spelling", ["two words", "forward=URL"])
def test_replay_forwards_a_miss_to_the_url_given(spelling: str) -> None:
    port = free_port()
    capture = DATA / "sessions" / "demo-session-jsonrpc.http"
    with DemoAgent(enable_grpc=False) as agent:
        on_miss = (
            ["--on-miss", "forward", agent.base_url]
            if spelling == "two words"
            else ["--on-miss", f"forward={agent.base_url}"]
        )
        with command("replay", *on_miss, str(capture), "--listen", f"127.0.0.1:{port}") as (
            process,
            first,
        ):
            assert f"http://127.0.0.1:{port}" in first, process.stderr
            reply = send(f"http://127.0.0.1:{port}", "echo never recorded")
            code, err = stop(process)
    artifact = reply.json()["result"]["task"]["artifacts"][0]
    assert artifact["parts"][0]["text"] == "echo never recorded"  # the live agent answered
    assert code == 0, err
    assert "replay miss" in err


@pytest.mark.parametrize("words", [["forward"], ["forward", "not-a-url"], ["sideways"]])
def test_replay_refuses_a_bad_on_miss(words: list[str]) -> None:
    capture = str(DATA / "rest-send.http")
    result = CliRunner().invoke(main, ["replay", "--on-miss", *words, capture])
    assert result.exit_code == 2
    assert "--on-miss" in result.output and "forward URL" in result.output


def test_diff_exit_codes(tmp_path: Path) -> None:
    runner = CliRunner()
    same = CAPTURES / "a2a-python-1.3.0" / "03-blocking-task.http"
    older = CAPTURES / "a2a-python-0.3.26" / "03-blocking-task.http"
    assert runner.invoke(main, ["diff", str(same), str(same)]).exit_code == 0
    different = runner.invoke(main, ["diff", str(older), str(same)])
    assert different.exit_code == 1
    assert "method renamed: message/send → SendMessage" in different.output
    missing = runner.invoke(main, ["diff", str(same), str(tmp_path / "nope.http")])
    assert missing.exit_code == 2


def test_demo_records_replays_and_diffs_clean(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "recorder", "demo", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "the client saw the same results in all" in result.stdout
    assert "0 differ, 0 inserted, 0 removed" in result.stdout
    assert (tmp_path / "live.http").exists() and (tmp_path / "replayed.http").exists()
    report = tmp_path / "report.html"
    assert f"a picture of the live session: {report}" in result.stdout
    rows = report.read_text("utf-8").count('<a class="row ')
    assert rows == len(read_capture(tmp_path / "live.http").exchanges) > 20


def test_migrate_rewrites_version_1_captures_in_place(tmp_path: Path) -> None:
    old = tmp_path / "old.http"
    old.write_bytes((DATA / "v1" / "jsonrpc-stream.http").read_bytes())
    damaged = tmp_path / "damaged.http"
    damaged.write_text("# a2a-recorder capture format 1\n# recorder: x\n")
    runner = CliRunner()
    first = runner.invoke(main, ["migrate", str(old)])
    assert first.exit_code == 0 and "format 1 -> 2" in first.output
    assert old.read_bytes() == (DATA / "jsonrpc-stream.http").read_bytes()
    again = runner.invoke(main, ["migrate", str(old)])
    assert again.exit_code == 0 and "already format 2" in again.output
    before = damaged.read_bytes()
    bad = runner.invoke(main, ["migrate", str(damaged)])
    assert bad.exit_code == 2 and f"{damaged}:" in bad.output
    assert damaged.read_bytes() == before


def test_report_marks_what_lint_finds(tmp_path: Path) -> None:
    capture = CAPTURES / "a2a-python-1.3.0" / "http-json" / "11-errors.http"
    plain, marked = tmp_path / "plain.html", tmp_path / "marked.html"
    runner = CliRunner()
    assert runner.invoke(main, ["report", str(capture), "-o", str(plain)]).exit_code == 0
    result = runner.invoke(main, ["report", str(capture), "-o", str(marked), "--lint"])
    assert result.exit_code == 0, result.output
    assert "content-type.response" in marked.read_text("utf-8")
    assert "content-type.response" not in plain.read_text("utf-8")
