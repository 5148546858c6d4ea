"""`a2a-recorder verify` end to end: real captures, real agents, the real recorder.

A capture of the demo session on all three bindings (push deliveries included, through the
recorder's relay, and the push proxy the agent uses) verifies clean against a fresh demo
agent, again and again;
a demo agent changed on purpose (an artifact renamed, a status event added to a stream)
drifts, and the report names that change and nothing else.
Redacted credentials are supplied and never recorded.  Intended differences are ignored with
diff's `--ignore`, a verify.toml or a pyproject.toml section.  The `--a2a-verify` pytest option
turns a test file's captures into an SDK-upgrade gate.  The corpus runs are in
`test_verify_corpus.py`.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from _helpers import free_port
from click.testing import CliRunner, Result

import recorder.record  # noqa: F401 - imported once (see test_plugin.py)
from recorder.capture import Capture, read_capture, write_capture
from recorder.cli import main
from recorder.demo import DemoAgent, WebhookReceiver, run_session
from recorder.protocol import PUSH_DELIVERY, Binding
from recorder.record import RecordingProxy

pytest_plugins = ["pytester"]

BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC")
RENAMED = {"echo": "echoed"}


def _verify(*args: str, env: dict[str, str] | None = None) -> Result:
    result = CliRunner().invoke(main, ["verify", *args], env=env)
    print(f"$ a2a-recorder verify {' '.join(args)}  (exit {result.exit_code})\n{result.output}")
    return result


def _record_demo(out: Path, bindings: tuple[str, ...] = BINDINGS, webhook: bool = True) -> None:
    """The demo session on each binding through the recorder; with `webhook`, the agent's
    deliveries go through the recorder's push proxy, so the gRPC ones are recorded too."""
    port = free_port()
    with (
        DemoAgent(event_delay=0.05, push_proxy=f"http://127.0.0.1:{port}") as agent,
        WebhookReceiver() as hook,
        RecordingProxy(
            upstream=agent.base_url,
            out=out,
            grpc_upstream=agent.grpc_target,
            push_proxy=("127.0.0.1", port),
            existing="overwrite",
        ) as proxy,
    ):
        for binding in bindings:
            result = asyncio.run(
                run_session(proxy.url, binding=binding, webhook=hook if webhook else None)
            )
            assert result.webhook_deliveries in (4, None), binding


@pytest.fixture(scope="module")
def demo_capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("verify") / "demo.http"
    _record_demo(out)
    return out


def _deliveries(capture: Capture) -> list[Binding | None]:
    return [
        e.classification.binding
        for e in capture.exchanges
        if e.classification.operation == PUSH_DELIVERY
    ]


def test_the_demo_session_verifies_clean_against_a_fresh_agent(
    demo_capture: Path, tmp_path: Path
) -> None:
    recorded = read_capture(demo_capture)
    assert len(_deliveries(recorded)) == 12  # four per binding, gRPC's through the push proxy
    new = tmp_path / "new.http"
    with DemoAgent(event_delay=0.05) as agent:
        result = _verify(str(demo_capture), "--agent", agent.base_url, "--out", str(new))
        assert result.exit_code == 0
        assert result.output.splitlines()[-1].startswith(
            f"Verify: no drift: {len(recorded.exchanges)} exchanges compared, 0 differ"
        )
        # Run again against the same agent: its client-chosen ids are fresh, nothing collides.
        again = _verify(str(demo_capture), "--agent", agent.base_url, "--format", "json")
        assert again.exit_code == 0 and json.loads(again.output)["drift"] is False
    live = read_capture(new)
    assert len(live.exchanges) == len(recorded.exchanges)
    assert len(_deliveries(live)) == 12
    # Every task a request named is the live agent's, except the probe of an unknown id.
    recorded_tasks = {e.classification.task_id for e in recorded.exchanges} - {None}
    live_tasks = {e.classification.task_id for e in live.exchanges} - {None}
    probes = {
        e.classification.task_id
        for e in recorded.exchanges
        if e.classification.error == "TaskNotFoundError" and e.classification.operation == "GetTask"
    }
    assert len(probes) == 3 and probes <= live_tasks
    assert recorded_tasks & live_tasks == probes
    assert len(live_tasks - probes) == len(recorded_tasks - probes) == 15


def test_a_deliberate_change_is_named_and_nothing_else(demo_capture: Path) -> None:
    with DemoAgent(event_delay=0.05, artifact_names=RENAMED) as agent:
        result = _verify(str(demo_capture), "--agent", agent.base_url, "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["drift"] is True and report["not_sent"] == []
    changed = [
        (pair["operation"], d)
        for pair in report["diff"]["exchanges"]
        for d in pair["differences"]
        if d["kind"] != "empty-default"
    ]
    assert {(d["kind"], d["old"], d["new"]) for _, d in changed} == {("changed", "echo", "echoed")}
    assert all(
        d["path"].endswith("artifacts[0].name") or d["path"].endswith(".artifact.name")
        for _, d in changed
    )
    # Per binding: the send and the push send, the listing that shows the echo task, and the
    # artifact update pushed to the webhook.
    assert sorted(op for op, _ in changed) == sorted(
        ["SendMessage", "SendMessage", "ListTasks", "PushDelivery"] * 3
    )


def test_a_status_event_added_to_a_stream_is_named_and_nothing_else(demo_capture: Path) -> None:
    with DemoAgent(event_delay=0.05, extra_status=True) as agent:
        result = _verify(str(demo_capture), "--agent", agent.base_url, "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["drift"] is True and report["not_sent"] == []
    added = [
        (pair["operation"], pair["binding"], d["kind"], d["path"], d["new"])
        for pair in report["diff"]["exchanges"]
        for d in pair["differences"]
        if d["kind"] != "empty-default"
    ]
    # One per binding: the stream of `slow 3` (task, working, three chunks, completed) has
    # one more working status update before its completion; nothing else differs.
    assert [a[:4] for a in added] == [
        ("SendStreamingMessage", "JSONRPC", "added", "events[5]"),
        ("SendStreamingMessage", "HTTP+JSON", "added", "events[5]"),
        ("SendStreamingMessage", "GRPC", "added", "messages[5]"),
    ]
    events = [a[4]["data"].get("result", a[4]["data"]) if "data" in a[4] else a[4] for a in added]
    assert [e["statusUpdate"]["status"]["state"] for e in events] == ["TASK_STATE_WORKING"] * 3


def test_a_slowdown_fails_only_beyond_the_factor_given(tmp_path: Path) -> None:
    capture = tmp_path / "stream.http"
    with (
        DemoAgent(event_delay=0.02, enable_grpc=False) as agent,
        RecordingProxy(upstream=agent.base_url, out=capture) as proxy,
    ):
        _stream(proxy.url, "slow 3")
    with DemoAgent(event_delay=0.3, enable_grpc=False) as slower:
        timing = _verify(str(capture), "--agent", slower.base_url)
        strict = _verify(str(capture), "--agent", slower.base_url, "--max-slowdown", "3")
    assert timing.exit_code == 0 and "SendStreamingMessage" in timing.output
    assert strict.exit_code == 1
    slow = [line for line in strict.output.splitlines() if "slower than allowed" in line]
    assert len(slow) == 1 and "SendStreamingMessage" in slow[0]
    assert strict.output.splitlines()[-1].endswith("1 slower than ×3")


def _stream(base_url: str, text: str) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendStreamingMessage",
        "params": {
            "message": {
                "messageId": str(uuid.uuid4()),
                "role": "ROLE_USER",
                "parts": [{"text": text}],
            }
        },
    }
    with httpx.stream(
        "POST",
        base_url + "/a2a/jsonrpc",
        json=body,
        timeout=10,
        headers={"A2A-Version": "1.0", "Accept": "text/event-stream"},
    ) as answer:
        assert answer.status_code == 200
        answer.read()


def _send(base_url: str, text: str, token: str | None = None) -> dict[str, object]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {
                "messageId": str(uuid.uuid4()),
                "role": "ROLE_USER",
                "parts": [{"text": text}],
            }
        },
    }
    headers = {"A2A-Version": "1.0"} | ({"Authorization": f"Bearer {token}"} if token else {})
    answer = httpx.post(base_url + "/a2a/jsonrpc", json=body, headers=headers, timeout=10)
    document: dict[str, object] = answer.json()
    return document


def _listed(agent: DemoAgent) -> list[str]:
    """The whoami artifacts of every task the agent holds, asked of the agent directly."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"includeArtifacts": True}}
    tasks = httpx.post(
        agent.jsonrpc_url, json=body, headers={"A2A-Version": "1.0"}, timeout=10
    ).json()["result"]["tasks"]
    return [
        part["text"]
        for task in tasks
        for artifact in task.get("artifacts", [])
        for part in artifact["parts"]
    ]


def test_redacted_credentials_are_supplied_to_the_agent_and_never_recorded(tmp_path: Path) -> None:
    capture, new = tmp_path / "whoami.http", tmp_path / "new.http"
    with (
        DemoAgent(event_delay=0.02, enable_grpc=False) as agent,
        RecordingProxy(upstream=agent.base_url, out=capture) as proxy,
    ):
        _send(proxy.url, "whoami", token="recorded-secret-1")
    assert "recorded-secret" not in capture.read_text()
    assert "Bearer <redacted:1>" in capture.read_text()
    with DemoAgent(event_delay=0.02, enable_grpc=False) as agent:
        refused = _verify(str(capture), "--agent", agent.base_url)
        assert refused.exit_code == 2
        assert "header Authorization is redacted in the capture" in refused.output
        assert "A2A_VERIFY_HEADER_AUTHORIZATION" in refused.output
        assert _listed(agent) == []  # nothing reached the agent
        # The artifact echoes the request's headers, Host among them: ignored here.
        supplied = _verify(
            str(capture),
            "--agent",
            agent.base_url,
            "--out",
            str(new),
            "--header",
            "Authorization: Bearer live-secret-2",
            "--ignore",
            "body.result.task.artifacts",
        )
        assert supplied.exit_code == 0
        (echoed,) = _listed(agent)
        assert "authorization: Bearer live-secret-2" in echoed
        from_env = _verify(
            str(capture),
            "--agent",
            agent.base_url,
            "--ignore",
            "body.result.task.artifacts",
            env={"A2A_VERIFY_HEADER_AUTHORIZATION": "Bearer env-secret-3"},
        )
        assert from_env.exit_code == 0
        assert any("authorization: Bearer env-secret-3" in text for text in _listed(agent))
    text = new.read_text()
    assert "live-secret" not in text and "Bearer <redacted:1>" in text


def test_a_request_whose_id_never_came_is_reported_not_sent(tmp_path: Path) -> None:
    """The recorded send made a task; the same send now makes a message (the capture is
    edited so), so the GetTask of that task has no live id to go out with."""
    capture = tmp_path / "edited.http"
    with (
        DemoAgent(event_delay=0.02, enable_grpc=False) as agent,
        RecordingProxy(upstream=agent.base_url, out=capture) as proxy,
    ):
        task = _send(proxy.url, "echo hello")["result"]["task"]  # type: ignore[index]
        httpx.post(
            proxy.url + "/a2a/jsonrpc",
            headers={"A2A-Version": "1.0"},
            timeout=10,
            json={"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task["id"]}},
        )  # type: ignore[index]
    recorded = read_capture(capture)
    send = recorded.exchanges[0]
    edited = replace(
        send,
        request=replace(
            send.request, body=send.request.body.replace(b"echo hello", b"message hello")
        ),
    )
    write_capture(capture, replace(recorded, exchanges=(edited, *recorded.exchanges[1:])))
    with DemoAgent(event_delay=0.02, enable_grpc=False) as agent:
        result = _verify(str(capture), "--agent", agent.base_url)
    assert result.exit_code == 1
    assert "Not sent:\n  #2 GetTask: it names " + task["id"] in result.output  # type: ignore[index]
    assert "handed out by #1, whose live answer had no id in its place" in result.output


def test_intended_differences_are_ignored_from_the_command_line_or_a_settings_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--ignore` is diff's; verify.toml holds a project's standing ignores, and so does a
    `[tool.a2a-recorder.verify]` section in pyproject.toml (per capture glob too)."""
    project = tmp_path / "project"
    (project / "captures").mkdir(parents=True)
    capture = project / "captures" / "echo.http"
    with (
        DemoAgent(event_delay=0.02, enable_grpc=False) as agent,
        RecordingProxy(upstream=agent.base_url, out=capture) as proxy,
    ):
        _send(proxy.url, "echo hello")
    renamed = '"$.result.task.artifacts[*].name"'
    monkeypatch.chdir(project)
    with DemoAgent(event_delay=0.02, enable_grpc=False, artifact_names=RENAMED) as agent:
        url = agent.base_url
        plain = _verify(str(capture), "--agent", url)
        flag = _verify(str(capture), "--agent", url, "--ignore", renamed.strip('"'))
        (project / "pyproject.toml").write_text(
            f'[project]\nname = "x"\n\n[tool.a2a-recorder.verify.captures."captures/*.http"]\n'
            f"ignore = [{renamed}]\n"
        )
        by_pyproject = _verify(str(capture), "--agent", url)
        (project / "verify.toml").write_text('ignore = ["header:etag"]\n')  # wins, and lacks it
        by_verify_toml = _verify(str(capture), "--agent", url)
        (project / "verify.toml").write_text(f"ignore = [{renamed}]\n")
        standing = _verify(str(capture), "--agent", url)
        monkeypatch.chdir(tmp_path)  # out of the project: no settings found, unless named
        outside = _verify(str(capture), "--agent", url)
        named = _verify(str(capture), "--agent", url, "--config", str(project / "verify.toml"))
    assert plain.exit_code == 1
    assert '~ body.result.task.artifacts[0].name: "echo" → "echoed"' in plain.output
    assert [
        r.exit_code for r in (flag, by_pyproject, by_verify_toml, standing, outside, named)
    ] == [0, 0, 1, 0, 1, 0]


@pytest.mark.parametrize(
    "args",
    [
        ["--agent", "http://127.0.0.1:{port}"],
        ["--agent", "{agent}", "--ignore", "nonsense.path"],
        ["--agent", "{agent}", "--out", "{capture}"],
        ["--agent", "{agent}", "--header", "no colon"],
    ],
)
def test_what_cannot_run_exits_2_and_says_why(
    demo_capture: Path, demo_agent: DemoAgent, args: list[str]
) -> None:
    filled = [
        a.format(port=free_port(), agent=demo_agent.base_url, capture=demo_capture) for a in args
    ]
    result = _verify(str(demo_capture), *filled)
    assert result.exit_code == 2 and result.output.startswith("error: ")
    assert "Traceback" not in result.output


def test_a_damaged_capture_exits_2_with_file_and_line(
    tmp_path: Path, demo_agent: DemoAgent
) -> None:
    damaged = tmp_path / "damaged.http"
    damaged.write_text("# a2a-recorder capture format 2\n### 1 GetTask JSONRPC\nnot a request\n")
    result = _verify(str(damaged), "--agent", demo_agent.base_url)
    assert result.exit_code == 2 and f"{damaged}:" in result.output


class _SlowAgent(BaseHTTPRequestHandler):
    """Answers everything (the card included) with 404, `DELAY` seconds late."""

    DELAY = 2.0

    def _answer(self) -> None:
        time.sleep(self.DELAY)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_the_card_is_fetched_within_verifys_timeout() -> None:
    """`--timeout` bounds the live card's fetch too (it waited a fixed 10 s): an agent whose
    card comes later than `--timeout` is one verify cannot reach."""
    sample = Path(__file__).resolve().parents[1] / "data" / "jsonrpc-send.http"
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SlowAgent)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        result = _verify(
            str(sample), "--agent", url, "--timeout", "0.5", "--header", "Authorization: x"
        )
    finally:
        server.shutdown()
        server.server_close()
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"error: cannot reach the agent at {url}")


# ---- pytest --a2a-verify ------------------------------------------------------------------

THREE_CAPTURES = """
import httpx, pytest

@pytest.mark.a2a_capture("captures/jsonrpc.http")
def test_jsonrpc(a2a_replay):
    assert httpx.get(a2a_replay.card_url, timeout=5).json()["name"] == "a2a-recorder demo agent"

@pytest.mark.a2a_capture("captures/rest.http")
def test_rest(a2a_replay):
    assert httpx.get(a2a_replay.card_url, timeout=5).status_code == 200

@pytest.mark.a2a_capture("captures/grpc.http")
def test_grpc(a2a_replay):
    assert a2a_replay.grpc_target
"""


# The renamed artifact's name in every document it appears in: HTTP+JSON and gRPC ones for
# all captures, JSON-RPC results and push deliveries for the JSON-RPC capture.
STANDING_IGNORES = """
[tool.a2a-recorder.verify]
ignore = ["$.task.artifacts[*].name", "$.tasks[*].artifacts[*].name"]

[tool.a2a-recorder.verify.captures."captures/jsonrpc.http"]
ignore = ["$.result.task.artifacts[*].name", "$.result.tasks[*].artifacts[*].name",
          "$.artifactUpdate.artifact.name"]
"""


@pytest.fixture
def three_captures(
    pytester: pytest.Pytester,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[pytest.Pytester]:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    folder = pytester.path / "captures"
    folder.mkdir()
    for binding, name in zip(BINDINGS, ("jsonrpc", "rest", "grpc"), strict=True):
        _record_demo(folder / f"{name}.http", (binding,), webhook=binding == "JSONRPC")
    pytester.makepyfile(THREE_CAPTURES)
    yield pytester


def test_pytest_a2a_verify_is_green_against_the_same_agent_and_red_against_a_changed_one(
    three_captures: pytest.Pytester,
) -> None:
    with DemoAgent(event_delay=0.05) as agent:
        green = three_captures.runpytest("-p", "no:cacheprovider", f"--a2a-verify={agent.base_url}")
    green.assert_outcomes(passed=3)
    assert not list((three_captures.path / "captures").glob("*.drift.http"))
    with DemoAgent(event_delay=0.05, artifact_names=RENAMED) as changed:
        url = changed.base_url
        red = three_captures.runpytest("-p", "no:cacheprovider", f"--a2a-verify={url}")
        drifted = sorted(p.name for p in (three_captures.path / "captures").glob("*.drift.http"))
        # The project's standing ignores (pyproject.toml) make the rename intended.
        three_captures.makepyprojecttoml(STANDING_IGNORES)
        intended = three_captures.runpytest("-p", "no:cacheprovider", f"--a2a-verify={url}")
    intended.assert_outcomes(passed=3)
    red.assert_outcomes(failed=3)
    assert drifted == ["grpc.drift.http", "jsonrpc.drift.http", "rest.drift.http"]
    output = red.stdout.str()
    for name in ("jsonrpc", "rest", "grpc"):
        assert f"captures/{name}.http drifted against {url}" in output
    assert '~ body.result.task.artifacts[0].name: "echo" → "echoed"' in output  # JSON-RPC
    assert '~ body.task.artifacts[0].name: "echo" → "echoed"' in output  # HTTP+JSON
    assert '~ messages[0].task.artifacts[0].name: "echo" → "echoed"' in output  # gRPC
    # One report per capture in the failures section (under CI=true pytest repeats each
    # message whole in the short summary too).
    failures = output.split("short test summary info")[0]
    assert failures.count("Verify: drift: ") == 3
    assert not list((three_captures.path / "captures").glob("*.drift.http"))  # green again


def test_pytest_a2a_verify_and_recording_do_not_mix(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(THREE_CAPTURES)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--a2a-verify=http://127.0.0.1:9", "--a2a-record=all"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--a2a-verify checks captures, --a2a-record makes them*"])
