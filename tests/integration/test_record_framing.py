"""Each SDK's own SSE framing, recorded through the real recorder, losslessly.

Tiny agents of our own write the exact bytes each SDK writes (read from their sources, see
/work/shared/reference/sdk-variants.md):
- Go (a2a-go `internal/sse`): `id: <uuid>` then `data: <json>` per event, `: keep-alive`
  comments; an error on a streaming method is an SSE event with HTTP 200;
- Java (a2a-java `SseResponseWriter`): `: SSE stream started` first, then `data:` and `id: <n>`;
- VoltAgent (`server-hono` a2a routes): `data: \\x1e<json>`;
- .NET: `data: <json>`, and mid-stream `data: {"error":"An internal error occurred during
  streaming."}`.

For each: the capture gives back the agent's bytes, event for event; `show` reads the task's
state; `lint` runs; `diff` of two recordings of the Go agent (fresh uuids each time) finds no
difference, since event ids are volatile; and the replayer serves the recorded bytes.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from _helpers import exchanges, wait_for
from _tiny_agents import Answer, TinyAgent, TinyRequest
from click.testing import CliRunner

from recorder.capture import Exchange, read_capture
from recorder.cli import main
from recorder.protocol import answered_state, render_events
from recorder.record import RecordingProxy
from recorder.replay import Replayer

TIMEOUT = 10.0
RPC = "/a2a/jsonrpc"
TASK, CONTEXT = "task-1", "ctx-1"
STREAM_REQUEST = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendStreamingMessage",
    "params": {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
}
V03_STREAM_REQUEST = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "message/stream",
    "params": {"message": {"messageId": "m-1", "role": "user", "kind": "message", "parts": []}},
}


def _v1_events() -> list[dict[str, object]]:
    status = {"taskId": TASK, "contextId": CONTEXT}
    results = [
        {"task": {"id": TASK, "contextId": CONTEXT, "status": {"state": "TASK_STATE_SUBMITTED"}}},
        {"statusUpdate": {**status, "status": {"state": "TASK_STATE_WORKING"}}},
        {"statusUpdate": {**status, "status": {"state": "TASK_STATE_COMPLETED"}}},
    ]
    return [{"jsonrpc": "2.0", "id": 1, "result": r} for r in results]


def _v03_events() -> list[dict[str, object]]:
    base = {"taskId": TASK, "contextId": CONTEXT}
    results = [
        {"kind": "task", "id": TASK, "contextId": CONTEXT, "status": {"state": "submitted"}},
        {"kind": "status-update", **base, "status": {"state": "working"}, "final": False},
        {"kind": "status-update", **base, "status": {"state": "completed"}, "final": True},
    ]
    return [{"jsonrpc": "2.0", "id": 1, "result": r} for r in results]


def _compact(document: object) -> str:
    return json.dumps(document, separators=(",", ":"))


def go_stream() -> list[bytes]:
    events = [f"id: {uuid.uuid4()}\ndata: {_compact(e)}\n\n".encode() for e in _v1_events()]
    return [events[0], b": keep-alive\n\n", *events[1:]]


def go_stream_error() -> list[bytes]:
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "task not found"}}
    return [f"id: {uuid.uuid4()}\ndata: {_compact(error)}\n\n".encode()]


def java_stream() -> list[bytes]:
    events = [f"data: {_compact(e)}\nid: {n}\n\n".encode() for n, e in enumerate(_v1_events())]
    return [b": SSE stream started\n\n" + events[0], *events[1:]]  # merged into the first write


def voltagent_stream() -> list[bytes]:
    return [f"data: \x1e{_compact(e)}\n\n".encode() for e in _v03_events()]


def dotnet_stream() -> list[bytes]:
    events = [f"data: {_compact(e)}\n\n".encode() for e in _v1_events()[:2]]
    return [*events, b'data: {"error":"An internal error occurred during streaming."}\n\n']


SSE_HEAD = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]
# name -> (request body, the agent's chunks, the state show reads, the error the classifier names)
FRAMINGS: dict[str, tuple[dict[str, object], Callable[[], list[bytes]], str | None, str | None]] = {
    "go": (STREAM_REQUEST, go_stream, "COMPLETED", None),
    "go-error-as-event": (STREAM_REQUEST, go_stream_error, None, "TaskNotFoundError"),
    "java": (STREAM_REQUEST, java_stream, "COMPLETED", None),
    "voltagent": (V03_STREAM_REQUEST, voltagent_stream, "COMPLETED", None),
    "dotnet-error-mid-stream": (STREAM_REQUEST, dotnet_stream, "WORKING", "JSONRPCError(no code)"),
}  # fmt: skip


def _stream_agent(chunks: Callable[[], list[bytes]]) -> TinyAgent:
    async def handle(request: TinyRequest, answer: Answer) -> None:
        await answer(200, SSE_HEAD, chunks())

    return TinyAgent(handle)


def _record(name: str, out: Path) -> tuple[bytes, Exchange]:
    """One streaming call through the recorder; (the bytes the client got, the exchange)."""
    body, chunks, _, _ = FRAMINGS[name]
    with _stream_agent(chunks) as agent, RecordingProxy(upstream=agent.base_url, out=out) as proxy:
        got = httpx.post(proxy.url + RPC, json=body, timeout=TIMEOUT)
        assert wait_for(lambda: len(exchanges(out)) == 1, timeout=TIMEOUT)
    return got.content, read_capture(out).exchanges[0]


@pytest.mark.parametrize("name", list(FRAMINGS))
def test_framing_is_recorded_losslessly_and_read(name: str, tmp_path: Path) -> None:
    out = tmp_path / f"{name}.http"
    wire, exchange = _record(name, out)
    _, _, state, error = FRAMINGS[name]
    response = exchange.response
    assert response is not None and response.status == 200
    assert render_events([e.lines for e in response.events], response.newline) == wire
    assert exchange.classification.error == error
    answer = answered_state(response)
    assert (answer.state if answer else None) == state
    runner = CliRunner()
    shown = runner.invoke(main, ["show", str(out)])
    assert shown.exit_code == 0, shown.output
    if state:
        assert state in shown.output
    linted = runner.invoke(main, ["lint", str(out)])
    assert linted.exit_code in (0, 1) and "Traceback" not in linted.output, linted.output
    detail = runner.invoke(main, ["show", str(out), "1"])
    assert detail.exit_code == 0, detail.output


def test_voltagent_record_separator_is_kept_in_the_capture(tmp_path: Path) -> None:
    _, exchange = _record("voltagent", tmp_path / "volt.http")
    assert exchange.response is not None
    assert all(e.lines[0].startswith("data: \x1e{") for e in exchange.response.events)


def test_go_event_ids_are_volatile_in_diff(tmp_path: Path) -> None:
    first, second = tmp_path / "a.http", tmp_path / "b.http"
    wire_a, a = _record("go", first)
    wire_b, b = _record("go", second)
    assert wire_a != wire_b  # each run wrote its own uuids
    result = CliRunner().invoke(main, ["diff", str(first), str(second)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("name", list(FRAMINGS))
def test_replay_serves_each_framing_as_recorded(name: str, tmp_path: Path) -> None:
    out = tmp_path / f"{name}.http"
    wire, _ = _record(name, out)
    body = FRAMINGS[name][0]
    with Replayer([read_capture(out)]) as replayer:
        served = httpx.post(replayer.url + RPC, json=body, timeout=TIMEOUT)
    assert served.status_code == 200
    assert served.content == wire
