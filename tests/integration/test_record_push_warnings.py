"""The recorder says so, once, when push deliveries will not be in the capture.

1. A push config set over gRPC goes through the relay, as on the other bindings (issue 29:
   it went straight to the webhook, unrecorded); only one the relay cannot take (forward mode)
   is warned about, naming `--push-proxy`.
2. A hardened agent: a2a-sdk's own `validate_push_notification_url` refuses the recorder's
   relay (a loopback URL), so no delivery comes; at stop the recorder warns, naming each SDK's
   switch.  Without the guard (a2a-sdk's default), deliveries come and nothing is said.

Real parts: the a2a-sdk demo agent and clients (`run_session`), a webhook receiver, the
in-process recorder.  Everything binds 127.0.0.1 on free ports.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
from a2a.utils.push_url_validator import validate_push_notification_url

from recorder.capture import read_capture
from recorder.demo import DemoAgent, WebhookReceiver, run_session
from recorder.protocol import PUSH_DELIVERY
from recorder.record import RecordingProxy

FAST = 0.05


def _warnings(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("warning:")]


def test_grpc_push_configs_go_through_the_relay_and_nothing_is_said(tmp_path: Path) -> None:
    lines: list[str] = []
    out = tmp_path / "grpc.http"
    with DemoAgent(event_delay=FAST) as agent, WebhookReceiver() as hook:
        assert agent.grpc_target is not None
        with RecordingProxy(
            upstream=agent.base_url,
            out=out,
            grpc_upstream=agent.grpc_target,
            console=lines.append,
        ) as proxy:
            result = asyncio.run(run_session(proxy.url, binding="GRPC", webhook=hook))
    assert result.webhook_deliveries == 4
    capture = read_capture(out)
    deliveries = [e for e in capture.exchanges if e.classification.operation == PUSH_DELIVERY]
    assert len(deliveries) == 4 and not _warnings(lines), lines


def test_a_grpc_push_config_in_forward_mode_is_warned_once(tmp_path: Path) -> None:
    lines: list[str] = []
    with (
        DemoAgent(event_delay=FAST) as agent,
        WebhookReceiver() as hook,
        RecordingProxy(mode="forward", out=tmp_path, console=lines.append) as proxy,
    ):

        def channel(url: str) -> grpc.aio.Channel:
            return grpc.aio.insecure_channel(url, options=[("grpc.http_proxy", proxy.url)])

        session = run_session(
            agent.base_url, binding="GRPC", webhook=hook, grpc_channel_factory=channel
        )
        result = asyncio.run(session)
        hook_url = hook.url
    assert result.webhook_deliveries == 4  # the webhook got them, straight from the agent
    said = _warnings(lines)
    assert len(said) == 1, lines  # several configs were set: said once, and nothing else
    assert "a push config was set over gRPC" in said[0]
    assert "--push-proxy" in said[0] and hook_url in said[0]


def test_a_hardened_agent_that_refuses_the_relay_is_warned_at_stop(tmp_path: Path) -> None:
    lines: list[str] = []
    out = tmp_path / "hardened.http"
    guarded = DemoAgent(
        event_delay=FAST, enable_grpc=False, push_url_validator=validate_push_notification_url
    )
    with guarded as agent, WebhookReceiver() as hook:
        proxy = RecordingProxy(upstream=agent.base_url, out=out, console=lines.append)
        with proxy:  # the warning comes when it stops
            result = asyncio.run(
                run_session(proxy.url, binding="JSONRPC", webhook=hook, webhook_timeout=1.0)
            )
            assert not _warnings(lines)  # nothing to say while the session may still deliver
    assert result.webhook_deliveries == 0  # the agent refused the relay's loopback URL
    said = _warnings(lines)
    assert len(said) == 1, lines
    assert "no push delivery reached the recorder" in said[0]
    for switch in ("AllowPrivateNetworks", "allow-private-network-targets", "push_url_validator"):
        assert switch in said[0]
    assert lines.index(said[0]) < next(
        i for i, line in enumerate(lines) if line.startswith("recorded ")
    )  # before the summary


def test_deliveries_through_the_relay_are_not_warned_about(tmp_path: Path) -> None:
    lines: list[str] = []
    with (
        DemoAgent(event_delay=FAST, enable_grpc=False) as agent,
        WebhookReceiver() as hook,
        RecordingProxy(
            upstream=agent.base_url, out=tmp_path / "ok.http", console=lines.append
        ) as proxy,
    ):
        result = asyncio.run(run_session(proxy.url, binding="JSONRPC", webhook=hook))
    assert result.webhook_deliveries == 4
    assert not _warnings(lines), lines
