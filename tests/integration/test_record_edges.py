"""Recorder edge paths with real parts: a signed agent card, and forward-mode `webhook_paths`.

Also: secrets through a real a2a-sdk agent: an echoed Authorization token is swept from the
response, a token of a well-known format that no rule names is noted and warned about, and an
API key the card declares in the query is redacted and still matches on replay.

1. Reverse mode rewrites the card's interface URLs; a card with `signatures` then no longer
   verifies.  The recorder warns once, notes it on every such exchange, and keeps the agent's
   original (signed) card in the capture.  With the rewrite off the card passes untouched.
2. Forward mode: a POST through the proxy to a path named in `webhook_paths` is a push
   delivery even when its body is nothing the classifier's heuristic would call one.

Every server binds 127.0.0.1 on a free port, runs with a start timeout and is stopped in a
context manager.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import httpx
import pytest
from _asgi import serve_asgi
from _helpers import exchanges, wait_for

from recorder._background import BackgroundLoop, bind_socket
from recorder.capture import Request, read_capture
from recorder.demo import DemoAgent, WebhookReceiver
from recorder.protocol import AGENT_CARD, PUSH_DELIVERY, classify
from recorder.record import RecordingProxy
from recorder.replay import Replayer

TIMEOUT = 10.0
CARD_PATH = "/.well-known/agent-card.json"
JSONRPC_PATH = "/a2a/jsonrpc"
ADDON_LOGGER = "recorder.record"  # the addons log under their modules
SIGNATURE_NOTE = "card signature no longer verifies"
WARNING_TEXT = "signature no longer verifies"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# -- a tiny agent that serves a signed v1.0 card --------------------------------------------------


class SignedCardAgent:
    """Serves a signed v1.0 agent card and answers any JSON-RPC POST with an empty task list.

    The card bytes are fixed when the socket is bound (the card names its own port), so tests
    can compare what the recorder kept with exactly what the agent served.
    """

    def __init__(self) -> None:
        self._sock = bind_socket("127.0.0.1", 0)
        self.port = int(self._sock.getsockname()[1])
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.card_bytes = json.dumps(self._card(), indent=2).encode()
        self._loop = BackgroundLoop(self._main, name="signed-card-agent")

    def _card(self) -> dict[str, Any]:
        header = json.dumps({"alg": "ES256", "kid": "key-1", "typ": "JOSE"}).encode()
        return {
            "name": "Signed agent",
            "description": "Serves a JWS-signed card",
            "version": "1.0.0",
            "supportedInterfaces": [
                {
                    "url": self.base_url + JSONRPC_PATH,
                    "protocolBinding": "JSONRPC",
                    "protocolVersion": "1.0",
                }
            ],
            "capabilities": {"streaming": False, "pushNotifications": False},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [],
            "signatures": [
                {
                    "protected": _b64url(header),
                    "signature": _b64url(b"not-a-real-ecdsa-signature-but-the-right-shape"),
                    "header": {"kid": "key-1"},
                }
            ],
        }

    async def _main(self, ready: Callable[[], None], stop: asyncio.Event) -> None:
        await serve_asgi(_Asgi(self._app), self._sock, ready, stop)

    async def _app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = await _read_body(receive)
        if scope["method"] == "GET" and scope["path"] == CARD_PATH:
            await _answer(send, 200, self.card_bytes)
        elif scope["method"] == "POST" and scope["path"] == JSONRPC_PATH:
            request_id = json.loads(body).get("id")
            result = {
                "jsonrpc": "2.0",
                "id": request_id,
                "result": {"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0},
            }
            await _answer(send, 200, json.dumps(result).encode())
        else:
            await _answer(send, 404, b'{"error":"not found"}')

    def __enter__(self) -> Self:
        self._loop.start(timeout=TIMEOUT)
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._loop.stop(timeout=TIMEOUT)


class _Asgi:
    """An ASGI 3 app object around a handler (uvicorn takes a bound method for ASGI 2)."""

    def __init__(self, handler: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self._handler = handler

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._handler(scope, receive, send)


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _answer(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@pytest.fixture()
def signed_agent() -> Iterator[SignedCardAgent]:
    with SignedCardAgent() as agent:
        yield agent


def _signature_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.name.startswith(ADDON_LOGGER) and WARNING_TEXT in r.getMessage()
    ]


# -- 1. the signed agent card -------------------------------------------------------------------


def test_signed_card_rewritten_warned_once_and_kept_original(
    signed_agent: SignedCardAgent, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "signed.http"
    original = json.loads(signed_agent.card_bytes)
    caplog.set_level(logging.WARNING, logger=ADDON_LOGGER)
    with (
        RecordingProxy(upstream=signed_agent.base_url, out=out) as proxy,
        httpx.Client(timeout=TIMEOUT) as client,
    ):
        served = [client.get(proxy.url + CARD_PATH) for _ in range(2)]
        # The client follows the rewritten card's interface: through the proxy.
        interface = served[0].json()["supportedInterfaces"][0]["url"]
        listed = client.post(
            interface,
            json={"jsonrpc": "2.0", "id": "1", "method": "ListTasks", "params": {}},
            headers={"A2A-Version": "1.0"},
        )
        assert listed.status_code == 200 and listed.json()["result"]["tasks"] == []
        assert wait_for(lambda: len(exchanges(out)) == 3)

    for response in served:
        assert response.status_code == 200
        card = response.json()
        assert card["supportedInterfaces"][0]["url"] == proxy.url + JSONRPC_PATH
        assert card["signatures"] == original["signatures"]  # still there, now stale
        assert int(response.headers["content-length"]) == len(response.content)
    assert interface == proxy.url + JSONRPC_PATH

    # Warned once for the proxy's lifetime, although two signed cards were rewritten.
    warnings = _signature_warnings(caplog)
    assert len(warnings) == 1
    assert warnings[0].levelno == logging.WARNING

    capture = read_capture(out)
    cards = [e for e in capture.exchanges if e.classification.operation == AGENT_CARD]
    assert len(cards) == 2
    for exchange in cards:
        assert exchange.response is not None
        assert exchange.response.body == signed_agent.card_bytes  # the agent's, byte for byte
        kept = json.loads(exchange.response.body)
        assert kept["signatures"] == original["signatures"]
        assert kept["supportedInterfaces"][0]["url"] == signed_agent.base_url + JSONRPC_PATH
        assert "card rewritten" in exchange.notes
        assert SIGNATURE_NOTE in exchange.notes
    rpc = [e for e in capture.exchanges if e.classification.operation == "ListTasks"]
    assert len(rpc) == 1 and SIGNATURE_NOTE not in rpc[0].notes


def test_signed_card_untouched_without_rewrite(
    signed_agent: SignedCardAgent, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "plain.http"
    caplog.set_level(logging.WARNING, logger=ADDON_LOGGER)
    with RecordingProxy(upstream=signed_agent.base_url, out=out, card_rewrite=False) as proxy:
        served = httpx.get(proxy.url + CARD_PATH, timeout=TIMEOUT)
        assert wait_for(lambda: len(exchanges(out)) == 1)

    assert served.status_code == 200
    assert served.content == signed_agent.card_bytes
    assert _signature_warnings(caplog) == []
    exchange = read_capture(out).exchanges[0]
    assert exchange.classification.operation == AGENT_CARD
    assert exchange.response is not None and exchange.response.body == signed_agent.card_bytes
    assert "card rewritten" not in exchange.notes
    assert SIGNATURE_NOTE not in exchange.notes


# -- 2. forward mode with webhook paths ---------------------------------------------------------

WEBHOOK_PATH = "/hooks/agent-events"
# Deliveries the heuristic alone would not call one: no StreamResponse member, no `kind`, no
# notification token; one is not even JSON.
ODD_BODIES = {
    "json-not-stream-response": b'{"event": "build-finished", "id": 7, "ok": true}',
    "not-json": b"task t-1 is done\n",
}


def _post_through(proxy: RecordingProxy, url: str, body: bytes) -> httpx.Response:
    with httpx.Client(proxy=proxy.url, timeout=TIMEOUT, trust_env=False) as client:
        return client.post(url, content=body, headers={"Content-Type": "application/json"})


@pytest.mark.parametrize("body", list(ODD_BODIES.values()), ids=list(ODD_BODIES))
def test_heuristic_alone_does_not_see_a_delivery(body: bytes) -> None:
    """The premise of the forward-mode tests: without the webhook path, not a delivery."""
    request = Request(
        method="POST",
        target=WEBHOOK_PATH,
        headers=(("Content-Type", "application/json"),),
        body=body,
    )
    assert classify(request).operation != PUSH_DELIVERY
    assert classify(request, webhook_paths=(WEBHOOK_PATH,)).operation == PUSH_DELIVERY


@pytest.mark.parametrize("body", list(ODD_BODIES.values()), ids=list(ODD_BODIES))
@pytest.mark.parametrize("query", ["", "?source=agent"], ids=["plain", "with-query"])
def test_forward_mode_webhook_path_records_a_delivery(
    tmp_path: Path, body: bytes, query: str
) -> None:
    out_dir = tmp_path / "forward"
    with WebhookReceiver() as hook:
        url = f"http://127.0.0.1:{hook.port}{WEBHOOK_PATH}{query}"
        capture_file = out_dir / f"127.0.0.1_{hook.port}.http"
        with RecordingProxy(mode="forward", out=out_dir, webhook_paths=[WEBHOOK_PATH]) as proxy:
            answer = _post_through(proxy, url, body)
            assert answer.status_code == 200
            assert wait_for(lambda: len(exchanges(capture_file)) == 1)
        assert hook.wait_for(1, timeout=TIMEOUT)
        received = hook.deliveries

    assert len(received) == 1
    assert received[0].path == WEBHOOK_PATH + query
    assert received[0].body == body  # forwarded byte for byte
    assert [p.name for p in out_dir.iterdir()] == [capture_file.name]
    exchange = read_capture(capture_file).exchanges[0]
    assert exchange.classification.operation == PUSH_DELIVERY
    assert exchange.classification.is_a2a
    assert exchange.request.method == "POST"
    assert exchange.request.body == body
    assert exchange.response is not None and exchange.response.status == 200


@pytest.mark.parametrize("record_all", [False, True], ids=["a2a-only", "all"])
def test_forward_mode_without_webhook_path_is_not_a_delivery(
    tmp_path: Path, record_all: bool
) -> None:
    out_dir = tmp_path / "forward"
    body = ODD_BODIES["json-not-stream-response"]
    with WebhookReceiver() as hook:
        url = f"http://127.0.0.1:{hook.port}{WEBHOOK_PATH}"
        capture_file = out_dir / f"127.0.0.1_{hook.port}.http"
        with RecordingProxy(mode="forward", out=out_dir, record_all=record_all) as proxy:
            assert _post_through(proxy, url, body).status_code == 200
            assert hook.wait_for(1, timeout=TIMEOUT)
            if record_all:
                assert wait_for(lambda: len(exchanges(capture_file)) == 1)
        received = hook.deliveries

    assert [d.body for d in received] == [body]  # forwarded either way
    if not record_all:
        # Left out: stopping the proxy closed every capture, and none was opened.
        assert not out_dir.exists() or not list(out_dir.glob("*.http"))
        return
    exchange = read_capture(capture_file).exchanges[0]
    assert exchange.classification.operation is None
    assert not exchange.classification.is_a2a
    assert exchange.classification.reason
    assert exchange.request.body == body


def test_forward_mode_get_to_a_webhook_path_is_no_delivery(tmp_path: Path) -> None:
    out_dir = tmp_path / "forward"
    with WebhookReceiver() as hook:
        url = f"http://127.0.0.1:{hook.port}{WEBHOOK_PATH}"
        capture_file = out_dir / f"127.0.0.1_{hook.port}.http"
        with RecordingProxy(
            mode="forward", out=out_dir, webhook_paths=[WEBHOOK_PATH], record_all=True
        ) as proxy:
            with httpx.Client(proxy=proxy.url, timeout=TIMEOUT, trust_env=False) as client:
                assert client.get(url).status_code == 405  # the receiver only takes POSTs
            assert wait_for(lambda: len(exchanges(capture_file)) == 1)

    exchange = read_capture(capture_file).exchanges[0]
    assert exchange.request.method == "GET"
    # The classifier itself says a webhook path means a POST; the recorder should agree.
    assert exchange.classification.operation != PUSH_DELIVERY


# -- secrets that no header or field rule names ---------------------------------------------------

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJkZW1vIn0"
    ".c2lnbmF0dXJlLWJ1dC1ub3QtYS1yZWFsLW9uZQ"
)
BEARER = "bearer-token-0123456789"


def _send(url: str, text: str) -> httpx.Response:
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": text}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    return httpx.post(
        url + "/a2a/jsonrpc",
        json=body,
        timeout=TIMEOUT,
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {BEARER}"},
    )


def test_echoed_token_is_swept_and_unknown_formats_are_flagged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=ADDON_LOGGER)
    out = tmp_path / "secrets.http"
    with (
        DemoAgent(enable_grpc=False) as agent,
        RecordingProxy(upstream=agent.base_url, out=out) as proxy,
    ):
        echoed = _send(proxy.url, f"echo {BEARER}")
        flagged = _send(proxy.url, f"echo {JWT}")
        assert wait_for(lambda: len(exchanges(out)) == 2)
    # The client saw everything as the agent sent it.
    assert BEARER in echoed.text and JWT in flagged.text
    first, second = read_capture(out).exchanges
    text = out.read_text(encoding="utf-8")
    # The bearer token was redacted in the header and swept from the echoing response and
    # from the request's own text (issue 20 #6; the replayer still matches it, see
    # test_redaction.py).
    assert first.request.header("Authorization") == "Bearer <redacted:1>"
    assert first.response is not None and BEARER not in first.response.body.decode()
    assert "<redacted:1>" in first.response.body.decode()
    assert "<redacted:1>" in first.request.body.decode() and BEARER not in text
    # The JWT matches no rule: kept, but noted where it sits, and warned about once.
    assert JWT in text
    assert "possible secret: JWT in request body" in second.notes
    assert "possible secret: JWT in response body" in second.notes
    warned = [r for r in caplog.records if "possible secret: JWT" in r.getMessage()]
    assert len(warned) == 2  # request body, response body; once each


API_KEY = "query-api-key-0123456789"


def _rest_session(base: str, key: str) -> tuple[str, dict[str, Any]]:
    """Card, a send and a get of its task, each with `?key=`; (task id, the task got)."""
    with httpx.Client(base_url=base, timeout=TIMEOUT, headers={"A2A-Version": "1.0"}) as client:
        assert client.get("/.well-known/agent-card.json").status_code == 200
        message = {"messageId": "m-q", "role": "ROLE_USER", "parts": [{"text": "echo q"}]}
        sent = client.post(f"/a2a/rest/message:send?key={key}", json={"message": message})
        task_id = sent.json()["task"]["id"]
        got = client.get(f"/a2a/rest/tasks/{task_id}?key={key}&historyLength=1")
        assert got.status_code == 200, got.text
        return task_id, got.json()


def test_an_api_key_in_the_query_is_redacted_and_replays(tmp_path: Path) -> None:
    out = tmp_path / "query-key.http"
    with (
        DemoAgent(enable_grpc=False, api_key_query="key") as agent,
        RecordingProxy(upstream=agent.base_url, out=out) as proxy,
    ):
        _, live = _rest_session(proxy.url, API_KEY)
        assert wait_for(lambda: len(exchanges(out)) == 3)
    capture = read_capture(out)
    assert API_KEY not in out.read_text(encoding="utf-8")
    send, get = capture.exchanges[1:]
    assert send.request.target == "/a2a/rest/message:send?key=<redacted:1>"
    assert get.request.target.startswith("/a2a/rest/tasks/")
    assert get.request.target.endswith("?key=<redacted:1>&historyLength=1")
    assert "query:key" in capture.redacted
    # A client with its own key replays the session; nothing misses.
    with Replayer([capture]) as replayer:
        task_id, replayed = _rest_session(replayer.url, "another-clients-key")
        assert replayer.report.misses == []
    assert replayed["id"] == task_id
    assert replayed["status"]["state"] == live["status"]["state"] == "TASK_STATE_COMPLETED"
