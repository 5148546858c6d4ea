"""A multi-agent session as one trace: a client calls an orchestrator (a real a2a-sdk agent)
that calls three agents by skill (`_orchestrator`'s plan: JSON-RPC with a push config, gRPC
streamed through CONNECT, HTTP+JSON), all through `record --forward`.  `export --to otlp`
of the folder gives one trace whose spans nest as the calls did, checked span by span; the
same spans POSTed to an OTLP/HTTP endpoint decode, with the OpenTelemetry protobuf
definitions, to the JSON's spans field by field; `report` of the folder draws it.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import re
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from _helpers import free_port
from _orchestrator import SKILLS, _call, run_orchestrator
from a2a.client import A2ACardResolver
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.types.a2a_pb2 import Message, Part, Role
from click.testing import CliRunner
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from test_fleet import Cli

from recorder.capture import read_capture
from recorder.cli import main
from recorder.demo import DemoAgent, WebhookReceiver


class Orchestrate(AgentExecutor):
    """Each message runs the orchestrator's plan against the agents, through the proxy."""

    def __init__(self, urls: tuple[str, ...], hook: WebhookReceiver, proxy: str) -> None:
        self.urls, self.hook, self.proxy = urls, hook, proxy

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        outcome = await run_orchestrator(self.urls, self.hook, proxy=self.proxy)
        text = "; ".join(f"{skill}: {agent}" for skill, agent, _ in outcome.steps)
        answer = Message(
            message_id=str(uuid.uuid4()), role=Role.ROLE_AGENT, parts=[Part(text=text)]
        )
        await event_queue.enqueue_event(answer)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class Session:
    folder: Path
    answer: str


async def _client(url: str, proxy: str) -> str:
    async with httpx.AsyncClient(timeout=30, proxy=proxy) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        events = await _call(card, http, lambda _: None, "book", "JSONRPC", False, False, "")  # type: ignore[arg-type,return-value]
    return events[0].message.parts[0].text


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    folder = tmp_path_factory.mktemp("trace") / "trip"
    port = free_port()
    proxy = f"http://127.0.0.1:{port}"
    with Cli("record", "--forward", "--listen", f"127.0.0.1:{port}", "--out", str(folder)) as cli:
        cli.until("recording to")
        agents = [
            DemoAgent(event_delay=0.05, name=f"{skill} agent", skills=(skill,), push_proxy=proxy)
            for skill in SKILLS
        ]
        for agent in agents:
            agent.start()
        try:
            with WebhookReceiver() as hook:
                urls = tuple(agent.base_url for agent in agents)
                executor = Orchestrate(urls, hook, proxy)
                with DemoAgent(name="orchestrator", skills=(), executor=executor) as boss:
                    answer = asyncio.run(_client(boss.base_url, proxy))
        finally:
            for agent in agents:
                agent.stop()
        code, err = cli.interrupt()
    assert code == 0, err
    yield Session(folder, answer)


def _spans(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Every span, with its resource's service.name and its attributes as a dict."""
    out = []
    for resource in document["resourceSpans"]:
        service = _attributes(resource["resource"]["attributes"])["service.name"]
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                out.append({**span, "service": service, "attrs": _attributes(span["attributes"])})
    return sorted(out, key=lambda s: (int(s["startTimeUnixNano"]), s["spanId"]))


def _attributes(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values())) for a in items}


def _export(*args: str) -> str:
    result = CliRunner().invoke(main, ["export", *args, "--to", "otlp"])
    assert result.exit_code == 0, result.output
    return result.output


def _tree(spans: list[dict[str, Any]]) -> list[str]:
    """The spans as an indented outline: `caller -> callee Operation (why)` per call."""
    children: dict[str | None, list[dict[str, Any]]] = {}
    for span in spans:
        children.setdefault(span.get("parentSpanId"), []).append(span)
    lines: list[str] = []

    def walk(parent: str | None, depth: int) -> None:
        for span in children.get(parent, []):
            a = span["attrs"]
            if span["kind"] == 1:  # a stream event batch
                line = f"{span['name']} ({a['a2a_recorder.events']} events)"
            else:
                line = f"{span['service']} -> {a['server.address']} {span['name']}"
                line += f" ({a['a2a_recorder.parent']})"
            lines.append("  " * depth + line)
            walk(span["spanId"], depth + 1)

    walk(None, 0)
    return lines


def test_the_session_is_one_trace_whose_spans_nest_as_the_calls_did(
    session: Session, tmp_path: Path
) -> None:
    assert session.answer == "echo: echo agent; slow: slow agent; message: message agent"
    out = tmp_path / "trace.json"
    _export(str(session.folder), "-o", str(out))
    spans = _spans(json.loads(out.read_text()))
    assert len({s["traceId"] for s in spans}) == 1
    tree = _tree(spans)
    # the gRPC call's stream: the task, then the events as they came (batched when close)
    grpc = next(i for i, line in enumerate(tree) if "SendStreamingMessage" in line)
    batches = [line.strip() for line in tree[grpc + 1 :] if "events)" in line]
    assert sum(int(b.split("(")[1].split()[0]) for b in batches) == _streamed(session.folder)
    tree = [line for line in tree if "events)" not in line]
    assert tree == [
        "client -> orchestrator AgentCard (none)",
        "client -> orchestrator SendMessage (none)",
        "  orchestrator -> echo agent AgentCard (open-request)",
        "  orchestrator -> slow agent AgentCard (open-request)",
        "  orchestrator -> message agent AgentCard (open-request)",
        "  orchestrator -> echo agent SendMessage (open-request)",
        *["    echo agent -> " + _webhook(spans) + " PushDelivery (task)"] * 4,
        "  orchestrator -> slow agent SendStreamingMessage (open-request)",
        "  orchestrator -> message agent SendMessage (open-request)",
    ]
    by_name = {(s["attrs"]["server.address"], s["name"]): s for s in spans if s["kind"] == 3}
    send = by_name["echo agent", "SendMessage"]["attrs"]
    assert (
        send["a2a.protocol.binding"] == "JSONRPC"
        and send["a2a.task.state"] == "TASK_STATE_COMPLETED"
    )
    assert send["a2a.task.id"] and send["a2a.context.id"] and send["jsonrpc.request.id"]
    stream = by_name["slow agent", "SendStreamingMessage"]["attrs"]
    assert stream["a2a.protocol.binding"] == "GRPC" and stream["rpc.response.status_code"] == "OK"
    assert by_name["message agent", "SendMessage"]["attrs"]["a2a.protocol.binding"] == "HTTP+JSON"
    # the same capture gives the same trace, byte for byte
    assert _export(str(session.folder)) == out.read_text()


def _streamed(folder: Path) -> int:
    """How many messages the recorded gRPC stream holds (task, working, chunks, completed)."""
    found = [
        len(x.response.messages)
        for path in folder.glob("*.http")
        for x in read_capture(path).exchanges
        if x.classification.operation == "SendStreamingMessage" and x.response is not None
    ]
    assert len(found) == 1 and found[0] >= 4
    return found[0]


def _webhook(spans: list[dict[str, Any]]) -> str:
    return next(s["attrs"]["server.address"] for s in spans if s["name"] == "PushDelivery")


class _Collector(http.server.BaseHTTPRequestHandler):
    received: list[tuple[str, str, bytes]] = []

    def do_POST(self) -> None:  # the stdlib's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append((self.path, self.headers["Content-Type"], body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_the_endpoint_gets_the_same_spans_as_protobuf(session: Session) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        sent = _export(str(session.folder), "--endpoint", url)
    finally:
        server.shutdown()
    [(path, content_type, body)] = _Collector.received
    assert (path, content_type) == ("/v1/traces", "application/x-protobuf")
    request = ExportTraceServiceRequest.FromString(body)
    decoded = _spans(_as_otlp_json(request))
    written = _spans(json.loads(_export(str(session.folder))))
    assert sent == f"{url}/v1/traces: {len(written)} spans sent\n"
    assert len(decoded) == len(written) > 10
    for got, expected in zip(decoded, written, strict=True):
        for key in ("traceId", "spanId", "parentSpanId", "name", "kind", "service", "attrs"):
            assert got.get(key) == expected.get(key), key
        for key in ("startTimeUnixNano", "endTimeUnixNano", "events", "status"):
            assert got.get(key) == expected.get(key), key


def _as_otlp_json(request: ExportTraceServiceRequest) -> dict[str, Any]:
    """What the protobuf says, read with the OpenTelemetry definitions, ids in hex."""
    document = json_format.MessageToDict(request, use_integers_for_enums=True)
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = bytes.fromhex(_b64_hex(span[key])).hex()
    return document


def _b64_hex(value: str) -> str:
    import base64

    return base64.b64decode(value).hex()


def test_the_fleet_report_draws_the_session_as_one_waterfall(
    session: Session, tmp_path: Path
) -> None:
    page = tmp_path / "fleet.html"
    result = CliRunner().invoke(main, ["report", str(session.folder), "-o", str(page)])
    assert result.exit_code == 0, result.output
    html = page.read_text()
    rows = re.findall(r'<a class="row" href="#([^"]+)"[^>]*>\s*<span class="who" '
                      r'style="padding-left: ([\d.]+)em">([^<]*)</span>', html)  # fmt: skip
    spans = _spans(json.loads(_export(str(session.folder))))
    calls = [s for s in spans if s["kind"] == 3]
    assert len(rows) == len(calls)
    outline = [(float(indent), who.split(" task ")[0]) for _, indent, who in rows]
    assert outline[:3] == [
        (0.0, "client → orchestrator AgentCard"),
        (0.0, "client → orchestrator SendMessage"),
        (1.2, "orchestrator → echo agent AgentCard"),
    ]
    assert [who for indent, who in outline if indent == 2.4] == [
        f"echo agent → {_webhook(spans)} PushDelivery"
    ] * 4
    for anchor, _, _ in rows:  # each bar opens its exchange, as recorded
        assert f'<section class="exchange" id="{anchor}">' in html
    assert html.count('<span class="tick"') == sum(1 for s in spans if s["kind"] == 1)
