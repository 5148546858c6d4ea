"""An authenticated session leaves no credential in the capture, and still replays.

The demo agent's card declares two API-key headers (`X-API-Key`, and `X-Partner-Key`, whose
name says nothing); the client also sends an undeclared `X-Service-Token` header and an
`access_token` query parameter, some requests before it has fetched the card; and the agent
echoes every header and the query back (`whoami`), in a body and in an SSE event.
"""

from __future__ import annotations

import html
import json
import uuid
from pathlib import Path
from typing import Any

import grpc
import httpx
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest
from a2a.types.a2a_pb2_grpc import A2AServiceStub
from click.testing import CliRunner

from recorder.capture import read_capture
from recorder.cli import main
from recorder.demo import DemoAgent
from recorder.record import RecordingProxy
from recorder.replay import Replayer

TIMEOUT = 15.0
SECRETS = {
    "X-API-Key": "api-key-value-0123456789",
    "X-Partner-Key": "partner-key-value-4242",
    "X-Service-Token": "service-token-value-7777",
    "access_token": "query-token-value-31337",
}


def _credentials(values: dict[str, str]) -> tuple[dict[str, str], str]:
    headers = {"A2A-Version": "1.0", **{k: v for k, v in values.items() if k.startswith("X-")}}
    return headers, f"access_token={values['access_token']}"


def _message(text: str) -> dict[str, Any]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}


def _session(base: str, values: dict[str, str]) -> list[tuple[str, int, str]]:
    """JSON-RPC send and stream before the card, then the card, then REST send and stream."""
    headers, query = _credentials(values)
    seen: list[tuple[str, int, str]] = []
    with httpx.Client(base_url=base, headers=headers, timeout=TIMEOUT) as client:
        for method in ("SendMessage", "SendStreamingMessage"):
            body = {
                "jsonrpc": "2.0",
                "id": str(uuid.uuid4()),
                "method": method,
                "params": {"message": _message("whoami")},
            }
            answer = client.post(f"/a2a/jsonrpc?{query}", json=body)
            seen.append((method, answer.status_code, _last_state(answer)))
        card = client.get("/.well-known/agent-card.json")
        seen.append(("card", card.status_code, ""))
        for route in ("message:send", "message:stream"):
            answer = client.post(f"/a2a/rest/{route}?{query}", json={"message": _message("whoami")})
            seen.append((route, answer.status_code, _last_state(answer)))
    return seen


def _last_state(answer: httpx.Response) -> str:
    text = answer.text
    documents = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
    last = documents[-1] if documents else answer.json()
    last = last.get("result", last)
    for key in ("task", "statusUpdate"):
        if key in last:
            return str(last[key]["status"]["state"])
    return ""


def test_no_credential_is_left_and_the_capture_replays(tmp_path: Path) -> None:
    out = tmp_path / "authenticated.http"
    with DemoAgent(enable_grpc=False, api_key_headers=("X-API-Key", "X-Partner-Key")) as agent:
        direct = httpx.post(
            agent.rest_url + "/message:send",
            timeout=TIMEOUT,
            headers=_credentials(SECRETS)[0],
            json={"message": _message("whoami")},
        )
        echoed = json.dumps(direct.json())
        assert all(value in echoed for name, value in SECRETS.items() if name != "access_token")
        with RecordingProxy(upstream=agent.base_url, out=out) as proxy:
            live = _session(proxy.url, SECRETS)
    text = out.read_text(encoding="utf-8")
    for name, value in SECRETS.items():
        assert value not in text, f"{name} left in the capture"
    capture = read_capture(out)
    assert len(capture.exchanges) == 5
    assert {"X-API-Key", "X-Partner-Key", "X-Service-Token", "query:access_token"} <= set(
        capture.redacted
    )
    # Sent before the card declared it, redacted when the capture was finalised.
    before_card = capture.exchanges[0]
    assert (before_card.request.header("X-Partner-Key") or "").startswith("<redacted:")
    stream = capture.exchanges[1].response
    assert stream is not None and any("<redacted:" in "".join(e.lines) for e in stream.events)
    assert all(s == "TASK_STATE_COMPLETED" for op, _, s in live if op != "card")

    others = {name: f"another-{name.lower()}-value" for name in SECRETS}
    with Replayer([capture]) as replayer:
        replayed = _session(replayer.url, others)
        assert replayer.report.misses == []
    assert replayed == live


def test_a_secret_pasted_into_a_message_is_swept_and_the_capture_still_replays(
    tmp_path: Path,
) -> None:
    """Known secrets are swept from request bodies too (issue 20, finding 6); replay compares
    a placeholder with the live client's own secret in the same place, so it still matches."""
    out = tmp_path / "pasted.http"
    token = "pasted-bearer-token-0042"

    def send(base: str, secret: str) -> httpx.Response:
        body = {
            "jsonrpc": "2.0",
            "id": str(uuid.uuid4()),
            "method": "SendMessage",
            "params": {"message": _message(f"echo my token is {secret}, keep it safe")},
        }
        headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {secret}"}
        return httpx.post(f"{base}/a2a/jsonrpc", json=body, headers=headers, timeout=TIMEOUT)

    with (
        DemoAgent(enable_grpc=False) as agent,
        RecordingProxy(upstream=agent.base_url, out=out) as proxy,
    ):
        recorded = send(proxy.url, token)
    assert recorded.status_code == 200 and token in recorded.text  # the agent echoes it
    assert token not in out.read_text(encoding="utf-8")
    (exchange,) = read_capture(out).exchanges
    assert b"echo my token is <redacted:1>, keep it safe" in exchange.request.body
    with Replayer([read_capture(out)]) as replayer:
        for secret in (token, "another-bearer-token-77"):
            answer = send(replayer.url, secret)
            assert answer.status_code == 200 and "error" not in answer.json(), answer.text
        assert replayer.report.misses == []


def test_a_secret_inside_an_id_is_redacted_wherever_the_id_is_shown(tmp_path: Path) -> None:
    """Issue 29: a client that makes a context id of its session token left the token in
    clear in `# context-id:` lines, `show` and the report page, over HTTP and gRPC alike."""
    out, page = tmp_path / "ids.http", tmp_path / "ids.html"
    token = "session-token-0042-abcdef"
    context = f"ctx-{token}-1"
    bearer = {"A2A-Version": "1.0", "Authorization": f"Bearer {token}"}
    message = {**_message("echo hi"), "contextId": context}
    body = {"jsonrpc": "2.0", "id": "1", "method": "SendMessage", "params": {"message": message}}
    with (
        DemoAgent() as agent,
        RecordingProxy(upstream=agent.base_url, out=out, grpc_upstream=agent.grpc_target) as proxy,
    ):
        assert httpx.post(f"{proxy.url}/a2a/jsonrpc", json=body, headers=bearer).status_code == 200
        assert proxy.grpc_target is not None
        with grpc.insecure_channel(proxy.grpc_target) as channel:
            sent = Message(message_id="m-1", context_id=context, role=Role.ROLE_USER)
            sent.parts.append(Part(text="echo hi"))
            A2AServiceStub(channel).SendMessage(
                SendMessageRequest(message=sent), metadata=[("authorization", f"Bearer {token}")]
            )
    text = out.read_text(encoding="utf-8")
    assert token not in text
    assert text.count("# context-id: ctx-<redacted:1>-1\n") == 2  # JSON-RPC and gRPC
    shown = CliRunner().invoke(main, ["show", "--json", str(out)])
    assert shown.exit_code == 0 and token not in shown.output
    assert CliRunner().invoke(main, ["report", str(out), "-o", str(page)]).exit_code == 0
    assert token not in html.unescape(page.read_text(encoding="utf-8"))
