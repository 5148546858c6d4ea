"""Real SDK peers: each SDK's client against its own agent, and across SDKs through the recorder.

The peers run in the isolated environments that ``scripts/peers/envs.py`` builds under
``.peers/``. Every SDK whose environment is missing is skipped with the reason. When built, each
SDK's agent is started once and its own client runs ``03-blocking-task`` and ``05-streaming`` on
every binding the SDK supports. Across SDKs, a client runs each scenario against another SDK's
agent direct and through a RecordingProxy, and must see the same both ways.
"""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _helpers import load_peers_run, normalise

from recorder.capture import read_capture
from recorder.record import RecordingProxy

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


# The config's secrets a delivery may carry: the token (in one of these headers, names in lower
# case) or the authentication credentials (@a2a-js/sdk 1.3.0 sends only those).
_TOKEN_HEADERS = ("x-a2a-notification-token", "a2a-notification-token")
_SECRETS = {"peer-token-1", "Bearer peer-credentials-1"}


def _secrets(delivery: dict[str, Any]) -> set[str]:
    headers = {k.lower(): v for k, v in delivery["headers"].items()}
    return {headers[h] for h in (*_TOKEN_HEADERS, "authorization") if h in headers}


def test_push_reaches_a_webhook_on_loopback(peer_agent: Any) -> None:
    """Every SDK's push sender, as its peer configures it, delivers to 127.0.0.1, where the
    recorder's relay listens.  Java's check is the next test: with 08-push-configs its agent
    races (java_peer/README.md) and may send nothing."""
    if peer_agent.sdk == JAVA:
        pytest.skip("a2a-java: see test_java_push_sender_reaches_loopback")
    with run.WebhookReceiver() as hook:
        summary = run.run_client(
            peer_agent.sdk, peer_agent.card_url, "JSONRPC", "08-push-configs", hook.url, timeout=60
        )
        got = hook.wait_for(1, timeout=10)
    assert summary["exit_code"] == 0, summary
    assert got, f"{peer_agent.sdk}: no push delivery reached {hook.url}"
    assert all(_secrets(d) & _SECRETS for d in got), got


def _rpc(url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": method, "method": method, "params": params}
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        answer: dict[str, Any] = json.loads(resp.read())
    assert "result" in answer, answer
    return answer


def test_java_push_sender_reaches_loopback() -> None:
    """a2a-java 1.0.0.Alpha3 posts to a webhook on 127.0.0.1 without any switch: its sender has
    no private-network guard (GHSA-q78c-5jjq-57g8's came in a later release).  A raw JSON-RPC
    client sets the config on a running task, so the deliveries do not depend on the race of a
    config sent with SendMessage (stored only after the blocking call consumed the events)."""
    if not run.SDKS[JAVA].built:
        pytest.skip(f"{JAVA}: {run.SDKS[JAVA].env.path} not built (run scripts/peers/envs.py)")
    with (
        run.start_agent(JAVA, grpc_port=-1, delay=0.3, timeout=60) as agent,
        run.WebhookReceiver() as hook,
    ):
        message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "slow 3"}]}
        sent = _rpc(agent.jsonrpc_url, "SendMessage", {"message": message})
        task_id = sent["result"]["task"]["id"]
        config = {"url": hook.url, "token": "peer-token-1"}
        params = {"taskId": task_id, "configId": "cfg-1", "config": config}
        _rpc(agent.jsonrpc_url, "CreateTaskPushNotificationConfig", params)
        got = hook.wait_for(4, timeout=5)
    assert got, f"no delivery reached {hook.url}"
    assert {d["headers"].get("X-A2A-Notification-Token") for d in got} == {"peer-token-1"}, got
    assert [run._body_kind(d["body"]) for d in got].count("artifactUpdate") >= 1, got


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


# --- across SDKs: each client against each agent, through the recorder and direct ------------
#
# What a client sees through the recorder must be what it sees direct, scenario by scenario,
# whether the two SDKs get along or not (a scenario that fails direct must fail the same way
# recorded).  Where they do not get along it is the SDKs' doing; java_peer/README.md says why.

FULL_MATRIX = os.environ.get("A2A_FULL_MATRIX") == "1"
JAVA = "a2a-java-1.0.x"
_JAVA_OTHERS = ("a2a-python-1.3.0", "a2a-python-1.2.x", "a2a-python-0.3.x", "a2a-js-1.3.x")
# Java with itself and with every other SDK, both ways, on every binding both support.
JAVA_PAIRS = [(JAVA, JAVA), *((JAVA, o) for o in _JAVA_OTHERS), *((o, JAVA) for o in _JAVA_OTHERS)]
# The default run keeps three Java cases (a JVM start costs 2-3 s a client run here): its own
# agent streaming, a Python client streaming from it over REST, and it refusing a JS card.
JAVA_DEFAULT = {
    (JAVA, JAVA, "JSONRPC"): ("05-streaming",),
    ("a2a-python-1.3.0", JAVA, "HTTP+JSON"): ("05-streaming",),
    (JAVA, "a2a-js-1.3.x", "JSONRPC"): ("03-blocking-task",),
}
_PUSH = "08-push-configs"


def _cross_cases() -> list[Any]:
    cases = []
    for client, agent in JAVA_PAIRS:
        for binding in run.BINDINGS:
            if binding not in run.SDKS[client].bindings or binding not in run.SDKS[agent].bindings:
                continue
            default = JAVA_DEFAULT.get((client, agent, binding))
            if FULL_MATRIX or default:
                scenarios = run.SDKS[client].scenarios if FULL_MATRIX else default
                cases.append(
                    pytest.param(
                        client, agent, binding, scenarios, id=f"{client}>{agent}-{binding}"
                    )
                )
    return cases


def _compared(summary: dict[str, Any]) -> Any:
    """What the client saw: the summary without how the process ended, ids numbered."""
    return normalise({k: v for k, v in summary.items() if k not in ("exit_code",)})


@pytest.mark.parametrize(("client", "agent_sdk", "binding", "scenarios"), _cross_cases())
def test_through_the_recorder_the_client_sees_what_it_sees_direct(
    client: str, agent_sdk: str, binding: str, scenarios: tuple[str, ...], tmp_path: Path
) -> None:
    for sdk in (client, agent_sdk):
        if not run.SDKS[sdk].built:
            pytest.skip(f"{sdk}: {run.SDKS[sdk].env.path} not built (run scripts/peers/envs.py)")
    grpc = binding == "GRPC"
    differ: list[str] = []
    with (
        run.start_agent(agent_sdk, grpc_port=0 if grpc else -1, timeout=60) as agent,
        run.WebhookReceiver() as hook,
    ):
        card_path = agent.card_url[len(agent.base_url) :]
        for scenario in scenarios:
            webhook = hook.url if scenario == _PUSH else None
            direct = run.run_client(client, agent.card_url, binding, scenario, webhook, timeout=60)
            out = tmp_path / f"{scenario}.http"
            with RecordingProxy(
                upstream=agent.base_url, out=out, grpc_upstream=agent.grpc_target if grpc else None
            ) as proxy:
                recorded = run.run_client(
                    client, proxy.url + card_path, binding, scenario, webhook, timeout=60
                )
            if _compared(direct) != _compared(recorded):
                differ.append(
                    f"{scenario}:\n  direct  ={json.dumps(_compared(direct))}\n"
                    f"  recorded={json.dumps(_compared(recorded))}"
                )
            elif not read_capture(out).exchanges:
                differ.append(f"{scenario}: nothing recorded")
    assert not differ, "\n".join(differ)
