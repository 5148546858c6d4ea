"""What a capture can hold, replayed over real sockets: lone surrogates and undecodable paths.

`"\\ud800"` is valid JSON text, so ids and SSE events may hold lone surrogates; a path may be
`%FF`, which is no UTF-8.  The replayer must load such a capture and answer such a request
from it, byte for byte as recorded.  Model values are built directly (the file layer has its
own tests).
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator

import pytest

from recorder.capture import Capture, Exchange, Request, Response, SseEvent
from recorder.protocol import classify
from recorder.replay import Replayer

JSON = (("content-type", "application/json"),)
RPC = b'{"jsonrpc":"2.0","id":"\\ud800","method":"GetTask","params":{"id":"\\udfff"}}'
RPC_ANSWER = (
    b'{"jsonrpc":"2.0","id":"\\ud800","error":{"code":-32001,"message":"Task \\udfff not found"}}'
)
STREAM = b'{"jsonrpc":"2.0","id":7,"method":"SubscribeToTask","params":{"id":"\\ud83d"}}'
EVENT = '{"jsonrpc":"2.0","id":7,"error":{"code":-32001,"message":"no \\ud83d here"}}'


def exchange(number: int, request: Request, response: Response) -> Exchange:
    return Exchange(
        number,
        classify(request, response),
        request,
        response,
        started_us=number * 1000,
        duration_us=100,
    )


@pytest.fixture
def replayer() -> Iterator[Replayer]:
    exchanges = [
        exchange(
            1, Request("POST", "/a2a/jsonrpc", JSON, RPC), Response(200, "OK", JSON, RPC_ANSWER)
        ),
        exchange(
            2,
            Request("GET", "/a2a/rest/tasks/%FF", (("a2a-version", "1.0"),)),
            Response(
                404,
                "Not Found",
                JSON,
                b'{"error":{"code":404,"status":"NOT_FOUND","message":"Task not found"}}',
            ),
        ),
        exchange(
            3,
            Request("POST", "/a2a/jsonrpc", JSON, STREAM),
            Response(
                200,
                "OK",
                (("content-type", "text/event-stream"),),
                events=(SseEvent(0, (f"data: {EVENT}",)),),
            ),
        ),
    ]
    with Replayer([Capture("2026-01-01T00:00:00.000000Z", "test", tuple(exchanges))]) as running:
        yield running


def _request(replayer: Replayer, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
    connection = http.client.HTTPConnection(replayer.host, replayer.port, timeout=10)
    connection.request(
        method,
        path,
        body=body or None,
        headers={"Content-Type": "application/json", "A2A-Version": "1.0"},
    )
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, data


def test_a_request_holding_lone_surrogates_is_answered_from_the_capture(replayer: Replayer) -> None:
    status, body = _request(replayer, "POST", "/a2a/jsonrpc", RPC)
    assert status == 200
    assert body == RPC_ANSWER  # the recorded escapes, the live id echoed (the same one)
    assert replayer.report.misses == []


def test_an_undecodable_path_is_answered_from_the_capture(replayer: Replayer) -> None:
    status, body = _request(replayer, "GET", "/a2a/rest/tasks/%FF")
    assert status == 404 and json.loads(body)["error"]["status"] == "NOT_FOUND"
    assert replayer.report.misses == []


def test_an_sse_event_holding_a_lone_surrogate_is_sent_as_recorded(replayer: Replayer) -> None:
    status, body = _request(replayer, "POST", "/a2a/jsonrpc", STREAM)
    assert status == 200
    assert body.decode("ascii").strip() == f"data: {EVENT}"
    entry = replayer.journal.requests[-1]
    assert entry.outcome == "served" and entry.exchange == 3
    assert json.dumps(replayer.journal.as_json())  # the journal holds them too, as JSON
