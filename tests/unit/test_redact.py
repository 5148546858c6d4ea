"""Redaction: secrets become stable placeholders; formatting and everything else survive."""

from __future__ import annotations

import json
from typing import Any

from recorder.capture import Request, Response
from recorder.record._redact import Redactor, api_key_headers

V1_CREATE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": "1",
    "method": "CreateTaskPushNotificationConfig",
    "params": {
        "taskId": "t",
        "url": "http://127.0.0.1:1/hook",
        "token": "tok-123",
        "authentication": {"scheme": "Bearer", "credentials": "cred-456"},
    },
}
V03_SET = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tasks/pushNotificationConfig/set",
    "params": {
        "taskId": "t",
        "pushNotificationConfig": {
            "url": "http://127.0.0.1:1/hook",
            "token": "tok-123",
            "authentication": {"schemes": ["Bearer"], "credentials": "cred-456"},
        },
    },
}
INLINE_SEND = {
    "message": {"messageId": "m", "parts": [{"text": "token"}]},
    "configuration": {
        "taskPushNotificationConfig": {"url": "http://127.0.0.1:1/hook", "token": "tok-9"}
    },
}


def test_headers_redacted_with_stable_placeholders_and_scheme_kept() -> None:
    r = Redactor()
    req = Request(
        "POST",
        "/",
        (("authorization", "Bearer abc"), ("Cookie", "a=b"), ("Accept", "*/*")),
    )
    out = r.request(req)
    assert out.headers == (
        ("authorization", "Bearer <redacted:1>"),
        ("Cookie", "<redacted:2>"),
        ("Accept", "*/*"),
    )
    again = r.request(Request("GET", "/", (("X-A2A-Notification-Token", "abc"),)))
    assert again.headers == (("X-A2A-Notification-Token", "<redacted:1>"),)
    assert r.redacted == ("Authorization", "Cookie", "X-A2A-Notification-Token")


def test_set_cookie_in_response() -> None:
    r = Redactor()
    out = r.response(Response(200, "OK", (("Set-Cookie", "sid=1; Path=/"),)))
    assert out.headers == (("Set-Cookie", "<redacted:1>"),)


def test_v1_body_compact_format_kept() -> None:
    r = Redactor()
    body = json.dumps(V1_CREATE, separators=(",", ":")).encode()
    out = r.body(body)
    assert b"tok-123" not in out and b"cred-456" not in out
    assert out == body.replace(b"tok-123", b"<redacted:1>").replace(b"cred-456", b"<redacted:2>")
    assert r.redacted == ("authentication.credentials", "token")


def test_v03_body_indented_format_kept_and_same_secret_same_placeholder() -> None:
    r = Redactor()
    r.body(json.dumps(V1_CREATE).encode())
    body = json.dumps(V03_SET, indent=2).encode()
    out = r.body(body)
    doc = json.loads(out)
    cfg = doc["params"]["pushNotificationConfig"]
    assert cfg["token"] == "<redacted:1>"
    assert cfg["authentication"]["credentials"] == "<redacted:2>"
    assert out.count(b"\n") == body.count(b"\n")


def test_inline_send_config_and_text_that_is_not_a_secret() -> None:
    r = Redactor()
    out = json.loads(r.body(json.dumps(INLINE_SEND).encode()))
    assert out["configuration"]["taskPushNotificationConfig"]["token"] == "<redacted:1>"
    assert out["message"]["parts"][0]["text"] == "token"


def test_results_and_lists_redacted() -> None:
    r = Redactor()
    listing = {"result": {"configs": [V1_CREATE["params"], dict(V1_CREATE["params"], token="t2")]}}
    out = json.loads(r.body(json.dumps(listing).encode()))
    tokens = [c["token"] for c in out["result"]["configs"]]
    assert tokens == ["<redacted:1>", "<redacted:3>"]


def test_non_json_and_secretless_bodies_untouched() -> None:
    r = Redactor()
    for body in (b"", b"\x00\x01binary", b"{broken", b'{"url":"x"}', b'{"token":"no url"}'):
        assert r.body(body) == body
    assert r.redacted == ()


def test_api_key_headers_from_card_both_versions() -> None:
    card = {
        "securitySchemes": {
            "v1": {"apiKeySecurityScheme": {"location": "header", "name": "X-Api-Key"}},
            "v1q": {"apiKeySecurityScheme": {"location": "query", "name": "key"}},
            "v03": {"type": "apiKey", "in": "header", "name": "X-Legacy-Key"},
            "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}},
            "junk": "x",
        }
    }
    assert api_key_headers(card) == ("X-Api-Key", "X-Legacy-Key")
    assert api_key_headers({"securitySchemes": []}) == ()
    r = Redactor()
    r.learn_card(card)
    out = r.headers((("x-api-key", "k1"), ("key", "q")))
    assert out == (("x-api-key", "<redacted:1>"), ("key", "q"))
    assert r.redacted == ("x-api-key",)


def test_take_hits_per_exchange() -> None:
    r = Redactor()
    r.headers((("Authorization", "Bearer a"),))
    assert r.take_hits() == ("Authorization",)
    assert r.take_hits() == ()
    r.headers((("Authorization", "Bearer a"),))
    assert r.take_hits() == ("Authorization",)
