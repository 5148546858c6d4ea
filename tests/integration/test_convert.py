"""`a2a-recorder convert` with real parts: a real `mitmdump` between raw httpx calls and a real
a2a-sdk agent, writing a flow file (`-w`) and a HAR (`hardump`, mitmproxy's savehar) of the same
traffic; both are converted and checked.  Damaged inputs fail cleanly (exit 2), except a flow
file cut short, whose complete flows are kept with a warning.

Everything binds 127.0.0.1 on free ports; mitmdump runs with a timeout and is stopped (SIGINT,
so it writes the HAR) at the end of the module.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from _helpers import free_port
from click.testing import CliRunner, Result

from recorder.capture import Capture, read_capture
from recorder.convert import convert_command
from recorder.demo import DemoAgent
from recorder.protocol import Binding
from recorder.replay import Replayer

ROOT = Path(__file__).resolve().parents[2]
MITMDUMP = ROOT / ".venv" / "bin" / "mitmdump"
TIMEOUT = 10.0
SECRET = "s3cret-token-value"
HEADERS = {"A2A-Version": "1.0", "Content-Type": "application/json"}

# What the scripted traffic below sends, in order, as (operation, binding); the favicon is not A2A.
EXPECTED = [
    ("AgentCard", Binding.HTTP),
    ("SendMessage", Binding.JSONRPC),
    ("SendStreamingMessage", Binding.JSONRPC),
    ("GetTask", Binding.HTTP_JSON),
    ("SendMessage", Binding.HTTP_JSON),
    ("SendStreamingMessage", Binding.HTTP_JSON),
    ("GetTask", Binding.JSONRPC),
]


def message(text: str, message_id: str) -> dict[str, object]:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}


def rpc(method: str, params: dict[str, object], rid: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


@dataclass
class Recording:
    flows: Path
    har: Path
    task_id: str
    echo_result: dict[str, object]


def start_mitmdump(upstream: str, port: int, tmp: Path, *extra: str) -> subprocess.Popen[bytes]:
    command = [
        str(MITMDUMP), "--mode", f"reverse:{upstream}", "--listen-host", "127.0.0.1",
        "--listen-port", str(port), "--set", f"confdir={tmp / 'confdir'}", "-q", *extra,
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"mitmdump exited: {process.stderr.read().decode()}")  # type: ignore[union-attr]
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process
        except OSError:
            time.sleep(0.05)
    stop_mitmdump(process)
    raise RuntimeError("mitmdump did not start listening in time")


def stop_mitmdump(process: subprocess.Popen[bytes]) -> None:
    """SIGINT first, so that mitmdump runs its `done` hooks (the HAR is written then)."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=TIMEOUT)


def drive(url: str) -> tuple[str, dict[str, object]]:
    """The scripted traffic, raw httpx through the proxy; (task id, the echo SendMessage result)."""
    with httpx.Client(base_url=url, timeout=TIMEOUT, headers=HEADERS) as client:
        assert client.get("/.well-known/agent-card.json").status_code == 200
        echo = client.post(
            "/a2a/jsonrpc",
            json=rpc("SendMessage", {"message": message("echo hello", "m-1")}, "1"),
            headers={"Authorization": f"Bearer {SECRET}"},
        ).json()
        task_id = echo["result"]["task"]["id"]
        stream = rpc("SendStreamingMessage", {"message": message("slow 2", "m-2")}, "2")
        assert b"data:" in client.post("/a2a/jsonrpc", json=stream).content
        assert client.get(f"/a2a/rest/tasks/{task_id}").status_code == 200
        body = {"message": message("echo rest", "m-3")}
        assert client.post("/a2a/rest/message:send", json=body).status_code == 200
        body = {"message": message("slow 1", "m-4")}
        assert b"data:" in client.post("/a2a/rest/message:stream", json=body).content
        unknown = rpc("GetTask", {"id": "no-such-task"}, "3")
        assert "error" in client.post("/a2a/jsonrpc", json=unknown).json()
        assert client.get("/favicon.ico").status_code == 404
    return task_id, echo


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recording]:
    tmp = tmp_path_factory.mktemp("mitmdump")
    flows, har = tmp / "session.mitm", tmp / "session.har"
    with DemoAgent(enable_grpc=False, event_delay=0.05) as agent:
        port = free_port()
        process = start_mitmdump(
            agent.base_url, port, tmp, "-w", str(flows), "--set", f"hardump={har}"
        )
        try:
            task_id, echo = drive(f"http://127.0.0.1:{port}")
        finally:
            stop_mitmdump(process)
    assert flows.stat().st_size > 0 and har.stat().st_size > 0
    yield Recording(flows, har, task_id, echo["result"])  # type: ignore[arg-type]


def run(*args: str) -> Result:
    return CliRunner().invoke(convert_command, list(args))


def converted(tmp_path: Path, source: Path, *options: str) -> tuple[Capture, str, Result]:
    out = tmp_path / f"{source.stem}.http"
    result = run(str(source), "--out", str(out), *options)
    assert result.exit_code == 0, result.output
    return read_capture(out), out.read_text(encoding="utf-8"), result


def summary(capture: Capture) -> list[tuple[str | None, Binding | None]]:
    return [(e.classification.operation, e.classification.binding) for e in capture.exchanges]


# -- flow files -------------------------------------------------------------------------------


def test_flow_file_is_classified_with_bodies(recording: Recording, tmp_path: Path) -> None:
    capture, _, result = converted(tmp_path, recording.flows)
    assert summary(capture) == EXPECTED
    assert "converted 7 exchange(s)" in result.output and "skipped 1 as non-A2A" in result.output
    for exchange in capture.exchanges:
        assert exchange.response is not None and exchange.response.status == 200
        assert exchange.response.body or exchange.response.events
    get_task = capture.exchanges[3]
    assert get_task.classification.task_id == recording.task_id
    echo = json.loads(capture.exchanges[1].response.body)  # type: ignore[union-attr]
    assert echo["result"] == recording.echo_result
    assert capture.exchanges[-1].classification.error == "TaskNotFoundError"
    assert capture.upstreams and capture.upstreams[0].startswith("http://127.0.0.1:")


def test_streams_are_framed_into_events(recording: Recording, tmp_path: Path) -> None:
    capture, _, _ = converted(tmp_path, recording.flows)
    for index in (2, 5):
        response = capture.exchanges[index].response
        assert response is not None and response.body == b""
        data = [
            line for event in response.events for line in event.lines if line.startswith("data:")
        ]
        assert len(data) >= 3  # task, working, ..., completed
        assert "TASK_STATE_COMPLETED" in data[-1]
        assert "SSE event times unknown (offsets 0)" in capture.exchanges[index].notes


def test_secrets_are_redacted_unless_kept(recording: Recording, tmp_path: Path) -> None:
    capture, text, _ = converted(tmp_path, recording.flows)
    assert SECRET not in text
    assert capture.exchanges[1].request.header("Authorization") == "Bearer <redacted:1>"
    assert capture.redacted == ("Authorization",)
    _, kept, _ = converted(tmp_path, recording.flows, "--keep-secrets")
    assert f"Bearer {SECRET}" in kept


def test_all_keeps_non_a2a_exchanges(recording: Recording, tmp_path: Path) -> None:
    capture, _, result = converted(tmp_path, recording.flows, "--all")
    assert len(capture.exchanges) == len(EXPECTED) + 1
    favicon = capture.exchanges[-1]
    assert favicon.request.target == "/favicon.ico" and not favicon.classification.is_a2a
    assert "skipped 0 as non-A2A" in result.output


def test_converted_capture_replays(recording: Recording, tmp_path: Path) -> None:
    capture, _, _ = converted(tmp_path, recording.flows)
    body = rpc("SendMessage", {"message": message("echo hello", "m-9")}, "77")
    # The recorded send carried a bearer token (redacted): a request without one is not it.
    headers = {**HEADERS, "Authorization": "Bearer another-token"}
    with Replayer([capture], timing="none") as replay:
        answer = httpx.post(
            replay.url + "/a2a/jsonrpc", json=body, headers=headers, timeout=TIMEOUT
        )
        bare = httpx.post(replay.url + "/a2a/jsonrpc", json=body, headers=HEADERS, timeout=TIMEOUT)
    assert "REPLAY_NO_MATCH" in bare.text and "authorization:bearer" in bare.text, bare.text
    assert answer.json()["id"] == "77"
    recorded_task: dict[str, object] = recording.echo_result["task"]  # type: ignore[assignment]
    assert answer.json()["result"]["task"]["status"] == recorded_task["status"]


# -- HAR --------------------------------------------------------------------------------------


def test_har_gives_the_same_operations(recording: Recording, tmp_path: Path) -> None:
    from_flows, _, _ = converted(tmp_path, recording.flows)
    from_har, _, result = converted(tmp_path, recording.har)
    assert summary(from_har) == EXPECTED
    assert "skipped 1 as non-A2A" in result.output
    for a, b in zip(from_flows.exchanges, from_har.exchanges, strict=True):
        assert a.classification == b.classification
        assert a.request.target == b.request.target and a.request.body == b.request.body
        assert a.response is not None and b.response is not None
        assert a.response.body == b.response.body
        assert [e.lines for e in a.response.events] == [e.lines for e in b.response.events]
    assert SECRET not in (tmp_path / "session.http").read_text(encoding="utf-8")


def test_flows_and_har_together(recording: Recording, tmp_path: Path) -> None:
    out = tmp_path / "both.http"
    result = run(str(recording.flows), str(recording.har), "--out", str(out))
    assert result.exit_code == 0, result.output
    capture = read_capture(out)
    assert summary(capture) == EXPECTED * 2
    assert [e.number for e in capture.exchanges] == list(range(1, 2 * len(EXPECTED) + 1))


# -- damaged inputs ---------------------------------------------------------------------------


def assert_clean_failure(result: Result, path: Path, words: str) -> None:
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)  # not a traceback
    assert f"error: {path}:" in result.output and words in result.output
    assert "Traceback" not in result.output


def record_ends(data: bytes) -> list[int]:
    """Where each record of a flow file ends: they are tnetstrings, `<length>:<payload><type>`."""
    ends, at = [], 0
    while at < len(data):
        colon = data.index(b":", at)
        at = colon + 1 + int(data[at:colon]) + 1
        ends.append(at)
    return ends


def test_flow_file_cut_inside_a_flow_keeps_the_complete_ones(
    recording: Recording, tmp_path: Path
) -> None:
    data = recording.flows.read_bytes()
    ends = record_ends(data)
    assert len(ends) == len(EXPECTED) + 1 and ends[-1] == len(data)
    for whole in (3, len(ends) - 1):  # cut inside the 4th flow, and inside the last one
        damaged = tmp_path / f"cut{whole}.mitm"
        damaged.write_bytes(data[: ends[whole - 1] + 7])
        out = tmp_path / f"out{whole}.http"
        result = run(str(damaged), "--out", str(out))
        assert result.exit_code == 0, result.output
        warning = f"warning: {damaged}: damaged or not a mitmproxy flow file after {whole} flow(s)"
        assert warning in result.output
        assert summary(read_capture(out)) == EXPECTED[:whole]


def test_flow_file_cut_between_flows_is_a_shorter_flow_file(
    recording: Recording, tmp_path: Path
) -> None:
    data = recording.flows.read_bytes()
    shorter = tmp_path / "shorter.mitm"
    shorter.write_bytes(data[: record_ends(data)[2]])
    capture, _, result = converted(tmp_path, shorter)
    assert summary(capture) == EXPECTED[:3] and "warning" not in result.output


def test_flow_file_damaged_in_its_first_flow_fails(recording: Recording, tmp_path: Path) -> None:
    data = recording.flows.read_bytes()
    damaged = tmp_path / "cut.mitm"
    damaged.write_bytes(data[: record_ends(data)[0] // 2])
    out = tmp_path / "out.http"
    result = run(str(damaged), "--out", str(out))
    assert_clean_failure(result, damaged, "damaged or not a mitmproxy flow file after 0 flow(s)")
    assert not out.exists()


def test_an_empty_file_is_an_error_not_an_empty_capture(tmp_path: Path) -> None:
    empty = tmp_path / "empty.mitm"
    empty.write_bytes(b"")
    out = tmp_path / "out.http"
    assert_clean_failure(run(str(empty), "--out", str(out)), empty, "no flows in it")
    assert not out.exists()


def test_a_file_that_is_no_flow_file_fails(tmp_path: Path) -> None:
    junk = tmp_path / "junk.mitm"
    junk.write_bytes(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    out = tmp_path / "out.http"
    assert_clean_failure(run(str(junk), "--out", str(out)), junk, "not a mitmproxy flow file")
    assert not out.exists()


def test_invalid_har_json(recording: Recording, tmp_path: Path) -> None:
    damaged = tmp_path / "cut.har"
    text = recording.har.read_text(encoding="utf-8")
    damaged.write_text(text[: len(text) // 2], encoding="utf-8")
    assert_clean_failure(
        run(str(damaged), "--out", str(tmp_path / "o.http")), damaged, "invalid JSON"
    )


@pytest.mark.parametrize(
    ("document", "words"),
    [({"log": {"version": "1.2"}}, "'log.entries' is missing"),
     ({"log": {"entries": []}}, "no entries"),
     ({"entries": []}, "no top-level 'log'")],
    ids=["no-entries-key", "empty-entries", "no-log"],
)  # fmt: skip
def test_har_without_entries(tmp_path: Path, document: object, words: str) -> None:
    path = tmp_path / "empty.har"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert_clean_failure(run(str(path), "--out", str(tmp_path / "o.http")), path, words)


def test_missing_input(tmp_path: Path) -> None:
    missing = tmp_path / "nope.mitm"
    result = run(str(missing), "--out", str(tmp_path / "o.http"))
    assert_clean_failure(result, missing, "No such file")


def test_mitmdump_binary_is_the_venv_one() -> None:
    assert MITMDUMP.exists() and os.access(MITMDUMP, os.X_OK)
