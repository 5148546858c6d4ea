"""A fleet's routing, without sockets: which captures are one agent, where deliveries go,
which agent an authority names, and what a tunnel carries."""

from __future__ import annotations

import json
from pathlib import Path

from hpack import Encoder
from hyperframe.frame import ContinuationFrame, DataFrame, HeadersFrame, SettingsFrame
from hypothesis import given
from hypothesis import strategies as st

from recorder.capture import Capture, Exchange, GrpcMessage, Request, Response
from recorder.protocol import classify
from recorder.replay.fleet._route import (
    H2_CLIENT_PREFACE,
    H2_PREFACE,
    SETTINGS_ACK,
    AckFilter,
    Routes,
    Unrouted,
    adopt_deliveries,
    authority,
    connect_target,
    h2_authority,
    opening,
    plan_agents,
    request_authority,
    same_authority,
    tunnel_kind,
)

JSON = (("Content-Type", "application/json"),)


def exchange(n: int, request: Request, response: Response | None, started_us: int = 0) -> Exchange:
    return Exchange(n, classify(request, response), request, response, started_us)


def card(http: str, grpc: str | None = None, name: str = "agent") -> Exchange:
    interfaces = [{"url": f"{http}/a2a/jsonrpc", "protocolBinding": "JSONRPC"}]
    if grpc:
        interfaces.append({"url": grpc, "protocolBinding": "GRPC"})
    body = {
        "name": name,
        "version": "1",
        "capabilities": {},
        "skills": [],
        "supportedInterfaces": interfaces,
    }
    host = http.partition("://")[2]
    request = Request("GET", "/.well-known/agent-card.json", (("Host", host),))
    return exchange(1, request, Response(200, "OK", JSON, json.dumps(body).encode()))


def send(n: int, host: str, webhook: str | None = None, started_us: int = 0) -> Exchange:
    params: dict[str, object] = {
        "message": {"messageId": f"m{n}", "role": "ROLE_USER", "parts": [{"text": "echo"}]}
    }
    if webhook:
        params["configuration"] = {"taskPushNotificationConfig": {"url": webhook}}
    body = {"jsonrpc": "2.0", "id": n, "method": "SendMessage", "params": params}
    request = Request("POST", "/a2a/jsonrpc", (("Host", host), *JSON), json.dumps(body).encode())
    answer = {"jsonrpc": "2.0", "id": n, "result": {"task": {"id": "t1", "contextId": "c1"}}}
    return exchange(n, request, Response(200, "OK", JSON, json.dumps(answer).encode()), started_us)


def delivery(n: int, url: str, started_us: int) -> Exchange:
    host, _, path = url.partition("://")[2].partition("/")
    body = json.dumps({"statusUpdate": {"taskId": "t1", "status": {"state": "TASK_STATE_WORKING"}}})
    request = Request("POST", f"/{path}", (("Host", host), *JSON), body.encode())
    c = classify(request, Response(200), webhook_paths=(f"/{path}",))
    return Exchange(n, c, request, Response(200, "OK"), started_us)


def grpc_call(n: int) -> Exchange:
    request = Request(
        "POST",
        "/lf.a2a.v1.A2AService/SendMessage",
        (),
        messages=(GrpcMessage(0, json='{"message":{"messageId":"m"}}'),),
        http_version="HTTP/2",
    )
    return exchange(n, request, Response(200, "", http_version="HTTP/2"))


def capture(
    upstream: str, *exchanges: Exchange, started: str = "2026-01-01T00:00:00.000000Z"
) -> Capture:
    return Capture(started, "0.1.0", tuple(exchanges), (upstream,))


# --- authorities ---------------------------------------------------------------------------


def test_authorities_fold_loopback_names_and_default_ports() -> None:
    assert authority("http://LOCALHOST:8000/a2a") == ("http", "127.0.0.1:8000")
    assert authority("https://agent.example") == ("https", "agent.example:443")
    assert authority("127.0.0.1:50051", "grpc") == ("grpc", "127.0.0.1:50051")
    assert authority("http://[::1]:9") == ("http", "127.0.0.1:9")
    assert authority("http://[fe80::1]:9") == ("http", "[fe80::1]:9")
    assert authority("http://host:99999") is None  # a port out of range
    assert authority("http://:80") is None
    assert same_authority("localhost:80", "127.0.0.1")
    assert not same_authority("127.0.0.1:80", "127.0.0.1:81")


def test_a_proxied_request_names_its_absolute_target_else_its_host() -> None:
    assert request_authority(b"http://localhost:9001/a2a/jsonrpc", "other:1") == "127.0.0.1:9001"
    assert request_authority(b"/a2a/jsonrpc", "agent:9001") == "agent:9001"
    assert request_authority(b"/a2a/jsonrpc", None) is None


@given(st.text())
def test_no_authority_text_crashes(text: str) -> None:
    found = authority(text)
    assert found is None or ":" in found[1]


# --- agents ------------------------------------------------------------------------------


def test_an_agents_http_and_grpc_captures_are_one_agent_the_others_apart() -> None:
    http = capture("http://127.0.0.1:8001", card("http://127.0.0.1:8001", "127.0.0.1:9001"))
    grpc = capture("grpc://127.0.0.1:9001", grpc_call(1))
    other = capture("http://localhost:8002", card("http://127.0.0.1:8002", name="other"))
    plans = plan_agents([(Path("a.http"), http), (Path("b.http"), other), (Path("c.http"), grpc)])
    assert [(p.name, [q.name for q in p.paths], p.card_name) for p in plans] == [
        ("a", ["a.http", "c.http"], "agent"),
        ("b", ["b.http"], "other"),
    ]
    routes = Routes(plans)
    assert routes.find("localhost:9001") is not None
    assert [routes.find(w).agent for w in ("127.0.0.1:8001", "127.0.0.1:9001", "[::1]:8002")] == [
        0,
        0,
        1,
    ]
    assert routes.find("127.0.0.1:8003") is None
    assert routes.find("127.0.0.1:9001").scheme == "grpc"  # type: ignore[union-attr]


def test_deliveries_go_with_the_capture_that_registered_their_webhook() -> None:
    hook = "http://127.0.0.1:7000/hook/abc"
    agent = capture(
        "http://127.0.0.1:8001",
        send(1, "127.0.0.1:8001", webhook=hook, started_us=1_000),
        send(2, "127.0.0.1:8001", started_us=2_000),
        started="2026-01-01T00:00:00.000000Z",
    )
    # The webhook's own capture started 0.5 s later: its offsets count from there.
    pushes = capture(
        "http://127.0.0.1:7000",
        delivery(1, hook, 100),
        delivery(2, hook, 200),
        started="2026-01-01T00:00:00.500000Z",
    )
    found = [(Path("agent.http"), agent), (Path("hook.http"), pushes)]
    adopted, notes = adopt_deliveries(found)
    moved = adopted[0][1].exchanges[2:]
    assert [(e.number, e.started_us) for e in moved] == [(3, 500_100), (4, 500_200)]
    assert moved[0].notes[-1] == "recorded in hook.http as #1"
    assert adopted[1][1].exchanges == ()
    assert notes == {0: [notes[0][0]]} and "2 push deliveries recorded in hook.http" in notes[0][0]
    plans = plan_agents(found)
    assert [p.name for p in plans] == ["agent"]  # the emptied capture is no agent
    assert plans[0].adopted == tuple(notes[0])


def test_deliveries_to_a_webhook_nobody_registered_stay_where_they_are() -> None:
    pushes = capture("http://127.0.0.1:7000", delivery(1, "http://127.0.0.1:7000/h", 0))
    agent = capture("http://127.0.0.1:8001", send(1, "127.0.0.1:8001", webhook="http://x:1/h"))
    found = [(Path("a.http"), agent), (Path("b.http"), pushes)]
    assert adopt_deliveries(found) == (found, {})
    assert [p.name for p in plan_agents(found)] == ["a", "b"]


# --- CONNECT and tunnels -------------------------------------------------------------------


def test_connect_heads() -> None:
    assert connect_target(b"CONNECT 127.0.0.1:9001 HTTP/1.1\r\nHost: x\r\n\r\n") == "127.0.0.1:9001"
    assert connect_target(b"connect agent:443 HTTP/1.0\r\n\r\n") == "agent:443"
    for bad in (
        b"GET / HTTP/1.1\r\n\r\n",
        b"CONNECT HTTP/1.1\r\n\r\n",
        b"CONNECT a b c d\r\n",
        b"",
    ):
        assert connect_target(bad) is None


def test_a_tunnel_is_told_by_its_first_bytes() -> None:
    assert tunnel_kind(H2_PREFACE + b"\r\nSM\r\n\r\n") == "grpc"
    assert tunnel_kind(H2_PREFACE[:5]) is None  # too few to tell
    assert tunnel_kind(b"\x16\x03\x01\x02\x00") == "tls"
    assert tunnel_kind(b"POST /a2a HTTP/1.1\r\n") == "http"
    assert tunnel_kind(b"") is None


@given(st.binary())
def test_any_first_bytes_are_told_or_waited_for(data: bytes) -> None:
    kind = tunnel_kind(data)
    assert kind in ("grpc", "tls", "http") or (kind is None and H2_PREFACE.startswith(data))


def test_unrouted_requests_are_counted_and_kept_bounded() -> None:
    unrouted = Unrouted(limit=2)
    for n in range(5):
        unrouted.add("GET", f"h:{n}", "why")
    assert unrouted.count == 5
    assert [r.line() for r in unrouted.requests] == ["GET h:3: why", "GET h:4: why"]


# --- HTTP/2 sent to the proxy itself --------------------------------------------------------


def test_a_request_to_the_proxy_is_told_by_its_first_bytes() -> None:
    assert opening(b"CONNECT 127.0.0.1:1 HTTP/1.1\r\n") == "connect"
    assert opening(b"connect ") == "connect"
    assert opening(H2_CLIENT_PREFACE) == "h2"
    assert opening(b"GET http://a/ HTTP/1.1\r\n") == "http"
    assert opening(b"CONN") is None and opening(b"PRI * HT") is None  # too few yet
    assert opening(b"POST /") == "http" and opening(b"CONNECTED") == "http"


@given(st.binary(max_size=30))
def test_any_first_bytes_are_a_request_or_waited_for(data: bytes) -> None:
    kind = opening(data)
    waiting = any(p.upper().startswith(data.upper()) for p in (b"CONNECT ", H2_PREFACE))
    assert kind in ("connect", "h2", "http") or (kind is None and waiting)


def client_connection(authority: str, split_block: bool = False) -> bytes:
    """What a gRPC client sends first: preface, SETTINGS, HEADERS (+ CONTINUATION), DATA."""
    block = Encoder().encode(
        [(":method", "POST"), (":scheme", "http"), (":path", "/lf.a2a.v1.A2AService/GetTask"),
         (":authority", authority), ("content-type", "application/grpc")]
    )  # fmt: skip
    settings = SettingsFrame(0, settings={SettingsFrame.ENABLE_PUSH: 0}).serialize()
    if not split_block:
        headers = HeadersFrame(1, block, flags=["END_HEADERS"]).serialize()
    else:
        first = HeadersFrame(1, block[:5]).serialize()
        headers = first + ContinuationFrame(1, block[5:], flags=["END_HEADERS"]).serialize()
    return H2_CLIENT_PREFACE + settings + headers + DataFrame(1, b"\x00" * 5).serialize()


def test_the_first_requests_authority_is_read_once_its_header_block_is_whole() -> None:
    for split in (False, True):
        whole = client_connection("127.0.0.1:50051", split)
        assert h2_authority(whole) == "127.0.0.1:50051"
        end = whole.index(DataFrame(1, b"\x00" * 5).serialize())
        assert all(h2_authority(whole[:n]) is None for n in range(end))
    assert h2_authority(b"GET / HTTP/1.1\r\n\r\n") == ""  # not HTTP/2
    assert h2_authority(H2_CLIENT_PREFACE + b"\x00\x00\x05\x01\x04\x00\x00\x00\x01\xff" * 2) == ""


@given(st.binary(max_size=200))
def test_no_bytes_after_the_preface_crash_the_authority_reader(data: bytes) -> None:
    found = h2_authority(H2_CLIENT_PREFACE + data)
    assert found is None or isinstance(found, str)


@given(st.lists(st.integers(min_value=0, max_value=400), max_size=8))
def test_the_proxys_settings_ack_is_taken_out_once_however_the_bytes_come(cuts: list[int]) -> None:
    before = client_connection("a:1")
    stream = before + SETTINGS_ACK + DataFrame(1, b"x").serialize() + SETTINGS_ACK
    expected = before + DataFrame(1, b"x").serialize() + SETTINGS_ACK
    through = AckFilter()
    points = sorted({min(c, len(stream)) for c in cuts} | {0, len(stream)})
    out = b"".join(through.feed(stream[a:b]) for a, b in zip(points, points[1:], strict=False))
    assert out == expected
    assert through.done
