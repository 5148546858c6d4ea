"""`answered_state`: the task and the state an answer leaves it in, in every wire shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recorder.capture import GrpcMessage, Response, SseEvent, read_capture
from recorder.protocol import Answer, answered_state

CAPTURES = Path(__file__).resolve().parents[2] / "captures"
TASK = {"id": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}


def _body(document: object) -> Response:
    return Response(200, body=json.dumps(document).encode())


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (_body({"jsonrpc": "2.0", "id": 1, "result": {"task": TASK}}), ("t-1", "WORKING")),
        (_body({"task": TASK}), ("t-1", "WORKING")),
        (_body(TASK), ("t-1", "WORKING")),  # GetTask over HTTP+JSON
        (_body({"message": {"messageId": "m", "taskId": "t-2"}}), ("t-2", None)),
        (_body({"message": {"messageId": "m"}}), (None, None)),
        (
            _body(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "result": {"kind": "task", "id": "t-3", "status": {"state": "input-required"}},
                }
            ),
            ("t-3", "INPUT_REQUIRED"),
        ),  # v0.3
        (_body({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001}}), None),
        (
            Response(
                200,
                events=(
                    SseEvent(0, ("data: " + json.dumps({"task": TASK}),)),
                    SseEvent(1, (": ping",)),
                    SseEvent(
                        2,
                        (
                            "data: "
                            + json.dumps(
                                {
                                    "statusUpdate": {
                                        "taskId": "t-1",
                                        "status": {"state": "TASK_STATE_COMPLETED"},
                                    }
                                }
                            ),
                        ),
                    ),
                    SseEvent(3, ("data: " + json.dumps({"artifactUpdate": {"taskId": "t-1"}}),)),
                ),
            ),
            ("t-1", "COMPLETED"),
        ),
        (
            Response(
                200,
                messages=(GrpcMessage(0, json=json.dumps({"task": TASK})),),
                trailers=(("grpc-status", "0"),),
            ),
            ("t-1", "WORKING"),
        ),
        (Response(200, body=b"\xff not json"), None),
        (None, None),
    ],
)
def test_shapes(response: Response | None, expected: tuple[str | None, str | None] | None) -> None:
    found = answered_state(response)
    assert (None if found is None else (found.task_id, found.state)) == expected


# a2a-java 1.0.0.Alpha3's gRPC service is a2a.v1.A2AService, v0.3's name with draft-v1.0
# messages: the recorder keeps them raw ("not decodable"), so no state can be read (strict).
_UNDECODED = {
    "a2a-java-1.0.0.Alpha3/grpc/03-blocking-task.http": "a2a-java 1.0.0.Alpha3 gRPC kept raw",
}


def _send_case(path: Path) -> object:
    rel = path.relative_to(CAPTURES).as_posix()
    why = _UNDECODED.get(rel)
    return pytest.param(
        path, id=rel, marks=[pytest.mark.xfail(strict=True, reason=why)] if why else []
    )


@pytest.mark.parametrize(
    "path", [_send_case(p) for p in sorted(CAPTURES.rglob("03-blocking-task.http"))]
)
def test_every_corpus_send_names_its_task_and_state(path: Path) -> None:
    sends = [e for e in read_capture(path).exchanges if e.classification.operation == "SendMessage"]
    assert sends, path
    found = answered_state(sends[0].response)
    assert isinstance(found, Answer) and found.task_id, (path, found)
    assert found.state == "COMPLETED", (path, found)
