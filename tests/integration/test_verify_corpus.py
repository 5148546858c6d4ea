"""`verify` against agents unlike ours: the checked-in corpus, sent to live SDK peer agents.

Each corpus capture (`captures/`) was recorded from one SDK's client and agent.  Verifying it
against another SDK's live agent must report exactly what `diff` between the two SDKs'
corpus captures of that scenario reports, less what verify cannot know: it sends the recorded
client's requests, not the other SDK client's, so

- differences in the requests themselves (`request.*`, and the exchange's protocol `version`,
  read from the request's A2A-Version header) are not there to see;
- neither is the agent echoing what the other client put in its message: a task's `history`
  holds the client's own message, so a part field the other client sets (@a2a-js/sdk sets
  `mediaType`) comes back in every history that holds it.

And one thing only a live agent can show: what the other agent answers to *this* client's
requests where its answer depends on them (`LIVE_ONLY`, each checked against the agent here).

Outcomes (stated in README "Verify"): a2a-python 1.3.0's corpus against a live a2a-sdk 1.2.3
agent drifts only in the agent's name, as the corpus diff says; against @a2a-js/sdk 1.3.0 it
drifts in exactly the corpus diff's agent-side differences plus the card's
`capabilities.extendedAgentCard`; the 0.3.26 corpus against a 0.3.26 agent is clean.

One agent per test, every capture of the folder through it in turn (each verify has its own
recorder; task stores grow, which the scenarios do not mind).  By default the 1.2.3 agent
gets the JSON-RPC captures only (its other bindings speak the same code as 1.3.0's);
`A2A_FULL_MATRIX=1` sends it all.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx
import pytest
from _helpers import load_peers_run

from recorder import Exit
from recorder.capture import read_capture
from recorder.diff import CaptureDiff, diff_captures
from recorder.protocol import PUSH_DELIVERY
from recorder.verify import verify_capture

run = load_peers_run()
CORPUS = Path(__file__).resolve().parents[2] / "captures"
FULL_MATRIX = os.environ.get("A2A_FULL_MATRIX") == "1"
AGENT_TIMEOUT = 60.0

Key = tuple[str, str, str, str, str]  # operation, kind, path, old, new

# What @a2a-js/sdk 1.3.0 answers differently to the py client's requests than to its own:
# its card for a request without A2A-Version (the py client sends none; the JS client sends
# 1.0) is the v0.3-compatible one, and that has no capabilities.extendedAgentCard.
LIVE_ONLY: dict[str, set[tuple[str, str, str]]] = {
    "a2a-js-1.3.x": {("AgentCard", "removed", "body.capabilities.extendedAgentCard")},
}


def _agent(sdk: str) -> Any:
    info = run.SDKS[sdk]
    if not info.built:
        pytest.skip(f"{sdk}: {info.env.path} not built (run scripts/peers/envs.py)")
    return run.start_agent(sdk, timeout=AGENT_TIMEOUT)


def _captures(folder: str, top_level_only: bool = False) -> list[Path]:
    found = sorted((CORPUS / folder).rglob("*.http"))
    assert found, f"no corpus captures in {CORPUS / folder}"
    return [p for p in found if p.parent == CORPUS / folder] if top_level_only else found


def _keys(diff: CaptureDiff) -> list[Key]:
    return sorted(
        (p.operation, d.kind.value, d.path, str(d.old), str(d.new))
        for p in diff.exchanges
        for d in p.differences
        if d.counts
    )


def _client_side(operation: str, path: str) -> bool:
    """A difference in what the client sent (a push delivery's request is the agent's)."""
    if operation == PUSH_DELIVERY:
        return path.startswith(("status", "header:", "body"))
    return path.startswith("request.") or path == "version"


def _history_tail(path: str) -> str | None:
    """`parts[0].mediaType` for `...history[0].parts[0].mediaType`; None outside a history."""
    _, found, rest = path.rpartition("history[")
    return (rest.partition("].")[2] or None) if found else None


def agent_side(keys: Iterable[Key]) -> list[Key]:
    """The corpus diff's differences a verify can see: not the client's own, nor the agent
    echoing a message field the client sent (same tail as a sent `message.` difference)."""
    keys = list(keys)
    sent = [path for op, _, path, _, _ in keys if _client_side(op, path)]
    echoed = {tail for tail in map(_history_tail, (k[2] for k in keys)) if tail} & {
        path.rpartition("message.")[2] for path in sent if "message." in path
    }
    return [k for k in keys if not _client_side(k[0], k[2]) and _history_tail(k[2]) not in echoed]


def test_agent_side_keeps_what_the_agent_said_and_drops_what_the_client_sent() -> None:
    keys: list[Key] = [
        ("SendMessage", "added", "request.body.params.message.parts[0].mediaType", "-", "t"),
        ("SendMessage", "added", "body.result.task.history[0].parts[0].mediaType", "-", "t"),
        ("GetTask", "added", "body.result.history[0].parts[0].metadata", "-", "m"),
        ("PushDelivery", "added", "request.body.task.history[0].parts[0].mediaType", "-", "t"),
        ("PushDelivery", "changed", "request.header:content-type", "a", "b"),
        ("PushDelivery", "changed", "status", "200", "204"),
        ("AgentCard", "changed", "version", "None", "1.0"),
        ("AgentCard", "changed", "body.name", "a", "b"),
    ]
    assert agent_side(keys) == [
        ("GetTask", "added", "body.result.history[0].parts[0].metadata", "-", "m"),
        ("PushDelivery", "changed", "request.header:content-type", "a", "b"),
        ("AgentCard", "changed", "body.name", "a", "b"),
    ]


def _verify_folder(agent: Any, mine: str, other: str, captures: list[Path]) -> list[str]:
    """Verify each of `mine`'s captures against `agent`, the SDK of corpus folder `other`;
    what differs from the expectation, per capture."""
    allowed = LIVE_ONLY.get(agent.sdk, set())
    failures = []
    for path in captures:
        result = verify_capture(read_capture(path), agent.base_url, name=str(path))
        counterpart = CORPUS / other / path.relative_to(CORPUS / mine)
        corpus = diff_captures(read_capture(path), read_capture(counterpart), collapse_polls=True)
        want = Counter(agent_side(_keys(corpus)))
        got = Counter(k for k in _keys(result.diff) if k[:3] not in allowed)
        live_only = {k[:3] for k in _keys(result.diff)} & allowed
        extra, missing = sorted(got - want), sorted(want - got)
        status = Exit.FOUND if want or live_only else Exit.OK
        # Every corpus capture starts with a card fetch, so the live-only card difference too.
        if extra or missing or live_only != allowed or result.not_sent or (result.status != status):
            failures.append(
                f"{path.relative_to(CORPUS)}: status {result.status} (want "
                f"{status}), not sent {result.not_sent}\n  only in verify: "
                f"{extra}\n  only in the corpus diff: {missing}\n  live only: "
                f"{live_only} (want {allowed})"
            )
    return failures


def test_the_1_3_0_corpus_against_a_live_1_2_3_agent_drifts_as_the_corpus_diff_says() -> None:
    captures = _captures("a2a-python-1.3.0", top_level_only=not FULL_MATRIX)
    with _agent("a2a-python-1.2.x") as agent:
        failures = _verify_folder(agent, "a2a-python-1.3.0", "a2a-python-1.2.3", captures)
    assert not failures, "\n".join(failures)


def test_the_1_3_0_corpus_against_a_live_js_agent_drifts_as_the_corpus_diff_says() -> None:
    captures = _captures("a2a-python-1.3.0")
    with _agent("a2a-js-1.3.x") as agent:
        # LIVE_ONLY's ground: the card depends on A2A-Version, as the agent says (Vary).
        bare = httpx.get(agent.card_url, timeout=10)
        versioned = httpx.get(agent.card_url, headers={"A2A-Version": "1.0"}, timeout=10)
        assert "a2a-version" in bare.headers["vary"].lower()
        assert "extendedAgentCard" not in bare.json()["capabilities"]
        assert versioned.json()["capabilities"]["extendedAgentCard"] is True
        failures = _verify_folder(agent, "a2a-python-1.3.0", "a2a-js-1.3.0", captures)
    assert not failures, "\n".join(failures)


def test_the_0_3_26_corpus_verifies_clean_against_a_live_0_3_26_agent() -> None:
    captures = _captures("a2a-python-0.3.26")
    with _agent("a2a-python-0.3.x") as agent:
        results = {
            p.relative_to(CORPUS): verify_capture(read_capture(p), agent.base_url, name=str(p))
            for p in captures
        }
    drifted = {
        str(name): result.diff.summary()
        for name, result in results.items()
        if result.status != Exit.OK or result.not_sent
    }
    assert not drifted
    assert len(results) == 28  # ten scenarios over JSON-RPC and HTTP+JSON, nine over gRPC
