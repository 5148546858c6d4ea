"""Redaction decided on decoded values (issue 20, findings 3, 5, 6, 7): no escape, encoding or
part of an exchange keeps a secret the redactor knows."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

import pytest

from recorder.capture import Exchange, GrpcMessage, Request, Response, SseEvent
from recorder.protocol import Classification, render_events
from recorder.redaction import MASK, Masker, Redactor, is_credential_name

HOOK = "http://127.0.0.1:1/hook"


def _exchange(
    redactor: Redactor, request: Request, response: Response | None
) -> tuple[Request, Response | None, tuple[str, ...]]:
    """Both sides of an exchange redacted as the recorder does (`Redactor.rework`), and its
    redaction note."""
    kept = redactor.rework(Exchange(1, Classification(), request, response))
    return kept.request, kept.response, tuple(n for n in kept.notes if n.startswith("redacted: "))


def _config(token_json: str) -> bytes:
    """A push-config body whose token is written as the raw JSON string `token_json`."""
    return b'{"taskId":"t","url":"' + HOOK.encode() + b'","token":' + token_json.encode() + b"}"


@pytest.mark.parametrize(
    ("written", "secret"),
    [
        (r'"abc\/defgh1234"', "abc/defgh1234"),  # finding 5: PHP and JS-style `\/`
        (r'"abc\u0026defgh1234"', "abc&defgh1234"),  # Go's encoder escapes `&`
        (r'"caf\u00E9-secret-1"', "café-secret-1"),  # upper-case hex
        (r'"caf\u00e9-secret-1"', "café-secret-1"),
        (r'"\u0061bcdefgh1234"', "abcdefgh1234"),  # any character may be escaped
    ],
)
def test_an_escaped_push_token_is_redacted(written: str, secret: str) -> None:
    r = Redactor()
    out = r.body(_config(written))
    assert json.loads(out)["token"] == "<redacted:1>"
    assert r.take_hits() == ("token",)
    # And the same secret, escaped another way, is swept from a later answer.
    echo = json.dumps({"note": f"stored {secret}"}, ensure_ascii=True).encode()
    assert json.loads(r.response(Response(200, body=echo)).body) == {"note": "stored <redacted:1>"}


def test_a_cookie_value_echoed_in_an_answer_is_swept() -> None:
    """Finding 6: each cookie value is a secret, also where the agent echoes it (JSON, SSE)."""
    r = Redactor()
    request = Request("POST", "/a2a", (("Cookie", "sid=session-cookie-777; theme=dark"),))
    answer = Response(
        200,
        body=json.dumps({"whoami": {"cookie": "session-cookie-777"}}).encode(),
    )
    stream = Response(
        200,
        events=(SseEvent(0, ('data: {"echo": "sid=session-cookie-777"}',)),),
    )
    out_request, out_answer, notes = _exchange(r, request, answer)
    assert out_request.headers == (("Cookie", "sid=<redacted:1>; theme=<redacted:2>"),)
    assert out_answer is not None and b"session-cookie-777" not in out_answer.body
    assert notes == ("redacted: Cookie",)
    streamed = r.response(stream)
    assert streamed.events[0].lines == ('data: {"echo": "sid=<redacted:1>"}',)


def test_a_known_secret_pasted_into_a_request_body_is_swept() -> None:
    """Finding 6: a token the user pasted into a message goes the way of its echo."""
    r = Redactor()
    message = {"message": {"parts": [{"text": "my key is sk-live-0123456789, keep it"}]}}
    request = Request(
        "POST",
        "/a2a/rest/message:send",
        (("Authorization", "Bearer sk-live-0123456789"),),
        json.dumps(message).encode(),
    )
    out, _, notes = _exchange(r, request, None)
    assert b"sk-live-0123456789" not in out.body
    assert json.loads(out.body)["message"]["parts"][0]["text"] == "my key is <redacted:1>, keep it"
    assert notes == ("redacted: Authorization",)


def test_secrets_are_swept_from_every_part() -> None:
    r = Redactor()
    r.request(Request("GET", "/", (("X-API-Key", "api-key-value-42"),)))
    request = Request(
        "POST",
        "/a2a/api-key-value-42?q=api-key-value-42",
        (("Referer", "http://x/?k=api-key-value-42"),),
        messages=(GrpcMessage(0, json='{"text":"api-key-value-42"}'),),
    )
    response = Response(
        200,
        headers=(("X-Echo", "api-key-value-42"),),
        events=(SseEvent(0, ("id: api-key-value-42", ": api-key-value-42")),),
        trailers=(("grpc-message", "bad key api-key-value-42"),),
    )
    out_request, out_response, _ = _exchange(r, request, response)
    assert "api-key-value-42" not in repr((out_request, out_response))
    assert out_request.target == "/a2a/<redacted:1>?q=<redacted:1>"


def test_percent_encoded_and_base64_secrets_are_swept() -> None:
    r = Redactor()
    r.request(Request("GET", "/", (("Authorization", "Bearer s3cret/+value=="),)))
    url = "http://x/cb?token=" + quote("s3cret/+value==", safe="")
    blob = base64.b64encode(b"\x00\x01 s3cret/+value== \xff").decode()
    urlsafe = base64.urlsafe_b64encode(b"say s3cret/+value==!").decode().rstrip("=")
    body = json.dumps({"url": url, "bytes": blob, "raw": urlsafe}).encode()
    out = json.loads(r.response(Response(200, body=body)).body)
    assert out["url"] == "http://x/cb?token=<redacted:1>"
    assert base64.b64decode(out["bytes"]) == b"\x00\x01 <redacted:1> \xff"
    padded = out["raw"] + "=" * (-len(out["raw"]) % 4)
    assert base64.urlsafe_b64decode(padded) == b"say <redacted:1>!"
    assert not out["raw"].endswith("=")  # unpadded as it came


def test_an_sse_line_that_is_not_utf8_is_kept_and_redacted() -> None:
    """Finding 3: a data line with a byte UTF-8 cannot hold (a surrogate escape) used to raise
    UnicodeEncodeError, and the whole answer was lost.  Now it is kept byte for byte, and a
    secret in the same line is still redacted."""
    r = Redactor()
    odd = SseEvent(0, ('data: {"text": "caf\udce9"}',))
    kept = r.response(Response(200, events=(odd,)))
    assert kept.events == (odd,)
    assert render_events((e.lines for e in kept.events), "\n") == b'data: {"text": "caf\xe9"}\n\n'
    r.request(Request("GET", "/", (("Authorization", "Bearer bearer-token-99"),)))
    leaky = SseEvent(0, ('data: {"text": "\udcff bearer-token-99"}', "event: x\udcfe"))
    out = r.response(Response(200, events=(leaky,)))
    assert out.events[0].lines == ('data: {"text": "\udcff <redacted:1>"}', "event: x\udcfe")
    config = 'data: {"url": "http://h", "token": "push-token-1234", "x": "\udcff"}'
    pushed = r.response(Response(200, events=(SseEvent(0, (config,)),)))
    assert pushed.events[0].lines == (
        'data: {"url": "http://h", "token": "<redacted:2>", "x": "\udcff"}',
    )


def test_a_body_that_is_not_utf8_keeps_its_bytes() -> None:
    r = Redactor()
    r.request(Request("GET", "/", (("Authorization", "Bearer bearer-token-99"),)))
    body = b"\xff\xfe bearer-token-99 \x80"
    assert r.response(Response(200, body=body)).body == b"\xff\xfe <redacted:1> \x80"
    assert r.response(Response(200, body=b"\xff\x00\x80")).body == b"\xff\x00\x80"


@pytest.mark.parametrize(
    "name",
    [
        "key",
        "Key",
        "X-Access-Key",
        "Ocp-Apim-Subscription-Key",
        "X-Auth",
        "X-Auth-Token",
        "X-Authorization",
        "x-functions-key",
        "subscription_key",
    ],
)
def test_common_key_names_are_credentials(name: str) -> None:
    """Finding 7: names that matched no rule."""
    assert is_credential_name(name)
    r = Redactor()
    out = r.request(Request("GET", f"/x?{name}=value-1", ((name, "value-2"),)))
    assert out.headers == ((name, "<redacted:1>"),)
    assert out.target == "/x?" + name + "=<redacted:2>"


@pytest.mark.parametrize(
    "name", ["pageToken", "nextPageToken", "Idempotency-Key", "Keep-Alive", "Monkey", "keyword"]
)
def test_names_that_carry_no_credential(name: str) -> None:
    assert not is_credential_name(name)


def test_redaction_is_idempotent_on_encoded_forms() -> None:
    r = Redactor()
    r.request(Request("GET", "/", (("Authorization", "Bearer abc/defgh1234"),)))
    body = json.dumps({"m": "abc\\/defgh1234 " + quote("abc/defgh1234")}).encode()
    once = r.response(Response(200, body=body))
    assert r.response(once) == once


def test_the_masker_makes_a_placeholder_and_a_live_secret_compare_equal() -> None:
    masker = Masker()
    recorded = {"text": "my key is <redacted:3>", "b": base64.b64encode(b"k=<redacted:3>").decode()}
    live_secret = "live-secret-value-9"
    live = {
        "text": f"my key is {live_secret}",
        "b": base64.b64encode(f"k={live_secret}".encode()).decode(),
    }
    assert masker.value(recorded) != masker.value(live)  # the live secret is not known yet
    masker.learn(Request("POST", "/", (("Authorization", f"Bearer {live_secret}"),)))
    assert masker.value(recorded) == masker.value(live)
    assert masker.value(live)["text"] == f"my key is {MASK}"
    assert masker.value([1, None, {"n": 2.5}]) == [1, None, {"n": 2.5}]


def test_a_redacted_push_config_is_redacted_again_as_it_is() -> None:
    """A capture reworked at stop holds placeholders where push tokens were: they stay."""
    r = Redactor()
    first = r.body(_config('"push-token-0123456"'))
    assert json.loads(first)["token"] == "<redacted:1>"
    again = Redactor()
    assert again.body(first) == first
    assert again.take_hits() == ("token",)
    assert r.body(first) == first
