"""Cross-version replay (issue 24): a client of one A2A version against a replay of a capture
of the other sees what it sees against a live agent of its own version.

- The a2a-sdk 0.3.26 client against the a2a-sdk 1.3.0 corpus served as v0.3
  (`--serve-version 0.3`), and the a2a-sdk 1.3.0 client against the 0.3.26 corpus served as
  v1.0, on JSON-RPC, HTTP+JSON and gRPC (the default suite runs JSON-RPC both ways;
  A2A_FULL_MATRIX=1 all three).
- Each scenario runs twice with the same client: live against its own SDK's agent, and
  against the replay of the other version's capture of that scenario.  The two summaries
  must be equal, less the agent's wording of an error and what tells one agent from another
  on its card (name, addresses, the version it says); the card served must say the client's
  version.
- Where the recorded agent behaves otherwise than the client's own (not the translation: the
  other SDK's agent did so on the wire), `PARTINGS` says at which step and why; the steps
  before it must be equal and the step must still differ, so a parting that goes away fails.
- The replay misses nothing (but where a parting says the capture lacks the call), and what
  the client's version cannot carry is in the report's not-carried list.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _helpers import free_port, load_peers_run, timing_free, without_wording

from recorder.capture import Capture, read_capture
from recorder.protocol import AGENT_CARD, PUSH_DELIVERY, parse_json
from recorder.replay import Replayer

ROOT = Path(__file__).resolve().parents[2]
CLIENT_TIMEOUT = 60.0
PUSH_SCENARIO = "08-push-configs"
V03_CLIENT, V1_CLIENT = "a2a-python-0.3.x", "a2a-python-1.3.0"
# client -> (the other version's corpus, what the replay serves)
DIRECTIONS = {V03_CLIENT: ("a2a-python-1.3.0", "0.3"), V1_CLIENT: ("a2a-python-0.3.26", "1.0")}
FOLDERS = {"JSONRPC": "", "HTTP+JSON": "http-json", "GRPC": "grpc"}
FULL_MATRIX = os.environ.get("A2A_FULL_MATRIX") == "1"
DEFAULT_CASES = {(V03_CLIENT, "JSONRPC"), (V1_CLIENT, "JSONRPC")}

run = load_peers_run()
if not all(run.SDKS[sdk].built for sdk in DIRECTIONS):
    pytest.skip(
        "the a2a-sdk 0.3.26 and 1.3.0 peers are not built (scripts/peers/envs.py)",
        allow_module_level=True,
    )

_SUBSCRIBE = (
    "the recorded agent answers a resubscribe to the task it just canceled its own way: "
    "a2a-sdk 1.3.0's agent streams the task and its last status, 0.3.26's an empty stream"
)
_EXTENDED = (
    "a2a-sdk 0.3.26's agent answers gRPC GetAgentCard with its public card (its client says "
    "so); a2a-sdk 1.3.0's answers the extended card"
)
# (client, scenario, binding or None for all) -> (the step where the replay parts from the
# client's own agent, why: what the recorded agent did)
PARTINGS: dict[tuple[str, str, str | None], tuple[int, str]] = {
    (V03_CLIENT, "06-subscribe", None): (2, _SUBSCRIBE),
    (V1_CLIENT, "06-subscribe", None): (2, _SUBSCRIBE),
    (V03_CLIENT, "10-extended-card", "GRPC"): (0, _EXTENDED),
    (V1_CLIENT, "10-extended-card", "GRPC"): (0, _EXTENDED),
    (V1_CLIENT, PUSH_SCENARIO, None): (
        3,
        "the 0.3.26 corpus has no ListTaskPushNotificationConfigs (the a2a-sdk 0.3 peer "
        "lists none): the replay misses the 1.3.0 client's list, and says so",
    ),
}
# What one agent's card says of itself, not of the protocol.
_CARD_IDENTITY = ("name", "url", "interfaces", "protocol_version", "preferred_transport")


def _case(client: str, binding: str) -> Any:
    return pytest.param(client, binding, id=f"{client}-{binding}")


CASES = [
    _case(client, binding)
    for client in DIRECTIONS
    for binding in FOLDERS
    if FULL_MATRIX or (client, binding) in DEFAULT_CASES
]


def _capture(corpus: str, binding: str, scenario: str) -> Path | None:
    path = ROOT / "captures" / corpus / FOLDERS[binding] / f"{scenario}.http"
    return path if path.exists() else None


def _card(capture: Capture) -> tuple[str, Any]:
    """The recorded card fetch: its path, and the card."""
    for exchange in capture.exchanges:
        if exchange.classification.operation == AGENT_CARD and exchange.response is not None:
            return exchange.request.target, parse_json(exchange.response.body)
    raise AssertionError("the capture has no card fetch")


def _client(client: str, card_url: str, binding: str, scenario: str, hook: Any) -> Any:
    webhook = hook.url if scenario == PUSH_SCENARIO else None
    summary = run.run_client(client, card_url, binding, scenario, webhook, timeout=CLIENT_TIMEOUT)
    return without_wording(timing_free(summary))


def _live(client: str, binding: str, scenarios: list[str]) -> Iterator[tuple[str, Any]]:
    grpc = binding == "GRPC"
    with (
        run.start_agent(client, grpc_port=0 if grpc else -1) as agent,
        run.WebhookReceiver() as hook,
    ):
        for scenario in scenarios:
            yield scenario, _client(client, agent.card_url, binding, scenario, hook)


def _replayed(client: str, binding: str, scenario: str, path: Path) -> tuple[Any, Any, Any]:
    """The client against the replay: (summary, report, the recorded card)."""
    capture = read_capture(path)
    card_path, card = _card(capture)
    serve = DIRECTIONS[client][1]
    grpc_port = 0 if binding == "GRPC" else None
    with (
        run.WebhookReceiver() as hook,
        Replayer([capture], timing="none", grpc_port=grpc_port, serve_version=serve) as replayer,
    ):
        summary = _client(client, replayer.url + card_path, binding, scenario, hook)
        recorded = [e for e in capture.exchanges if e.classification.operation == PUSH_DELIVERY]
        summary["webhook"] = [run._body_kind(d["body"]) for d in hook.wait_for(len(recorded), 5)]
        return summary, replayer.report, card


def _deliveries(client: str, scenario: str, path: Path, replayed: Any) -> list[str]:
    """Every recorded push delivery reached the client's webhook, in the client's version (a
    client that stopped early, at a parting, may not have reached the send that makes them)."""
    kinds = replayed.pop("webhook")
    recorded = read_capture(path).exchanges
    count = sum(e.classification.operation == PUSH_DELIVERY for e in recorded)
    v03 = [str(k).startswith("v0.3 ") for k in kinds]
    counted = len(kinds) == count or (not replayed.get("ok") and len(kinds) <= count)
    ok = counted and (all(v03) if client == V03_CLIENT else not any(v03))
    return [] if ok else [f"{scenario}: {count} deliveries recorded, the webhook got {kinds}"]


def _card_step(client: str, replayed: Any, live: Any, card: Any) -> list[str]:
    """The card step less what names the agent; the replayed card the recorded agent's,
    in the client's version."""
    found, want = replayed["steps"][0], live["steps"][0]
    problems = [] if found.get("name") == card.get("name") else [f"card name {found}"]
    if client == V03_CLIENT and not str(found.get("protocol_version")).startswith("0.3"):
        problems.append(f"a v0.3 client was served {found.get('protocol_version')}")
    if client == V1_CLIENT and not all("@1.0 " in i for i in found.get("interfaces", [])):
        problems.append(f"a v1.0 client was served interfaces {found.get('interfaces')}")
    for step in (found, want):
        for key in _CARD_IDENTITY:
            step.pop(key, None)
    return problems


def _parting(client: str, scenario: str, binding: str) -> tuple[int, str] | None:
    return PARTINGS.get((client, scenario, binding)) or PARTINGS.get((client, scenario, None))


def _compare(client: str, binding: str, scenario: str, live: Any, replayed: Any) -> list[str]:
    parting = _parting(client, scenario, binding)
    if parting is None:
        return [] if replayed == live else [_shown(scenario, live, replayed)]
    step, why = parting
    same = replayed["steps"][:step] == live["steps"][:step]
    parts = replayed["steps"][step : step + 1] != live["steps"][step : step + 1]
    if same and parts:
        return []
    said = "the steps before it differ" if not same else "it no longer parts"
    return [f"{scenario}: parting at step {step} ({why}): {said}\n" + _shown("", live, replayed)]


def _shown(scenario: str, live: Any, replayed: Any) -> str:
    return f"{scenario}\n  live    ={json.dumps(live)}\n  replayed={json.dumps(replayed)}"


def _misses(client: str, binding: str, scenario: str, report: Any) -> list[str]:
    misses = [str(m) for m in report.misses]
    parting = _parting(client, scenario, binding)
    if parting is not None and scenario == PUSH_SCENARIO and client == V1_CLIENT:
        misses = [m for m in misses if "ListTaskPushNotificationConfigs" not in m]
    return [f"{scenario}: missed {m}" for m in misses]


@pytest.mark.parametrize(("client", "binding"), CASES)
def test_a_client_of_one_version_sees_a_replay_of_the_other_as_its_own_agent(
    client: str, binding: str
) -> None:
    corpus = DIRECTIONS[client][0]
    scenarios = [s for s in run.scenarios_between(client, client) if _capture(corpus, binding, s)]
    assert len(scenarios) >= 8, scenarios
    failures: list[str] = []
    not_carried: dict[str, list[str]] = {}
    for scenario, live in list(_live(client, binding, scenarios)):
        assert live.get("ok") and live["exit_code"] == 0, (scenario, live)
        path = _capture(corpus, binding, scenario)
        assert path is not None
        replayed, report, card = _replayed(client, binding, scenario, path)
        if scenario == "01-agent-card":
            failures += _card_step(client, replayed, live, card)
        failures += _deliveries(client, scenario, path, replayed)
        failures += _compare(client, binding, scenario, live, replayed)
        failures += _misses(client, binding, scenario, report)
        not_carried[scenario] = list(report.not_carried_values)
    print(json.dumps({"client": client, "binding": binding, "not_carried": not_carried}))
    assert not failures, "\n".join(failures)


V1_BINDINGS = [b for b in FOLDERS if FULL_MATRIX or (V1_CLIENT, b) in DEFAULT_CASES]


@pytest.mark.parametrize("binding", V1_BINDINGS)
def test_a_v1_tenant_a_v03_capture_cannot_carry_is_listed_not_dropped(binding: str) -> None:
    """The 1.3.0 client's tenant scenario (a blocking send under tenant `tenant-a`) against the
    0.3.26 blocking-task capture: it sees what its own agent shows it, and the report lists
    the tenant v0.3 has no place for."""
    (_, live), *_ = _live(V1_CLIENT, binding, ["12-tenant"])
    path = _capture(DIRECTIONS[V1_CLIENT][0], binding, "03-blocking-task")
    assert path is not None
    replayed, report, _ = _replayed(V1_CLIENT, binding, "12-tenant", path)
    assert replayed.pop("webhook") == []
    assert live["ok"] and replayed == live
    assert list(report.misses) == []
    assert len(report.not_carried_values) == 1
    assert report.not_carried_values[0].startswith("a v1.0 request: $.")
    assert 'tenant = "tenant-a": v0.3 has no such member' in report.not_carried_values[0]


def _blocking(client: str, base: str) -> Any:
    summary = run.run_client(
        client, base + "/.well-known/agent-card.json", "JSONRPC", "03-blocking-task", timeout=60
    )
    return without_wording(timing_free(summary))


@pytest.mark.parametrize("corpus", [DIRECTIONS[V03_CLIENT][0], DIRECTIONS[V1_CLIENT][0]])
def test_both_answers_each_client_in_its_own_version_from_one_replay(corpus: str) -> None:
    """`--serve-version both`: one replay, a dual card, the 0.3.26 client, the 1.3.0 client and
    the 0.3.26 client again, each served the blocking task in the version it speaks."""
    capture = read_capture(ROOT / "captures" / corpus / "03-blocking-task.http")
    with Replayer([capture], timing="none", serve_version="both") as replayer:
        seen = [_blocking(c, replayer.url) for c in (V03_CLIENT, V1_CLIENT, V03_CLIENT)]
        report = replayer.report
    for summary, call in zip(seen, ("message/send", "SendMessage", "message/send"), strict=True):
        assert summary["ok"] and summary["exit_code"] == 0, summary
        assert summary["steps"] == [
            {
                "call": call,
                "events": ["task:completed"],
                "state": "completed",
                "texts": ["echo hello"],
            }
        ]
    assert list(report.misses) == [] and list(report.not_carried_values) == []


def test_a_replay_serving_v1_only_is_refused_by_a_v03_client_as_a_v1_agent_is() -> None:
    """`--serve-version 1.0` on a capture whose agent also spoke v0.3 (a2a-sdk 1.3.0's card
    lists both): the card served lists v1.0 interfaces only, which a2a-sdk 0.3.26 cannot read
    (agno#10387: a v0.3 client against a v1.0-only agent); the 1.3.0 client is served."""
    capture = read_capture(ROOT / "captures" / DIRECTIONS[V03_CLIENT][0] / "03-blocking-task.http")
    with Replayer([capture], timing="none", serve_version="1.0") as replayer:
        old, new = (_blocking(c, replayer.url) for c in (V03_CLIENT, V1_CLIENT))
        # a raw v0.3 request past the card: refused with v1.0's "method not found", saying why
        sent = {"jsonrpc": "2.0", "id": 7, "method": "message/send", "params": {"message": {
            "kind": "message", "messageId": "m-1", "role": "user",
            "parts": [{"kind": "text", "text": "echo hello"}]}}}  # fmt: skip
        answer = httpx.post(replayer.url + "/a2a/jsonrpc", json=sent, timeout=10).json()
    assert not old["ok"] and "agent card" in old["failure"] and '"url"' in old["failure"]
    assert new["ok"], new
    assert answer["id"] == 7 and answer["error"]["code"] == -32601
    assert "a v0.3 request; this replay serves v1.0" in answer["error"]["message"]


def test_the_command_serves_another_version_and_lists_what_it_could_not_carry() -> None:
    """`a2a-recorder replay --serve-version 0.3` on the 1.3.0 HTTP+JSON errors capture: the
    0.3.26 client gets its two errors, and the report on exit lists the v1.0 error members a
    v0.3 error body has no place for."""
    capture = ROOT / "captures" / V1_CLIENT / "http-json" / "11-errors.http"
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "recorder", "replay", str(capture), "--listen",
         f"127.0.0.1:{port}", "--serve-version", "0.3"],
        text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert process.stderr is not None and process.stderr.readline()
        base = f"http://127.0.0.1:{port}"
        summary = run.run_client(
            V03_CLIENT, base + "/.well-known/agent-card.json", "HTTP+JSON", "11-errors"
        )
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
    assert summary["ok"] and len(summary["errors"]) == 2, summary
    carried = [line for line in err.splitlines() if line.startswith("not carried: #")]
    assert any("GetTask to a v0.3 client: body.error.status" in n for n in carried), carried
    assert any("CancelTask to a v0.3 client: body.error.details" in n for n in carried), carried
