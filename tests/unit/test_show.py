"""`show`'s table: the task a send created (any binding), and the notes a reader must not miss."""

from __future__ import annotations

import json

from recorder.capture import Capture, Exchange, GrpcMessage, Request, Response
from recorder.protocol import classify
from recorder.show import capture_rows, render_table


def capture(*exchanges: Exchange) -> Capture:
    return Capture(started="2026-11-30T00:00:00.000000Z", recorder_version="0",
                   exchanges=exchanges)


TASK = {"task": {"id": "9f1c2a77-task", "status": {"state": "TASK_STATE_COMPLETED"}}}


def grpc_send(notes: tuple[str, ...]) -> Exchange:
    request = Request("POST", "/lf.a2a.v1.A2AService/SendMessage",
                      (("content-type", "application/grpc"),), http_version="HTTP/2",
                      messages=(GrpcMessage(0, json=json.dumps({"message": {"messageId": "m"}})),))
    response = Response(200, headers=(("content-type", "application/grpc"),),
                        http_version="HTTP/2", messages=(GrpcMessage(10, json=json.dumps(TASK)),),
                        trailers=(("grpc-status", "0"),))
    return Exchange(1, classify(request, response), request, response, notes=notes)


def test_a_grpc_send_shows_the_task_it_created() -> None:
    (row,) = capture_rows(capture(grpc_send(())))
    assert (row["binding"], row["operation"], row["task"]) == ("GRPC", "SendMessage",
                                                               "9f1c2a77-task")
    assert "9f1c2a77…" in render_table([row])


def test_flagged_notes_follow_the_table_and_ordinary_ones_do_not() -> None:
    notes = ("redacted: Authorization", "possible secret: JWT in request body")
    table = render_table(capture_rows(capture(grpc_send(notes))))
    assert table.splitlines()[-1] == "#1: possible secret: JWT in request body"
    assert "redacted: Authorization" not in table
    plain = render_table(capture_rows(capture(grpc_send(()))))
    assert len(plain.splitlines()) == 2
