"""Golden `.http` files: each is built here from a Capture value, rendered and compared byte for
byte with tests/data/<name>.http.  Regenerate with `A2A_UPDATE_GOLDEN=1 pytest <this file>`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from recorder.capture import (
    FORMAT_VERSION,
    Capture,
    Exchange,
    GrpcMessage,
    Request,
    Response,
    SseEvent,
    parse,
    read_capture,
    render,
)
from recorder.protocol import Binding, Classification, Version

DATA = Path(__file__).resolve().parents[1] / "data"
UPDATE = os.environ.get("A2A_UPDATE_GOLDEN") == "1"

TASK_ID = "bbfb9ea5-50ea-4441-b991-2a8ba0d6f3f3"
CONTEXT_ID = "41c0d462-fed8-4f6b-8569-6c9afe9497c3"
MESSAGE_ID = "48f165d5-7b00-47f4-b81e-f86f5c8cc1ab"
RPC_ID = "5d6f0a8e-3c1b-4f7e-9a2d-1b8c7e6f5a4d"


def _compact(value: object) -> bytes:
    # What Starlette's JSONResponse and httpx's json= send.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def _spaced(value: object) -> str:
    # What the Python SDK's SSE frames hold: json.dumps defaults.
    return json.dumps(value)


def _header(upstream: str) -> Capture:
    return Capture(
        started="2026-11-29T23:49:25.123456Z",
        recorder_version="0.1.0",
        upstreams=(upstream,),
        redacted=("Authorization",),
    )


def _user_message(text: str) -> dict[str, object]:
    return {"messageId": MESSAGE_ID, "role": "ROLE_USER", "parts": [{"text": text}]}


def _task(state: str, *, artifact: bool = True) -> dict[str, object]:
    task: dict[str, object] = {
        "id": TASK_ID,
        "contextId": CONTEXT_ID,
        "status": {"state": state, "timestamp": "2026-11-29T23:49:25.481203Z"},
    }
    if artifact:
        task["artifacts"] = [
            {
                "artifactId": "0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5",
                "parts": [{"text": "echo: run the tests"}],
            }
        ]
    task["history"] = [
        {**_user_message("run the tests"), "contextId": CONTEXT_ID, "taskId": TASK_ID}
    ]
    return task


def jsonrpc_send() -> Capture:
    body = {
        "id": RPC_ID,
        "jsonrpc": "2.0",
        "method": "SendMessage",
        "params": {"message": _user_message("run the tests"), "configuration": {}},
    }
    reply = {"result": {"task": _task("TASK_STATE_COMPLETED")}, "id": RPC_ID, "jsonrpc": "2.0"}
    request_body, response_body = _compact(body), _compact(reply)
    exchange = Exchange(
        number=3,
        classification=Classification(
            binding=Binding.JSONRPC,
            operation="SendMessage",
            method="SendMessage",
            version=Version.V1_0,
            task_id=TASK_ID,
            context_id=CONTEXT_ID,
        ),
        request=Request(
            "POST",
            "/a2a/jsonrpc",
            (
                ("Host", "127.0.0.1:41241"),
                ("Accept", "*/*"),
                ("A2A-Version", "1.0"),
                ("Content-Type", "application/json"),
                ("Content-Length", str(len(request_body))),
            ),
            request_body,
        ),
        response=Response(
            200,
            "OK",
            (
                ("content-length", str(len(response_body))),
                ("content-type", "application/json"),
            ),
            response_body,
        ),
        started_us=1_204_311,
        duration_us=356_892,
    )
    return _with(_header("http://127.0.0.1:41241"), exchange)


def rest_send() -> Capture:
    body = _compact({"message": _user_message("run the tests")})
    reply = _compact({"task": _task("TASK_STATE_COMPLETED")})
    exchange = Exchange(
        number=1,
        classification=Classification(
            binding=Binding.HTTP_JSON,
            operation="SendMessage",
            method="POST /message:send",
            version=Version.V1_0,
            task_id=TASK_ID,
            context_id=CONTEXT_ID,
        ),
        request=Request(
            "POST",
            "/a2a/rest/message:send",
            (
                ("A2A-Version", "1.0"),
                ("Content-Type", "application/a2a+json"),
            ),
            body,
        ),
        response=Response(200, "OK", (("Content-Type", "application/a2a+json"),), reply),
        started_us=88_019,
        duration_us=402_113,
    )
    return _with(_header("http://localhost:41241"), exchange)


def jsonrpc_stream() -> Capture:
    body = {
        "id": RPC_ID,
        "jsonrpc": "2.0",
        "method": "SendStreamingMessage",
        "params": {"message": _user_message("run the tests"), "configuration": {}},
    }
    request_body = _compact(body)

    def frame(result: dict[str, object]) -> tuple[str, ...]:
        return (
            "event: message",
            "data: " + _spaced({"result": result, "id": RPC_ID, "jsonrpc": "2.0"}),
        )

    status = {"taskId": TASK_ID, "contextId": CONTEXT_ID}
    events = (
        SseEvent(2_114, frame({"task": _task("TASK_STATE_SUBMITTED", artifact=False)})),
        SseEvent(
            3_870,
            frame(
                {
                    "statusUpdate": {
                        **status,
                        "status": {
                            "state": "TASK_STATE_WORKING",
                            "timestamp": "2026-11-29T23:49:25.479991Z",
                        },
                    }
                }
            ),
        ),
        SseEvent(15_004_211, (": ping",)),
        SseEvent(
            15_201_447,
            frame(
                {
                    "artifactUpdate": {
                        **status,
                        "artifact": {
                            "artifactId": "0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5",
                            "parts": [{"text": "echo: run the tests ✓"}],
                        },
                    }
                }
            ),
        ),
        SseEvent(
            15_202_019,
            frame(
                {
                    "statusUpdate": {
                        **status,
                        "status": {
                            "state": "TASK_STATE_COMPLETED",
                            "timestamp": "2026-11-29T23:49:40.681203Z",
                        },
                    }
                }
            ),
        ),
    )
    exchange = Exchange(
        number=4,
        classification=Classification(
            binding=Binding.JSONRPC,
            operation="SendStreamingMessage",
            method="SendStreamingMessage",
            version=Version.V1_0,
            task_id=TASK_ID,
            context_id=CONTEXT_ID,
            streaming=True,
        ),
        request=Request(
            "POST",
            "/a2a/jsonrpc",
            (
                ("Host", "127.0.0.1:41241"),
                ("Accept", "text/event-stream"),
                ("Cache-Control", "no-store"),
                ("A2A-Version", "1.0"),
                ("Content-Type", "application/json"),
                ("Content-Length", str(len(request_body))),
            ),
            request_body,
        ),
        response=Response(
            200,
            "OK",
            (
                ("cache-control", "no-store"),
                ("connection", "keep-alive"),
                ("x-accel-buffering", "no"),
                ("content-type", "text/event-stream; charset=utf-8"),
                ("transfer-encoding", "chunked"),
            ),
            events=events,
            newline="\r\n",
        ),
        started_us=2_918_004,
        duration_us=15_203_377,
    )
    return _with(_header("http://127.0.0.1:41241"), exchange)


def grpc_send() -> Capture:
    request_json = json.dumps({"message": _user_message("run the tests")}, separators=(",", ":"))
    reply_json = json.dumps({"task": _task("TASK_STATE_COMPLETED")}, separators=(",", ":"))
    exchange = Exchange(
        number=2,
        classification=Classification(
            binding=Binding.GRPC,
            operation="SendMessage",
            method="/lf.a2a.v1.A2AService/SendMessage",
            version=Version.V1_0,
            task_id=TASK_ID,
            context_id=CONTEXT_ID,
        ),
        request=Request(
            "POST",
            "/lf.a2a.v1.A2AService/SendMessage",
            (
                (":authority", "127.0.0.1:41242"),
                ("content-type", "application/grpc"),
                ("te", "trailers"),
                ("a2a-version", "1.0"),
                ("grpc-accept-encoding", "identity,gzip"),
                ("user-agent", "grpc-python/1.71.0 grpc-c/46.0.0 (linux; chttp2)"),
            ),
            http_version="HTTP/2",
            messages=(GrpcMessage(0, json=request_json, type_name="lf.a2a.v1.SendMessageRequest"),),
        ),
        response=Response(
            200,
            "",
            (
                ("content-type", "application/grpc"),
                ("grpc-accept-encoding", "identity,gzip"),
            ),
            http_version="HTTP/2",
            messages=(
                GrpcMessage(351_870, json=reply_json, type_name="lf.a2a.v1.SendMessageResponse"),
            ),
            trailers=(("grpc-status", "0"),),
        ),
        started_us=5_006_500,
        duration_us=352_004,
    )
    return _with(_header("127.0.0.1:41242"), exchange)


def rest_task_not_found() -> Capture:
    missing = "00000000-0000-0000-0000-000000000000"
    error = _compact(
        {
            "error": {
                "code": 404,
                "status": "NOT_FOUND",
                "message": f"Task {missing} not found",
                "details": [
                    {
                        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                        "reason": "TASK_NOT_FOUND",
                        "domain": "a2a-protocol.org",
                        "metadata": {},
                    }
                ],
            }
        }
    )
    exchange = Exchange(
        number=7,
        classification=Classification(
            binding=Binding.HTTP_JSON,
            operation="GetTask",
            method="GET /tasks/{id}",
            version=Version.V1_0,
            task_id=missing,
            error="TaskNotFoundError",
        ),
        request=Request(
            "GET",
            f"/a2a/rest/tasks/{missing}?historyLength=2",
            (
                ("Host", "127.0.0.1:41241"),
                ("Accept", "*/*"),
                ("A2A-Version", "1.0"),
            ),
        ),
        response=Response(
            404,
            "Not Found",
            (
                ("content-length", str(len(error))),
                ("content-type", "application/json"),
            ),
            error,
        ),
        started_us=9_400_120,
        duration_us=2_311,
        notes=("redacted: Authorization",),
    )
    return _with(_header("http://127.0.0.1:41241"), exchange)


def _with(header: Capture, *exchanges: Exchange) -> Capture:
    return Capture(
        started=header.started,
        recorder_version=header.recorder_version,
        upstreams=header.upstreams,
        redacted=header.redacted,
        exchanges=exchanges,
    )


GOLDEN: dict[str, Callable[[], Capture]] = {
    "jsonrpc-send": jsonrpc_send,
    "rest-send": rest_send,
    "jsonrpc-stream": jsonrpc_stream,
    "grpc-send": grpc_send,
    "rest-task-not-found": rest_task_not_found,
}


@pytest.mark.parametrize("name", sorted(GOLDEN), ids=sorted(GOLDEN))
def test_golden_file_matches_byte_for_byte(name: str) -> None:
    capture = GOLDEN[name]()
    text = render(capture)
    path = DATA / f"{name}.http"
    if UPDATE:
        path.write_bytes(text.encode("utf-8"))
    assert path.read_bytes() == text.encode("utf-8"), f"{path} differs; A2A_UPDATE_GOLDEN=1"
    assert read_capture(path) == capture


def test_every_golden_file_has_a_builder() -> None:
    assert sorted(p.stem for p in DATA.glob("*.http")) == sorted(GOLDEN)


def test_rest_send_looks_like_the_seed_listing() -> None:
    lines = (DATA / "rest-send.http").read_text(encoding="utf-8").split("\n")
    start = lines.index("POST /a2a/rest/message:send HTTP/1.1")
    assert lines[start : start + 7] == [
        "POST /a2a/rest/message:send HTTP/1.1",
        "A2A-Version: 1.0",
        "Content-Type: application/a2a+json",
        "",
        "{",
        '  "message": {',
        f'    "messageId": "{MESSAGE_ID}",',
    ]
    assert '    "role": "ROLE_USER",' in lines
    status = lines.index("HTTP/1.1 200 OK")
    assert lines[status : status + 6] == [
        "HTTP/1.1 200 OK",
        "Content-Type: application/a2a+json",
        "",
        "{",
        '  "task": {',
        f'    "id": "{TASK_ID}",',
    ]
    assert lines[6] == "### 1 SendMessage HTTP+JSON 200"


def test_exchange_lines_name_number_operation_binding_outcome() -> None:
    firsts = {
        name: next(line for line in render(build()).split("\n") if line.startswith("###"))
        for name, build in GOLDEN.items()
    }
    assert firsts == {
        "jsonrpc-send": "### 3 SendMessage JSONRPC 200",
        "rest-send": "### 1 SendMessage HTTP+JSON 200",
        "jsonrpc-stream": "### 4 SendStreamingMessage JSONRPC 200",
        "grpc-send": "### 2 SendMessage GRPC OK",
        "rest-task-not-found": "### 7 GetTask HTTP+JSON TaskNotFoundError",
    }


def test_stream_golden_keeps_the_wire_bytes() -> None:
    text = (DATA / "jsonrpc-stream.http").read_text(encoding="utf-8")
    assert "# sse-newline: crlf" in text.split("\n")
    assert ": +15.004211s\n: ping\n" in text
    response = parse(text).exchanges[0].response
    assert response is not None and response.newline == "\r\n"
    assert response.events[1].lines[1].startswith('data: {"result": {"statusUpdate": {"taskId"')


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_version_1_files_read_as_the_same_capture(name: str) -> None:
    # tests/data/v1/ holds the goldens as format 1 wrote them: framing headers among the
    # sendable ones.  They read as the same model, and render in the current format.
    old = read_capture(DATA / "v1" / f"{name}.http")
    assert old.format_version == 1
    assert replace(old, format_version=FORMAT_VERSION) == GOLDEN[name]()
    assert render(old) == (DATA / f"{name}.http").read_text(encoding="utf-8")


def test_framing_headers_are_not_sendable_when_a_body_is_shown() -> None:
    text = (DATA / "jsonrpc-send.http").read_text(encoding="utf-8")
    request = text.split("\nPOST ", 1)[1].split("\n\n", 1)[0]
    assert "Content-Length" not in request
    assert "# wire-header: request 4 Content-Length: 231" in text.split("\n")
