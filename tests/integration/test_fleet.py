"""Replaying a fleet: an orchestrator's three agents recorded with `record --forward`, then
replayed at once with `replay DIR` after the agents stopped, as a user runs it.

The orchestrator (`_orchestrator`) is a real a2a-sdk 1.3.0 client program; the agents are
three real a2a-sdk agents (the demo agent, each serving one skill), one of which pushes the
task's updates to the orchestrator's webhook through the recorder, and one of which is
called over gRPC through the proxy (CONNECT).  Its outcome, replayed, must be the live one:
forward mode (the orchestrator calls the recorded URLs through the replayer as its proxy),
reverse mode (one port per agent, read from --ports-file), and the pytest marker.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import a2a.client  # noqa: F401 - imported once, before pytester's inner runs (see test_plugin)
import grpc
import httpx
import pytest
from _helpers import free_port
from _orchestrator import SKILLS, Outcome, run_orchestrator

import recorder.record  # noqa: F401
from recorder.capture import read_capture
from recorder.demo import DemoAgent, WebhookReceiver
from recorder.replay import Fleet, fleet_paths
from recorder.replay.fleet._route import H2_CLIENT_PREFACE

pytest_plugins = ["pytester"]
HERE = Path(__file__).parent
TIMEOUT = 30
PROXIES = {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "GRPC_PROXY", "NO_GRPC_PROXY"}
CLEAN_ENV = {k: v for k, v in os.environ.items() if k.upper() not in PROXIES}


@dataclass(frozen=True)
class Recorded:
    folder: Path
    urls: tuple[str, ...]  # the agents' base URLs, as the orchestrator was configured
    live: Outcome


class Cli:
    """`a2a-recorder ARGS` as a process of its own (Ctrl-C reaches it: see the brief), its
    stderr read by a thread as it comes."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "recorder", *args],
            text=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**CLEAN_ENV, "PYTHONUNBUFFERED": "1"},
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.put(line)
        self.lines.put("")  # the end

    def until(self, prefix: str) -> str:
        """stderr up to and including the first line starting with `prefix`."""
        while not (self.seen and self.seen[-1].startswith(prefix)):
            line = self.lines.get(timeout=TIMEOUT)
            assert line, f"exited before {prefix!r}: {''.join(self.seen)}"
            self.seen.append(line)
        return "".join(self.seen)

    def interrupt(self) -> tuple[int, str]:
        """Ctrl-C; the exit status and the whole stderr."""
        self.process.send_signal(signal.SIGINT)
        code = self.process.wait(TIMEOUT)
        while (line := self.lines.get(timeout=TIMEOUT)) != "":
            self.seen.append(line)
        return code, "".join(self.seen)

    def __enter__(self) -> Cli:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(TIMEOUT)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    """The orchestrator run live, through `record --forward`; the agents then stop."""
    folder = tmp_path_factory.mktemp("fleet") / "trip"
    port = free_port()
    proxy = f"http://127.0.0.1:{port}"
    with Cli("record", "--forward", "--listen", f"127.0.0.1:{port}", "--out", str(folder)) as cli:
        cli.until("recording to")
        agents = [
            DemoAgent(event_delay=0.05, name=f"{skill} agent", skills=(skill,), push_proxy=proxy)
            for skill in SKILLS
        ]
        for agent in agents:
            agent.start()
        try:
            urls = tuple(agent.base_url for agent in agents)
            with WebhookReceiver() as hook:
                live = asyncio.run(run_orchestrator(urls, hook, proxy=proxy))
        finally:
            for agent in agents:
                agent.stop()
        code, err = cli.interrupt()
    assert code == 0, err
    yield Recorded(folder, urls, live)


def test_the_orchestrator_ran_live_and_was_recorded_one_capture_per_upstream(
    recorded: Recorded,
) -> None:
    live = recorded.live
    assert [(skill, name) for skill, name, _ in live.steps] == [
        ("echo", "echo agent"),
        ("slow", "slow agent"),
        ("message", "message agent"),
    ]
    assert live.steps[0][2] == ("task ID-1 completed ['echo paris']",)
    assert live.steps[1][2][-1] == "status ID-2 completed"
    assert live.steps[2][2] == ("message ['booked']",)
    assert len(live.pushes) == 4
    captures = {p.name: read_capture(p) for p in recorded.folder.glob("*.http")}
    upstreams = sorted(u.partition("://")[0] for c in captures.values() for u in c.upstreams)
    # three agents (the slow one also over gRPC) and the orchestrator's webhook, which the
    # deliveries went to
    assert upstreams == ["grpc", "http", "http", "http", "http"]


def test_forward_replay_gives_the_same_outcome_with_strict_clean(
    recorded: Recorded, tmp_path: Path
) -> None:
    port = free_port()
    proxy = f"http://127.0.0.1:{port}"
    with Cli(
        "replay", str(recorded.folder), "--forward", "--listen", f"127.0.0.1:{port}", "--strict"
    ) as cli:
        shown = cli.until("replaying 3 agents")
        with WebhookReceiver() as hook:
            replayed = asyncio.run(run_orchestrator(recorded.urls, hook, proxy=proxy))
        # Each agent's own journal, through the proxy, at the URL it was recorded under.
        echo = recorded.urls[0]
        journal = httpx.get(f"{echo}/__a2a_recorder/requests", proxy=proxy, timeout=10).json()
        report = httpx.get(f"{proxy}/__a2a_recorder/report", timeout=10).json()
        code, err = cli.interrupt()
    assert replayed == recorded.live
    assert code == 0, err
    assert [r["operation"] for r in journal["requests"]] == ["AgentCard", "SendMessage"]
    assert [d["status"] for d in journal["deliveries"]] == [200, 200, 200, 200]
    assert report["clean"] is True
    assert sorted(report["agents"]) == _agent_names(shown)
    for skill in SKILLS:
        assert f"{skill} agent" in shown
    assert "4 push deliveries recorded in" in shown  # the webhook's capture, adopted


def _agent_names(table: str) -> list[str]:
    return sorted(line.split()[0] for line in table.splitlines() if line.startswith("127.0.0.1_"))


def test_forward_strict_fails_on_what_no_agent_answers(recorded: Recorded) -> None:
    port = free_port()
    proxy = f"http://127.0.0.1:{port}"
    with Cli(
        "replay", str(recorded.folder), "--forward", "--listen", f"127.0.0.1:{port}", "--strict"
    ) as cli:
        cli.until("replaying 3 agents")
        stranger = httpx.get("http://127.0.0.1:9/anything", proxy=proxy, timeout=10)
        unmatched = httpx.post(
            f"{recorded.urls[0]}/a2a/jsonrpc",
            json={"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "nope"}},
            headers={"A2A-Version": "1.0"},
            proxy=proxy,
            timeout=10,
        )
        code, err = cli.interrupt()
    assert stranger.status_code == 502
    assert "no capture of this fleet was recorded against 127.0.0.1:9" in stranger.text
    assert unmatched.status_code == 200 and "error" in unmatched.json()
    assert code == 1
    report = json.loads(err[err.index("{") :])
    assert report["unrouted"] == [
        "GET 127.0.0.1:9: " + stranger.text.strip().removeprefix("a2a-recorder fleet: ")
    ]
    echo = next(n for n, r in report["agents"].items() if r["unmatched"])
    assert "GetTask" in report["agents"][echo]["unmatched"][0]


def test_reverse_replay_serves_each_agent_on_its_port_written_to_the_ports_file(
    recorded: Recorded, tmp_path: Path
) -> None:
    ports = tmp_path / "ports.json"
    with Cli(
        "replay",
        str(recorded.folder),
        "--listen",
        "127.0.0.1:0",
        "--ports-file",
        str(ports),
        "--strict",
    ) as cli:
        shown = cli.until("replaying 3 agents")
        written = json.loads(ports.read_text())
        served = {u: a["url"] for a in written["agents"] for u in a["upstreams"]}
        urls = tuple(served[url] for url in recorded.urls)
        with WebhookReceiver() as hook:
            replayed = asyncio.run(run_orchestrator(urls, hook))
        code, err = cli.interrupt()
    assert replayed == recorded.live
    assert code == 0, err
    assert written["mode"] == "reverse" and written["proxy"] is None
    assert sorted(a["card"] for a in written["agents"]) == [f"{s} agent" for s in sorted(SKILLS)]
    for agent in written["agents"]:
        assert agent["url"] in shown and agent["url"] not in recorded.urls
        assert agent["grpc"] is not None and agent["grpc"] in shown
    # A clean --strict says so at exit, and every key of the file is documented (issue 30:
    # it printed nothing, and `replayer`, `replayer_grpc` were in no page).
    assert "strict: clean: every recorded exchange was served" in err
    keys = {*written, *(f"agents[].{key}" for key in written["agents"][0])} - {"agents"}
    assert keys == _documented_ports_keys()


def _documented_ports_keys() -> set[str]:
    """The keys the fleet guide's table of the ports file names."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "guides" / "fleet.md").read_text()
    table = page.split("| key | what it is |", 1)[1].split("\n\n", 1)[0]
    return set(re.findall(r"^\| `([^`]+)` \|", table, re.MULTILINE))


# --- clients unlike the SDK's: raw sockets at the forward proxy -----------------------------


@pytest.fixture
def proxied(recorded: Recorded) -> Iterator[Fleet]:
    """The recorded fleet behind its forward proxy, in this process."""
    found = [(path, read_capture(path)) for path in fleet_paths(recorded.folder)]
    with Fleet(found, forward=True) as fleet:
        yield fleet


class Raw:
    """One raw connection to the proxy: bytes out as given, HTTP/1.1 answers read back."""

    def __init__(self, fleet: Fleet) -> None:
        self.sock = socket.create_connection((fleet.host, fleet.port), timeout=TIMEOUT)
        self.incoming = self.sock.makefile("rb")

    def send(self, *pieces: bytes) -> None:
        """Each piece on its own, a pause between them (a request split across packets)."""
        for n, piece in enumerate(pieces):
            if n:
                time.sleep(0.05)
            self.sock.sendall(piece)

    def answer(self) -> tuple[int, bytes]:
        """The next answer's status and body (Content-Length or chunked)."""
        status = int(self.incoming.readline().split(b" ")[1])
        headers = {}
        while (line := self.incoming.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            return status, self.incoming.read(int(headers["content-length"]))
        if headers.get("transfer-encoding") == "chunked":
            return status, self._chunks()
        return status, b""

    def _chunks(self) -> bytes:
        body = b""
        while size := int(self.incoming.readline().split(b";")[0], 16):
            body += self.incoming.read(size)
            self.incoming.readline()
        self.incoming.readline()
        return body

    def closed(self) -> bool:
        """Did the proxy close the connection (after anything still unread) within 5 s?"""
        self.sock.settimeout(5)
        try:
            self.incoming.read()
        except TimeoutError:
            return False
        return True

    def __enter__(self) -> Raw:
        return self

    def __exit__(self, *exc: object) -> None:
        self.incoming.close()
        self.sock.close()


CARD = "/.well-known/agent-card.json"


def card_get(target: str, where: str) -> bytes:
    return f"GET {target} HTTP/1.1\r\nHost: {where}\r\n\r\n".encode()


def test_one_connection_to_the_proxy_reaches_every_agent_then_becomes_a_tunnel(
    recorded: Recorded, proxied: Fleet
) -> None:
    where = [url.partition("://")[2] for url in recorded.urls]
    with Raw(proxied) as raw:
        names = []
        for url, authority in zip(recorded.urls, where, strict=True):
            raw.send(card_get(f"{url}{CARD}", authority))
            status, body = raw.answer()
            names.append((status, json.loads(body)["name"]))
        raw.send(card_get("http://127.0.0.1:9/x", "127.0.0.1:9"))
        stranger = raw.answer()
        # The same connection, now a CONNECT whose head comes in pieces, then HTTP/1 inside.
        head = f"CONNECT {where[2]} HTTP/1.1\r\nHost: {where[2]}\r\n\r\n".encode()
        raw.send(head[:3], head[3:12], head[12:])
        established = raw.answer()
        raw.send(card_get(CARD, where[2]))
        tunnelled = raw.answer()
    assert names == [(200, f"{skill} agent") for skill in SKILLS]
    assert stranger[0] == 502 and b"127.0.0.1:9" in stranger[1]
    assert established == (200, b"")
    assert tunnelled[0] == 200 and json.loads(tunnelled[1])["name"] == "message agent"
    assert [r.line() for r in proxied.unrouted.requests] == [
        "GET 127.0.0.1:9: " + stranger[1].decode().strip().removeprefix("a2a-recorder fleet: ")
    ]


def test_what_the_proxy_cannot_tunnel_is_answered_and_reported(
    recorded: Recorded, proxied: Fleet
) -> None:
    echo = recorded.urls[0].partition("://")[2]
    answers = []
    for head in (b"CONNECT 127.0.0.1:9 HTTP/1.1\r\n\r\n", b"CONNECT  HTTP/1.1\r\n\r\n"):
        with Raw(proxied) as raw:
            raw.send(head)
            answers.append((raw.answer()[0], raw.closed()))
    with Raw(proxied) as raw:  # TLS inside a tunnel: the fleet terminates none
        raw.send(f"CONNECT {echo} HTTP/1.1\r\n\r\n".encode())
        established = raw.answer()
        raw.send(b"\x16\x03\x01\x00\x05hello")
        tls_closed = raw.closed()
    with Raw(proxied) as raw:  # not HTTP at all
        raw.send(b"\x00\xff\xfe not a request\r\n\r\n")
        garbage = raw.answer()[0]
    report = httpx.get(f"{proxied.proxy_url}/__a2a_recorder/report", timeout=10).json()
    assert answers == [(502, True), (400, True)]
    assert established[0] == 200 and tls_closed
    assert garbage == 400
    assert [line.split(": ")[0] for line in report["unrouted"]] == [
        "CONNECT 127.0.0.1:9",
        f"CONNECT {echo}",
    ]
    assert "does not terminate TLS" in report["unrouted"][1]
    assert report["clean"] is False


def test_slow_clients_cannot_hold_the_proxy(recorded: Recorded) -> None:
    """A CONNECT head, an HTTP/2 connection's first request, never completed: closed after
    the read timeout, as a slow HTTP request is."""
    found = [(path, read_capture(path)) for path in fleet_paths(recorded.folder)]
    echo = recorded.urls[0].partition("://")[2]
    with Fleet(found, forward=True, read_timeout=0.5) as fleet:
        closed = []
        for start in (f"CONNECT {echo} HTT".encode(), b"CONN", H2_CLIENT_PREFACE):
            with Raw(fleet) as raw:
                raw.send(start)
                closed.append(raw.closed())
    assert closed == [True, True, True]


def test_identical_orchestrators_at_once_each_get_the_live_outcome(
    recorded: Recorded, proxied: Fleet
) -> None:
    async def both(hooks: tuple[WebhookReceiver, WebhookReceiver]) -> list[Outcome]:
        runs = (run_orchestrator(recorded.urls, hook, proxy=proxied.proxy_url) for hook in hooks)
        return list(await asyncio.gather(*runs))

    with WebhookReceiver() as one, WebhookReceiver() as two:
        outcomes = asyncio.run(both((one, two)))
    assert outcomes == [recorded.live, recorded.live]
    assert proxied.unrouted.count == 0
    assert all(not a.report.synthesized_answers for a in proxied.agents)


def test_grpc_sent_to_the_proxy_itself_is_routed_by_its_authority(
    recorded: Recorded, proxied: Fleet
) -> None:
    """A gRPC client that dials the proxy, its channel's authority the recorded agent's (no
    CONNECT): routed by the `:authority` of its first call."""
    dial = f"{proxied.host}:{proxied.port}"

    def channels(target: str) -> grpc.aio.Channel:
        return grpc.aio.insecure_channel(dial, options=[("grpc.default_authority", target)])

    with WebhookReceiver() as hook:
        replayed = asyncio.run(
            run_orchestrator(recorded.urls, hook, proxy=proxied.proxy_url, channels=channels)
        )
    assert replayed == recorded.live
    assert proxied.unrouted.count == 0
    slow = proxied.agent("slow agent")
    journal = [(r.classification.operation, r.answer) for r in slow.journal.requests]
    assert journal == [("AgentCard", "recorded"), ("SendStreamingMessage", "recorded")]


def test_grpc_to_the_proxy_for_an_unknown_authority_is_unavailable_and_reported(
    proxied: Fleet,
) -> None:
    dial = f"{proxied.host}:{proxied.port}"
    options = [("grpc.default_authority", "127.0.0.1:9")]
    with grpc.insecure_channel(dial, options=options) as channel:
        call = channel.unary_unary("/lf.a2a.v1.A2AService/GetTask")
        with pytest.raises(grpc.RpcError) as raised:
            call(b"", timeout=TIMEOUT)
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE  # type: ignore[attr-defined]
    assert [r.line().split(": ")[0] for r in proxied.unrouted.requests] == ["HTTP/2 127.0.0.1:9"]


# --- the pytest marker ---------------------------------------------------------------------

MARKER_TESTS = """
import asyncio, json, sys
from dataclasses import asdict
import httpx, pytest
sys.path.insert(0, {here!r})
from _orchestrator import run_orchestrator
from recorder.demo import WebhookReceiver

LIVE = json.loads(open("live.json").read())
URLS = {urls!r}

def outcome(urls, proxy=None):
    with WebhookReceiver() as hook:
        found = asyncio.run(run_orchestrator(urls, hook, proxy=proxy))
    return json.loads(json.dumps(asdict(found)))

@pytest.mark.a2a_fleet("trip/", forward=True)
def test_forward(a2a_fleet):
    assert outcome(URLS) == LIVE  # the orchestrator as configured: HTTP_PROXY does it
    assert all(a.report.clean for a in a2a_fleet.agents)

@pytest.mark.a2a_fleet("trip/")
def test_reverse(a2a_fleet):
    assert outcome([a2a_fleet.urls[u] for u in URLS]) == LIVE
    assert a2a_fleet.agent("echo agent").journal.deliveries

@pytest.mark.a2a_fleet("trip/", forward=True)
def test_stray(a2a_fleet):
    httpx.get("http://127.0.0.1:9/stray", timeout=5)
"""


def test_the_pytest_marker_replays_the_fleet(recorded: Recorded, pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(MARKER_TESTS.format(here=str(HERE), urls=list(recorded.urls)))
    for path in recorded.folder.glob("*.http"):
        (pytester.path / "trip").mkdir(exist_ok=True)
        (pytester.path / "trip" / path.name).write_bytes(path.read_bytes())
    (pytester.path / "live.json").write_text(json.dumps(asdict(recorded.live)))
    # -rN: no short summary, which repeats a failure's message in full when CI=true is set
    result = pytester.runpytest("-p", "no:cacheprovider", "-rN")
    result.assert_outcomes(passed=2, failed=1)  # the stray, once: as its failure
    result.stdout.fnmatch_lines(
        ["*requests no agent of the fleet answers:*", "*GET 127.0.0.1:9: no capture*"]
    )
    assert result.stdout.str().count("requests no agent of the fleet answers") == 1


BAD_FOLDERS = """
import pytest

@pytest.mark.a2a_fleet()
def test_no_folder(a2a_fleet):
    pass

@pytest.mark.a2a_fleet("empty/")
def test_empty(a2a_fleet):
    pass

@pytest.mark.a2a_fleet("damaged/")
def test_damaged(a2a_fleet):
    pass

@pytest.mark.a2a_fleet("empty/", foward=True)
def test_misspelt(a2a_fleet):
    pass
"""


def test_the_marker_says_what_is_wrong_with_its_folder(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(BAD_FOLDERS)
    (pytester.path / "empty").mkdir()
    (pytester.path / "empty" / "echo.rejected.http").write_text("")  # a by-product, no agent
    (pytester.path / "damaged").mkdir()
    (pytester.path / "damaged" / "echo.http").write_bytes(b"\xff\xfe not a capture\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=4)
    result.stdout.fnmatch_lines_random(
        [
            "*a2a_fleet needs @pytest.mark.a2a_fleet('path/to/folder/')*",
            "*a2a_fleet does not take foward= (it takes a folder, forward= and timing=)*",
            "*no capture in *empty: record the fleet with a2a-recorder record --forward*",
            "*capture is damaged: *echo.http*",
        ]
    )
    assert "Traceback" not in result.stdout.str()
