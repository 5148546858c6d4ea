"""The pytest plugin: replay a checked-in capture, record a missing one, fail on a miss."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import a2a.client  # noqa: F401
import httpx
import pytest

import recorder.record  # noqa: F401
from recorder.capture import read_capture
from recorder.demo import DemoAgent, WebhookReceiver, run_session
from recorder.pytest_plugin import A2AEndpoint, RecordMode, parse_mode

pytest_plugins = ["pytester"]
# The inner runs are in-process and pytester drops the modules they imported afterwards; a
# second import of cryptography (under mitmproxy) breaks its Rust bindings, so mitmproxy and
# the SDK client are imported here, once, and stay.

DATA = Path(__file__).parent.parent / "data"


@pytest.mark.a2a_capture("../data/sessions/demo-session-jsonrpc.http")
def test_the_demo_session_runs_against_its_capture(a2a_replay: A2AEndpoint) -> None:
    with WebhookReceiver() as hook:
        result = asyncio.run(run_session(a2a_replay.url, binding="JSONRPC", webhook=hook))
    assert not a2a_replay.recording
    assert result.step("send").artifacts == ("echo hello",)
    assert result.step("stream").events[-1] == "status_update:completed"
    assert result.step("cancel").state == "canceled"
    assert result.errors == {
        "error_get_unknown_task": "TaskNotFoundError",
        "error_cancel_completed": "TaskNotCancelableError",
        "error_subscribe_terminal": "UnsupportedOperationError",
        "error_push_get_unknown": "TaskNotFoundError",
    }
    assert result.webhook_deliveries == 4


@pytest.mark.a2a_capture("../data/sessions/demo-session-jsonrpc.http")
def test_the_journal_shows_what_the_client_sent_and_the_webhook_answered(
    a2a_replay: A2AEndpoint,
) -> None:
    with WebhookReceiver() as hook:
        asyncio.run(run_session(a2a_replay.url, binding="JSONRPC", webhook=hook))
        received = hook.deliveries
    requests = a2a_replay.requests
    assert requests and all(r.outcome == "served" for r in requests)
    # The client sent A2A-Version on every JSON-RPC call (an SDK client must, spec §3.6).
    rpc = [
        r
        for r in requests
        if r.classification.binding is not None and r.classification.binding.value == "JSONRPC"
    ]
    assert rpc and all(r.request.header("A2A-Version") == "1.0" for r in rpc)
    # It put the push config's credentials in the config it created...
    create = next(
        r for r in requests if r.classification.operation == "CreateTaskPushNotificationConfig"
    )
    assert b'"credentials"' in create.request.body
    # ...and every delivery made to its webhook was acknowledged with a 2xx.
    deliveries = a2a_replay.deliveries
    assert len(deliveries) == 4 == len(received)
    assert all(
        d.url is not None and d.status is not None and 200 <= d.status < 300 for d in deliveries
    )


CLIENT_TEST = """
import httpx, pytest

@pytest.mark.a2a_capture("captures/card.http")
def test_card(a2a_replay):
    card = httpx.get(a2a_replay.url + "/.well-known/agent-card.json", timeout=5).json()
    assert card["name"] == "a2a-recorder demo agent"
"""

MISS_TEST = """
import httpx, pytest

@pytest.mark.a2a_capture("captures/card.http")
def test_asks_for_something_unrecorded(a2a_replay):
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "never recorded"}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    httpx.post(a2a_replay.url + "/a2a/jsonrpc", json=body, timeout=5)
"""

UNREADABLE_TEST = """
import httpx, pytest

@pytest.mark.a2a_capture("captures/card.http")
def test_sends_what_no_agent_reads(a2a_replay):
    httpx.post(a2a_replay.url + "/a2a/jsonrpc", content=b"{not json", timeout=5)
"""


@pytest.fixture(autouse=True)
def inner_ini(request: pytest.FixtureRequest) -> None:
    """The inner runs get the project's own asyncio setting, so they warn about nothing."""
    if "pytester" in request.fixturenames:
        pester: pytest.Pytester = request.getfixturevalue("pytester")
        pester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")


def test_a_missing_capture_fails_with_how_to_record_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(CLIENT_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*captures/card.http is missing*--a2a-record=missing*"])


def test_record_missing_then_replay_offline(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(CLIENT_TEST)
    with DemoAgent(enable_grpc=False) as agent:
        recorded = pytester.runpytest(
            "-p", "no:cacheprovider", "--a2a-record=missing", f"--a2a-upstream={agent.base_url}"
        )
    recorded.assert_outcomes(passed=1)
    capture = pytester.path / "captures" / "card.http"
    assert "### 1 AgentCard HTTP 200" in capture.read_text()
    # The agent is gone now: the same test passes against the capture.
    replayed = pytester.runpytest("-p", "no:cacheprovider")
    replayed.assert_outcomes(passed=1)


def _demo_capture(pytester: pytest.Pytester) -> None:
    (pytester.path / "captures").mkdir()
    source = (DATA / "sessions" / "demo-session-jsonrpc.http").read_text()
    (pytester.path / "captures" / "card.http").write_text(source)


def test_an_unmatched_request_fails_the_test_once(pytester: pytest.Pytester) -> None:
    _demo_capture(pytester)
    pytester.makepyfile(MISS_TEST)
    # -rN: no short summary, which repeats a failure's message in full when CI=true is set
    result = pytester.runpytest("-p", "no:cacheprovider", "-rN")
    result.assert_outcomes(failed=1)  # one failure, no teardown error besides it
    result.stdout.fnmatch_lines(
        [
            "*requests the capture could not answer:*",
            '*SendMessage*nearest is #2 SendMessage*"echo hello" != live "never recorded"*',
        ]
    )
    assert result.stdout.str().count("requests the capture could not answer") == 1


MISS_FAILS_THE_BODY_TEST = (
    MISS_TEST
    + """
    answer = httpx.post(a2a_replay.url + "/a2a/jsonrpc", json=body, timeout=5).json()
    assert "result" in answer, "the client saw the replay's error"
"""
)


def test_a_miss_that_fails_the_body_is_said_with_that_failure(pytester: pytest.Pytester) -> None:
    """The client fails on the replay's error: one failure, which says what the miss was."""
    _demo_capture(pytester)
    pytester.makepyfile(MISS_FAILS_THE_BODY_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*the client saw the replay's error*",
            "*a2a-recorder*",
            "*requests the capture could not answer:*",
            "*SendMessage*nearest is #2 SendMessage*",
        ]
    )


def test_an_answer_the_replayer_wrote_itself_fails_the_test_naming_it(
    pytester: pytest.Pytester,
) -> None:
    # The capture holds no answer of the agent to a body that is not JSON: the replayer
    # answers as a2a-sdk would, and says that answer was not recorded (one failure).
    _demo_capture(pytester)
    pytester.makepyfile(UNREADABLE_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*answers the capture does not hold, written by the replayer:*",
            "*request 1, POST /a2a/jsonrpc: refused as an a2a-sdk agent refuses it*",
        ]
    )


# --- gRPC, isolation and safe re-recording (issue 11) -------------------------------------------

SDK_CLIENT = """
import asyncio, uuid
import grpc, httpx, pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest


async def send(url, binding, text):
    async with httpx.AsyncClient(timeout=10) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
    config = ClientConfig(streaming=False, supported_protocol_bindings=[binding],
                          grpc_channel_factory=grpc.aio.insecure_channel)
    client = ClientFactory(config).create(card)
    message = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)])
    try:
        events = [e async for e in client.send_message(SendMessageRequest(message=message))]
    finally:
        await client.close()
    return next(e.task for e in events if e.HasField("task"))
"""

GRPC_TEST = (
    SDK_CLIENT
    + """

@pytest.mark.a2a_capture("captures/grpc.http")
def test_over_grpc(a2a_replay):
    task = asyncio.run(send(a2a_replay.url, "GRPC", "echo hello"))
    assert [p.text for a in task.artifacts for p in a.parts] == ["echo hello"]
"""
)

JSONRPC_TEST = (
    SDK_CLIENT
    + """

@pytest.mark.a2a_capture("captures/grpc.http")
def test_over_jsonrpc(a2a_replay):
    task = asyncio.run(send(a2a_replay.url, "JSONRPC", "echo hello"))
    assert [p.text for a in task.artifacts for p in a.parts] == ["echo hello"]
"""
)

FAILING_GRPC_TEST = (
    GRPC_TEST
    + """
    raise AssertionError("the client saw something new")
"""
)

TWO_MESSAGES_TEST = (
    SDK_CLIENT
    + """

@pytest.mark.a2a_capture("captures/grpc.http")
def test_two_messages(a2a_replay):
    for text in ("echo hello", "echo again"):
        task = asyncio.run(send(a2a_replay.url, "JSONRPC", text))
        assert [p.text for a in task.artifacts for p in a.parts] == [text]
"""
)

NO_OUTPUT = ("-p", "no:cacheprovider")


def _client(pester: pytest.Pytester, source: str) -> None:
    """The one test file of the inner runs (each call replaces it)."""
    (pester.path / "test_client.py").write_text(source)


def _record(
    pester: pytest.Pytester, agent: DemoAgent, *extra: str, mode: str = "missing"
) -> pytest.RunResult:
    return pester.runpytest(
        *NO_OUTPUT, f"--a2a-record={mode}", f"--a2a-upstream={agent.base_url}", *extra
    )


def _tasks_on(agent: DemoAgent) -> int:
    """How many tasks the live agent holds, asked directly (not through any recorder)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}
    reply = httpx.post(agent.jsonrpc_url, json=body, headers={"A2A-Version": "1.0"}, timeout=5)
    return len(reply.json()["result"].get("tasks", []))


def _capture_of(pester: pytest.Pytester) -> Path:
    return pester.path / "captures" / "grpc.http"


def test_grpc_records_through_the_recorder_and_replays_offline(
    pytester: pytest.Pytester, make_demo_agent: Callable[..., DemoAgent]
) -> None:
    agent = make_demo_agent()
    _client(pytester, GRPC_TEST)
    recorded = _record(pytester, agent, f"--a2a-grpc-upstream={agent.grpc_target}")
    recorded.assert_outcomes(passed=1)
    text = _capture_of(pytester).read_text()
    assert "/lf.a2a.v1.A2AService/SendMessage" in text
    assert "SendMessage GRPC" in text
    agent.stop()
    pytester.runpytest(*NO_OUTPUT).assert_outcomes(passed=1)


def test_grpc_upstream_can_come_from_the_marker(
    pytester: pytest.Pytester, make_demo_agent: Callable[..., DemoAgent]
) -> None:
    agent = make_demo_agent()
    _client(
        pytester,
        GRPC_TEST.replace(
            '"captures/grpc.http"', f'"captures/grpc.http", grpc_upstream="{agent.grpc_target}"'
        ),
    )
    _record(pytester, agent).assert_outcomes(passed=1)
    assert "SendMessage GRPC" in _capture_of(pytester).read_text()


def test_recording_grpc_without_a_grpc_upstream_fails_and_writes_nothing(
    pytester: pytest.Pytester, make_demo_agent: Callable[..., DemoAgent]
) -> None:
    """Issue 11: this used to write a card-only capture and say nothing."""
    agent = make_demo_agent()
    before = _tasks_on(agent)
    _client(pytester, GRPC_TEST)
    result = _record(pytester, agent)
    result.assert_outcomes(failed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*this test called gRPC (/lf.a2a.v1.A2AService/SendMessage) while recording without "
            "a gRPC upstream*--a2a-grpc-upstream HOST:PORT*"
        ]
    )
    assert not _capture_of(pytester).exists()
    assert _tasks_on(agent) == before  # the call never reached the live agent
    assert not list((pytester.path / "captures").glob(".*recording"))


GRPC_JOURNAL_TEST = (
    GRPC_TEST
    + """
    calls = [r for r in a2a_replay.requests if r.request.target.startswith("/lf.a2a.v1.")]
    assert [r.classification.operation for r in calls] == ["SendMessage"]
    assert calls[0].outcome == "served"
    assert calls[0].request.header("a2a-version") == "1.0"  # gRPC metadata, as sent
"""
)


def test_replay_serves_grpc_while_the_live_agent_runs(
    pytester: pytest.Pytester, make_demo_agent: Callable[..., DemoAgent]
) -> None:
    """Issue 11: replay used to reach the live agent's gRPC port through the recorded card.

    The replayer's journal shows the call; the live agent's task store shows none.
    """
    agent = make_demo_agent()
    _client(pytester, GRPC_TEST)
    _record(pytester, agent, f"--a2a-grpc-upstream={agent.grpc_target}").assert_outcomes(passed=1)
    _client(pytester, GRPC_JOURNAL_TEST)
    before = _tasks_on(agent)
    pytester.runpytest(*NO_OUTPUT).assert_outcomes(passed=1)
    pytester.runpytest(*NO_OUTPUT).assert_outcomes(passed=1)
    assert _tasks_on(agent) == before


def test_a_binding_the_capture_never_recorded_is_a_miss_naming_it(
    pytester: pytest.Pytester, make_demo_agent: Callable[..., DemoAgent]
) -> None:
    """A JSON-RPC-only capture whose card lists gRPC: a gRPC client must not reach the agent."""
    agent = make_demo_agent()
    _client(pytester, JSONRPC_TEST)
    _record(pytester, agent).assert_outcomes(passed=1)
    assert "GRPC" not in [
        line.split()[3]
        for line in _capture_of(pytester).read_text().splitlines()
        if line.startswith("### ")
    ]
    _client(pytester, GRPC_TEST)
    before = _tasks_on(agent)
    result = pytester.runpytest(*NO_OUTPUT)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*requests the capture could not answer:*",
            "*/lf.a2a.v1.A2AService/SendMessage*GRPC*",
            "*the capture holds no GRPC exchange (it holds JSONRPC): this test called gRPC*",
        ]
    )
    assert _tasks_on(agent) == before


def test_the_modes_are_pytest_recordings_with_two_aliases() -> None:
    assert [m.value for m in RecordMode] == ["none", "once", "new_episodes", "all"]
    assert parse_mode("missing") is RecordMode.ONCE
    assert parse_mode("rewrite") is RecordMode.ALL
    with pytest.raises(ValueError):
        parse_mode("sometimes")


def test_a_failed_re_record_keeps_the_old_capture_byte_for_byte(
    pytester: pytest.Pytester, make_demo_agent: Callable[..., DemoAgent]
) -> None:
    mode = "rewrite"  # the same as "all" (test_the_modes_...)
    agent = make_demo_agent()
    _client(pytester, GRPC_TEST)
    grpc_upstream = f"--a2a-grpc-upstream={agent.grpc_target}"
    _record(pytester, agent, grpc_upstream).assert_outcomes(passed=1)
    good = _capture_of(pytester).read_bytes()
    # The test fails after a complete exchange: nothing replaces the good capture.
    _client(pytester, FAILING_GRPC_TEST)
    _record(pytester, agent, grpc_upstream, mode=mode).assert_outcomes(failed=1)
    assert _capture_of(pytester).read_bytes() == good
    # Issue 11: `all` without a gRPC upstream used to overwrite it with a card-only capture.
    _client(pytester, GRPC_TEST)
    _record(pytester, agent, mode=mode).assert_outcomes(failed=1, errors=1)
    assert _capture_of(pytester).read_bytes() == good
    # A passing re-record does replace it, with a fresh session.
    _record(pytester, agent, grpc_upstream, mode=mode).assert_outcomes(passed=1)
    fresh = _capture_of(pytester).read_bytes()
    assert fresh != good and b"SendMessage GRPC" in fresh
    assert not list((pytester.path / "captures").glob(".*recording"))


def test_a_capture_another_recorder_is_writing_fails_the_recording_test_untouched(
    pytester: pytest.Pytester, make_demo_agent: Callable[..., DemoAgent]
) -> None:
    agent = make_demo_agent()
    _client(pytester, JSONRPC_TEST)
    _record(pytester, agent).assert_outcomes(passed=1)
    good = _capture_of(pytester).read_bytes()
    command = [sys.executable, "-m", "recorder", "record", "--listen", "127.0.0.1:0"]
    other = subprocess.Popen(
        [*command, "--upstream", agent.base_url, "--out", str(_capture_of(pytester)), "--append"],
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
    )
    try:
        assert other.stderr is not None and "recording to" in other.stderr.readline()
        result = _record(pytester, agent, mode="all")
        result.assert_outcomes(errors=1)
        result.stdout.fnmatch_lines([f"*grpc.http is being written by process {other.pid} (*"])
        assert _capture_of(pytester).read_bytes() == good
    finally:
        other.terminate()
        assert other.wait(60) == 0
    assert _capture_of(pytester).read_bytes() == good


def test_once_replays_an_existing_capture_without_the_agent(
    pytester: pytest.Pytester, make_demo_agent: Callable[..., DemoAgent]
) -> None:
    agent = make_demo_agent()
    _client(pytester, JSONRPC_TEST)
    _record(pytester, agent, mode="once").assert_outcomes(passed=1)
    recorded = _capture_of(pytester).read_bytes()
    upstream = agent.base_url
    agent.stop()
    pytester.runpytest(
        *NO_OUTPUT,
        "--a2a-record=once",
        f"--a2a-upstream={upstream}",
    ).assert_outcomes(passed=1)
    assert _capture_of(pytester).read_bytes() == recorded


def test_new_episodes_appends_what_the_capture_could_not_answer(
    pytester: pytest.Pytester, make_demo_agent: Callable[..., DemoAgent]
) -> None:
    agent = make_demo_agent()
    _client(pytester, JSONRPC_TEST)
    _record(pytester, agent).assert_outcomes(passed=1)
    first = read_capture(_capture_of(pytester))
    _client(pytester, TWO_MESSAGES_TEST)
    pytester.runpytest(*NO_OUTPUT).assert_outcomes(failed=1)  # a miss, offline
    episode = _record(pytester, agent, mode="new_episodes")
    episode.assert_outcomes(passed=1)
    # What went to the live agent is said: a warning naming the exchange appended.
    episode.stdout.fnmatch_lines(
        ["*new_episodes sent 1 request(s) the capture could not answer to the live agent*"]
    )
    grown = read_capture(_capture_of(pytester))
    assert grown.exchanges[: len(first.exchanges)] == first.exchanges
    added = grown.exchanges[len(first.exchanges) :]
    assert [e.classification.operation for e in added] == ["SendMessage"]
    assert b"echo again" in added[0].request.body
    assert [e.number for e in grown.exchanges] == list(range(1, len(grown.exchanges) + 1))
    agent.stop()
    pytester.runpytest(*NO_OUTPUT).assert_outcomes(passed=1)


GET_THE_TASK_TEST = (
    SDK_CLIENT
    + """

@pytest.mark.a2a_capture("captures/grpc.http")
def test_send_then_get(a2a_replay):
    task = asyncio.run(send(a2a_replay.url, "JSONRPC", "echo hello"))
    params = {"id": task.id, "historyLength": 1}  # a read the capture never made
    body = {"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": params}
    answer = httpx.post(a2a_replay.url + "/a2a/jsonrpc", json=body,
                        headers={"A2A-Version": "1.0"}, timeout=5).json()
    assert "result" in answer, answer
"""
)


def test_new_episodes_says_what_it_could_not_send_to_the_live_agent(
    pytester: pytest.Pytester, make_demo_agent: Callable[..., DemoAgent]
) -> None:
    """A GetTask naming the task the replay handed out goes to a live agent that never saw it
    (restarted since the recording): its TaskNotFound is no answer to add, and the failure
    says so, once, instead of leaving the capture as it was without a word."""
    _client(pytester, JSONRPC_TEST)
    _record(pytester, make_demo_agent()).assert_outcomes(passed=1)
    first = _capture_of(pytester).read_bytes()
    _client(pytester, GET_THE_TASK_TEST)
    result = _record(pytester, make_demo_agent(), mode="new_episodes")  # a fresh agent
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*new_episodes could not add these requests the capture could not answer*",
            "*POST /a2a/jsonrpc: names body.id *, which this replay handed out; forwarded to "
            "the live agent, which does not know it: it answered TaskNotFoundError*",
        ]
    )
    assert _capture_of(pytester).read_bytes() == first  # nothing appended


@pytest.mark.parametrize("how", ["record", "verify"])
def test_recording_brings_no_dependency_warnings_into_the_users_run(
    how: str, demo_agent: DemoAgent, tmp_path: Path
) -> None:
    """mitmproxy's addons import ldap3, which warns about pyasn1's names: the plugin imports
    them quietly (issue 30: two DeprecationWarnings in the user's own summary).  A fresh
    interpreter, as a user's `pytest` is, with no filter of ours."""
    (tmp_path / "test_card.py").write_text(CLIENT_TEST, encoding="utf-8")
    if how == "verify":  # a capture to verify first, made by the plugin itself
        _run_pytest(tmp_path, "--a2a-record", "once", "--a2a-upstream", demo_agent.base_url)
        mode = ("--a2a-verify", demo_agent.base_url)
    else:
        mode = ("--a2a-record", "once", "--a2a-upstream", demo_agent.base_url)
    output = _run_pytest(tmp_path, *mode)
    assert "1 passed" in output and "ldap3" not in output, output
    assert "DeprecationWarning" not in output and "warnings summary" not in output, output


def _run_pytest(folder: Path, *args: str) -> str:
    quiet = ("-p", "no:cacheprovider", "-p", "no:asyncio")  # its own warning is not ours
    command = [sys.executable, "-m", "pytest", *quiet, "-W", "default", *args]
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=120)
    return done.stdout + done.stderr
