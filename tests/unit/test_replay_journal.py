"""The replayer's journal and report (issue 20, findings 8 and 9): what they serve holds no
credential, and the journal is bounded by bytes, keeping heads and truncating bodies."""

from __future__ import annotations

import gc
import json
import tracemalloc

from _agent_model import Client, Recording

from recorder.capture import Capture, Request
from recorder.protocol import Classification
from recorder.redaction import Rules
from recorder.replay import Client as Conn
from recorder.replay import Journal, JournalRequest, Miss, ReplayService
from recorder.replay.core._journal import KEPT_BODY, replay_rules

SECRETS = (
    "Bearer-credential-0001",
    "api-key-value-0002",
    "cookie-value-0003",
    "query-key-0004",
    "push-token-0005",
    "seal-value-0006",
)
HEADERS = (
    ("Authorization", f"Bearer {SECRETS[0]}"),
    ("X-API-Key", SECRETS[1]),
    ("Cookie", f"sid={SECRETS[2]}"),
    ("X-Tenant-Seal", SECRETS[5]),  # a name only the capture's header says is a secret
    ("A2A-Version", "1.0"),
)


def _entry(journal: Journal, request: Request, detail: str | None = None) -> JournalRequest:
    return JournalRequest(
        journal.next_number(),
        0.0,
        "127.0.0.1:1",
        request,
        Classification(),
        "miss",
        None,
        None,
        detail,
    )


def _authenticated(journal: Journal) -> None:
    body = {
        "params": {
            "url": "http://127.0.0.1:9/hook",
            "token": SECRETS[4],
            "note": f"pasted {SECRETS[1]} and {SECRETS[3]}",
        }
    }
    target = f"/a2a/jsonrpc?api_key={SECRETS[3]}&access_token=tok-{SECRETS[0]}&page=2"
    request = Request("POST", target, HEADERS, json.dumps(body).encode())
    journal.add_request(_entry(journal, request, f"nearest differs: live {SECRETS[1]!r}"))
    journal.add_delivery(
        request=1,
        exchange=7,
        url=f"http://127.0.0.1:9/hook?token={SECRETS[4]}",
        headers=(("X-A2A-Notification-Token", SECRETS[4]), ("Content-Type", "application/json")),
        body=json.dumps({"statusUpdate": {"note": SECRETS[4]}}).encode(),
        status=200,
        response=json.dumps({"echo": SECRETS[0]}).encode(),
    )


def test_the_served_journal_holds_no_credential() -> None:
    """Finding 8: `GET /__a2a_recorder/requests` returned live credentials."""
    capture = Capture("2026-01-01T00:00:00.000000Z", "0", redacted=("X-Tenant-Seal",))
    journal = Journal(rules=replay_rules([capture]))
    _authenticated(journal)
    served = b"".join(journal.json_chunks()).decode()
    for secret in SECRETS:
        assert secret not in served
    document = json.loads(served)
    (request,) = document["requests"]
    assert request["target"] == (
        "/a2a/jsonrpc?api_key=<redacted:5>&access_token=<redacted:6>&page=2"
    )
    assert dict(request["headers"])["Authorization"] == "Bearer <redacted:1>"
    assert dict(request["headers"])["A2A-Version"] == "1.0"
    assert request["notes"] == [
        "redacted: Authorization, Cookie, X-API-Key, X-Tenant-Seal, query:access_token, "
        "query:api_key, token"
    ]
    (delivery,) = document["deliveries"]
    assert dict(delivery["headers"])["X-A2A-Notification-Token"] == "<redacted:7>"
    assert document == journal.as_json()
    # In-process readers (the test that runs the replayer) see what the client sent.
    assert journal.requests[0].request.header("authorization") == f"Bearer {SECRETS[0]}"


def test_keep_secrets_serves_the_journal_as_received() -> None:
    journal = Journal(rules=Rules(keep_secrets=True))
    _authenticated(journal)
    served = b"".join(journal.json_chunks()).decode()
    assert all(secret in served for secret in SECRETS)


def test_report_lines_are_redacted() -> None:
    """Finding 8: the report listed targets like `...?api_key=...&access_token=...`."""
    recording = Recording()
    recording.run(Client("recorder"), [("send", "echo a")])
    service = ReplayService([recording.capture()])
    probe = Request(
        "GET",
        f"/v1/tasks/nope?api_key={SECRETS[3]}&access_token={SECRETS[0]}",
        (("Authorization", f"Bearer {SECRETS[1]}"), ("A2A-Version", "1.0")),
    )
    assert isinstance(service.handle(probe, Conn("c")), Miss)
    (line,) = service.report.misses
    assert line.startswith("GET /v1/tasks/nope?api_key=<redacted:")
    assert not any(secret in line for secret in SECRETS)
    assert not any(secret in json.dumps(service.report.as_json()) for secret in SECRETS)


def _megabyte_request(journal: Journal, n: int) -> JournalRequest:
    body = bytes([n % 256]) * (1 << 20)  # a fresh 1 MiB every time
    return _entry(journal, Request("POST", f"/a2a/rest/message:send?n={n}", HEADERS, body))


def test_the_journal_is_bounded_by_bytes_keeping_heads() -> None:
    """Finding 9: 500 requests of 1 MiB raised RSS by 499 MiB (the bound was a count)."""
    bound = 64 << 20
    gc.collect()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        journal = Journal(max_bytes=bound)
        for n in range(500):
            journal.add_request(_megabyte_request(journal, n))
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held - before <= bound + (50 << 20), f"{(held - before) >> 20} MiB"
    assert journal.size <= bound
    entries = journal.requests
    assert [e.number for e in entries] == list(range(1, 501))  # every head is kept
    oldest, newest = entries[0], entries[-1]
    assert len(oldest.request.body) == KEPT_BODY
    assert oldest.notes == (
        f"body truncated: {KEPT_BODY:,} of 1,048,576 bytes kept "
        f"(the journal keeps {bound:,} bytes)",
    )
    assert len(newest.request.body) == 1 << 20 and newest.notes == ()
    served = json.loads(b"".join(journal.json_chunks()))["requests"][0]
    assert served["notes"][0] == oldest.notes[0]


def test_heads_beyond_the_bound_drop_the_oldest_entries() -> None:
    journal = Journal(max_bytes=4096)
    for n in range(50):
        journal.add_request(_entry(journal, Request("GET", "/" + "x" * 200 + str(n), HEADERS)))
    entries = journal.requests
    assert journal.size <= 4096 and entries[-1].number == 50 and len(entries) < 50


def test_a_lone_surrogate_in_a_delivery_never_breaks_the_journal() -> None:
    """A webhook URL is the client's (a JSON string may hold `\\ud800`): the journal still
    renders, the surrogate as its escape's text, as in requests (issue 29, case 9)."""
    journal = Journal()
    journal.add_delivery(
        request=1, exchange=2, url="http://h/\ud800", headers=(), body=b"", error="x \udc80"
    )
    delivery = journal.as_json()["deliveries"][0]
    assert (delivery["url"], delivery["error"]) == ("http://h/\\ud800", "x \\udc80")
