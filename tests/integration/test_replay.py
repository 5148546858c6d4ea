"""Replay end to end: record a real a2a-sdk session, stop the agent, replay, rerun the client."""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import struct
import time
import uuid
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx
import pytest
from _helpers import free_port

from recorder.capture import Capture, read_capture
from recorder.demo import DemoAgent, SessionResult, WebhookReceiver, run_session
from recorder.record import RecordingProxy
from recorder.replay import Replayer
from recorder.script import load_script

BINDINGS = ["JSONRPC", "HTTP+JSON"]


def record_session(
    tmp: Path, binding: str, event_delay: float = 0.05
) -> tuple[Capture, SessionResult]:
    out = tmp / f"session-{binding.replace('+', '-')}.http"
    with (
        DemoAgent(event_delay=event_delay, enable_grpc=False) as agent,
        WebhookReceiver() as hook,
        RecordingProxy(upstream=agent.base_url, out=out) as proxy,
    ):
        live = asyncio.run(run_session(proxy.url, binding=binding, webhook=hook))
    return read_capture(out), live


Recorded = tuple[str, Capture, SessionResult]


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Recorded]:
    """Record each binding's session once per module, when a test first asks for it."""
    done: dict[str, Recorded] = {}

    def get(binding: str) -> Recorded:
        if binding not in done:
            capture, live = record_session(tmp_path_factory.mktemp("rec"), binding)
            done[binding] = (binding, capture, live)
        return done[binding]

    return get


@pytest.fixture(params=BINDINGS)
def recorded(request: pytest.FixtureRequest, sessions: Callable[[str], Recorded]) -> Recorded:
    return sessions(request.param)


@pytest.fixture
def jsonrpc_recorded(sessions: Callable[[str], Recorded]) -> Recorded:
    return sessions("JSONRPC")


@pytest.fixture
def rest_recorded(sessions: Callable[[str], Recorded]) -> Recorded:
    return sessions("HTTP+JSON")


def test_replayed_session_equals_live(recorded: tuple[str, Capture, SessionResult]) -> None:
    binding, capture, live = recorded
    with WebhookReceiver() as hook, Replayer([capture]) as replayer:
        replayed = asyncio.run(run_session(replayer.url, binding=binding, webhook=hook))
        assert replayer.report.misses == []
    assert replayed.step("send").state == "completed"
    assert replayed.errors == live.errors
    assert replayed.webhook_deliveries == live.webhook_deliveries == 4
    assert replayed == live


def test_every_exchange_is_served_once_the_session_reruns(
    recorded: tuple[str, Capture, SessionResult],
) -> None:
    binding, capture, _ = recorded
    with WebhookReceiver() as hook, Replayer([capture]) as replayer:
        asyncio.run(run_session(replayer.url, binding=binding, webhook=hook))
        hook.wait_for(4, timeout=5)
        report = httpx.get(f"{replayer.url}/__a2a_recorder/report", timeout=5).json()
    assert report == {
        "unserved": [],
        "unmatched": [],
        "synthesized": [],
        "faulted": [],
        "faults_unused": [],
        "not_carried": [],
        "not_replayed": [],
        "clean": True,
    }


def test_fifty_concurrent_clients_each_see_the_recorded_session(
    recorded: tuple[str, Capture, SessionResult],
) -> None:
    binding, capture, live = recorded
    hooks = [WebhookReceiver().start() for _ in range(50)]
    try:
        with Replayer([capture]) as replayer:

            async def everyone() -> list[SessionResult]:
                return await asyncio.gather(
                    *(
                        run_session(replayer.url, binding=binding, webhook=hook, timeout=60)
                        for hook in hooks
                    )
                )

            results = asyncio.run(everyone())
            assert replayer.report.misses == []
    finally:
        for hook in hooks:
            hook.stop()
    assert all(result == live for result in results), [
        step.name
        for result in results
        for step, want in zip(result.steps, live.steps, strict=True)
        if step != want
    ][:5]


def test_replay_needs_no_agent(recorded: tuple[str, Capture, SessionResult]) -> None:
    # The agent of the recording is gone: its card URLs must not leak to the client.
    _, capture, _ = recorded
    with Replayer([capture]) as replayer:
        card = httpx.get(f"{replayer.url}/.well-known/agent-card.json", timeout=5).json()
    urls = [i["url"] for i in card["supportedInterfaces"]]
    assert urls and all(u.startswith(replayer.url) for u in urls if not u.count("/") < 2)


def _jsonrpc(url: str, method: str, params: object) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": "live-1", "method": method, "params": params}
    return httpx.post(f"{url}/a2a/jsonrpc", json=body, headers={"A2A-Version": "1.0"}, timeout=5)


def test_a_miss_is_a_jsonrpc_error_naming_the_nearest_exchange(
    jsonrpc_recorded: Recorded,
) -> None:
    _, capture, _ = jsonrpc_recorded
    message = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"text": "echo something never recorded"}],
    }
    with Replayer([capture]) as replayer:
        reply = _jsonrpc(replayer.url, "SendMessage", {"message": message})
        misses = list(replayer.report.misses)
    assert reply.status_code == 200
    body = reply.json()
    assert body["id"] == "live-1"
    assert body["error"]["code"] == -32603
    assert "nearest is #" in body["error"]["message"]
    assert "echo something never recorded" in body["error"]["message"]
    assert body["error"]["data"][0]["reason"] == "REPLAY_NO_MATCH"
    assert len(misses) == 1


def test_a_miss_over_rest_is_a_google_rpc_status(
    rest_recorded: Recorded,
) -> None:
    _, capture, _ = rest_recorded
    with Replayer([capture]) as replayer:
        reply = httpx.get(
            f"{replayer.url}/a2a/rest/tasks?pageSize=7", timeout=5, headers={"A2A-Version": "1.0"}
        )
    assert reply.status_code == 500
    error = reply.json()["error"]
    assert error["status"] == "INTERNAL"
    # a2a-sdk 1.x reads only the first ErrorInfo, and only A2A reasons: INTERNAL_ERROR comes
    # first, so its client raises InternalError with the text (see recorder/replay/core/_misses.py).
    reasons = [d["reason"] for d in error["details"]]
    assert reasons == ["INTERNAL_ERROR", "REPLAY_NO_MATCH"]
    assert reply.reason_phrase.startswith("Replay miss: no recorded exchange matches ListTasks")
    assert "ListTasks" in error["message"] and "pageSize" in error["message"]


def test_json_rpc_trailing_slash_is_served(jsonrpc_recorded: Recorded) -> None:
    _, capture, _ = jsonrpc_recorded
    with Replayer([capture]) as replayer:
        body = {"jsonrpc": "2.0", "id": 7, "method": "GetExtendedAgentCard", "params": {}}
        reply = httpx.post(
            f"{replayer.url}/a2a/jsonrpc/", json=body, timeout=5, headers={"A2A-Version": "1.0"}
        )
    assert reply.status_code == 200
    assert reply.json()["id"] == 7
    assert "result" in reply.json()


def _stream_arrivals(url: str, text: str) -> list[float]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendStreamingMessage",
        "params": {
            "message": {
                "messageId": str(uuid.uuid4()),
                "role": "ROLE_USER",
                "parts": [{"text": text}],
            }
        },
    }
    arrivals: list[float] = []
    with httpx.stream(
        "POST",
        f"{url}/a2a/jsonrpc",
        json=body,
        timeout=20,
        headers={"A2A-Version": "1.0", "Accept": "text/event-stream"},
    ) as reply:
        for line in reply.iter_lines():
            if line.startswith("data:"):
                arrivals.append(time.monotonic())
    return arrivals


def test_timing_recorded_keeps_the_gaps_and_none_drops_them(tmp_path: Path) -> None:
    out = tmp_path / "slow.http"
    with (
        DemoAgent(event_delay=0.3, enable_grpc=False) as agent,
        RecordingProxy(upstream=agent.base_url, out=out) as proxy,
    ):
        live = _stream_arrivals(proxy.url, "slow 3")
    capture = read_capture(out)
    events = capture.exchanges[-1].response.events  # type: ignore[union-attr]
    recorded_gaps = [(b.offset_us - a.offset_us) / 1e6 for a, b in pairwise(events)]
    assert max(recorded_gaps) > 0.25
    # The client's own clock reads are part of the measurement; on a shared machine one run may
    # be disturbed, so the replayer gets three tries to show the 50 ms it promises.
    tries: list[list[float]] = []
    with Replayer([capture], timing="recorded") as replayer:
        while len(tries) < 3:
            paced = _stream_arrivals(replayer.url, "slow 3")
            assert len(paced) == len(live) == len(events)
            tries.append(
                [
                    abs(want - (b - a))
                    for want, (a, b) in zip(recorded_gaps, pairwise(paced), strict=True)
                ]
            )
            if max(tries[-1]) < 0.05:
                break
    assert max(tries[-1]) < 0.05, (recorded_gaps, tries)
    with Replayer([capture], timing="none") as replayer:
        at_once = _stream_arrivals(replayer.url, "slow 3")
    assert max(b - a for a, b in pairwise(at_once)) < max(recorded_gaps) / 3


def test_polling_client_reaches_a_terminal_state(tmp_path: Path) -> None:
    out = tmp_path / "poll.http"

    def poll(url: str) -> list[str]:
        params = {
            "message": {
                "messageId": str(uuid.uuid4()),
                "role": "ROLE_USER",
                "parts": [{"text": "slow 3"}],
            },
            "configuration": {"returnImmediately": True},
        }
        task = _jsonrpc(url, "SendMessage", params).json()["result"]["task"]
        states = [task["status"]["state"]]
        for _ in range(200):
            got = _jsonrpc(url, "GetTask", {"id": task["id"]}).json()["result"]
            states.append(got["status"]["state"])
            if states[-1] in ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED"):
                break
            time.sleep(0.05)
        return states

    with (
        DemoAgent(event_delay=0.1, enable_grpc=False) as agent,
        RecordingProxy(upstream=agent.base_url, out=out) as proxy,
    ):
        live = poll(proxy.url)
    with Replayer([read_capture(out)]) as replayer:
        replayed = poll(replayer.url)
    assert live[-1] == "TASK_STATE_COMPLETED"
    assert replayed == live


def test_strict_report_lists_what_was_never_served(
    recorded: tuple[str, Capture, SessionResult],
) -> None:
    _, capture, _ = recorded
    with Replayer([capture]) as replayer:
        httpx.get(f"{replayer.url}/.well-known/agent-card.json", timeout=5)
        report = json.loads(httpx.get(f"{replayer.url}/__a2a_recorder/report", timeout=5).text)
    assert report["clean"] is False
    assert "#1 AgentCard" not in report["unserved"]
    # Recorded requests that are the same up to their ids' provenance count as one (the
    # session lists push configs twice, reads two tasks, sends "wait" twice in one context):
    # each is listed by its first exchange, and the push deliveries each by itself.
    by_request: dict[object, list[int]] = {}
    for step in load_script([capture]).steps[1:]:
        by_request.setdefault(step.key, []).append(step.number)
    deliveries = [
        e.number for e in capture.exchanges if e.classification.operation == "PushDelivery"
    ]
    assert len(by_request) < len(capture.exchanges) - 1 - len(deliveries)  # there are repeats
    wanted = sorted([min(numbers) for numbers in by_request.values()] + deliveries)
    assert [int(n.split()[0][1:]) for n in report["unserved"]] == wanted
    # Two exchanges of one key: requests alike but for which recorded ids they name.
    gets = [e for e in capture.exchanges if e.classification.operation == "GetTask"]
    assert len({e.classification.task_id for e in gets}) > 1


def test_on_miss_forward_sends_the_unmatched_request_to_a_live_agent(
    jsonrpc_recorded: Recorded,
) -> None:
    _, capture, _ = jsonrpc_recorded
    message = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"text": "echo never recorded"}],
    }
    with (
        DemoAgent(enable_grpc=False) as agent,
        Replayer([capture], on_miss=agent.base_url) as replayer,
    ):
        reply = _jsonrpc(replayer.url, "SendMessage", {"message": message})
        misses = list(replayer.report.misses)
    task = reply.json()["result"]["task"]
    assert task["artifacts"][0]["parts"][0]["text"] == "echo never recorded"
    assert len(misses) == 1 and "SendMessage" in misses[0]


async def _send_then_list(url: str) -> tuple[list[str], list[str]]:
    """A real a2a-sdk client: two sends, then ListTasks with no filter; (sent ids, listed ids)."""
    from a2a.client import ClientConfig, create_client
    from a2a.types.a2a_pb2 import ListTasksRequest, Message, Part, Role, SendMessageRequest

    client = await create_client(url, client_config=ClientConfig(streaming=False))
    try:
        sent = []
        for text in ("echo one", "echo two"):
            request = SendMessageRequest(
                message=Message(
                    message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)]
                )
            )
            async for event in client.send_message(request):
                sent.append(event.task.id)
        page = await client.list_tasks(ListTasksRequest())
        return sent, [task.id for task in page.tasks]
    finally:
        await client.close()


def test_listing_without_a_filter_names_the_tasks_this_client_was_handed(tmp_path: Path) -> None:
    out = tmp_path / "list.http"
    with (
        DemoAgent(enable_grpc=False) as agent,
        RecordingProxy(upstream=agent.base_url, out=out) as proxy,
    ):
        live_sent, live_listed = asyncio.run(_send_then_list(proxy.url))
    assert sorted(live_listed) == sorted(live_sent)
    with Replayer([read_capture(out)]) as replayer:
        handed: list[set[str]] = []
        for _ in range(2):  # a second client gets ids of its own, and lists those
            sent, listed = asyncio.run(_send_then_list(replayer.url))
            # The store lists every task in it, as the agent's does: the first client's
            # listing is the recorded one, the second's holds the first's tasks too.
            assert set(sent) <= set(listed) and len(listed) == 2 * (len(handed) + 1)
            handed.append(set(sent))
        assert replayer.report.clean
    # The first client gets the recorded ids (a capture sent back as written names ids the
    # replay issued); the second gets fresh ones, never the first one's.
    assert handed[0] == set(live_sent)
    assert not handed[0] & handed[1]


class _PortClient:
    """A JSON-RPC client from the spec that picks each connection's source port and ends it
    with a reset (no TIME_WAIT), so that the next connection can take the same port."""

    def __init__(self, url: str) -> None:
        self.url = httpx.URL(url)

    def call(self, method: str, params: dict[str, object], port: int = 0) -> dict[str, Any]:
        connection = http.client.HTTPConnection(
            self.url.host, self.url.port, timeout=20, source_address=("127.0.0.1", port)
        )
        body = {
            "jsonrpc": "2.0",
            "id": uuid.uuid4().int % 10**9,
            "method": method,
            "params": params,
        }
        try:
            connection.request(
                "POST",
                "/a2a/jsonrpc",
                json.dumps(body),
                headers={
                    "Content-Type": "application/json",
                    "A2A-Version": "1.0",
                    "User-Agent": "port-client/1",
                },
            )
            answer: dict[str, Any] = json.loads(connection.getresponse().read())
            assert connection.sock is not None
            connection.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return answer
        finally:
            connection.close()

    def send(self, text: str) -> str:
        message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
        task: str = self.call("SendMessage", {"message": message})["result"]["task"]["id"]
        return task

    def listed(self, port: int) -> list[str]:
        return sorted(t["id"] for t in self.call("ListTasks", {}, port)["result"]["tasks"])


def test_a_port_that_comes_back_with_another_client_changes_nothing(tmp_path: Path) -> None:
    # Two clients alike in every header, a new connection per request.  The second one's
    # ListTasks comes from the port the first one's ListTasks used (the OS hands ports on).
    # Connections tell the replay nothing: each listing holds the client's own tasks, and,
    # as the agent's store would, the other client's.
    out = tmp_path / "list.http"
    with (
        DemoAgent(enable_grpc=False) as agent,
        RecordingProxy(upstream=agent.base_url, out=out) as proxy,
    ):
        live = _PortClient(proxy.url)
        sent = sorted(live.send(text) for text in ("echo one", "echo two"))
        assert live.listed(free_port()) == sent
    with Replayer([read_capture(out)]) as replayer:
        port = free_port()
        everyone: list[str] = []
        for _ in range(2):
            client = _PortClient(replayer.url)
            handed = sorted(client.send(text) for text in ("echo one", "echo two"))
            everyone += handed
            assert client.listed(port) == sorted(everyone)
        assert replayer.report.synthesized_answers == []


def test_the_journal_shows_what_the_client_sent_and_the_webhook_answered(
    jsonrpc_recorded: Recorded,
) -> None:
    _, capture, _ = jsonrpc_recorded
    with WebhookReceiver() as hook, Replayer([capture]) as replayer:
        asyncio.run(run_session(replayer.url, binding="JSONRPC", webhook=hook))
        hook.wait_for(4, timeout=5)
        deadline = time.monotonic() + 5
        while len(replayer.journal.deliveries) < 4 and time.monotonic() < deadline:
            time.sleep(0.02)
        requests, deliveries = replayer.journal.requests, replayer.journal.deliveries
        over_http = httpx.get(f"{replayer.url}/__a2a_recorder/requests", timeout=5).json()
        hook_url = hook.url
    a2a = [r for r in requests if r.classification.operation not in (None, "AgentCard")]
    assert a2a and all(r.request.header("a2a-version") == "1.0" for r in a2a)
    assert all(r.outcome == "served" and r.exchange is not None for r in requests)
    create = next(
        r for r in a2a if r.classification.operation == "CreateTaskPushNotificationConfig"
    )
    sent = json.loads(create.request.body)["params"]
    assert (
        sent["authentication"]["credentials"]
        and "redacted" not in sent["authentication"]["credentials"]
    )  # the client's own credentials, as it sent them
    assert [d.status for d in deliveries] == [200] * 4
    assert all(d.url and d.url.startswith(hook_url) for d in deliveries)
    assert all(json.loads(d.response) == {} for d in deliveries)  # the webhook's answer
    assert {d.request for d in deliveries} <= {r.number for r in requests}
    assert [r["number"] for r in over_http["requests"]] == [r.number for r in requests]
    assert [d["status"] for d in over_http["deliveries"]] == [200] * 4


def test_the_served_card_has_its_own_etag_and_answers_if_none_match() -> None:
    capture = read_capture(
        Path(__file__).parents[2] / "captures" / "a2a-python-1.3.0" / "01-agent-card.http"
    )
    recorded = next(e for e in capture.exchanges if e.response is not None)
    agents = recorded.response.header("etag") if recorded.response else None
    assert agents is not None
    with Replayer([capture]) as replayer:
        path = replayer.url + "/.well-known/agent-card.json"
        served = httpx.get(path, timeout=10)
        etag = served.headers["etag"]
        # The card the replayer serves points at the replayer: another representation,
        # so another validator (as weak as the agent's).
        assert etag != agents and etag.startswith('W/"')
        assert served.json()["supportedInterfaces"][0]["url"].startswith(replayer.url)
        again = httpx.get(path, headers={"If-None-Match": etag}, timeout=10)
        assert (again.status_code, again.content, again.headers["etag"]) == (304, b"", etag)
        stale = httpx.get(path, headers={"If-None-Match": agents}, timeout=10)
        assert stale.status_code == 200 and stale.content == served.content
