"""The schedule over a fake transport: a model agent answers, no sockets.

A capture recorded from one `ModelAgent` is played against a fresh one: the requests it gets
must carry the ids it handed out, probes must stay probes, concurrent requests must start
beside the ones they overlapped, polls must repeat until the recorded state.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from _agent_model import Client, ModelAgent, Recording

import recorder.verify as verify
from recorder.capture import Capture
from recorder.script import Step
from recorder.verify._outgoing import HttpOutgoing, Outgoing, PathMap, http_outgoing
from recorder.verify._schedule import Schedule
from recorder.verify._send import LiveAnswer


@dataclass
class ModelTransport:
    """Sends each request to a model agent; `hold` can keep an answer back until told."""

    agent: ModelAgent = field(default_factory=ModelAgent)
    requests: list[Any] = field(default_factory=list)
    hold: dict[str, asyncio.Event] = field(default_factory=dict)  # method -> release

    async def send(
        self, step: Step, out: Outgoing, timeout: float, on_document: Callable[[int, Any], None]
    ) -> LiveAnswer:
        assert isinstance(out, HttpOutgoing)
        body = json.loads(out.body)
        self.requests.append(body)
        answer = self.agent.answer(body)
        on_document(0, answer)
        for method, release in self.hold.items():
            if body["method"] == method:
                await release.wait()
        arrived = self.hold.get("arrived:" + body["method"])
        if arrived is not None:
            arrived.set()
        return LiveAnswer([answer], "result" in answer)

    def received(self, webhook: str) -> int:
        return 0  # no push deliveries in these captures


def _prepare(step: Step, mapping: dict[str, str]) -> Outgoing:
    c = step.exchange.classification
    return http_outgoing(
        step.exchange.request, c.binding, c.version, mapping, verify.Credentials(), PathMap()
    )


def _run(capture: Capture, transport: ModelTransport, timeout: float = 5.0) -> Schedule:
    plan = verify.make_plan(capture)
    ids = verify.LiveIds(lambda url: url, dict(plan.script.issuer))

    async def main() -> Schedule:
        schedule = Schedule(plan, ids, transport, _prepare, timeout)
        await asyncio.wait_for(schedule.run(), 10)
        return schedule

    return asyncio.run(main())


def _record(*ops: tuple[str, Any], agent: ModelAgent | None = None) -> tuple[Capture, Client]:
    recording = Recording(agent or ModelAgent())
    client = Client("recorded")
    recording.run(client, list(ops))
    return recording.capture(), client


def test_requests_carry_the_live_agent_s_ids_and_probes_stay_probes() -> None:
    capture, client = _record(
        ("send", "echo a"), ("get", 0), ("probe-get", "nope-1"), ("cancel", 0), ("list", None)
    )
    transport = ModelTransport()
    schedule = _run(capture, transport)
    assert schedule.not_sent == [] and schedule.sent == 5
    live_task = transport.agent.order[0]
    assert live_task != client.tasks[0]
    methods = [(r["method"], r["params"].get("id")) for r in transport.requests]
    assert methods == [
        ("SendMessage", None),
        ("GetTask", live_task),
        ("GetTask", "nope-1"),
        ("CancelTask", live_task),
        ("ListTasks", None),
    ]
    assert schedule.ids.to_live[client.tasks[0]] == live_task
    recorded_message = json.loads(capture.exchanges[0].request.body)["params"]["message"]
    sent_message = transport.requests[0]["params"]["message"]
    assert sent_message["messageId"] != recorded_message["messageId"]


def test_a_second_run_against_the_same_agent_does_not_collide() -> None:
    capture, _ = _record(("send", "echo a"), ("get", 0))
    transport = ModelTransport()
    first, second = _run(capture, transport), _run(capture, transport)
    assert first.not_sent == second.not_sent == []
    sent = [
        r["params"]["message"]["messageId"]
        for r in transport.requests
        if r["method"] == "SendMessage"
    ]
    assert len(set(sent)) == 2 and len(transport.agent.tasks) == 2


class FailingSends(ModelAgent):
    """An agent whose sends answer with an error: it hands out no task."""

    def _SendMessage(self, params: Any) -> Any:
        from _agent_model import AgentError

        raise AgentError("TaskNotFound")


def test_a_request_whose_id_never_came_is_not_sent_and_says_why() -> None:
    capture, client = _record(("send", "echo a"), ("get", 0), ("probe-get", "nope-1"))
    transport = ModelTransport(agent=FailingSends())
    schedule = _run(capture, transport)
    (not_sent,) = schedule.not_sent
    get = capture.exchanges[1]
    assert not_sent.number == get.number and not_sent.operation == "GetTask"
    assert f"names {client.tasks[0]}, handed out by #1" in not_sent.reason
    assert "live answer had no id in its place" in not_sent.reason
    assert [r["method"] for r in transport.requests] == ["SendMessage", "GetTask"]  # the probe


def test_a_request_that_overlapped_an_earlier_one_starts_beside_it() -> None:
    capture, client = _record(("send", "wait"), ("get", 0))
    send, get = capture.exchanges
    # The send was still running when the get started (its answer came last).
    overlapped = replace(
        capture,
        exchanges=(replace(send, started_us=0, duration_us=10_000), replace(get, started_us=2_000)),
    )

    async def main() -> tuple[Schedule, ModelTransport]:
        transport = ModelTransport()
        arrived = asyncio.Event()
        transport.hold = {"SendMessage": arrived, "arrived:GetTask": arrived}
        plan = verify.make_plan(overlapped)
        ids = verify.LiveIds(lambda url: url, dict(plan.script.issuer))
        schedule = Schedule(plan, ids, transport, _prepare, 5.0)
        await asyncio.wait_for(schedule.run(), 5)  # waiting for the send would never end
        return schedule, transport

    schedule, transport = asyncio.run(main())
    assert schedule.not_sent == []
    assert [(r["method"], r["params"].get("id")) for r in transport.requests] == [
        ("SendMessage", None),
        ("GetTask", transport.agent.order[0]),
    ]
    assert verify.make_plan(overlapped).sends[1].concurrent == {send.number}


def test_polls_repeat_until_the_recorded_state_comes() -> None:
    recorded = ModelAgent()
    capture, _ = _record(("send", "slow 1"), ("get", 0), ("get", 0), ("get", 0), agent=recorded)
    states = [
        json.loads(e.response.body)["result"].get("status", {}).get("state")
        for e in capture.exchanges[1:]
        if e.response is not None
    ]
    assert states == ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED", "TASK_STATE_COMPLETED"]
    plan = verify.make_plan(capture)
    assert [len(s.steps) for s in plan.sends] == [1, 3]

    class Slower(ModelAgent):
        def _SendMessage(self, params: Any) -> Any:
            result = super()._SendMessage(params)
            self.polls_left[result["task"]["id"]] = 5
            return result

    transport = ModelTransport(agent=Slower())
    schedule = _run(capture, transport)
    gets = [r for r in transport.requests if r["method"] == "GetTask"]
    assert len(gets) == 5  # four that still see it working, then the completed one
    assert schedule.notes == []


def test_a_poll_gives_up_when_the_state_never_comes_and_notes_it() -> None:
    capture, _ = _record(("send", "slow 1"), ("get", 0), ("get", 0), ("get", 0))

    class Never(ModelAgent):
        def _SendMessage(self, params: Any) -> Any:
            result = super()._SendMessage(params)
            self.polls_left[result["task"]["id"]] = 10**6
            return result

    transport = ModelTransport(agent=Never())
    schedule = _run(capture, transport, timeout=0.3)
    assert len([r for r in transport.requests if r["method"] == "GetTask"]) > 3
    assert any("the recorded state never came" in note for note in schedule.notes)
