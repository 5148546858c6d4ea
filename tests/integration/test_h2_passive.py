"""The passive HTTP/2 observer, against a real grpc.aio A2A server behind a tee relay.

The relay is a plain asyncio TCP forwarder on 127.0.0.1 that copies both directions' bytes
into an `H2Observer`, as the recorder's `reverse:tcp://` mode does.  A real grpcio client calls
the real a2a-sdk gRPC handlers (v1.0 and v0.3) through it.  Hand-built frames cover what grpcio
does not send on its own (padding, CONTINUATION, PUSH_PROMISE, RST_STREAM, garbage).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from typing import Any

import grpc
import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2 as v03
from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc
from a2a.compat.v0_3.grpc_handler import CompatGrpcHandler
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2 as v10
from a2a.types import a2a_pb2_grpc
from hpack import Encoder
from hyperframe.frame import (
    ContinuationFrame,
    DataFrame,
    Frame,
    HeadersFrame,
    PushPromiseFrame,
    RstStreamFrame,
    SettingsFrame,
)

from recorder.protocol._grpc import (
    GrpcFramer,
    decode_grpc_message,
    decode_message,
    decode_status_details,
    frame_message,
    message_json,
)
from recorder.record._h2 import CLIENT_PREFACE, H2Call, H2Observer, H2ProtocolError

TIMEOUT = 10.0
GZIP_TEXT = "gzip me " * 100  # grpc-core sends a message uncompressed unless gzip shrinks it
V10_META = (("a2a-version", "1.0"),)


def now_us() -> int:
    return time.monotonic_ns() // 1000


# --- a real A2A gRPC server ---------------------------------------------------------------


class Echo(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id is not None and context.context_id is not None
        if not context.current_task:
            await event_queue.enqueue_event(
                v10.Task(
                    id=context.task_id,
                    context_id=context.context_id,
                    status=v10.TaskStatus(state=v10.TASK_STATE_SUBMITTED),
                    history=[context.message] if context.message else [],
                )
            )
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        await updater.add_artifact([v10.Part(text="echo " + context.get_user_input())])
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id is not None and context.context_id is not None
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


class EagerHeaders(GrpcHandler):
    """Sends response headers before failing, so the error comes as real trailers."""

    async def SubscribeToTask(  # the rpc's name
        self, request: v10.SubscribeToTaskRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[v10.StreamResponse]:
        await context.send_initial_metadata((("x-test", "early"),))
        async for item in super().SubscribeToTask(request, context):
            yield item


# --- the tee relay --------------------------------------------------------------------------


@dataclass
class TeeRelay:
    upstream_port: int
    observers: list[H2Observer] = field(default_factory=list)
    errors: list[H2ProtocolError] = field(default_factory=list)
    log: list[tuple[str, int, bytes]] = field(default_factory=list)
    done: list[asyncio.Task[None]] = field(default_factory=list)
    server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        await asyncio.wait_for(asyncio.gather(*self.done), TIMEOUT)
        await self.server.wait_closed()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.done.append(task)
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        observer = H2Observer()
        self.observers.append(observer)
        await asyncio.gather(
            self._pump("client", reader, up_writer, observer.client_data),
            self._pump("server", up_reader, writer, observer.server_data),
        )
        observer.close(now_us())

    async def _pump(
        self,
        role: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        feed: Callable[[bytes, int], None],
    ) -> None:
        try:
            while chunk := await reader.read(65536):
                at = now_us()
                self.log.append((role, at, chunk))
                try:
                    feed(chunk, at)
                except H2ProtocolError as err:
                    self.errors.append(err)
                writer.write(chunk)
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()


# --- one recorded session, shared by the tests ----------------------------------------------


@dataclass
class Session:
    calls: list[H2Call]
    log: list[tuple[str, int, bytes]]
    errors: list[H2ProtocolError]
    replies: dict[str, Any]


def _v10_send(text: str, message_id: str) -> v10.SendMessageRequest:
    return v10.SendMessageRequest(
        message=v10.Message(message_id=message_id, role=v10.ROLE_USER, parts=[v10.Part(text=text)])
    )


async def _rpc_error(call: Any) -> grpc.aio.AioRpcError:
    try:
        result = await call if not hasattr(call, "__aiter__") else [x async for x in call]
    except grpc.aio.AioRpcError as err:
        return err
    raise AssertionError(f"expected an error, got {result!r}")


async def _client_calls(port: int) -> dict[str, Any]:
    options = [("grpc.enable_http_proxy", 0)]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=options) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)
        legacy = a2a_v0_3_pb2_grpc.A2AServiceStub(channel)
        unknown = channel.unary_unary("/unknown.Service/Call")
        replies: dict[str, Any] = {}
        replies["unary"] = await stub.SendMessage(
            _v10_send("hi", "m-1"), metadata=V10_META, timeout=TIMEOUT
        )
        stream = stub.SendStreamingMessage(
            _v10_send("stream me", "m-2"), metadata=V10_META, timeout=TIMEOUT
        )
        replies["stream"] = [item async for item in stream]
        replies["not_found"] = await _rpc_error(
            stub.GetTask(v10.GetTaskRequest(id="missing"), metadata=V10_META, timeout=TIMEOUT)
        )
        replies["late_error"] = await _rpc_error(
            stub.SubscribeToTask(
                v10.SubscribeToTaskRequest(id="missing"), metadata=V10_META, timeout=TIMEOUT
            )
        )
        replies["gzip"] = await stub.SendMessage(
            _v10_send(GZIP_TEXT, "m-3"),
            metadata=V10_META,
            timeout=TIMEOUT,
            compression=grpc.Compression.Gzip,
        )
        legacy_request = v03.SendMessageRequest(
            request=v03.Message(
                message_id="m-4", role=v03.ROLE_USER, content=[v03.Part(text="old")]
            )
        )
        replies["legacy"] = await legacy.SendMessage(legacy_request, timeout=TIMEOUT)
        replies["unimplemented"] = await _rpc_error(unknown(b"\x08\x01", timeout=TIMEOUT))
        replies["requests"] = {"legacy": legacy_request}
    return replies


CARD = v10.AgentCard(name="echo", capabilities=v10.AgentCapabilities(streaming=True))


async def _record_session() -> Session:
    handler = DefaultRequestHandler(
        agent_executor=Echo(), task_store=InMemoryTaskStore(), agent_card=CARD
    )
    server = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(EagerHeaders(handler), server)
    a2a_v0_3_pb2_grpc.add_A2AServiceServicer_to_server(CompatGrpcHandler(handler), server)
    upstream = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    relay = TeeRelay(upstream)
    try:
        port = await relay.start()
        replies = await asyncio.wait_for(_client_calls(port), TIMEOUT * 3)
    finally:
        await server.stop(None)
        await relay.stop()
    calls = [call for observer in relay.observers for call in observer.completed()]
    return Session(calls, relay.log, relay.errors, replies)


@pytest.fixture(scope="module")
def session() -> Session:
    return asyncio.run(_record_session())


def _call(session: Session, path: str, nth: int = 0) -> H2Call:
    return [c for c in session.calls if c.path == path][nth]


def _response_data(call: H2Call) -> bytes:
    return b"".join(chunk for _, chunk in call.response_chunks)


def _trailer(call: H2Call, name: str) -> str | None:
    return next((value for key, value in call.trailers if key == name), None)


def _messages(data: bytes) -> list[tuple[bool, bytes]]:
    framer = GrpcFramer()
    found = framer.feed(data)
    assert framer.pending == 0
    return found


V10 = "/lf.a2a.v1.A2AService/"


def test_every_call_is_seen_complete(session: Session) -> None:
    assert session.errors == []
    assert [c.path for c in sorted(session.calls, key=lambda c: c.stream_id)] == [
        V10 + "SendMessage",
        V10 + "SendStreamingMessage",
        V10 + "GetTask",
        V10 + "SubscribeToTask",
        V10 + "SendMessage",
        "/a2a.v1.A2AService/SendMessage",
        "/unknown.Service/Call",
    ]
    for call in session.calls:
        assert not call.reset and not call.truncated
        assert call.started_us <= call.ended_us
        assert call.request_header(":method") == "POST"
        assert call.request_header("content-type") == "application/grpc"
        assert call.response_header(":status") == "200"


def test_unary_call_decodes_to_what_the_client_sent_and_got(session: Session) -> None:
    call = _call(session, V10 + "SendMessage")
    assert call.request_header("a2a-version") == "1.0"
    assert call.request_header("te") == "trailers"
    [(compressed, request)] = _messages(call.request_data)
    assert not compressed
    assert decode_message(call.path or "", request, "request") == (
        "lf.a2a.v1.SendMessageRequest",
        message_json(_v10_send("hi", "m-1")),
    )
    [(_, response)] = _messages(_response_data(call))
    type_name, text = decode_message(call.path or "", response, "response") or ("", "")
    assert type_name == "lf.a2a.v1.SendMessageResponse"
    assert text == message_json(session.replies["unary"])
    assert '"text":"echo hi"' in text
    assert _trailer(call, "grpc-status") == "0" and not call.trailers_only


def test_server_streaming_messages_are_framed_and_timed(session: Session) -> None:
    call = _call(session, V10 + "SendStreamingMessage")
    replies = session.replies["stream"]
    assert len(replies) >= 3
    decoded = [
        decode_message(call.path or "", data, "response")
        for _, data in _messages(_response_data(call))
    ]
    assert decoded == [("lf.a2a.v1.StreamResponse", message_json(r)) for r in replies]
    times = [at for at, _ in call.response_chunks]
    assert times == sorted(times) and call.started_us <= times[0] <= call.ended_us
    assert _trailer(call, "grpc-status") == "0"


def test_error_before_any_message_is_trailers_only(session: Session) -> None:
    call = _call(session, V10 + "GetTask")
    error = session.replies["not_found"]
    assert error.code() == grpc.StatusCode.NOT_FOUND
    assert call.trailers_only and call.response_chunks == ()
    assert _trailer(call, "grpc-status") == "5"
    assert decode_grpc_message(_trailer(call, "grpc-message") or "") == error.details()
    status = decode_status_details(_trailer(call, "grpc-status-details-bin") or "")
    assert status is not None
    assert status["code"] == 5 and status["message"] == error.details()
    assert [d["reason"] for d in status["details"]] == ["TASK_NOT_FOUND"]
    assert status["details"][0]["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"


def test_error_after_headers_comes_in_real_trailers(session: Session) -> None:
    call = _call(session, V10 + "SubscribeToTask")
    assert session.replies["late_error"].code() == grpc.StatusCode.NOT_FOUND
    assert not call.trailers_only
    assert call.response_header("x-test") == "early"
    assert call.response_header("grpc-status") is None
    assert _trailer(call, "grpc-status") == "5"
    status = decode_status_details(_trailer(call, "grpc-status-details-bin") or "")
    assert status is not None and status["details"][0]["reason"] == "TASK_NOT_FOUND"


def test_gzip_request_is_flagged_and_decoded(session: Session) -> None:
    call = _call(session, V10 + "SendMessage", nth=1)
    assert call.request_header("grpc-encoding") == "gzip"
    [(compressed, data)] = _messages(call.request_data)
    assert compressed
    assert decode_message(call.path or "", data, "request") is None  # not without the encoding
    decoded = decode_message(
        call.path or "",
        data,
        "request",
        compressed=True,
        encoding=call.request_header("grpc-encoding"),
    )
    assert decoded == ("lf.a2a.v1.SendMessageRequest", message_json(_v10_send(GZIP_TEXT, "m-3")))


def test_v03_call_uses_the_legacy_descriptors(session: Session) -> None:
    call = _call(session, "/a2a.v1.A2AService/SendMessage")
    [(_, request)] = _messages(call.request_data)
    assert decode_message(call.path or "", request, "request") == (
        "a2a.v1.SendMessageRequest",
        message_json(session.replies["requests"]["legacy"]),
    )
    [(_, response)] = _messages(_response_data(call))
    decoded = decode_message(call.path or "", response, "response")
    assert decoded == ("a2a.v1.SendMessageResponse", message_json(session.replies["legacy"]))


def test_unknown_service_is_observed_but_not_decoded(session: Session) -> None:
    call = _call(session, "/unknown.Service/Call")
    assert session.replies["unimplemented"].code() == grpc.StatusCode.UNIMPLEMENTED
    assert call.trailers_only and _trailer(call, "grpc-status") == "12"
    [(_, request)] = _messages(call.request_data)
    assert request == b"\x08\x01"
    assert decode_message(call.path or "", request, "request") is None


def _shape(call: H2Call) -> H2Call:
    return replace(call, response_chunks=((0, _response_data(call)),), started_us=0, ended_us=0)


def test_byte_at_a_time_gives_the_same_calls(session: Session) -> None:
    observer = H2Observer()
    feeds = {"client": observer.client_data, "server": observer.server_data}
    for role, at, chunk in session.log:
        for i in range(len(chunk)):
            feeds[role](chunk[i : i + 1], at)
    observer.close(0)
    again = sorted(observer.completed(), key=lambda c: c.stream_id)
    live = sorted(session.calls, key=lambda c: c.stream_id)
    assert [_shape(c) for c in again] == [_shape(c) for c in live]


# --- hand-built frames ----------------------------------------------------------------------


def _wire(*frames: Frame) -> bytes:
    return b"".join(frame.serialize() for frame in frames)


REQUEST = [
    (":method", "POST"),
    (":scheme", "http"),
    (":path", V10 + "GetTask"),
    (":authority", "127.0.0.1:1"),
    ("content-type", "application/grpc"),
    ("x-long", "v" * 300),
]


def test_padding_continuation_push_promise_and_hpack_state() -> None:
    client, server, observer = Encoder(), Encoder(), H2Observer()
    observer.client_data(CLIENT_PREFACE[:7], at_us=1)  # a preface split across reads
    observer.client_data(CLIENT_PREFACE[7:] + _wire(SettingsFrame(0)), at_us=1)
    # The server lets the client's encoder use a bigger table than the default 4096.
    observer.server_data(_wire(SettingsFrame(0, settings={0x1: 8192})), at_us=2)
    client.header_table_size = 8192

    block = client.encode(REQUEST)
    observer.client_data(
        _wire(
            HeadersFrame(1, data=block[:10], flags=["PADDED"], pad_length=7),
            ContinuationFrame(1, data=block[10:20]),
            ContinuationFrame(1, data=block[20:], flags=["END_HEADERS"]),
            DataFrame(
                1, data=frame_message(b"\x0a\x01t"), flags=["PADDED", "END_STREAM"], pad_length=3
            ),
        ),
        at_us=3,
    )
    # A pushed block must still pass through the decoder: the next HEADERS refers to it.
    pushed = server.encode([(":method", "GET"), (":path", "/x"), ("x-shared", "pushed")])
    response = server.encode([(":status", "200"), ("x-shared", "pushed")])
    trailers = server.encode([("grpc-status", "0"), ("x-shared", "pushed")])
    observer.server_data(
        _wire(
            PushPromiseFrame(1, promised_stream_id=2, data=pushed, flags=["END_HEADERS"]),
            HeadersFrame(1, data=response, flags=["END_HEADERS"]),
            DataFrame(1, data=b"\x00\x00\x00\x00\x02ab", flags=["PADDED"], pad_length=9),
        ),
        at_us=4,
    )
    observer.server_data(
        _wire(HeadersFrame(1, data=trailers, flags=["END_HEADERS", "END_STREAM"])), 5
    )
    # The same request again is encoded from the dynamic table only.
    again = client.encode(REQUEST)
    assert len(again) < 10
    observer.client_data(_wire(HeadersFrame(3, data=again, flags=["END_HEADERS"])), at_us=6)
    observer.client_data(_wire(RstStreamFrame(3, error_code=8)), at_us=7)

    first, second = observer.completed()
    assert first.request_headers == tuple(REQUEST)
    assert first.request_data == frame_message(b"\x0a\x01t")
    assert first.response_headers == ((":status", "200"), ("x-shared", "pushed"))
    assert first.response_chunks == ((4, b"\x00\x00\x00\x00\x02ab"),)
    assert first.trailers == (("grpc-status", "0"), ("x-shared", "pushed"))
    assert (first.started_us, first.ended_us, first.reset) == (3, 5, False)
    assert second.request_headers == tuple(REQUEST)
    assert (second.reset, second.reset_code, second.ended_us) == (True, 8, 7)
    assert observer.error is None and observer.open_streams == 0


def test_close_reports_unfinished_streams_as_truncated() -> None:
    observer = H2Observer()
    encoder = Encoder()
    observer.client_data(CLIENT_PREFACE + _wire(SettingsFrame(0)), at_us=0)
    observer.client_data(
        _wire(HeadersFrame(1, data=encoder.encode(REQUEST), flags=["END_HEADERS", "END_STREAM"])),
        at_us=1,
    )
    observer.server_data(_wire(SettingsFrame(0)) + b"\x00\x00\x10\x00", at_us=2)  # half a frame
    assert observer.completed() == []
    assert observer.open_streams == 1
    observer.close(at_us=9)
    [call] = observer.completed()
    assert call.truncated and not call.reset and call.ended_us == 9
    assert call.path == V10 + "GetTask"


GARBAGE = [
    ("client", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "preface"),
    ("server", b"HTTP/1.1 400 Bad Request\r\n\r\n", "SETTINGS"),
    ("client", CLIENT_PREFACE + _wire(ContinuationFrame(1, data=b"x")), "SETTINGS"),
    (
        "client",
        CLIENT_PREFACE + _wire(SettingsFrame(0), ContinuationFrame(1, data=b"x")),
        "CONTINUATION",
    ),
    (
        "client",
        CLIENT_PREFACE
        + _wire(SettingsFrame(0), HeadersFrame(1, data=b"\xff" * 8, flags=["END_HEADERS"])),
        "not valid HTTP/2",
    ),
    (
        "client",
        CLIENT_PREFACE
        + _wire(SettingsFrame(0), HeadersFrame(1, data=b""), DataFrame(1, data=b"x")),
        "inside an open header block",
    ),
    (
        "client",
        CLIENT_PREFACE + _wire(SettingsFrame(0)) + b"\xff\xff\xff\x00\x00\x00\x00\x00\x01",
        "limit",
    ),
]


@pytest.mark.parametrize(("role", "data", "why"), GARBAGE, ids=[g[2] for g in GARBAGE])
def test_garbage_raises_once_then_is_ignored(role: str, data: bytes, why: str) -> None:
    observer = H2Observer()
    feed = observer.client_data if role == "client" else observer.server_data
    if role == "server":
        observer.client_data(CLIENT_PREFACE, at_us=0)
    with pytest.raises(H2ProtocolError, match=why):
        feed(data, 1)
    assert observer.error is not None
    feed(b"more garbage", 2)  # no second error
    observer.client_data(b"\x00" * 50, 3)
    assert observer.completed() == []
