"""The recorder's push relay finds webhook URLs wherever each A2A version puts them."""

from __future__ import annotations

import json

import pytest

from recorder.record import RELAY_PREFIX, PushRelay

ORIGIN = "http://127.0.0.1:9000"
HOOK = "http://127.0.0.1:7000/webhook"


@pytest.mark.parametrize(
    ("body", "root"),
    [
        # v1.0 JSON-RPC SendMessage with an inline push config
        ({"params": {"configuration": {"taskPushNotificationConfig": {"url": HOOK}}}}, ("params",)),
        # v0.3 JSON-RPC message/send
        ({"params": {"configuration": {"pushNotificationConfig": {"url": HOOK}}}}, ("params",)),
        # v0.3 REST /v1/message:send: the v0.3 proto's JSON names it `pushNotification`
        ({"message": {}, "configuration": {"pushNotification": {"url": HOOK}}}, ()),
        # v0.3 set config (REST and JSON-RPC params)
        (
            {"name": "tasks/t/pushNotificationConfigs/c", "pushNotificationConfig": {"url": HOOK}},
            (),
        ),
    ],
)
def test_webhook_url_is_replaced_by_a_relay_url(
    body: dict[str, object], root: tuple[str, ...]
) -> None:
    relay = PushRelay()
    new, count = relay.to_relay(json.dumps(body).encode(), root, ORIGIN)
    assert count == 1
    assert HOOK not in new.decode()
    assert f"{ORIGIN}{RELAY_PREFIX}1" in new.decode()
    assert relay.real_url(f"{RELAY_PREFIX}1") == HOOK
    assert relay.to_real(new, ORIGIN) == json.dumps(body).encode()


def test_a_body_without_push_config_is_left_alone() -> None:
    body = json.dumps({"configuration": {"blocking": True}}).encode()
    assert PushRelay().to_relay(body, (), ORIGIN) == (body, 0)
