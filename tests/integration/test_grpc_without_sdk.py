"""gRPC recording, replay and the codec with no a2a-sdk installed.

These tests import nothing from a2a-sdk or `recorder.demo`: they are what scripts/test runs in
the environments with the lowest and the newest allowed protobuf, grpcio and the rest
(`scripts/peers/installs.py`), as well as here.  The client is grpcio with raw bytes, encoded
and read by the small protobuf wire writer below (written from the encoding spec), not by our
codec; the upstream agent of the recording test is a replayer of a real a2a-sdk capture.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from protowire import field, values

from recorder.capture import Exchange, Request, Response, read_capture
from recorder.protocol import Binding
from recorder.protocol._grpc import (
    DETAILS_HEADER,
    decode_as,
    decode_status_details,
    encode_message,
    encode_status_details,
)
from recorder.record import RecordingProxy
from recorder.replay import Replayer

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "captures"
BLOCKING = CORPUS / "a2a-python-1.3.0" / "grpc" / "03-blocking-task.http"
SEND = "/lf.a2a.v1.A2AService/SendMessage"
GET_TASK = "/lf.a2a.v1.A2AService/GetTask"
TASK_STATE_COMPLETED = 3
ROLE_USER = 1


def _send_message_request(text: str, message_id: str, context_id: str) -> bytes:
    """SendMessageRequest{message(2): Message{message_id(1), context_id(2), role(4),
    parts(5): Part{text(1)}}, configuration(3): {}}, as the recorded a2a-sdk client sent it."""
    message = (
        field(1, message_id) + field(2, context_id) + field(4, ROLE_USER) + field(5, field(1, text))
    )
    return field(2, message) + field(3, b"")


def _unary(target: str, path: str, request: bytes) -> tuple[bytes, grpc.Call]:
    with grpc.insecure_channel(target) as channel:
        call = channel.unary_unary(path)  # no (de)serializers: raw bytes both ways
        response, state = call.with_call(request, timeout=10)
        return response, state


# --- the codec on every real message -----------------------------------------------------------


def _grpc_exchanges() -> list[tuple[str, Exchange]]:
    found = []
    for path in sorted(CORPUS.glob("*/grpc/*.http")):
        for exchange in read_capture(path).exchanges:
            if exchange.classification.binding is Binding.GRPC:
                found.append((f"{path.parent.parent.name}/{path.name}#{exchange.number}", exchange))
    return found


EXCHANGES = _grpc_exchanges()


def test_the_corpus_holds_grpc_of_every_sdk() -> None:
    sdks = {name.split("/")[0] for name, _ in EXCHANGES}
    assert {"a2a-python-1.3.0", "a2a-python-0.3.26", "a2a-js-1.3.0"} <= sdks


@pytest.mark.parametrize(("name", "exchange"), EXCHANGES, ids=[n for n, _ in EXCHANGES])
def test_every_recorded_grpc_message_round_trips(name: str, exchange: Exchange) -> None:
    sides: list[Request | Response | None] = [exchange.request, exchange.response]
    for side in (s for s in sides if s is not None):
        for message in side.messages:
            if message.json is None:
                continue
            assert message.type_name is not None
            data = encode_message(message.type_name, message.json)
            decoded = decode_as(message.type_name, data)
            assert decoded is not None, f"{name}: {message.type_name} does not decode"
            assert json.loads(decoded[1]) == json.loads(message.json)
        details = [v for k, v in getattr(side, "trailers", ()) if k == DETAILS_HEADER]
        for value in details:
            status = decode_status_details(value)
            assert status is not None, f"{name}: bad {DETAILS_HEADER}"
            assert decode_status_details(encode_status_details(status)) == status


# --- replay and record over raw grpcio ---------------------------------------------------------


def test_replay_answers_a_hand_encoded_send_message() -> None:
    recorded = read_capture(BLOCKING)
    with Replayer([recorded], grpc_port=0) as replayer:
        assert replayer.grpc_target is not None
        response, call = _unary(
            replayer.grpc_target, SEND, _send_message_request("echo hello", "m-raw-1", "c-raw-1")
        )
        again, _ = _unary(
            replayer.grpc_target, SEND, _send_message_request("echo hello", "m-raw-2", "c-raw-2")
        )
    assert call.code() is grpc.StatusCode.OK
    (task,) = values(response, 1)  # SendMessageResponse.task
    assert isinstance(task, bytes)
    (status,) = values(task, 3)
    assert isinstance(status, bytes) and values(status, 1) == [TASK_STATE_COMPLETED]
    texts = [
        values(part, 1)[0]
        for artifact in values(task, 4)
        if isinstance(artifact, bytes)
        for part in values(artifact, 4)
        if isinstance(part, bytes)
    ]
    assert texts == [b"echo hello"]
    # The first conversation gets the recorded task id, the next one a new id.
    (task_id,) = values(task, 1)
    assert isinstance(task_id, bytes) and task_id.decode() in BLOCKING.read_text()
    (second,) = values(again, 1)
    assert isinstance(second, bytes)
    (second_id,) = values(second, 1)
    assert isinstance(second_id, bytes) and second_id.decode() not in BLOCKING.read_text()


def test_replay_miss_is_a_grpc_error_with_the_replay_reason() -> None:
    with Replayer([read_capture(BLOCKING)], grpc_port=0) as replayer:
        assert replayer.grpc_target is not None
        with pytest.raises(grpc.RpcError) as caught:
            _unary(replayer.grpc_target, GET_TASK, field(2, "never-issued"))
        misses = list(replayer.report.misses)
    error = caught.value
    assert error.code() is grpc.StatusCode.INTERNAL
    assert "GetTask" in error.details()
    trailers = dict(error.trailing_metadata())
    status = decode_status_details(trailers[DETAILS_HEADER])
    assert status is not None and status["details"][0]["reason"] == "REPLAY_NO_MATCH"
    assert len(misses) == 1 and GET_TASK in misses[0]


def test_grpc_is_recorded_through_the_recorder(tmp_path: Path) -> None:
    out = tmp_path / "recorded.http"
    with Replayer([read_capture(BLOCKING)], grpc_port=0) as agent:
        assert agent.grpc_target is not None
        with RecordingProxy(upstream=agent.url, out=out, grpc_upstream=agent.grpc_target) as proxy:
            assert proxy.grpc_target is not None
            _, call = _unary(
                proxy.grpc_target, SEND, _send_message_request("echo hello", "m-raw-2", "c-raw-2")
            )
            assert call.code() is grpc.StatusCode.OK
    (exchange,) = [
        e for e in read_capture(out).exchanges if e.classification.binding is Binding.GRPC
    ]
    assert exchange.classification.operation == "SendMessage"
    request = json.loads(exchange.request.messages[0].json or "{}")
    assert request["message"]["parts"] == [{"text": "echo hello"}]
    assert exchange.response is not None
    response = json.loads(exchange.response.messages[0].json or "{}")
    assert response["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_recorder_is_imported_from_the_environment_under_test() -> None:
    """test_install.py runs this file in other environments: it must test their install."""
    import recorder

    expected = os.environ.get("A2A_EXPECT_RECORDER_UNDER")
    if expected is None:
        pytest.skip("run by test_install.py, which sets A2A_EXPECT_RECORDER_UNDER")
    assert Path(recorder.__file__).resolve().is_relative_to(Path(expected).resolve())


def test_the_version_names_the_shipped_descriptors() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "recorder", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("a2a-recorder ")
    assert lines[1].startswith("mitmproxy 12.")
    assert lines[2] == (
        "A2A descriptors: shipped with a2a-recorder (protos of a2a-sdk 1.3.0; drafts: "
        "a2a_java_draft.proto of io.github.a2asdk:a2a-java-sdk-spec-grpc 1.0.0.Alpha3)"
    )
