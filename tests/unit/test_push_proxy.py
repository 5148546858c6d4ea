"""The push proxy: which flows through the agent's forward proxy are push deliveries."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mitmproxy import http
from mitmproxy.proxy.mode_specs import ProxyMode
from mitmproxy.test import taddons, tflow

from recorder._background import url_key
from recorder.capture import GrpcMessage, Request, read_capture
from recorder.record import GrpcRecord, RecordingAddons, recording_addons

PUSH_MODE = "regular@127.0.0.1:8482"
HOOK = "http://127.0.0.1:7000/hook/1"
GRPC_UPSTREAM = "grpc://127.0.0.1:50051"


@contextmanager
def recorder(out: Path, **options: object) -> Iterator[RecordingAddons]:
    """The recording addons with mitmproxy's test context, writing to `out`."""
    addons = recording_addons()
    addons.push.push_proxy_mode = PUSH_MODE
    with taddons.context(*addons.chain()) as tctx:
        tctx.configure(addons.save, a2a_out=str(out), a2a_quiet=True, **options)
        yield addons
        addons.save.done()


def through(addons: RecordingAddons, flow: http.HTTPFlow, response: http.Response) -> None:
    """Run a flow's request and response hooks through every addon, as mitmproxy does."""
    for addon in addons.chain():
        getattr(addon, "request", lambda _: None)(flow)
    flow.response = response
    for addon in addons.chain():
        getattr(addon, "response", lambda _: None)(flow)


def pushed_flow(
    url: str,
    body: bytes,
    headers: dict[str | bytes, str | bytes] | None = None,
    mode: str = PUSH_MODE,
) -> http.HTTPFlow:
    flow = tflow.tflow()
    flow.client_conn.proxy_mode = ProxyMode.parse(mode)
    flow.request = http.Request.make("POST", url, body, headers or {})
    return flow


def v03_create_config(url: str, token: str) -> GrpcRecord:
    message = {
        "parent": "tasks/t-1",
        "configId": "c-1",
        "config": {"pushNotificationConfig": {"url": url, "token": token}},
    }
    request = Request(
        "POST",
        "/a2a.v1.A2AService/CreateTaskPushNotificationConfig",
        (("content-type", "application/grpc"),),
        http_version="HTTP/2",
        messages=(
            GrpcMessage(
                0,
                json=json.dumps(message),
                type_name="a2a.v1.CreateTaskPushNotificationConfigRequest",
            ),
        ),
    )
    return GrpcRecord(request, None, 1.0, 1.1)


def test_url_key_ignores_default_port_and_host_case() -> None:
    assert url_key("http://LOCALHOST/hook") == url_key("http://localhost:80/hook")
    assert url_key("https://h/x?a=1") == url_key("https://h:443/x?a=1")
    assert url_key("http://h/x") != url_key("http://h/y")
    assert url_key("HTTP://Hook.Example/a?b=1") == "http://hook.example:80/a?b=1"
    assert url_key("https://h/x") != url_key("http://h/x")
    assert url_key("http://[::1]/hook") == "http://[::1]:80/hook"


def test_webhook_learnt_from_a_grpc_config_marks_any_post_to_it(tmp_path: Path) -> None:
    with recorder(tmp_path / "c.http") as addons:
        addons.record_grpc(v03_create_config(HOOK, "s3cret"), GRPC_UPSTREAM)
        to_hook = pushed_flow(
            "http://127.0.0.1:7000/hook/1", b"not json", {"X-A2A-Notification-Token": "s3cret"}
        )
        elsewhere = pushed_flow("http://127.0.0.1:7000/other", b"not json")
        for flow in (to_hook, elsewhere):
            through(addons, flow, http.Response.make(200, b"{}"))
    capture = read_capture(tmp_path / "c.http")
    assert capture.upstreams == (GRPC_UPSTREAM,)
    create, delivery = capture.exchanges  # the other POST is forwarded, not recorded
    assert delivery.classification.operation == "PushDelivery"
    config = json.loads(create.request.messages[0].json or "{}")
    token = config["config"]["pushNotificationConfig"]["token"]
    assert token.startswith("<redacted:")
    assert delivery.request.header("X-A2A-Notification-Token") == token


def test_heuristic_delivery_without_a_known_config(tmp_path: Path) -> None:
    with recorder(tmp_path / "h.http") as addons:
        body = json.dumps({"statusUpdate": {"taskId": "t-9", "contextId": "c"}}).encode()
        flow = pushed_flow(HOOK, body, {"X-A2A-Notification-Token": "abc"})
        through(addons, flow, http.Response.make(204, b""))
    (only,) = read_capture(tmp_path / "h.http").exchanges
    assert only.classification.operation == "PushDelivery"
    assert only.classification.task_id == "t-9"


def test_other_traffic_through_the_push_proxy_is_kept_with_record_all(tmp_path: Path) -> None:
    with recorder(tmp_path / "a.http", a2a_all=True) as addons:
        flow = pushed_flow("http://127.0.0.1:7000/metrics", b"x=1")
        through(addons, flow, http.Response.make(200, b"ok"))
    (only,) = read_capture(tmp_path / "a.http").exchanges
    assert only.classification.operation is None
