"""A binding the card names by a URI (spec §5.8): recorded under that name, shown, replayed.

No SDK here speaks a custom binding (WebSocket and MQTT ones are client plugins elsewhere), so
the agent is a tiny one (`_tiny_agents`): its card lists JSON-RPC and a custom binding whose
URL takes a JSON-RPC-shaped POST and answers with its own envelope.  The recorder (reverse
mode, card rewritten) and the replayer are the real ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from _tiny_agents import Answer, TinyAgent, TinyRequest, json_head

from recorder.capture import read_capture
from recorder.protocol import UNKNOWN, Binding
from recorder.record import RecordingProxy
from recorder.replay import Replayer
from recorder.show import capture_rows, render_table

URI = "https://example.org/a2a/bindings/envelope/v1"
CUSTOM_PATH = "/a2a/envelope"


def _card(base: str) -> dict[str, object]:
    interfaces = [
        {"url": f"{base}/a2a/jsonrpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": f"{base}{CUSTOM_PATH}", "protocolBinding": URI, "protocolVersion": "1.0"},
    ]
    return {"name": "enveloped", "version": "1", "description": "custom binding",
            "supportedInterfaces": interfaces, "capabilities": {}, "skills": [],
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"]}  # fmt: skip


async def _agent(request: TinyRequest, answer: Answer) -> None:
    if request.path == "/.well-known/agent-card.json":
        body = json.dumps(_card(f"http://{request.headers['host']}")).encode()
    else:
        sent = json.loads(request.body)
        body = json.dumps({"envelope": {"re": sent["method"], "task": {"id": "t-1",
                           "status": {"state": "TASK_STATE_COMPLETED"}}}}).encode()  # fmt: skip
    await answer(200, json_head(len(body)), [body])


def _send(base: str) -> httpx.Response:
    envelope = {"method": "SendMessage", "message": {"parts": [{"text": "hi"}]}}
    return httpx.post(f"{base}{CUSTOM_PATH}", json=envelope, timeout=10)


def test_a_custom_binding_is_recorded_under_its_uri_shown_and_replayed(tmp_path: Path) -> None:
    out = tmp_path / "custom.http"
    with TinyAgent(_agent) as agent, RecordingProxy(upstream=agent.base_url, out=out) as proxy:
        card = httpx.get(f"{proxy.url}/.well-known/agent-card.json", timeout=10).json()
        served = {i["protocolBinding"]: i["url"] for i in card["supportedInterfaces"]}
        assert served[URI] == f"{proxy.url}{CUSTOM_PATH}"  # rewritten, as every interface
        live = _send(proxy.url)
    capture = read_capture(out)
    sent = capture.exchanges[-1]
    c = sent.classification
    assert (c.binding, c.binding_uri, c.operation, c.method) == (
        Binding.CUSTOM,
        URI,
        UNKNOWN,
        "POST SendMessage",
    )
    assert f"### 2 unknown {URI} 200" in out.read_text()
    rows = capture_rows(capture)
    assert rows[-1]["binding"] == URI
    assert URI in render_table(rows)
    with Replayer([capture], timing="none") as replayer:
        card = httpx.get(f"{replayer.url}/.well-known/agent-card.json", timeout=10).json()
        served = {i["protocolBinding"]: i["url"] for i in card["supportedInterfaces"]}
        assert served[URI] == f"{replayer.url}{CUSTOM_PATH}"
        again = _send(replayer.url)
        report = replayer.report
    assert (again.status_code, again.json()) == (live.status_code, live.json())
    assert report.clean  # every recorded exchange served, every request matched
