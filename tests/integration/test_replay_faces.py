"""The HTTP and gRPC faces of the replayer behave the same: one table of cases, both faces.

A demo session is recorded live through the recorder (the agent's push deliveries through its
push proxy) over JSON-RPC and over gRPC.  Each case then runs against a replayer on each face
with a client that sends the recorded requests as they were (new connection or channel per
request, the webhook URL swapped for a live receiver's), and checks what the faces must agree
on: every answer the agent's, said so in the journal; the deliveries recorded before an
answer made before it, the others after; a request the capture cannot answer synthesized,
reported, and answered in the binding's error shape; peers named `host:port` alike.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import grpc
import pytest
from _helpers import free_port

from recorder.capture import Capture, Exchange, read_capture
from recorder.demo import DemoAgent, WebhookReceiver, run_session
from recorder.protocol import PUSH_DELIVERY, Binding
from recorder.protocol._grpc import encode_message, grpc_method
from recorder.record import RecordingProxy
from recorder.replay import Replayer

FACES = ["JSONRPC", "GRPC"]
TIMEOUT = 20.0
DROPPED = {"host", "content-length", "transfer-encoding", "connection", "accept-encoding"}
GRPC_DROPPED = {"content-type", "te", "user-agent", "grpc-accept-encoding", "grpc-timeout"}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Capture]:
    captures = {}
    for face in FACES:
        out = tmp_path_factory.mktemp("faces") / f"{face}.http"
        port = free_port()
        with (
            DemoAgent(event_delay=0.05, push_proxy=f"http://127.0.0.1:{port}") as agent,
            WebhookReceiver() as hook,
            RecordingProxy(
                upstream=agent.base_url,
                out=out,
                grpc_upstream=agent.grpc_target,
                push_proxy=("127.0.0.1", port),
            ) as proxy,
        ):
            asyncio.run(run_session(proxy.url, binding=face, webhook=hook))
        captures[face] = read_capture(out)
    return captures


@dataclass
class Resender:
    """Sends recorded requests as they were, to a replayer's face, one connection each."""

    replayer: Replayer
    swap: dict[str, str]

    def send(self, exchange: Exchange, text: Callable[[str], str] = lambda t: t) -> object:
        if exchange.classification.binding is Binding.GRPC:
            return self._grpc(exchange, text)
        return self._http(exchange, text)

    def _body(self, raw: str) -> str:
        for old, new in self.swap.items():
            raw = raw.replace(old, new)
        return raw

    def _http(self, exchange: Exchange, text: Callable[[str], str]) -> object:
        request = exchange.request
        parts = urlsplit(self.replayer.url)
        connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=TIMEOUT)
        headers = {k: v for k, v in request.headers if k.lower() not in DROPPED}
        body = text(self._body(request.body.decode())).encode() if request.body else None
        try:
            connection.request(request.method, request.target, body=body, headers=headers)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def _grpc(self, exchange: Exchange, text: Callable[[str], str]) -> object:
        request = exchange.request
        message = request.messages[0]
        assert message.json is not None and message.type_name is not None
        data = encode_message(message.type_name, text(self._body(message.json)))
        metadata = tuple(
            (k, v)
            for k, v in request.headers
            if k.lower() not in GRPC_DROPPED and not k.startswith(":")
        )
        method = grpc_method(request.target)
        assert method is not None and self.replayer.grpc_target is not None
        with grpc.insecure_channel(self.replayer.grpc_target) as channel:
            identity = (lambda b: b, lambda b: b)
            try:
                if method.server_streaming:
                    call = channel.unary_stream(request.target, *identity)
                    return "OK", list(call(data, timeout=TIMEOUT, metadata=metadata))
                call = channel.unary_unary(request.target, *identity)
                return "OK", call(data, timeout=TIMEOUT, metadata=metadata)
            except grpc.RpcError as error:
                return error.code().name, error.details()


def requests_of(capture: Capture) -> list[Exchange]:
    return [e for e in capture.exchanges if e.classification.operation != PUSH_DELIVERY]


def push_send(capture: Capture) -> Exchange:
    return next(
        e
        for e in requests_of(capture)
        if e.classification.operation == "SendMessage" and b"echo push" in _request_text(e)
    )


def _request_text(exchange: Exchange) -> bytes:
    if exchange.request.messages:
        return (exchange.request.messages[0].json or "").encode()
    return exchange.request.body


def webhook_url(capture: Capture) -> str:
    delivery = next(e for e in capture.exchanges if e.classification.operation == PUSH_DELIVERY)
    return f"http://{delivery.request.header('host')}{delivery.request.target}"


def before_answer(capture: Capture, send: Exchange) -> int:
    """How many deliveries completed before `send`'s answer did, in the recording."""
    end = send.started_us + send.duration_us
    return sum(
        1
        for e in capture.exchanges
        if e.classification.operation == PUSH_DELIVERY
        and send.started_us <= e.started_us
        and e.started_us + e.duration_us <= end
    )


@pytest.fixture(params=FACES)
def face(
    request: pytest.FixtureRequest, recorded: dict[str, Capture]
) -> Iterator[tuple[Capture, Replayer, Resender, WebhookReceiver]]:
    capture = recorded[request.param]
    with WebhookReceiver() as hook, Replayer([capture]) as replayer:
        yield capture, replayer, Resender(replayer, {webhook_url(capture): hook.url}), hook


Face = tuple[Capture, Replayer, Resender, WebhookReceiver]


def case_every_answer_is_the_agent_s(face: Face) -> None:
    capture, replayer, resender, _ = face
    for exchange in requests_of(capture):
        resender.send(exchange)
    entries = replayer.journal.requests
    assert len(entries) == len(requests_of(capture))
    assert {e.outcome for e in entries} == {"served"}
    for entry in entries:
        # The first session gets the recorded ids: only the card says it was changed.
        card = entry.classification.operation in ("AgentCard", "GetExtendedAgentCard")
        assert entry.answer == ("adapted" if card else "recorded"), (entry.number, entry.changes)
    assert replayer.report.synthesized_answers == []


def case_deliveries_recorded_before_an_answer_come_before_it(face: Face) -> None:
    capture, replayer, resender, hook = face
    send = push_send(capture)
    for exchange in requests_of(capture):
        resender.send(exchange)
        if exchange is send:
            early = before_answer(capture, send)
            assert early >= 1 and len(hook.deliveries) >= early  # made before the answer
    hook.wait_for(4, timeout=10)
    deadline = time.monotonic() + 10
    while len(replayer.journal.deliveries) < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [d.status for d in replayer.journal.deliveries] == [200] * 4


def case_what_the_capture_cannot_answer_is_synthesized(face: Face) -> None:
    capture, replayer, resender, _ = face
    send = push_send(capture)
    answer = resender.send(send, lambda t: t.replace("echo push", "never recorded"))
    entry = replayer.journal.requests[-1]
    assert entry.outcome == "miss" and entry.answer == "synthesized"
    assert entry.detail and entry.detail.startswith("no recorded exchange matches SendMessage")
    assert replayer.report.synthesized_answers == [
        f"request 1, {send.request.method} {send.request.target}: {entry.detail}"
    ]
    if send.classification.binding is Binding.GRPC:
        assert answer == ("INTERNAL", entry.detail)
    else:
        status, body = answer  # type: ignore[misc]
        assert status == 200 and json.loads(body)["error"]["code"] == -32603


def case_peers_are_named_alike(face: Face) -> None:
    capture, replayer, resender, _ = face
    resender.send(requests_of(capture)[1])
    client = replayer.journal.requests[-1].client
    assert client is not None and re.fullmatch(r"127\.0\.0\.1:\d+", client), client


CASES = [
    case_every_answer_is_the_agent_s,
    case_deliveries_recorded_before_an_answer_come_before_it,
    case_what_the_capture_cannot_answer_is_synthesized,
    case_peers_are_named_alike,
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
def test_both_faces_behave_the_same(case: Callable[[Face], None], face: Face) -> None:
    case(face)


def test_the_recordings_hold_what_the_cases_need(recorded: dict[str, Capture]) -> None:
    for face, capture in recorded.items():
        send = push_send(capture)
        assert send.classification.binding is Binding(face)
        assert before_answer(capture, send) >= 1
        assert (
            len([e for e in capture.exchanges if e.classification.operation == PUSH_DELIVERY]) == 4
        )
