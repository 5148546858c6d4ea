"""Captures run in an editor's HTTP client: httpyac sends every request of a capture as written.

httpyac (npm, built in `.peers/` by scripts/peers/envs.py) runs `.http` files as the VS Code and
JetBrains HTTP clients do: request line, headers and body as the file shows them.  Sent to the
replayer of their own capture, the requests must get the recorded outcomes; sent through the
recorder to a live agent, each must reach it as a valid request (before capture format 2, a
pretty body went out with the wire's Content-Length and the agent answered 400).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from recorder.capture import Capture, Exchange, Request, Response, read_capture, write_capture
from recorder.demo import DemoAgent, WebhookReceiver, run_session
from recorder.protocol import PUSH_DELIVERY, Binding, response_error
from recorder.record import RecordingProxy
from recorder.replay import Replayer

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "scripts" / "peers"))
from envs import ENVS, is_built  # noqa: E402

ENV = ENVS["httpyac"]
HTTPYAC = ENV.path / "node_modules" / ".bin" / "httpyac"
CAPTURES = HERE.parents[1] / "captures"
pytestmark = pytest.mark.skipif(not is_built(ENV), reason="httpyac is not built in .peers/")
# JSON-RPC and HTTP+JSON captures of two SDKs: a2a-python's and a2a-js's servers.
FILES = sorted(
    [
        *CAPTURES.glob("a2a-python-1.3.0/*.http"),
        *CAPTURES.glob("a2a-python-1.3.0/http-json/*.http"),
        *CAPTURES.glob("a2a-js-1.3.0/http-json/*.http"),
    ]
)


def _sendable(capture: Capture, host: str) -> Capture:
    """The client's requests of a capture (no push deliveries: the agent sends those), with the
    Host header naming `host`, as a user edits it (or sets an httpyac variable) to aim there."""

    def aimed(request: Request) -> Request:
        headers = tuple((k, host) if k.lower() == "host" else (k, v) for k, v in request.headers)
        return replace(request, headers=headers)

    kept = tuple(
        replace(e, request=aimed(e.request))
        for e in capture.exchanges
        if e.classification.operation != PUSH_DELIVERY and e.response is not None
    )
    return replace(capture, exchanges=kept)


def _httpyac(files: list[Path]) -> list[dict[str, Any]]:
    """Run every request of `files` (in one folder), in order, as httpyac does; one result
    per request."""
    folder = files[0].parent
    out = folder / "httpyac.json"
    # To a file: node cuts a piped stdout short when it exits (at 64 KiB here).
    with out.open("w") as sink:
        done = subprocess.run(
            [
                str(HTTPYAC),
                "send",
                *(f.name for f in files),
                "--all",
                "--json",
                "--timeout",
                "20000",
            ],
            stdout=sink,
            stderr=subprocess.PIPE,
            text=True,
            timeout=600,
            check=False,
            cwd=folder,
        )
    assert out.stat().st_size, done.stderr[-2000:]
    results: list[dict[str, Any]] = json.loads(out.read_text())["requests"]
    return results


def _outcome(binding: Binding | None, status: int, body: bytes) -> tuple[int, str | None]:
    """What a client reads from an answer: the HTTP status and the A2A error it carried."""
    return status, response_error(binding, Response(status, body=body))


def _answered(result: dict[str, Any]) -> tuple[int, bytes]:
    response = result.get("response") or {}
    return int(response.get("statusCode", 0)), str(response.get("body", "")).encode()


def test_every_request_gets_the_recorded_outcome_from_the_replayer(tmp_path: Path) -> None:
    replayers = [Replayer([read_capture(path)]) for path in FILES]
    sent: list[tuple[Path, Exchange]] = []
    files = []
    try:
        for index, (path, replayer) in enumerate(zip(FILES, replayers, strict=True)):
            replayer.start()
            capture = _sendable(read_capture(path), replayer.url.removeprefix("http://"))
            copy = tmp_path / f"{index:02d}-{path.name}"
            write_capture(copy, capture)
            files.append(copy)
            sent += [(path, e) for e in capture.exchanges]
        results = _httpyac(files)
    finally:
        for replayer in replayers:
            replayer.stop()
    assert len(results) == len(sent)
    wrong = []
    for (path, exchange), result in zip(sent, results, strict=True):
        assert exchange.response is not None
        recorded = _outcome(
            exchange.classification.binding, exchange.response.status, exchange.response.body
        )
        got = _outcome(exchange.classification.binding, *_answered(result))
        if got != recorded and not exchange.response.events:
            wrong.append(
                f"{path.relative_to(CAPTURES)} #{exchange.number} "
                f"{exchange.classification.operation}: recorded {recorded}, got {got}"
            )
        elif exchange.response.events:
            assert got[0] == recorded[0], (path, exchange.number, got)
    assert not wrong, "\n".join(wrong)


PARSE_ERRORS = {
    "JSONRPCError(-32700)",
    "JSONRPCError(-32600)",
    "InvalidParamsError",
    "InvalidRequestError",
    "JSONParseError",
}


def test_every_request_reaches_a_live_agent_as_a_valid_request(tmp_path: Path) -> None:
    live = tmp_path / "live.http"
    with DemoAgent(enable_grpc=False, event_delay=0.05) as agent:
        for binding in ("JSONRPC", "HTTP+JSON"):
            out = tmp_path / f"{binding}.http"
            with (
                WebhookReceiver() as hook,
                RecordingProxy(upstream=agent.base_url, out=out) as proxy,
            ):
                asyncio.run(run_session(proxy.url, binding=binding, webhook=hook))
        captures = [read_capture(tmp_path / f"{b}.http") for b in ("JSONRPC", "HTTP+JSON")]
        with RecordingProxy(upstream=agent.base_url, out=live) as proxy:
            files = []
            for index, capture in enumerate(captures):
                copy = tmp_path / f"send-{index}.http"
                write_capture(copy, _sendable(capture, proxy.url.removeprefix("http://")))
                files.append(copy)
            results = _httpyac(files)
    sent = [e for c in captures for e in _sendable(c, "x").exchanges]
    assert len(results) == len(sent)
    for exchange, result in zip(sent, results, strict=True):
        status, error = _outcome(exchange.classification.binding, *_answered(result))
        assert status != 0, (exchange.number, result)
        # A request the agent could not read would be a framing or parse error.
        assert status != 400 or error not in PARSE_ERRORS | {"HTTPError(400)"}, (
            exchange.number,
            exchange.classification.operation,
            result.get("response"),
        )
        assert error not in PARSE_ERRORS, (exchange.number, error)
    # The recorder saw them all, as valid A2A requests.
    recorded = read_capture(live).exchanges
    assert len([e for e in recorded if e.classification.operation != PUSH_DELIVERY]) == len(sent)


def test_format_1_sent_as_written_was_broken_and_format_2_is_not(tmp_path: Path) -> None:
    # The reproducer: format 1 showed the wire's Content-Length above a pretty body, and an
    # editor sends it as written; the same capture in format 2 goes through.
    old = (HERE.parent / "data" / "v1" / "jsonrpc-send.http").read_text()
    capture = read_capture(HERE.parent / "data" / "jsonrpc-send.http")
    assert "Content-Length: 231" in old
    with Replayer([capture]) as replayer:
        host = replayer.url.removeprefix("http://")
        (tmp_path / "v1.http").write_text(old.replace("Host: 127.0.0.1:41241", f"Host: {host}"))
        write_capture(tmp_path / "v2.http", _sendable(capture, host))
        old_result, new_result = _httpyac([tmp_path / "v1.http", tmp_path / "v2.http"])
    binding = capture.exchanges[0].classification.binding
    # The pretty body is longer than 231 bytes: its first 231 are no JSON (a JSON-RPC parse
    # error; what follows them is then a bad request).
    assert _outcome(binding, *_answered(old_result)) in {
        (200, "JSONParseError"),
        (400, "HTTPError(400)"),
    }
    assert _outcome(binding, *_answered(new_result)) == (200, None)
