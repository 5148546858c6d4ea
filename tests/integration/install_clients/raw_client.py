"""A user's tests with no A2A SDK: httpx for the HTTP bindings, grpcio with raw protobuf.

The protobuf bytes are written and read by hand, from the encoding spec and the field numbers
of a2a.proto (SendMessageRequest.message = 2, Message.message_id = 1, role = 4, parts = 5,
Part.text = 1; SendMessageResponse.task = 1, Task.artifacts = 4, Artifact.parts = 4).
"""

import uuid

import grpc
import httpx
import pytest


def interface(base_url: str, binding: str) -> str:
    card = httpx.get(base_url + "/.well-known/agent-card.json", timeout=10).json()
    return next(
        i["url"]
        for i in card["supportedInterfaces"]
        if i["protocolBinding"] == binding and i["protocolVersion"] == "1.0"
    )


def message(text: str) -> dict:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}


def texts(task: dict) -> list[str]:
    return [p["text"] for a in task.get("artifacts", []) for p in a["parts"]]


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number: int, value: bytes | int) -> bytes:
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    return varint(number << 3 | 2) + varint(len(value)) + value


def fields(data: bytes, wanted: int) -> list[bytes]:
    out, at = [], 0
    while at < len(data):
        key, at = read_varint(data, at)
        if key & 7 == 0:
            _, at = read_varint(data, at)
            continue
        size, at = read_varint(data, at)
        if key >> 3 == wanted:
            out.append(data[at : at + size])
        at += size
    return out


def read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        value |= (data[at] & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if not data[at - 1] & 0x80:
            return value, at


@pytest.mark.a2a_capture("captures/jsonrpc.http")
def test_jsonrpc(a2a_replay):
    body = {
        "jsonrpc": "2.0",
        "id": str(uuid.uuid4()),
        "method": "SendMessage",
        "params": {"message": message("echo hello")},
    }
    reply = httpx.post(
        interface(a2a_replay.url, "JSONRPC"), json=body, headers={"A2A-Version": "1.0"}, timeout=10
    ).json()
    assert texts(reply["result"]["task"]) == ["echo hello"]


@pytest.mark.a2a_capture("captures/rest.http")
def test_rest(a2a_replay):
    reply = httpx.post(
        interface(a2a_replay.url, "HTTP+JSON") + "/message:send",
        json={"message": message("echo hello")},
        headers={"A2A-Version": "1.0"},
        timeout=10,
    )
    assert texts(reply.json()["task"]) == ["echo hello"]


@pytest.mark.a2a_capture("captures/grpc.http")
def test_grpc(a2a_replay):
    text = field(1, b"echo hello")
    request = field(2, field(1, str(uuid.uuid4()).encode()) + field(4, 1) + field(5, text))
    with grpc.insecure_channel(interface(a2a_replay.url, "GRPC")) as channel:
        response = channel.unary_unary("/lf.a2a.v1.A2AService/SendMessage")(
            request, timeout=10, metadata=(("a2a-version", "1.0"),)
        )
    (task,) = fields(response, 1)
    parts = [p for a in fields(task, 4) for p in fields(a, 4)]
    assert [t.decode() for p in parts for t in fields(p, 1)] == ["echo hello"]
