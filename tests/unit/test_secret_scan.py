"""The secret scan: well-known token formats are found where redaction did not look; ordinary
A2A values (uuids, hashes, base64 parts) are not."""

from __future__ import annotations

import base64
import hashlib
import json
import uuid

import pytest

from recorder.capture import GrpcMessage, Request, Response, SseEvent
from recorder.record._scan import MAX_SCANNED_BYTES, RepeatedHeaders, likely_token, scan_exchange

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0"
    ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)
TOKENS = {
    "JWT": JWT,
    "private key": "-----BEGIN RSA PRIVATE KEY-----",
    "AWS access key": "AKIA" + "ABCDEFGHIJKLMNOP",
    "GitHub token": "ghp_" + "a1B2" * 9,
    "Slack token": "xoxb-" + "1234567890-abcdef",
    "Google API key": "AIza" + "S" * 35,
    "OpenAI-style key": "sk-proj-" + "Ab1" * 12,
}


def message(text: str) -> bytes:
    return json.dumps(
        {
            "message": {
                "messageId": str(uuid.uuid4()),
                "role": "ROLE_USER",
                "parts": [{"text": text}],
            }
        }
    ).encode()


@pytest.mark.parametrize("kind", sorted(TOKENS))
def test_each_format_is_found_and_named_with_its_place(kind: str) -> None:
    notes = scan_exchange(Request("POST", "/", body=message(f"my key: {TOKENS[kind]}")), None)
    assert notes == (f"possible secret: {kind} in request body",)


def test_every_place_is_looked_at() -> None:
    request = Request(
        "GET",
        f"/x?t={JWT}",
        (("X-Id", JWT),),
        messages=(GrpcMessage(0, json=json.dumps({"t": JWT})),),
    )
    response = Response(
        200,
        headers=(("X-Echo", JWT),),
        body=JWT.encode(),
        events=(SseEvent(0, (f"data: {JWT}",)),),
        messages=(GrpcMessage(0, json=json.dumps({"t": JWT})),),
    )
    places = [note.rpartition(" in ")[2] for note in scan_exchange(request, response)]
    assert places == [
        "request target",
        "request headers",
        "request messages",
        "response headers",
        "response body",
        "response events",
        "response messages",
    ]


def test_ordinary_values_are_not_secrets() -> None:
    ordinary = " ".join(
        [
            str(uuid.uuid4()),
            hashlib.sha256(b"x").hexdigest(),
            base64.b64encode(bytes(range(64))).decode(),
            "sk-1",
            "ghp_short",
            "AKIA1234",
            "<redacted:1>",
            "Bearer <redacted:2>",
            "2026-11-30T10:00:00.000Z",
        ]
    )
    response = Response(200, body=message(ordinary))
    assert scan_exchange(Request("POST", "/", body=message(ordinary)), response) == ()


def test_huge_bodies_are_not_scanned() -> None:
    body = JWT.encode() + b" " * MAX_SCANNED_BYTES
    assert scan_exchange(Request("POST", "/", body=body), None) == ()


def test_a_header_with_the_same_high_entropy_value_on_every_request_is_noted() -> None:
    watch = RepeatedHeaders()
    token = "q7Zx9LmP2vR8sT4wK1nB6yH3"
    headers = (
        ("User-Agent", "python-httpx/0.28.1-abcdefGHIJ"),  # ordinary, whatever it holds
        ("X-Tenant-Seal", token),
        ("X-Trace", "aaaaaaaaaaaaaaaaaaaa"),  # the same every time, but no entropy
        ("X-Request-Id", "r1-Abc9Xyz8Qwe7Rty6"),
    )
    assert watch.see(headers) == ()
    changed = tuple(
        (k, "r2-Zyx1Cba2Ewq3Ytr4") if k == "X-Request-Id" else (k, v) for k, v in headers
    )
    assert watch.see(changed) == ()
    note = "possible secret: header X-Tenant-Seal (the same high-entropy value on every request)"
    assert watch.see(headers) == (note,)
    assert watch.see(headers) == ()  # noted once


def test_a_header_missing_from_one_request_is_not_noted() -> None:
    watch = RepeatedHeaders()
    seal = (("X-Tenant-Seal", "q7Zx9LmP2vR8sT4wK1nB6yH3"),)
    for headers in (seal, (), seal, seal):
        assert watch.see(headers) == ()


@pytest.mark.parametrize(
    ("value", "likely"),
    [
        ("q7Zx9LmP2vR8sT4wK1nB6yH3", True),
        ("0f8fad5b-d9cb-469f-a165-70867728950e", True),
        ("application/json", False),
        ("short-Tok3n", False),
        ("has a space in it Abc123456", False),
        ("1234567890123456789", False),
    ],
)
def test_likely_tokens(value: str, likely: bool) -> None:
    assert likely_token(value) is likely
