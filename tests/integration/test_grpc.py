"""gRPC end to end with real parts: a2a-sdk 1.3.0 agent and clients, mitmproxy, grpcio.

Plaintext and TLS gRPC are recorded through the in-process `RecordingProxy`, decoded into
capture values, and replayed by the `Replayer`'s gRPC face.  Everything binds 127.0.0.1 on free
ports and is stopped at the end of its test.

A gRPC push config's URL is rewritten to the recorder's relay, as on the other bindings
(issue 29: the bytes used to pass untouched, and the deliveries went straight to the webhook,
unrecorded): the deliveries are in the capture, and replayed to the new client's webhook.  An
agent that sends its deliveries through the recorder's push proxy has them recorded once.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import json
import ssl
import threading
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from _helpers import free_port
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.compat.v0_3 import a2a_v0_3_pb2 as v03
from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc
from a2a.compat.v0_3.grpc_transport import CompatGrpcTransport
from a2a.types.a2a_pb2 import GetTaskRequest, Message, Part, Role, SendMessageRequest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from recorder.capture import Capture, Exchange, read_capture
from recorder.demo import DemoAgent, SessionResult, WebhookReceiver, run_session
from recorder.protocol import PUSH_DELIVERY, Binding
from recorder.protocol._grpc import decode_status_details
from recorder.record import RecordingProxy
from recorder.replay import Replayer

TIMEOUT = 10.0
ERRORS = {
    "error_get_unknown_task": "TaskNotFoundError",
    "error_cancel_completed": "TaskNotCancelableError",
    "error_subscribe_terminal": "UnsupportedOperationError",
    "error_push_get_unknown": "TaskNotFoundError",
}


def grpc_exchanges(capture: Capture) -> list[Exchange]:
    return [e for e in capture.exchanges if e.classification.binding is Binding.GRPC]


def without_deliveries(result: SessionResult) -> SessionResult:
    return replace(result, webhook_deliveries=None, deliveries=())


# --- plaintext: live, recorded, replayed ---------------------------------------------------------


@pytest.fixture(scope="module")
def plaintext(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[SessionResult, SessionResult, Capture, str]]:
    out = tmp_path_factory.mktemp("grpc") / "grpc.http"
    with DemoAgent(event_delay=0.05) as agent, WebhookReceiver() as hook:
        assert agent.grpc_target is not None
        live = asyncio.run(run_session(agent.base_url, binding="GRPC", webhook=hook))
        with RecordingProxy(
            upstream=agent.base_url, out=out, grpc_upstream=agent.grpc_target
        ) as proxy:
            assert proxy.grpc_target != agent.grpc_target
            recorded = asyncio.run(run_session(proxy.url, binding="GRPC", webhook=hook))
        target = agent.grpc_target
    yield live, recorded, read_capture(out), target


def test_session_through_the_recorder_equals_live(
    plaintext: tuple[SessionResult, SessionResult, Capture, str],
) -> None:
    live, recorded, _, _ = plaintext
    assert live.errors == ERRORS
    assert live.webhook_deliveries == 4
    assert recorded == live


def test_capture_holds_decoded_grpc_calls(
    plaintext: tuple[SessionResult, SessionResult, Capture, str],
) -> None:
    _, _, capture, _ = plaintext
    calls = grpc_exchanges(capture)
    operations = {e.classification.operation for e in calls}
    assert operations >= {
        "SendMessage",
        "SendStreamingMessage",
        "GetTask",
        "ListTasks",
        "CancelTask",
        "SubscribeToTask",
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
        "GetExtendedAgentCard",
    }
    for exchange in calls:
        assert exchange.request.target.startswith("/lf.a2a.v1.A2AService/")
        assert exchange.request.header(":authority")
        assert exchange.request.messages[0].json is not None
        assert exchange.request.messages[0].type_name, exchange.number
        assert exchange.response is not None and exchange.response.http_version == "HTTP/2"
        trailers = dict(exchange.response.trailers)
        assert "grpc-status" in trailers
        assert all(m.json is not None for m in exchange.response.messages)


def test_streaming_call_has_timed_messages(
    plaintext: tuple[SessionResult, SessionResult, Capture, str],
) -> None:
    _, _, capture, _ = plaintext
    stream = next(
        e for e in grpc_exchanges(capture) if e.classification.operation == "SendStreamingMessage"
    )
    assert stream.response is not None
    messages = stream.response.messages
    assert len(messages) >= 5
    assert all(m.type_name == "lf.a2a.v1.StreamResponse" for m in messages)
    offsets = [m.offset_us for m in messages]
    assert offsets == sorted(offsets) and offsets[-1] - offsets[0] > 100_000  # slow 3: 3 x 50 ms
    assert '"TASK_STATE_COMPLETED"' in (messages[-1].json or "")


def test_errors_are_classified_with_decoded_details(
    plaintext: tuple[SessionResult, SessionResult, Capture, str],
) -> None:
    _, _, capture, _ = plaintext
    errors = [e for e in grpc_exchanges(capture) if e.classification.error]
    assert [e.classification.error for e in errors] == list(ERRORS.values())
    not_found = errors[0]
    assert not_found.response is not None
    trailers = dict(not_found.response.trailers)
    assert trailers["grpc-status"] == "5"
    status = decode_status_details(trailers["grpc-status-details-bin"])
    assert status is not None
    assert status["details"][0]["reason"] == "TASK_NOT_FOUND"
    assert "trailers-only" in not_found.notes


def test_card_grpc_interface_points_at_the_recorder_and_capture_keeps_the_original(
    plaintext: tuple[SessionResult, SessionResult, Capture, str],
) -> None:
    _, _, capture, target = plaintext
    card_exchange = capture.exchanges[0]
    assert card_exchange.classification.operation == "AgentCard"
    assert "card rewritten" in card_exchange.notes
    assert card_exchange.response is not None
    card = json.loads(card_exchange.response.body)
    grpc_urls = {i["url"] for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC"}
    assert grpc_urls == {target}


def test_push_config_secrets_are_redacted_in_grpc_messages(
    plaintext: tuple[SessionResult, SessionResult, Capture, str],
) -> None:
    _, _, capture, _ = plaintext
    create = next(
        e
        for e in grpc_exchanges(capture)
        if e.classification.operation == "CreateTaskPushNotificationConfig"
    )
    config = json.loads(create.request.messages[0].json or "{}")
    assert config["token"].startswith("<redacted:")
    assert any(n.startswith("redacted:") for n in create.notes)


def test_replayed_grpc_session_equals_live(
    plaintext: tuple[SessionResult, SessionResult, Capture, str],
) -> None:
    live, _, capture, _ = plaintext
    with WebhookReceiver() as hook, Replayer([capture]) as replayer:
        assert replayer.grpc_target is not None
        replayed = asyncio.run(run_session(replayer.url, binding="GRPC", webhook=hook))
        assert replayer.report.misses == []
    assert replayed.errors == ERRORS
    assert without_deliveries(replayed) == without_deliveries(live)
    assert replayed.webhook_deliveries == 4  # see the module docstring


def test_replayed_card_points_grpc_at_the_replayer(
    plaintext: tuple[SessionResult, SessionResult, Capture, str],
) -> None:
    _, _, capture, target = plaintext
    with Replayer([capture]) as replayer:
        card = httpx.get(f"{replayer.url}/.well-known/agent-card.json", timeout=5).json()
        grpc_target = replayer.grpc_target
    urls = {i["url"] for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC"}
    assert urls == {grpc_target} and target not in urls


def test_grpc_miss_is_internal_with_reason(
    plaintext: tuple[SessionResult, SessionResult, Capture, str],
) -> None:
    from a2a.types import a2a_pb2_grpc

    _, _, capture, _ = plaintext

    async def call(target: str) -> grpc.aio.AioRpcError:
        async with grpc.aio.insecure_channel(target) as channel:
            stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
            request = SendMessageRequest(
                message=Message(
                    message_id=str(uuid.uuid4()),
                    role=Role.ROLE_USER,
                    parts=[Part(text="never recorded")],
                )
            )
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await stub.SendMessage(request, timeout=TIMEOUT, metadata=(("a2a-version", "1.0"),))
            return caught.value

    with Replayer([capture]) as replayer:
        assert replayer.grpc_target is not None
        error = asyncio.run(call(replayer.grpc_target))
        misses = list(replayer.report.misses)
    assert error.code() is grpc.StatusCode.INTERNAL
    assert "nearest is #" in (error.details() or "")
    details = dict(error.trailing_metadata() or ())["grpc-status-details-bin"]
    status = decode_status_details(details)
    assert status is not None and status["details"][0]["reason"] == "REPLAY_NO_MATCH"
    assert len(misses) == 1


# --- TLS -----------------------------------------------------------------------------------------


def self_signed(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "agent.pem", directory / "agent.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


class TlsFront:
    """The demo agent's gRPC served over TLS: a TLS (ALPN h2) listener piping to its port."""

    def __init__(self, upstream: tuple[str, int], cert: Path, key: Path) -> None:
        self.upstream = upstream
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.load_cert_chain(cert, key)
        self.context.set_alpn_protocols(["h2"])
        self.port = 0
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def _main(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        server = await asyncio.start_server(self._client, "127.0.0.1", 0, ssl=self.context)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()
            server.close()

    def __enter__(self) -> TlsFront:
        self._thread.start()
        assert self._ready.wait(TIMEOUT)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(TIMEOUT)


def test_tls_grpc_session_is_recorded_and_decoded(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    confdir = tmp_path / "mitm"
    out = tmp_path / "tls.http"
    with DemoAgent(event_delay=0.05) as agent, WebhookReceiver() as hook:
        assert agent.grpc_port is not None
        live = asyncio.run(run_session(agent.base_url, binding="GRPC", webhook=hook))
        with (
            TlsFront(("127.0.0.1", agent.grpc_port), cert, key) as front,
            RecordingProxy(
                upstream=agent.base_url,
                out=out,
                confdir=confdir,
                grpc_upstream=f"https://127.0.0.1:{front.port}",
                mitm_options={"ssl_verify_upstream_trusted_ca": str(cert)},
            ) as proxy,
        ):
            ca = (confdir / "mitmproxy-ca-cert.pem").read_bytes()
            credentials = grpc.ssl_channel_credentials(root_certificates=ca)

            def secure(target: str) -> grpc.aio.Channel:
                return grpc.aio.secure_channel(target, credentials)

            recorded = asyncio.run(
                run_session(proxy.url, binding="GRPC", webhook=hook, grpc_channel_factory=secure)
            )
    assert recorded == live
    capture = read_capture(out)
    calls = grpc_exchanges(capture)
    assert len(calls) >= 20
    assert all(e.request.messages and e.request.messages[0].json for e in calls)
    assert capture.upstreams[0].startswith("http://")
    assert [e.classification.error for e in calls if e.classification.error] == list(
        ERRORS.values()
    )
    stream = next(e for e in calls if e.classification.operation == "SendStreamingMessage")
    assert stream.response is not None and len(stream.response.messages) >= 5
    # The TLS capture replays like a plaintext one.
    with WebhookReceiver() as hook, Replayer([capture]) as replayer:
        replayed = asyncio.run(run_session(replayer.url, binding="GRPC", webhook=hook))
    assert without_deliveries(replayed) == without_deliveries(live)


# --- one capture, three bindings -----------------------------------------------------------------


def test_one_replayer_serves_jsonrpc_rest_and_grpc_from_one_capture(tmp_path: Path) -> None:
    out = tmp_path / "all.http"
    bindings = ("JSONRPC", "HTTP+JSON", "GRPC")
    live: dict[str, SessionResult] = {}
    with DemoAgent(event_delay=0.05) as agent, WebhookReceiver() as hook:
        assert agent.grpc_target is not None
        with RecordingProxy(
            upstream=agent.base_url, out=out, grpc_upstream=agent.grpc_target
        ) as proxy:
            for binding in bindings:
                live[binding] = asyncio.run(run_session(proxy.url, binding=binding, webhook=hook))
    capture = read_capture(out)
    assert {e.classification.binding for e in capture.exchanges} >= {
        Binding.JSONRPC,
        Binding.HTTP_JSON,
        Binding.GRPC,
    }
    with WebhookReceiver() as hook, Replayer([capture]) as replayer:

        async def all_at_once() -> list[SessionResult]:
            return await asyncio.gather(
                *(run_session(replayer.url, binding=b, webhook=hook) for b in bindings)
            )

        replayed = dict(zip(bindings, asyncio.run(all_at_once()), strict=True))
        assert replayer.report.misses == []
    assert replayed["JSONRPC"] == live["JSONRPC"]
    assert replayed["HTTP+JSON"] == live["HTTP+JSON"]
    assert without_deliveries(replayed["GRPC"]) == without_deliveries(live["GRPC"])


# --- v0.3 ----------------------------------------------------------------------------------------


async def v03_session(base_url: str) -> tuple[str, ...]:
    """SendMessage then GetTask with the SDK's v0.3 compat gRPC client (card cut to 0.3 GRPC)."""
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
    keep = [
        i
        for i in card.supported_interfaces
        if i.protocol_binding == "GRPC" and i.protocol_version == "0.3"
    ]
    del card.supported_interfaces[:]
    card.supported_interfaces.extend(keep)
    factory = ClientFactory(
        ClientConfig(
            streaming=False,
            supported_protocol_bindings=["GRPC"],
            grpc_channel_factory=grpc.aio.insecure_channel,
        )
    )
    # a2a-sdk 1.3.0 picks CompatGrpcTransport for a 0.3 interface only if its import worked
    # when a2a.client loaded; importing a2a.compat.v0_3.grpc_handler first (recorder.demo does)
    # makes that import fail silently.  Register the SDK's own compat transport explicitly.
    factory.register("GRPC", CompatGrpcTransport.create)
    client = factory.create(card)
    try:
        message = Message(
            message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text="echo v03")]
        )
        events = [e async for e in client.send_message(SendMessageRequest(message=message))]
        task = next(e.task for e in events if e.HasField("task"))
        got = await client.get_task(GetTaskRequest(id=task.id))
    finally:
        await client.close()
    texts = tuple(p.text for a in got.artifacts for p in a.parts)
    return (
        type(client._transport).__name__,  # type: ignore[attr-defined]
        str(task.status.state),
        str(got.status.state),
        *texts,
    )


def test_v03_grpc_session_records_decodes_and_replays(tmp_path: Path) -> None:
    out = tmp_path / "v03.http"
    with DemoAgent(event_delay=0.05) as agent:
        assert agent.grpc_target is not None
        with RecordingProxy(
            upstream=agent.base_url, out=out, grpc_upstream=agent.grpc_target
        ) as proxy:
            recorded = asyncio.run(v03_session(proxy.url))
    assert recorded[0] == "CompatGrpcTransport"
    assert "echo v03" in " ".join(recorded)
    capture = read_capture(out)
    calls = grpc_exchanges(capture)
    assert [e.request.target for e in calls] == [
        "/a2a.v1.A2AService/SendMessage",
        "/a2a.v1.A2AService/GetTask",
    ]
    assert [e.request.messages[0].type_name for e in calls] == [
        "a2a.v1.SendMessageRequest",
        "a2a.v1.GetTaskRequest",
    ]
    assert all(
        e.classification.version is not None and str(e.classification.version) == "0.3"
        for e in calls
    )
    get = calls[1]
    assert json.loads(get.request.messages[0].json or "{}")["name"].startswith("tasks/")
    assert get.response is not None and get.response.messages[0].type_name == "a2a.v1.Task"
    with Replayer([capture]) as replayer:
        replayed = asyncio.run(v03_session(replayer.url))
        assert replayer.report.misses == []
    assert replayed == recorded


def test_raw_v03_stub_against_the_replayer(tmp_path: Path) -> None:
    out = tmp_path / "v03-raw.http"

    async def call(target: str) -> Any:
        async with grpc.aio.insecure_channel(target) as channel:
            stub = a2a_v0_3_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
            request = v03.SendMessageRequest(
                request=v03.Message(
                    message_id="raw-1", role=v03.ROLE_USER, content=[v03.Part(text="echo raw")]
                )
            )
            return await stub.SendMessage(request, timeout=TIMEOUT)

    with DemoAgent(event_delay=0.05) as agent:
        assert agent.grpc_target is not None
        with RecordingProxy(
            upstream=agent.base_url, out=out, grpc_upstream=agent.grpc_target
        ) as proxy:
            assert proxy.grpc_target is not None
            live = asyncio.run(call(proxy.grpc_target))
    capture = read_capture(out)
    with Replayer([capture]) as replayer:
        assert replayer.grpc_target is not None
        replayed = asyncio.run(call(replayer.grpc_target))
        again = asyncio.run(call(replayer.grpc_target))
    assert live.task.status.state == replayed.task.status.state == v03.TASK_STATE_COMPLETED
    # The first conversation gets the recorded ids; a second one is a new task.
    assert replayed.task.id == live.task.id
    assert again.task.id not in (live.task.id, "")
    assert again.task.status.state == v03.TASK_STATE_COMPLETED
    assert [p.text for a in replayed.task.artifacts for p in a.parts] == [
        p.text for a in live.task.artifacts for p in a.parts
    ]


def test_forward_mode_records_grpc_tunnelled_through_connect(tmp_path: Path) -> None:
    """A gRPC client using the recorder as its proxy (`grpc.http_proxy`) tunnels h2c through
    CONNECT; the calls pass untouched and land in the capture of their upstream."""
    out = tmp_path / "forward"
    with DemoAgent(event_delay=0.05) as agent, WebhookReceiver() as hook:
        assert agent.grpc_target is not None
        live = asyncio.run(run_session(agent.base_url, binding="GRPC", webhook=hook))
        with RecordingProxy(mode="forward", out=out) as proxy:

            def channel(url: str) -> grpc.aio.Channel:
                return grpc.aio.insecure_channel(url, options=[("grpc.http_proxy", proxy.url)])

            through = asyncio.run(
                run_session(
                    agent.base_url, binding="GRPC", webhook=hook, grpc_channel_factory=channel
                )
            )
        target = agent.grpc_target
    assert through == live
    capture = read_capture(out / f"{target.replace(':', '_')}.http")
    assert capture.upstreams == (f"grpc://{target}",)
    calls = grpc_exchanges(capture)
    assert len(calls) == len(capture.exchanges)
    assert {e.classification.operation for e in calls} >= {
        "SendMessage",
        "SendStreamingMessage",
        "GetTask",
        "ListTasks",
        "CancelTask",
        "SubscribeToTask",
        "CreateTaskPushNotificationConfig",
        "GetExtendedAgentCard",
    }
    errors = {e.classification.error for e in calls if e.classification.error}
    assert errors >= set(ERRORS.values())
    assert all(m.json is not None for e in calls for m in e.request.messages)


def test_bad_grpc_upstream_is_refused() -> None:
    for bad in ("nohost", "ftp://127.0.0.1:5", "127.0.0.1:0", "127.0.0.1:x"):
        with pytest.raises(ValueError):
            RecordingProxy(upstream="http://127.0.0.1:9", grpc_upstream=bad)


# --- push deliveries through the push proxy -------------------------------------------------------


@pytest.fixture(scope="module")
def pushed(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[SessionResult, SessionResult, Capture, int]]:
    """A gRPC session recorded with the agent's deliveries sent through the push proxy.

    The agent needs the proxy's address before the proxy (which needs the agent's) starts, so
    the push proxy's port is picked first.
    """
    out = tmp_path_factory.mktemp("grpc-push") / "push.http"
    port = free_port()
    with (
        DemoAgent(event_delay=0.05, push_proxy=f"http://127.0.0.1:{port}") as agent,
        WebhookReceiver() as hook,
    ):
        assert agent.grpc_target is not None
        with RecordingProxy(
            upstream=agent.base_url,
            out=out,
            grpc_upstream=agent.grpc_target,
            push_proxy=("127.0.0.1", port),
        ) as proxy:
            assert proxy.push_proxy_url == f"http://127.0.0.1:{port}"
            recorded = asyncio.run(run_session(proxy.url, binding="GRPC", webhook=hook))
        received = len(hook.deliveries)
    yield recorded, without_deliveries(recorded), read_capture(out), received


def test_push_proxy_session_equals_live_and_the_webhook_gets_them(
    plaintext: tuple[SessionResult, SessionResult, Capture, str],
    pushed: tuple[SessionResult, SessionResult, Capture, int],
) -> None:
    live = plaintext[0]
    recorded, _, _, received = pushed
    assert recorded == live
    assert recorded.webhook_deliveries == 4 and received == 4


def test_push_proxy_deliveries_are_in_the_capture_decoded_and_redacted(
    pushed: tuple[SessionResult, SessionResult, Capture, int],
) -> None:
    _, _, capture, _ = pushed
    deliveries = [e for e in capture.exchanges if e.classification.operation == PUSH_DELIVERY]
    assert len(deliveries) == 4
    assert capture.upstreams[0].startswith("http://")  # the card fetch opened it
    send = next(
        e
        for e in grpc_exchanges(capture)
        if e.classification.operation == "SendMessage"
        and "taskPushNotificationConfig" in (e.request.messages[0].json or "")
    )
    config = json.loads(send.request.messages[0].json or "{}")["configuration"][
        "taskPushNotificationConfig"
    ]
    assert config["token"].startswith("<redacted:")
    kinds = []
    for delivery in deliveries:
        body = json.loads(delivery.request.body)
        kinds.append(next(iter(body)))
        assert delivery.classification.task_id
        assert delivery.request.header("X-A2A-Notification-Token") == config["token"]
        assert (
            f"http://{delivery.request.header('host')}{delivery.request.target}" == (config["url"])
        )
        assert delivery.response is not None and delivery.response.status == 200
    assert set(kinds) <= {"task", "statusUpdate", "artifactUpdate"} and "task" in kinds
    assert not [e for e in capture.exchanges if e.classification.operation is None]


def test_push_proxy_capture_replays_deliveries_to_the_new_webhook(
    plaintext: tuple[SessionResult, SessionResult, Capture, str],
    pushed: tuple[SessionResult, SessionResult, Capture, int],
) -> None:
    live = plaintext[0]
    _, _, capture, _ = pushed
    with WebhookReceiver() as hook, Replayer([capture]) as replayer:
        replayed = asyncio.run(run_session(replayer.url, binding="GRPC", webhook=hook))
        assert replayer.report.misses == []
    assert replayed == live
    assert replayed.webhook_deliveries == 4


def test_push_proxy_forwards_other_traffic_unrecorded(tmp_path: Path) -> None:
    """Port 0 is resolved; a POST that is no delivery is forwarded but not recorded."""
    out = tmp_path / "other.http"
    with DemoAgent(event_delay=0.05) as agent, WebhookReceiver() as hook:
        assert agent.grpc_target is not None
        with RecordingProxy(
            upstream=agent.base_url,
            out=out,
            grpc_upstream=agent.grpc_target,
            push_proxy=("127.0.0.1", 0),
        ) as proxy:
            url = proxy.push_proxy_url
            assert url is not None and not url.endswith(":0")
            assert proxy.port != int(url.rpartition(":")[2])
            with httpx.Client(proxy=url, timeout=TIMEOUT) as client:
                other = client.post(hook.url, json={"hello": "world"})
                delivery = client.post(
                    hook.url,
                    headers={"X-A2A-Notification-Token": "t0k"},
                    json={"statusUpdate": {"taskId": "t-1", "contextId": "c"}},
                )
        assert other.status_code == delivery.status_code == 200
        assert hook.wait_for(2, timeout=TIMEOUT)
    capture = read_capture(out)
    assert [e.classification.operation for e in capture.exchanges] == [PUSH_DELIVERY]
    only = capture.exchanges[0]
    assert only.classification.task_id == "t-1"
    assert only.request.header("X-A2A-Notification-Token") == "<redacted:1>"


def test_push_proxy_serves_relay_urls_itself_so_http_deliveries_are_recorded_once(
    tmp_path: Path,
) -> None:
    """An agent using the push proxy for every POST also sends relay deliveries through it."""
    out = tmp_path / "rest.http"
    port = free_port()
    with (
        DemoAgent(event_delay=0.05, push_proxy=f"http://127.0.0.1:{port}") as agent,
        WebhookReceiver() as hook,
        RecordingProxy(upstream=agent.base_url, out=out, push_proxy=("127.0.0.1", port)) as proxy,
    ):
        result = asyncio.run(run_session(proxy.url, binding="HTTP+JSON", webhook=hook))
    assert result.webhook_deliveries == 4
    deliveries = [
        e for e in read_capture(out).exchanges if e.classification.operation == PUSH_DELIVERY
    ]
    assert len(deliveries) == 4
    assert all(
        any(n.startswith("push relay: /__a2a_recorder/push/") for n in e.notes) for e in deliveries
    )


def test_an_unknown_rpc_is_replayed_as_recorded_and_another_is_a_miss(tmp_path: Path) -> None:
    # The fuzzer's unknown-routes: an rpc the tables do not know was recorded (the agent's
    # UNIMPLEMENTED), and on replay grpcio answered it itself, the exchange never served.
    def call(target: str, rpc: str) -> grpc.RpcError:
        with grpc.insecure_channel(target) as channel:
            stub = channel.unary_unary(f"/lf.a2a.v1.A2AService/{rpc}")
            with pytest.raises(grpc.RpcError) as raised:
                stub(b"\x0a\x03abc", timeout=10, metadata=(("a2a-version", "1.0"),))
        return raised.value

    out = tmp_path / "unknown.http"
    with DemoAgent() as agent:
        assert agent.grpc_target is not None
        with RecordingProxy(
            upstream=agent.base_url, out=out, grpc_upstream=agent.grpc_target
        ) as proxy:
            assert proxy.grpc_target is not None
            live = call(proxy.grpc_target, "Explode")
    capture = read_capture(out)
    assert [e.classification.operation for e in capture.exchanges] == ["unknown"]
    with Replayer([capture]) as replayer:
        assert replayer.grpc_target is not None
        replayed = call(replayer.grpc_target, "Explode")
        other = call(replayer.grpc_target, "Implode")
        report = replayer.report
        journal = replayer.journal.requests
    assert replayed.code() == live.code() == grpc.StatusCode.UNIMPLEMENTED
    assert replayed.details() == live.details()
    assert journal[0].outcome == "served" and journal[0].exchange == 1
    assert journal[1].outcome == "miss" and other.code() is grpc.StatusCode.INTERNAL
    assert report.unserved == [] and len(report.misses) == 1
