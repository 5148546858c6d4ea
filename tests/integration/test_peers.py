"""Real SDK peers talking to themselves: each SDK's client against its own agent.

The peers run in the isolated environments that ``scripts/peers/envs.py`` builds under
``.peers/``. CI does not build them (the capture corpus is checked in), so every SDK whose
environment is missing is skipped with the reason. When built, each SDK's agent is started
once and its own client runs ``03-blocking-task`` and ``05-streaming`` on every binding the
SDK supports.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _helpers import load_peers_run

run = load_peers_run()


@pytest.fixture(scope="module", params=sorted(run.SDKS))
def peer_agent(request: pytest.FixtureRequest) -> Iterator[Any]:
    sdk: str = request.param
    info = run.SDKS[sdk]
    if not info.built:
        pytest.skip(f"{sdk}: {info.env.path} not built (run scripts/peers/envs.py)")
    agent = run.start_agent(sdk, timeout=60)
    try:
        yield agent
    finally:
        agent.stop()


def _client(agent: Any, binding: str, scenario: str) -> dict[str, Any]:
    if binding not in run.SDKS[agent.sdk].bindings:
        pytest.skip(f"{agent.sdk} has no {binding} binding")
    summary: dict[str, Any] = run.run_client(
        agent.sdk, agent.card_url, binding, scenario, timeout=60
    )
    return summary


@pytest.mark.parametrize("binding", run.BINDINGS)
def test_blocking_task_completes_with_echo(peer_agent: Any, binding: str) -> None:
    summary = _client(peer_agent, binding, "03-blocking-task")
    assert summary["exit_code"] == 0, summary
    assert summary["ok"] is True
    assert summary["binding"] == binding
    assert summary["sdk_version"] == run.SDKS[peer_agent.sdk].version
    assert summary["states"][-1] == "completed"
    assert "echo hello" in summary["texts"]


@pytest.mark.parametrize("binding", run.BINDINGS)
def test_streaming_reports_every_event(peer_agent: Any, binding: str) -> None:
    summary = _client(peer_agent, binding, "05-streaming")
    assert summary["exit_code"] == 0, summary
    events = summary["steps"][-1]["events"]
    assert events[0].startswith("task:")
    assert events[-1] == "status:completed"
    assert [e for e in events if e.startswith("artifact:")] == [
        "artifact:chunk 1",
        "artifact:chunk 2",
        "artifact:chunk 3",
    ]


def test_unknown_sdk_is_a_clear_error() -> None:
    with pytest.raises(run.PeerError, match="unknown SDK"):
        run.start_agent("no-such-sdk")


def test_webhook_receiver_records_posts() -> None:
    import json
    import urllib.request

    with run.WebhookReceiver() as hook:
        req = urllib.request.Request(
            hook.url,
            data=json.dumps({"task": {"id": "t"}}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert resp.status == 200
        got = hook.wait_for(1, timeout=5)
    assert got[0]["body"] == {"task": {"id": "t"}}
    assert got[0]["path"] == "/webhook"
