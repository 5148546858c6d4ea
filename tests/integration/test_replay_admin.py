"""The replayer's own HTTP surface (issue 20, finding 8): after an authenticated session with
push deliveries, `GET /__a2a_recorder/requests` and the report hold no credential; only `GET`
on the exact admin paths answers, anything else is an ordinary request."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx
import pytest

from recorder.capture import read_capture
from recorder.demo import WebhookReceiver, run_session
from recorder.replay import Replayer

SESSION = Path(__file__).parents[1] / "data" / "sessions" / "demo-session-jsonrpc.http"
CREDENTIALS = {
    "Authorization": "Bearer live-bearer-credential-1",
    "X-API-Key": "live-api-key-value-2",
    "Cookie": "session=live-cookie-value-3",
}
QUERY = "api_key=live-query-key-4&access_token=live-access-token-5"


def _client_secrets(replayer: Replayer) -> set[str]:
    """The push tokens and credentials the SDK client made up, as the journal received them."""
    found = set()
    for entry in replayer.journal.requests:
        body = json.loads(entry.request.body or b"{}")
        params = body.get("params", {}) if isinstance(body, dict) else {}
        for config in (params, params.get("pushNotificationConfig") or {}):
            if isinstance(config, dict) and config.get("url"):
                found.add(config.get("token") or "")
                found.add((config.get("authentication") or {}).get("credentials") or "")
    for delivery in replayer.journal.deliveries:
        found.update(v for k, v in delivery.headers if k.lower() == "x-a2a-notification-token")
    return found - {""}


def test_the_journal_and_report_served_hold_no_credential() -> None:
    capture = read_capture(SESSION)
    with WebhookReceiver() as hook, Replayer([capture]) as replayer:
        asyncio.run(run_session(replayer.url, binding="JSONRPC", webhook=hook))
        hook.wait_for(4, timeout=5)
        deadline = time.monotonic() + 5
        while len(replayer.journal.deliveries) < 4 and time.monotonic() < deadline:
            time.sleep(0.02)
        with httpx.Client(base_url=replayer.url, headers=CREDENTIALS, timeout=10) as client:
            assert client.get(f"/.well-known/agent-card.json?{QUERY}").status_code == 200
            assert client.get(f"/a2a/rest/tasks/nope?{QUERY}").status_code >= 400  # a miss
            journal = client.get("/__a2a_recorder/requests")
            report = client.get("/__a2a_recorder/report")
        secrets = {*_client_secrets(replayer), "live-cookie-value-3"}
        secrets |= {v.removeprefix("Bearer ") for v in CREDENTIALS.values()}
        secrets |= {"live-query-key-4", "live-access-token-5"}
    assert len(secrets) >= 8  # the client's own push secrets were found, and ours
    assert journal.status_code == report.status_code == 200
    assert journal.headers["content-type"] == "application/json"
    for secret in secrets:
        assert secret not in journal.text and secret not in report.text, secret
    served = journal.json()
    assert len(served["deliveries"]) == 4
    assert all("X-A2A-Notification-Token" in " ".join(d["notes"]) for d in served["deliveries"])
    card, miss = served["requests"][-2:]
    assert card["target"].startswith("/.well-known/agent-card.json?api_key=<redacted:")
    assert "Cookie" in card["notes"][0] and "query:api_key" in card["notes"][0]
    assert miss["outcome"] == "miss" and "access_token=<redacted:" in miss["target"]
    assert "live-" not in json.dumps(report.json())


@pytest.mark.parametrize(
    ("method", "target"),
    [
        ("POST", "/__a2a_recorder/requests"),
        ("DELETE", "/__a2a_recorder/requests"),
        ("HEAD", "/__a2a_recorder/report"),
        ("GET", "/__a2a_recorder/requests/1"),
        ("GET", "/__a2a_recorder/"),
        ("GET", "/__a2a_recorder"),
        ("GET", "/__a2a_recorderx/requests"),
    ],
)
def test_only_get_on_the_exact_admin_paths_answers(method: str, target: str) -> None:
    with Replayer([read_capture(SESSION)]) as replayer:
        answer = httpx.request(method, replayer.url + target, timeout=10)
        misses = replayer.report.misses
        entries = replayer.journal.requests
    assert answer.status_code == 404  # not A2A, and not in the capture: a miss
    assert b'"requests"' not in answer.content and b'"unserved"' not in answer.content
    assert len(misses) == 1 and misses[0].startswith(f"{method} {target}: ")
    assert [(e.request.method, e.request.target, e.outcome) for e in entries] == [
        (method, target, "miss")
    ]


def test_the_admin_paths_answer_get_with_a_query() -> None:
    with Replayer([read_capture(SESSION)]) as replayer:
        journal = httpx.get(replayer.url + "/__a2a_recorder/requests?x=1", timeout=10)
        report = httpx.get(replayer.url + "/__a2a_recorder/report", timeout=10)
    assert journal.json() == {"requests": [], "deliveries": []}
    assert report.json()["clean"] is False and report.json()["unmatched"] == []
