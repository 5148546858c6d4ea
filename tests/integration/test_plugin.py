"""The pytest plugin: replay a checked-in capture, record a missing one, fail on a miss."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from recorder.demo import DemoAgent, WebhookReceiver, run_session
from recorder.pytest_plugin import A2AEndpoint

pytest_plugins = ["pytester"]

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
        recorded = pytester.runpytest("-p", "no:cacheprovider", "--a2a-record=missing",
                                      f"--a2a-upstream={agent.base_url}")
    recorded.assert_outcomes(passed=1)
    capture = pytester.path / "captures" / "card.http"
    assert "### 1 AgentCard HTTP 200" in capture.read_text()
    # The agent is gone now: the same test passes against the capture.
    replayed = pytester.runpytest("-p", "no:cacheprovider")
    replayed.assert_outcomes(passed=1)


def test_an_unmatched_request_fails_the_test(pytester: pytest.Pytester) -> None:
    (pytester.path / "captures").mkdir()
    source = (DATA / "sessions" / "demo-session-jsonrpc.http").read_text()
    (pytester.path / "captures" / "card.http").write_text(source)
    pytester.makepyfile(MISS_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([
        "*requests the capture could not answer:*",
        "*SendMessage*nearest is #2 SendMessage*\"echo hello\" != live \"never recorded\"*",
    ])
