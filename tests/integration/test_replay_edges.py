"""The replayer's and the command line's edges (issue 29), as a user runs them: `a2a-recorder
replay` in a process of its own, real sockets on 127.0.0.1, real exit codes.

- What leaves the process about a live client (the console, `GET /__a2a_recorder/report`,
  the journal) holds none of its secrets, whatever their kind, length, or the order in
  which the replayer learnt they are secrets; odd text (a lone surrogate) never breaks it.
- An output path that is not a regular file of ours is refused before anything listens.
- A fault profile that cannot do what it says stops the command before it listens; stopping
  while answers are held back closes their connections, with no traceback and no 500.
- A fleet's folder with an entry that is no capture is refused; cards of different agents
  under one authority are said.
- A JSON-RPC id that cannot be one is refused as a2a-sdk refuses it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import grpc
import httpx
import pytest
from _helpers import free_port

from recorder.capture import Capture, Request, read_capture, render

DATA = Path(__file__).parent.parent / "data"
SESSION = DATA / "sessions" / "demo-session-jsonrpc.http"
SEND = DATA / "jsonrpc-send.http"  # one SendMessage, numbered 3
STREAM = DATA / "jsonrpc-stream.http"  # one SendStreamingMessage of 5 events, numbered 4
TIMEOUT = 20


class Replay:
    """`a2a-recorder replay ARGS` running, its stderr read as it comes."""

    def __init__(self, *args: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "recorder", "replay", *args, "--listen", self.address],
            text=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.err: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + TIMEOUT
        while not any(line.startswith("replaying") for line in self.err):
            assert self.process.poll() is None, self.text
            assert time.monotonic() < deadline, self.text
            time.sleep(0.02)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def text(self) -> str:
        return "".join(self.err)

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.err.append(line)

    def stop(self) -> int:
        """SIGTERM, then its exit status once its stderr is read to the end."""
        self.process.terminate()
        code = self.process.wait(TIMEOUT)
        self._reader.join(TIMEOUT)
        return code

    def __enter__(self) -> Replay:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(TIMEOUT)


def refused(*args: str) -> subprocess.CompletedProcess[str]:
    """`a2a-recorder replay ARGS` that must stop before it listens."""
    port = free_port()
    run = subprocess.run(
        [sys.executable, "-m", "recorder", "replay", *args, "--listen", f"127.0.0.1:{port}"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert run.returncode == 2, run.stderr
    assert "replaying" not in run.stderr and "Traceback" not in run.stderr, run.stderr
    return run


def jsonrpc(url: str, method: str, params: object, **more: object) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx.post(f"{url}/a2a/jsonrpc", json=body, timeout=TIMEOUT, **more)  # type: ignore[arg-type]


def message(text: str) -> dict[str, object]:
    return {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": text}]}}


# --- secrets of a live client -----------------------------------------------------------------


@pytest.fixture
def guarded(tmp_path: Path) -> Path:
    """The demo session, its card declaring an API key in a header and one in the query."""
    capture = read_capture(SESSION)
    card_exchange = capture.exchanges[0]
    assert card_exchange.response is not None
    card = json.loads(card_exchange.response.body)
    card["securitySchemes"] = {
        "query": {"apiKeySecurityScheme": {"location": "query", "name": "sig"}},
        "header": {"apiKeySecurityScheme": {"location": "header", "name": "X-Client-Ident"}},
    }
    body = json.dumps(card, indent=2).encode()
    card_exchange = replace(card_exchange, response=replace(card_exchange.response, body=body))
    path = tmp_path / "guarded.http"
    path.write_text(render(replace(capture, exchanges=(card_exchange, *capture.exchanges[1:]))))
    return path


SECRETS = {
    "bearer": "bearer-secret-0001",
    "proxy": "proxy-secret-0002",
    "cookie": "ck3",  # shorter than anything swept from free text
    "notification": "notification-secret-0004",
    "card header": "hd5",
    "card query": "q6",
    "query": "k7",
    "access token": "access-secret-0008",
    "push token": "push-token-0009",
    "push credentials": "push-credentials-0010",
    "inline token": "it11",
    "inline credentials": "inline-credentials-0012",
    "late bearer": "late-bearer-0013-" + "x" * 60,  # longer than a miss quotes a value
}
# A whole message, later a bearer: too short to be swept from a body (by the redaction rules,
# `recorder.redaction.MIN_SWEPT_LENGTH`), but never quoted in a report's or a console's line.
LATE_SHORT = "pin14"


def _send_secrets(url: str) -> None:
    s = SECRETS
    jsonrpc(url, "SendMessage", message(f"my token is {s['late bearer']}, remember it"))
    jsonrpc(url, "SendMessage", message(LATE_SHORT))
    inline = {
        "url": "http://127.0.0.1:9/hook",
        "token": s["inline token"],
        "authentication": {"scheme": "Bearer", "credentials": s["inline credentials"]},
    }
    jsonrpc(
        url, "SendMessage", {**message("x"), "configuration": {"pushNotificationConfig": inline}}
    )
    headers = {
        "Authorization": f"Bearer {s['bearer']}",
        "Proxy-Authorization": f"Basic {s['proxy']}",
        "Cookie": f"sid={s['cookie']}; theme=dark",
        "X-A2A-Notification-Token": s["notification"],
        "X-Client-Ident": s["card header"],
        "X-Access-Token": s["access token"],
    }
    query = f"?sig={s['card query']}&api_key={s['query']}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": message("y")}
    httpx.post(f"{url}/a2a/jsonrpc{query}", json=body, headers=headers, timeout=TIMEOUT)
    config = {
        "taskId": "never-issued",
        "url": "http://127.0.0.1:9/hook",
        "token": s["push token"],
        "authentication": {"scheme": "Bearer", "credentials": s["push credentials"]},
    }
    jsonrpc(url, "CreateTaskPushNotificationConfig", config)
    for late in (s["late bearer"], LATE_SHORT):  # now they are known to be secrets
        jsonrpc(url, "GetTask", {"id": "none"}, headers={"Authorization": f"Bearer {late}"})


def test_no_secret_of_a_live_client_leaves_the_replayer(guarded: Path) -> None:
    with Replay(str(guarded), "--strict") as replay:
        _send_secrets(replay.url)
        report = httpx.get(f"{replay.url}/__a2a_recorder/report", timeout=TIMEOUT)
        journal = httpx.get(f"{replay.url}/__a2a_recorder/requests", timeout=TIMEOUT)
        code = replay.stop()
    assert code == 1  # --strict: the misses
    assert report.status_code == journal.status_code == 200
    assert len(report.json()["unmatched"]) == 5
    outlets = {"console": replay.text, "report": report.text, "journal": journal.text}
    for where, text in outlets.items():
        for kind, secret in SECRETS.items():
            assert secret not in text, (where, kind)
            assert secret[:16] not in text, (where, kind)  # nor a part cut short
    assert LATE_SHORT not in replay.text + report.text
    assert "<redacted:" in report.text and "replay miss" in replay.text


# --- odd text ---------------------------------------------------------------------------------


def test_a_lone_surrogate_in_a_request_never_breaks_the_report() -> None:
    with Replay(str(SESSION)) as replay:
        body = (
            b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":'
            b'"m","role":"ROLE_USER","parts":[{"text":"a \\ud800 b"}]}}}'
        )
        headers = {"content-type": "application/json"}
        httpx.post(f"{replay.url}/a2a/jsonrpc", content=body, headers=headers, timeout=TIMEOUT)
        first = httpx.get(f"{replay.url}/__a2a_recorder/report", timeout=TIMEOUT)
        second = httpx.get(f"{replay.url}/__a2a_recorder/report", timeout=TIMEOUT)
        journal = httpx.get(f"{replay.url}/__a2a_recorder/requests", timeout=TIMEOUT)
        code = replay.stop()
    assert first.status_code == second.status_code == journal.status_code == 200
    assert "\\ud800" in first.json()["unmatched"][0]
    assert code == 0
    assert "Traceback" not in replay.text and "Logging error" not in replay.text


# --- output paths -----------------------------------------------------------------------------


def _fleet(tmp_path: Path) -> Path:
    folder = tmp_path / "trip"
    folder.mkdir()
    (folder / "agent.http").write_bytes(SEND.read_bytes())
    return folder


def _what_is_there(path: Path) -> str:
    return "dir" if path.is_dir() else "fifo" if path.is_fifo() else path.read_text()


@pytest.mark.parametrize("kind", ["fifo", "directory", "foreign file", "symlink"])
def test_a_ports_file_that_is_not_ours_is_refused_before_listening(
    tmp_path: Path, kind: str
) -> None:
    folder = _fleet(tmp_path)
    path = tmp_path / "ports.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "foreign file":
        path.write_text("my notes\n")
    else:
        (tmp_path / "elsewhere.json").write_text("{}\n")
        path.symlink_to(tmp_path / "elsewhere.json")
    before = _what_is_there(path)
    run = refused(str(folder), "--ports-file", str(path))
    assert "--ports-file" in run.stderr and str(path) in run.stderr
    assert _what_is_there(path) == before and path.is_symlink() == (kind == "symlink")


def test_a_ports_file_of_an_earlier_run_is_replaced(tmp_path: Path) -> None:
    folder = _fleet(tmp_path)
    path = tmp_path / "ports.json"
    path.write_text('{"mode": "reverse", "proxy": null, "agents": []}\n')
    with Replay(str(folder), "--ports-file", str(path)) as replay:
        written = json.loads(path.read_text())
        assert replay.stop() == 0
    assert [a["name"] for a in written["agents"]] == ["agent"]


# --- fault profiles ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "spec", "problem"),
    [
        ([SESSION], "AgentCard:cut-after=1", "no AgentCard exchange it applies to"),
        ([SEND], "GetTask:delay=1", "no GetTask exchange it applies to"),
        ([STREAM], "SendStreamingMessage:cut-after=5", "no SendStreamingMessage exchange"),
        ([STREAM], "#4:cut-after=9", "exchange #4 has 5 events"),
        ([SEND, STREAM, SESSION], "#3:status=429", "#3 names an exchange of several captures"),
        ([SEND], "#３:status=429", "is no exchange number"),
        ([STREAM], "#4:cut-after=２", "cut-after needs a number"),
        ([SEND], "SendMessage:delay=１", "delay needs seconds"),
    ],
)
def test_a_fault_that_cannot_do_what_it_says_stops_the_command(
    files: list[Path], spec: str, problem: str
) -> None:
    run = refused(*map(str, files), "--fault", spec)
    assert problem in " ".join(run.stderr.split()), run.stderr


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo", "huge"])
def test_a_fault_profile_that_is_no_file_is_refused(tmp_path: Path, kind: str) -> None:
    path = Path(kind) if kind.startswith("/") else tmp_path / "faults.toml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "huge":
        path.write_text("# " + "x" * (2 << 20) + "\nfaults = []\n")
    run = refused(str(SEND), "--faults", str(path))
    assert f"{path}: cannot read fault profile" in run.stderr


def test_a_cut_after_longer_than_a_stream_leaves_it_whole(tmp_path: Path) -> None:
    """`cut-after=5` cuts the streams longer than 5 events, and leaves the others whole."""
    five = read_capture(STREAM)
    exchange = five.exchanges[0]
    assert exchange.response is not None
    events = exchange.response.events
    request = replace(exchange.request, body=exchange.request.body.replace(b"run", b"rerun"))
    longer = replace(
        exchange, request=request, response=replace(exchange.response, events=(*events, events[-2]))
    )
    paths = [tmp_path / "five.http", tmp_path / "six.http"]
    paths[0].write_text(render(five))
    paths[1].write_text(render(replace(five, exchanges=(longer,))))
    with Replay(*map(str, paths), "--fault", "SendStreamingMessage:cut-after=5") as replay:
        whole = _streamed(replay.url, exchange.request)
        cut = _streamed(replay.url, longer.request)
        journal = httpx.get(f"{replay.url}/__a2a_recorder/requests", timeout=TIMEOUT).json()
        assert replay.stop() == 0
    kept = [any(line.startswith("data:") for line in e.lines) for e in (*events, events[-2])]
    assert whole == (sum(kept[:5]), None) and len(events) == 5  # all of it
    assert cut == (sum(kept[:5]), "RemoteProtocolError")  # 5 of its 6 events
    assert [r["faults"] for r in journal["requests"]] == [[], ["SendStreamingMessage:cut-after=5"]]


def _streamed(url: str, request: Request) -> tuple[int, str | None]:
    """The events of a stream, and how it ended (None: whole)."""
    headers = {"content-type": "application/json", "a2a-version": "1.0"}
    data = b""
    try:
        with httpx.stream(
            "POST", url + request.target, content=request.body, headers=headers
        ) as answer:
            for chunk in answer.iter_raw():
                data += chunk
    except httpx.HTTPError as exc:
        return data.count(b"data:"), type(exc).__name__
    return data.count(b"data:"), None


def _held(url: str, results: list[object]) -> None:
    request = read_capture(SEND).exchanges[0].request
    headers = {"content-type": "application/json", "a2a-version": "1.0"}
    try:
        answer = httpx.post(url + request.target, content=request.body, headers=headers, timeout=30)
        results.append(answer.status_code)
    except httpx.HTTPError as exc:
        results.append(type(exc).__name__)


def test_stopping_while_answers_are_delayed_closes_them_without_a_word_of_error() -> None:
    with Replay(str(SEND), "--fault", "SendMessage:delay=60") as replay:
        results: list[object] = []
        clients = [threading.Thread(target=_held, args=(replay.url, results)) for _ in range(8)]
        for client in clients:
            client.start()
        deadline = time.monotonic() + TIMEOUT
        while not _journaled(replay.url, 8) and time.monotonic() < deadline:
            time.sleep(0.05)
        started = time.monotonic()
        code = replay.stop()
        took = time.monotonic() - started
        for client in clients:
            client.join(TIMEOUT)
    assert code == 0, replay.text
    assert len(results) == 8 and 500 not in results, results
    assert "Traceback" not in replay.text and "Exception in ASGI" not in replay.text, replay.text
    assert "8 answers in flight" in replay.text
    assert took < 10  # (no wall-clock bound: a stop that waits out the delay would take 60 s)


def test_stopping_while_grpc_answers_are_delayed_ends_them_unavailable() -> None:
    from a2a.types import a2a_pb2
    from google.protobuf import json_format

    capture = read_capture(DATA / "grpc-send.http")
    exchange = next(e for e in capture.exchanges if e.request.messages)
    sent = json_format.Parse(exchange.request.messages[0].json, a2a_pb2.SendMessageRequest())
    grpc_port = free_port()
    spec = f"#{exchange.number}:delay=60"
    listen = ("--grpc-listen", f"127.0.0.1:{grpc_port}", "--fault", spec)
    with Replay(str(DATA / "grpc-send.http"), *listen) as replay:
        codes: list[object] = []

        def call() -> None:
            with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
                method = channel.unary_unary(exchange.request.target)
                try:
                    method(sent.SerializeToString(), timeout=30)
                except grpc.RpcError as exc:
                    codes.append(exc.code())

        clients = [threading.Thread(target=call) for _ in range(4)]
        for client in clients:
            client.start()
        deadline = time.monotonic() + TIMEOUT
        while not _journaled(replay.url, 4) and time.monotonic() < deadline:
            time.sleep(0.05)
        code = replay.stop()
        for client in clients:
            client.join(TIMEOUT)
    assert code == 0, replay.text
    assert codes == [grpc.StatusCode.UNAVAILABLE] * 4
    assert "Traceback" not in replay.text and "4 answers in flight" in replay.text, replay.text


def _journaled(url: str, count: int) -> bool:
    entries = httpx.get(f"{url}/__a2a_recorder/requests", timeout=TIMEOUT).json()["requests"]
    return len(entries) >= count


def test_stopping_during_a_journal_read_says_nothing_of_error() -> None:
    with Replay(str(SEND), "--journal-bytes", str(64 << 20)) as replay:
        big = "z" * (512 << 10)
        for _ in range(24):  # a journal of 12 MiB, far more than the socket buffers hold
            jsonrpc(replay.url, "SendMessage", message(big))
        reader = socket.create_connection(("127.0.0.1", replay.port), timeout=TIMEOUT)
        reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        reader.sendall(b"GET /__a2a_recorder/requests HTTP/1.1\r\nHost: x\r\n\r\n")
        assert reader.recv(1024).startswith(b"HTTP/1.1 200")  # then it reads no more
        time.sleep(0.5)
        code = replay.stop()
        reader.close()
    assert code == 0, replay.text
    assert "Traceback" not in replay.text and "Exception in ASGI" not in replay.text, replay.text


# --- fleets -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["dangling", "loop", "fifo"])
def test_a_fleet_entry_that_is_no_capture_is_refused(tmp_path: Path, kind: str) -> None:
    folder = _fleet(tmp_path)
    odd = folder / "other.http"
    if kind == "dangling":
        odd.symlink_to(tmp_path / "gone.http")
    elif kind == "loop":
        odd.symlink_to(odd)
    else:
        os.mkfifo(odd)
    run = refused(str(folder))
    assert f"{odd}:" in run.stderr, run.stderr


def test_cards_of_different_agents_under_one_authority_are_said(tmp_path: Path) -> None:
    folder = tmp_path / "trip"
    folder.mkdir()
    session = read_capture(SESSION)
    for name in ("alpha", "beta"):
        (folder / f"{name}.http").write_text(render(_renamed(session, f"{name} agent")))
    with Replay(str(folder)) as replay:
        assert replay.stop() == 0
    assert "cards of 2 agents" in replay.text and "'alpha agent'" in replay.text, replay.text


def _renamed(capture: Capture, name: str) -> Capture:
    exchanges = []
    for exchange in capture.exchanges:
        response = exchange.response
        if exchange.classification.operation == "AgentCard" and response is not None:
            card = {**json.loads(response.body), "name": name}
            exchange = replace(exchange, response=replace(response, body=json.dumps(card).encode()))
        exchanges.append(exchange)
    return replace(capture, exchanges=tuple(exchanges))


# --- JSON-RPC ids -----------------------------------------------------------------------------


@pytest.mark.parametrize("wrong", [b"[1]", b'{"a":1}', b"1e400", b"true", b"1.5"])
def test_a_jsonrpc_id_that_cannot_be_one_is_refused_as_an_sdk_agent_does(wrong: bytes) -> None:
    request = read_capture(SEND).exchanges[0].request
    document = json.loads(request.body)
    body = json.dumps({**document, "id": "ID"}).encode().replace(b'"ID"', wrong)
    headers = {"content-type": "application/json", "a2a-version": "1.0"}
    with Replay(str(SEND)) as replay:
        answer = httpx.post(replay.url + request.target, content=body, headers=headers)
        right = httpx.post(replay.url + request.target, content=request.body, headers=headers)
        assert replay.stop() == 0
    assert answer.status_code == 200
    assert answer.json()["id"] is None and answer.json()["error"]["code"] == -32600
    assert "result" in right.json()  # the request was not carried out: the capture still serves


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    yield
