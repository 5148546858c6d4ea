"""Property (issue 29, case 7): a secret a live client sends, in whatever place the redaction
rules name, never leaves the replayer in clear: not in the journal's JSON, not in the report,
not on the console; also when the replayer learns it is a secret only after a miss quoted it.

A random secret goes into one place (a credential header, a cookie, an API key the card
declares in a header or the query, a credential query parameter, a push config's token or
credentials, inline or on its own); with `late`, a message first carries it as plain text, a
miss that quotes it.  The service and the runner are the real ones, without sockets.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recorder.capture import Capture, Request, read_capture
from recorder.redaction import MIN_SWEPT_LENGTH
from recorder.replay import Client, ReplayService, Timing
from recorder.replay.faces._runner import Runner

SESSION = Path(__file__).parents[1] / "data" / "sessions" / "demo-session-jsonrpc.http"
# What a header, a cookie, a query value (percent-encoded) and a JSON string can all carry.
ALPHABET = st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters='"\\%;')
# "Zq" first: no word of the replayer's own output holds it, so a secret found is a leak.
SECRET = st.text(ALPHABET, min_size=MIN_SWEPT_LENGTH, max_size=80).map(lambda s: f"Zq{s}")
PLACES = (
    "authorization",
    "cookie",
    "card header",
    "card query",
    "query",
    "push token",
    "push credentials",
    "inline token",
)


def _guarded() -> Capture:
    capture = read_capture(SESSION)
    card = capture.exchanges[0]
    assert card.response is not None
    document = json.loads(card.response.body)
    document["securitySchemes"] = {
        "q": {"apiKeySecurityScheme": {"location": "query", "name": "sig"}},
        "h": {"apiKeySecurityScheme": {"location": "header", "name": "X-Client-Ident"}},
    }
    response = replace(card.response, body=json.dumps(document).encode())
    return replace(capture, exchanges=(replace(card, response=response), *capture.exchanges[1:]))


CAPTURE = _guarded()


def _rpc(method: str, params: object, target: str = "/a2a/jsonrpc", **headers: str) -> Request:
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
    head = (("Content-Type", "application/json"), *headers.items())
    return Request("POST", target, head, body.encode())


def _message(text: str) -> dict[str, object]:
    return {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": text}]}}


def _carrying(place: str, secret: str) -> Request:
    """A request (answered or missed: it does not matter) with `secret` at `place`."""
    config = {"url": "http://127.0.0.1:9/hook", "token": "t", "taskId": "never-issued"}
    headers = {
        "authorization": {"Authorization": f"Bearer {secret}"},
        "cookie": {"Cookie": f"sid={secret}; theme=dark"},
        "card header": {"X-Client-Ident": secret},
    }
    if place in headers:
        return _rpc("GetTask", {"id": "none"}, **headers[place])
    if place in ("card query", "query"):
        name = "sig" if place == "card query" else "api_key"
        return _rpc("GetTask", {"id": "none"}, f"/a2a/jsonrpc?{name}={quote(secret, safe='')}")
    if place == "inline token":
        inline = {"pushNotificationConfig": {**config, "token": secret}}
        return _rpc("SendMessage", {**_message("x"), "configuration": inline})
    field = {"token": secret} if place == "push token" else {}
    credentials = {"authentication": {"scheme": "Bearer", "credentials": secret}}
    return _rpc("CreateTaskPushNotificationConfig", {**config, **field, **credentials})


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(secret=SECRET, place=st.sampled_from(PLACES), late=st.booleans())
def test_a_live_secret_never_leaves_the_replayer_in_clear(
    secret: str, place: str, late: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.clear()
    service = ReplayService([CAPTURE])
    runner = Runner(service, Timing())
    requests = [_carrying(place, secret)]
    if late:  # first as plain text in a message nothing answers, quoted by the miss
        requests.insert(0, _rpc("SendMessage", _message(f"note {secret} here")))

    async def send() -> None:
        for request in requests:
            runner.end(await runner.begin(request, Client()))
        await runner.close()

    with caplog.at_level(logging.WARNING, logger="a2a_recorder.replay"):
        asyncio.run(send())
    said = {
        "journal": json.dumps(service.journal.as_json(), ensure_ascii=False),
        "report": json.dumps(service.report.as_json(), ensure_ascii=False),
        "console": caplog.text,
    }
    assert caplog.text.count("replay miss") >= late  # the console did speak
    for where, text in said.items():
        assert secret not in text, where
        assert quote(secret, safe="") not in text, where
