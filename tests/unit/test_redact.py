"""Redaction: secrets become stable placeholders; formatting and everything else survive."""

from __future__ import annotations

import json
from typing import Any

import pytest

from recorder.capture import Exchange, GrpcMessage, Request, Response, SseEvent
from recorder.protocol import Classification
from recorder.redaction import Redactor, api_key_headers, is_credential_name

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


def _exchange(
    redactor: Redactor, request: Request, response: Response | None
) -> tuple[Request, Response | None, tuple[str, ...]]:
    """Both sides of an exchange redacted as the recorder does (`Redactor.rework`), and its
    redaction note."""
    kept = redactor.rework(Exchange(1, Classification(), request, response))
    return kept.request, kept.response, tuple(n for n in kept.notes if n.startswith("redacted: "))


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
        ("Cookie", "a=<redacted:2>"),
        ("Accept", "*/*"),
    )
    again = r.request(Request("GET", "/", (("X-A2A-Notification-Token", "abc"),)))
    assert again.headers == (("X-A2A-Notification-Token", "<redacted:1>"),)
    assert r.redacted == ("Authorization", "Cookie", "X-A2A-Notification-Token")


def test_set_cookie_in_response() -> None:
    r = Redactor()
    out = r.response(Response(200, "OK", (("Set-Cookie", "sid=1; Path=/"),)))
    assert out.headers == (("Set-Cookie", "sid=<redacted:1>; Path=/"),)


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
    out = r.headers((("x-api-key", "k1"), ("X-Other", "q")))
    assert out == (("x-api-key", "<redacted:1>"), ("X-Other", "q"))
    assert r.redacted == ("x-api-key",)


def test_take_hits_per_exchange() -> None:
    r = Redactor()
    r.headers((("Authorization", "Bearer a"),))
    assert r.take_hits() == ("Authorization",)
    assert r.take_hits() == ()
    r.headers((("Authorization", "Bearer a"),))
    assert r.take_hits() == ("Authorization",)


QUERY_CARD = {
    "securitySchemes": {
        "v1": {"apiKeySecurityScheme": {"location": "query", "name": "key"}},
        "v03": {"type": "apiKey", "in": "query", "name": "api_key"},
    }
}


def test_api_key_query_parameters_from_card_both_versions() -> None:
    r = Redactor()
    r.learn_card(QUERY_CARD)
    first = r.request(Request("GET", "/a2a/rest/tasks/t-1?key=k-secret-1&historyLength=2"))
    assert first.target == "/a2a/rest/tasks/t-1?key=<redacted:1>&historyLength=2"
    second = r.request(Request("GET", "/v1/tasks/t-1?api_key=k%2Fsecret&key=k-secret-1"))
    assert second.target == "/v1/tasks/t-1?api_key=<redacted:2>&key=<redacted:1>"
    assert r.redacted == ("query:api_key", "query:key")
    untouched = "/a2a/rest/tasks?pageSize=5&key="
    assert r.request(Request("GET", untouched)).target == untouched


def test_a_secret_seen_once_is_swept_from_later_exchanges() -> None:
    r = Redactor()
    r.request(Request("POST", "/", (("Authorization", "Bearer tok-0123456789"),)))
    r.take_hits()
    echoed = b'{"error": {"message": "token tok-0123456789 expired"}}'
    assert r.response(Response(401, body=echoed)).body == (
        b'{"error": {"message": "token <redacted:1> expired"}}'
    )
    assert r.take_hits() == ("Authorization",)
    # A token the user pasted into a message is swept from the request too (issue 20 #6).
    text = b'{"message": {"parts": [{"text": "tok-0123456789"}]}}'
    assert r.request(Request("POST", "/", body=text)).body == text.replace(
        b"tok-0123456789", b"<redacted:1>"
    )
    # Short secrets are not swept (too likely to be an ordinary word).
    r.request(Request("POST", "/", (("Authorization", "Bearer abc"),)))
    assert r.response(Response(200, body=b'{"text": "abc"}')).body == b'{"text": "abc"}'


def test_sse_event_data_is_redacted() -> None:
    r = Redactor()
    r.body(json.dumps(V1_CREATE).encode())  # learns tok-123 and cred-456 (too short to sweep)
    config = {"url": "http://127.0.0.1:1/hook", "token": "stream-token-77"}
    events = (
        SseEvent(0, (": ping",)),
        SseEvent(5, ("event: config", f"data: {json.dumps({'result': config})}")),
        SseEvent(9, ('data: {"note": "stream-token-77 again"}',)),
    )
    out = r.response(Response(200, events=events))
    assert out.events[0] == events[0]
    assert out.events[1].lines[0] == "event: config"
    assert json.loads(out.events[1].lines[1][len("data: ") :])["result"]["token"] == "<redacted:3>"
    assert out.events[2].lines == ('data: {"note": "<redacted:3> again"}',)
    assert out.events[1].offset_us == 5


def test_grpc_messages_are_redacted_and_swept_in_one_exchange_step() -> None:
    r = Redactor()
    config = {"taskId": "t", "url": "http://127.0.0.1:1/hook", "token": "grpc-token-123456"}
    request = Request(
        "POST",
        "/lf.a2a.v1.A2AService/CreateTaskPushNotificationConfig",
        messages=(GrpcMessage(0, json=json.dumps(config)),),
    )
    echoed = {"id": "c", "note": "stored grpc-token-123456"}
    response = Response(
        200, messages=(GrpcMessage(5, json=json.dumps(echoed)), GrpcMessage(6, raw=b"\x00raw"))
    )
    request, redacted_response, notes = _exchange(r, request, response)
    assert json.loads(request.messages[0].json or "")["token"] == "<redacted:1>"
    assert redacted_response is not None
    assert json.loads(redacted_response.messages[0].json or "")["note"] == "stored <redacted:1>"
    assert redacted_response.messages[1] == response.messages[1]  # raw bytes left alone
    assert notes == ("redacted: token",)


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("X-Service-Token", True),
        ("x-api-key", True),
        ("ApiKey", True),
        ("api_key", True),
        ("X-Client-Secret", True),
        ("password", True),
        ("X-Goog-Auth-User", True),
        ("access_token", True),
        ("pageToken", False),
        ("nextPageToken", False),
        ("A2A-Version", False),
        ("X-Request-Id", False),
        ("Accept", False),
        ("Author", False),
    ],
)
def test_names_that_say_they_carry_a_credential(name: str, secret: bool) -> None:
    assert is_credential_name(name) is secret
    r = Redactor()
    out = r.request(Request("GET", f"/tasks?{name}=value-123456", ((name, "value-123456"),)))
    assert ("value-123456" not in out.target) is secret
    assert (out.headers[0][1] != "value-123456") is secret


def test_redaction_is_idempotent_and_a_rework_uses_what_was_learnt_later() -> None:
    r = Redactor()
    early = Exchange(
        1,
        Classification(),
        Request("GET", "/", (("X-Partner", "p-secret-1"),)),
        Response(200, "OK", (), b'{"echo":"p-secret-1"}'),
        notes=("card rewritten",),
    )
    first, _, notes = _exchange(r, early.request, early.response)
    assert first.headers == (("X-Partner", "p-secret-1"),) and notes == ()  # not known yet
    before = r.generation
    r.learn_card(
        {
            "securitySchemes": {
                "k": {"apiKeySecurityScheme": {"location": "header", "name": "X-Partner"}}
            }
        }
    )
    assert r.generation > before
    reworked = r.rework(early)
    assert reworked.request.headers == (("X-Partner", "<redacted:1>"),)
    assert reworked.response is not None and reworked.response.body == b'{"echo":"<redacted:1>"}'
    assert reworked.notes == ("card rewritten", "redacted: X-Partner")
    again = r.rework(reworked)  # nothing new: the same exchange, one note
    assert again == reworked


def test_placeholders_go_on_after_an_earlier_recording() -> None:
    r = Redactor()
    r.skip_placeholders(4)
    out = r.request(Request("GET", "/", (("Authorization", "Bearer abcdefgh"),)))
    assert out.headers == (("Authorization", "Bearer <redacted:5>"),)


def test_the_package_exports_are_sorted_and_complete() -> None:
    import recorder.redaction as redaction

    assert redaction.__all__ == sorted(redaction.__all__)
    assert all(hasattr(redaction, name) for name in redaction.__all__)
