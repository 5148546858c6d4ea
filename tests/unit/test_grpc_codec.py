"""gRPC framing, the descriptor-driven A2A codec, status details and metadata helpers."""

from __future__ import annotations

import gzip
import json
import zlib

import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2 as v03
from a2a.types import a2a_pb2 as v10
from google.protobuf import any_pb2, empty_pb2, struct_pb2, timestamp_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2
from hypothesis import given
from hypothesis import strategies as st

from recorder.protocol._errors import GRPC_STATUS_CODES, GRPC_STATUS_NAMES
from recorder.protocol._grpc import (
    GrpcCodecError,
    GrpcFramer,
    GrpcFramingError,
    canonical_binary_header,
    decode_binary_header,
    decode_grpc_message,
    decode_message,
    decode_status_details,
    encode_binary_header,
    encode_grpc_message,
    encode_message,
    encode_status_details,
    frame_message,
    grpc_method,
    grpc_methods,
    is_grpc_content_type,
    status_reason,
    timed_messages,
)

V10 = "/lf.a2a.v1.A2AService/"
V03 = "/a2a.v1.A2AService/"

# --- framing ------------------------------------------------------------------------------

MESSAGES = [(False, b""), (False, b"hello"), (True, b"\x1f\x8b" + bytes(range(256)) * 3)]
STREAM = b"".join(frame_message(data, flag) for flag, data in MESSAGES)


def test_frame_message_prefix() -> None:
    assert frame_message(b"abc") == b"\x00\x00\x00\x00\x03abc"
    assert frame_message(b"", compressed=True) == b"\x01\x00\x00\x00\x00"


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_chunking_gives_the_same_messages(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(STREAM)]
    framer = GrpcFramer()
    got = [m for a, b in zip(bounds, bounds[1:], strict=False) for m in framer.feed(STREAM[a:b])]
    assert got == MESSAGES
    assert framer.pending == 0


@pytest.mark.parametrize("cut", [1, 4, 6, 12, len(STREAM) - 1])
def test_truncated_stream_reports_pending(cut: int) -> None:
    framer = GrpcFramer()
    complete = framer.feed(STREAM[:cut])
    consumed = sum(5 + len(data) for _, data in complete)
    assert framer.pending == cut - consumed > 0


def test_bad_flag_byte_is_a_framing_error_and_stays_failed() -> None:
    framer = GrpcFramer()
    with pytest.raises(GrpcFramingError, match="flag byte is 0x48"):
        framer.feed(b"HTTP/1.1 200 OK\r\n")
    with pytest.raises(GrpcFramingError):
        framer.feed(frame_message(b"ok"))


def test_timed_messages_stamp_the_completing_chunk() -> None:
    one, two = frame_message(b"one"), frame_message(b"two")
    chunks = [(10, one[:2]), (20, one[2:] + two[:1]), (30, two[1:]), (40, b"\x00\x00")]
    messages, pending = timed_messages(chunks)
    assert messages == [(20, False, b"one"), (30, False, b"two")]
    assert pending == 2


# --- rpc table ------------------------------------------------------------------------------


def test_rpc_table_comes_from_both_descriptor_sets() -> None:
    send = grpc_method(V10 + "SendMessage")
    assert send is not None
    assert (send.input_type, send.output_type) == (
        "lf.a2a.v1.SendMessageRequest",
        "lf.a2a.v1.SendMessageResponse",
    )
    assert not send.server_streaming
    stream = grpc_method(V10 + "SendStreamingMessage")
    assert stream is not None and stream.server_streaming
    legacy = grpc_method(V03 + "TaskSubscription")
    assert legacy is not None and legacy.server_streaming
    assert legacy.output_type == "a2a.v1.StreamResponse"
    # v1.0's name: on a2a.v1 only a2a-java's draft has it (test_grpc_drafts.py)
    draft = grpc_method(V03 + "SubscribeToTask")
    assert draft is not None and draft.input_type.startswith("a2a_java_draft.v1.")
    assert len([p for p in grpc_methods() if p.startswith(V10)]) == 11
    # v0.3's 10, and the draft's ListTasks, SubscribeToTask and GetExtendedAgentCard
    assert len([p for p in grpc_methods() if p.startswith(V03)]) == 13


# --- codec ----------------------------------------------------------------------------------


def _struct(**values: object) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(values)
    return s


def _v10_messages() -> list[tuple[str, str, Message]]:
    message = v10.Message(
        message_id="m-1",
        context_id="c-1",
        role=v10.ROLE_USER,
        parts=[v10.Part(text="hi"), v10.Part(data=struct_pb2.Value(number_value=1.5))],
        metadata=_struct(k="v", n=2.0, nested={"a": [1.0, "x", None, True]}),
    )
    task = v10.Task(
        id="t-1",
        context_id="c-1",
        status=v10.TaskStatus(
            state=v10.TASK_STATE_COMPLETED,
            timestamp=timestamp_pb2.Timestamp(seconds=1_700_000_000, nanos=123_000_000),
        ),
        artifacts=[v10.Artifact(artifact_id="a-1", parts=[v10.Part(text="echo hi")])],
        history=[message],
    )
    return [
        ("SendMessage", "request", v10.SendMessageRequest(message=message)),
        ("SendMessage", "response", v10.SendMessageResponse(task=task)),
        ("SendStreamingMessage", "response", v10.StreamResponse(task=task)),
        ("GetTask", "request", v10.GetTaskRequest(id="t-1", history_length=3)),
        ("GetTask", "response", task),
        ("DeleteTaskPushNotificationConfig", "response", empty_pb2.Empty()),
        ("GetTask", "response", v10.Task()),  # all defaults: "{}"
    ]


def _v03_messages() -> list[tuple[str, str, Message]]:
    message = v03.Message(
        message_id="m-1", role=v03.ROLE_USER, content=[v03.Part(text="hi")], context_id="c"
    )
    task = v03.Task(
        id="t-1",
        context_id="c",
        status=v03.TaskStatus(state=v03.TASK_STATE_WORKING, update=message),
        history=[message],
    )
    return [
        ("SendMessage", "request", v03.SendMessageRequest(request=message)),
        ("SendMessage", "response", v03.SendMessageResponse(task=task)),
        ("TaskSubscription", "response", v03.StreamResponse(task=task)),
        ("GetTask", "request", v03.GetTaskRequest(name="tasks/t-1")),
    ]


CASES = [(V10 + rpc, d, m) for rpc, d, m in _v10_messages()] + [
    (V03 + rpc, d, m) for rpc, d, m in _v03_messages()
]


@pytest.mark.parametrize(("path", "direction", "msg"), CASES, ids=[f"{p}:{d}" for p, d, _ in CASES])
def test_round_trip_real_messages(path: str, direction: str, msg: Message) -> None:
    decoded = decode_message(path, msg.SerializeToString(), direction)  # type: ignore[arg-type]
    assert decoded is not None
    type_name, text = decoded
    assert type_name == msg.DESCRIPTOR.full_name
    assert ", " not in text and ": " not in text.replace('": "', "")  # compact separators
    again = type(msg)()
    again.ParseFromString(encode_message(type_name, text))
    assert again == msg


def test_json_is_camel_case_proto_json() -> None:
    msg = v10.SendMessageRequest(
        message=v10.Message(message_id="m", context_id="c", role=v10.ROLE_AGENT)
    )
    decoded = decode_message(V10 + "SendMessage", msg.SerializeToString(), "request")
    assert decoded == (
        "lf.a2a.v1.SendMessageRequest",
        '{"message":{"messageId":"m","contextId":"c","role":"ROLE_AGENT"}}',
    )


def test_direction_picks_the_type() -> None:
    data = v10.Task(id="t").SerializeToString()
    response = decode_message(V10 + "GetTask", data, "response")
    assert response is not None and response[0] == "lf.a2a.v1.Task"
    request = decode_message(V10 + "GetTask", data, "request")
    assert request is not None and request[0] == "lf.a2a.v1.GetTaskRequest"


@pytest.mark.parametrize(
    ("path", "data"),
    [
        ("/unknown.Service/Call", v10.Task(id="t").SerializeToString()),
        (V10 + "NoSuchRpc", b""),
        (V10 + "GetTask", b"\xff\xff\xff"),  # not protobuf
        (V10 + "GetTask", v10.Task(id="t").SerializeToString() + b"\xa8\x06\x01"),  # unknown field
    ],
    ids=["unknown-service", "unknown-rpc", "garbage", "unknown-field"],
)
def test_undecodable_gives_none(path: str, data: bytes) -> None:
    assert decode_message(path, data, "response") is None


def test_compressed_messages() -> None:
    data = v10.Task(id="t-9").SerializeToString()
    path = V10 + "GetTask"
    want = ("lf.a2a.v1.Task", '{"id":"t-9"}')
    assert (
        decode_message(path, gzip.compress(data), "response", compressed=True, encoding="gzip")
        == want
    )
    assert (
        decode_message(path, zlib.compress(data), "response", compressed=True, encoding="deflate")
        == want
    )
    assert decode_message(path, data, "response", compressed=True, encoding="snappy") is None
    assert decode_message(path, b"junk", "response", compressed=True, encoding="gzip") is None
    assert decode_message(path, data, "response", compressed=True, encoding=None) is None


def test_encode_errors() -> None:
    with pytest.raises(GrpcCodecError, match="unknown protobuf message type"):
        encode_message("no.such.Type", "{}")
    with pytest.raises(GrpcCodecError, match="does not fit"):
        encode_message("lf.a2a.v1.Task", '{"notAField":1}')
    with pytest.raises(GrpcCodecError):
        encode_message("lf.a2a.v1.Task", "{not json")


# --- status ---------------------------------------------------------------------------------


def test_status_table() -> None:
    assert GRPC_STATUS_NAMES[0] == "OK" and GRPC_STATUS_NAMES[16] == "UNAUTHENTICATED"
    assert GRPC_STATUS_CODES["NOT_FOUND"] == 5 and GRPC_STATUS_CODES["FAILED_PRECONDITION"] == 9
    assert sorted(GRPC_STATUS_NAMES) == list(range(17))


def _status_bytes() -> bytes:
    info = any_pb2.Any()
    info.Pack(error_details_pb2.ErrorInfo(reason="TASK_NOT_FOUND", domain="a2a-protocol.org"))
    meta = any_pb2.Any()
    meta.Pack(error_details_pb2.ErrorInfo(reason="R", domain="d", metadata={"taskId": "t-1"}))
    unknown = any_pb2.Any(type_url="type.example.com/x.Unknown", value=b"\x08\x01")
    status = status_pb2.Status(code=5, message="Task not found", details=[info, meta, unknown])
    return bytes(status.SerializeToString())


def test_status_details_decode_and_round_trip() -> None:
    raw = _status_bytes()
    value = encode_binary_header(raw)
    assert not value.endswith("=")
    decoded = decode_status_details(value)
    assert decoded == {
        "code": 5,
        "message": "Task not found",
        "details": [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "TASK_NOT_FOUND",
                "domain": "a2a-protocol.org",
            },
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "R",
                "domain": "d",
                "metadata": {"taskId": "t-1"},
            },
            {"@type": "type.example.com/x.Unknown", "value": "CAE="},
        ],
    }
    assert decode_binary_header(encode_status_details(decoded)) == raw
    assert decode_status_details(raw) == decoded  # bytes are accepted too
    json.dumps(decoded)  # plain JSON-able values


def test_true_binary_form_is_decoded() -> None:
    # grpc-core to grpc-core: NUL, then the raw bytes (handed over as latin-1 text).
    raw = _status_bytes()
    value = "\x00" + raw.decode("latin-1")
    assert decode_binary_header(value) == raw
    assert canonical_binary_header(value) == encode_binary_header(raw)
    status = decode_status_details(value)
    assert status is not None and status["details"][0]["reason"] == "TASK_NOT_FOUND"


@pytest.mark.parametrize("value", ["%%%not base64", "////", "\x00\u0100"])
def test_status_details_bad_input_gives_none(value: str) -> None:
    assert decode_status_details(value) is None


def test_a_damaged_detail_is_kept_raw_and_the_rest_decoded() -> None:
    damaged = any_pb2.Any(type_url="type.googleapis.com/google.rpc.ErrorInfo", value=b"\xff\xff")
    status = status_pb2.Status(code=9, message="m", details=[damaged])
    decoded = decode_status_details(encode_binary_header(status.SerializeToString()))
    assert decoded == {
        "code": 9,
        "message": "m",
        "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "value": "//8="}],
    }
    assert status_reason(decoded) is None


def test_url_safe_base64_and_the_reason() -> None:
    import base64

    info = any_pb2.Any()
    info.Pack(error_details_pb2.ErrorInfo(reason="TASK_NOT_FOUND", domain="a2a-protocol.org"))
    # ">?" runs of some length give base64 holding both of the URL-safe characters.
    candidates = (
        status_pb2.Status(code=5, message=">?" * n, details=[info]).SerializeToString()
        for n in range(1, 12)
    )
    raw = next(r for r in candidates if {"-", "_"} <= set(base64.urlsafe_b64encode(r).decode()))
    value = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    decoded = decode_status_details(value)
    assert decoded is not None and decoded == decode_status_details(raw)
    assert status_reason(decoded) == "TASK_NOT_FOUND"
    assert decode_status_details(None) is None and decode_status_details("") is None


@given(st.binary(max_size=80) | st.text(max_size=40))
def test_status_details_never_raise(value: bytes | str) -> None:
    decoded = decode_status_details(value)
    assert decoded is None or set(decoded) == {"code", "message", "details"}


def test_encode_status_details_rejects_a_detail_that_does_not_fit() -> None:
    bad = {"code": 5, "message": "", "details": [{"@type": "type.googleapis.com/x.Nope", "a": 1}]}
    with pytest.raises(GrpcCodecError):
        encode_status_details(bad)


@pytest.mark.parametrize(
    ("text", "wire"),
    [
        ("Task not found", "Task not found"),
        ("100% done", "100%25 done"),
        ("tâche\n", "t%C3%A2che%0A"),
    ],
)
def test_grpc_message_percent_encoding(text: str, wire: str) -> None:
    assert encode_grpc_message(text) == wire
    assert decode_grpc_message(wire) == text


def test_grpc_message_keeps_malformed_escapes() -> None:
    assert decode_grpc_message("50%zz off %4") == "50%zz off %4"


# --- metadata -------------------------------------------------------------------------------


def test_binary_header_padding_tolerant() -> None:
    assert decode_binary_header("YWI") == decode_binary_header("YWI=") == b"ab"
    assert canonical_binary_header("YWI=") == "YWI"
    with pytest.raises(ValueError, match="not base64"):
        decode_binary_header("a*b")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("application/grpc", True),
        ("application/grpc+proto", True),
        ("Application/GRPC; charset=x", True),
        ("application/grpc-web", False),
        ("application/json", False),
        (None, False),
    ],
)
def test_is_grpc_content_type(value: str | None, expected: bool) -> None:
    assert is_grpc_content_type(value) is expected
