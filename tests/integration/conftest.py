"""Shared integration fixtures: a running demo agent and a webhook receiver, on free ports.

``demo_agent`` is session-scoped (tasks pile up in its store; the scripted session filters
by its own context id, so that is harmless). ``make_demo_agent`` starts agents with custom
options and stops them at teardown. Everything binds 127.0.0.1 only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # imported in the fixtures: tests without a2a-sdk (the [demo] extra) run too
    from recorder.demo import DemoAgent, WebhookReceiver

# Short pacing for "slow N" so the suite stays fast; timing tests pass their own.
FAST_EVENT_DELAY = 0.05


@pytest.fixture(scope="session")
def demo_agent() -> Iterator[DemoAgent]:
    """A demo agent on every binding (JSON-RPC, HTTP+JSON, gRPC), shared by the session."""
    from recorder.demo import DemoAgent

    with DemoAgent(event_delay=FAST_EVENT_DELAY) as agent:
        yield agent


@pytest.fixture
def make_demo_agent() -> Iterator[Callable[..., DemoAgent]]:
    """Factory: ``make_demo_agent(event_delay=0.3, enable_grpc=False)``; stopped at teardown."""
    from recorder.demo import DemoAgent

    started: list[DemoAgent] = []

    def make(**options: Any) -> DemoAgent:
        options.setdefault("event_delay", FAST_EVENT_DELAY)
        agent = DemoAgent(**options).start()
        started.append(agent)
        return agent

    yield make
    for agent in started:
        agent.stop()


@pytest.fixture
def webhook_receiver() -> Iterator[WebhookReceiver]:
    """A fresh webhook receiver that records every POST and answers 200."""
    from recorder.demo import WebhookReceiver

    with WebhookReceiver() as receiver:
        yield receiver
