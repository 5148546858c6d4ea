"""The push proxy: which flows through the agent's forward proxy are push deliveries."""

from __future__ import annotations

import json
from pathlib import Path

from mitmproxy import http
from mitmproxy.proxy.mode_specs import ProxyMode
from mitmproxy.test import tflow

from recorder.capture import GrpcMessage, Request, read_capture
from recorder.record import GrpcRecord, Recorder
from recorder.record._push import url_key

PUSH_MODE = "regular@127.0.0.1:8482"
HOOK = "http://127.0.0.1:7000/hook/1"
GRPC_UPSTREAM = "grpc://127.0.0.1:50051"


def recorder(out: Path) -> Recorder:
    addon = Recorder()
    addon.out = out
    addon.push_proxy_mode = PUSH_MODE
    return addon


def pushed_flow(url: str, body: bytes, headers: dict[str | bytes, str | bytes] | None = None,
                mode: str = PUSH_MODE) -> http.HTTPFlow:
    flow = tflow.tflow()
    flow.client_conn.proxy_mode = ProxyMode.parse(mode)
    flow.request = http.Request.make("POST", url, body, headers or {})
    return flow


def v03_create_config(url: str, token: str) -> GrpcRecord:
    message = {"parent": "tasks/t-1", "configId": "c-1",
               "config": {"pushNotificationConfig": {"url": url, "token": token}}}
    request = Request("POST", "/a2a.v1.A2AService/CreateTaskPushNotificationConfig",
                      (("content-type", "application/grpc"),), http_version="HTTP/2",
                      messages=(GrpcMessage(0, json=json.dumps(message),
                                            type_name="a2a.v1.CreateTaskPushNotificationConfigRequest"),))
    return GrpcRecord(request, None, 1.0, 1.1)


def test_url_key_ignores_default_port_and_host_case() -> None:
    assert url_key("http://LOCALHOST/hook") == url_key("http://localhost:80/hook")
    assert url_key("https://h/x?a=1") == url_key("https://h:443/x?a=1")
    assert url_key("http://h/x") != url_key("http://h/y")


def test_webhook_learnt_from_a_grpc_config_marks_any_post_to_it(tmp_path: Path) -> None:
    addon = recorder(tmp_path / "c.http")
    addon.record_grpc(v03_create_config(HOOK, "s3cret"), GRPC_UPSTREAM)
    to_hook = pushed_flow("http://127.0.0.1:7000/hook/1", b"not json",
                          {"X-A2A-Notification-Token": "s3cret"})
    elsewhere = pushed_flow("http://127.0.0.1:7000/other", b"not json")
    for flow in (to_hook, elsewhere):
        addon.request(flow)
        flow.response = http.Response.make(200, b"{}")
        addon.response(flow)
    addon.done()
    capture = read_capture(tmp_path / "c.http")
    assert capture.upstreams == (GRPC_UPSTREAM,)
    create, delivery = capture.exchanges  # the other POST is forwarded, not recorded
    assert delivery.classification.operation == "PushDelivery"
    config = json.loads(create.request.messages[0].json or "{}")
    token = config["config"]["pushNotificationConfig"]["token"]
    assert token.startswith("<redacted:")
    assert delivery.request.header("X-A2A-Notification-Token") == token


def test_heuristic_delivery_without_a_known_config(tmp_path: Path) -> None:
    addon = recorder(tmp_path / "h.http")
    body = json.dumps({"statusUpdate": {"taskId": "t-9", "contextId": "c"}}).encode()
    flow = pushed_flow(HOOK, body, {"X-A2A-Notification-Token": "abc"})
    addon.request(flow)
    flow.response = http.Response.make(204, b"")
    addon.response(flow)
    addon.done()
    (only,) = read_capture(tmp_path / "h.http").exchanges
    assert only.classification.operation == "PushDelivery"
    assert only.classification.task_id == "t-9"


def test_other_traffic_through_the_push_proxy_is_kept_with_record_all(tmp_path: Path) -> None:
    addon = recorder(tmp_path / "a.http")
    addon.record_all = True
    flow = pushed_flow("http://127.0.0.1:7000/metrics", b"x=1")
    addon.request(flow)
    flow.response = http.Response.make(200, b"ok")
    addon.response(flow)
    addon.done()
    (only,) = read_capture(tmp_path / "a.http").exchanges
    assert only.classification.operation is None
