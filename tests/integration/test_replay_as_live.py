"""Replayed clients see what the live agent showed them (issue 21), recorded live and replayed.

Everything is recorded through the recorder against the real a2a-sdk demo agent:

- *the store*: the agent already holds tasks (sent to it directly, before the recording);
  then two different clients (told apart by their User-Agent) work against it in one capture,
  each listing the store.  Replayed as recorded, and as ten copies of each at once;
- *a conformance-style suite*: a raw spec client runs fifty tests, each one create with the
  same body followed by a different read of its task (GetTask, CancelTask, SubscribeToTask,
  a follow-up message).  Replayed as recorded, with all creates first, and with some tests
  left out, as a suite does when it skips them;
- *the @a2a-js/sdk client's push-config flow*, under the config id `cfg-1` it chooses
  itself, replayed twice.

Every client uses a new connection per request and fresh JSON-RPC ids and message ids.  On
replay every client's outcomes must equal the live ones, with a clean report (everything
served, nothing missed) and no synthesized answer.  A listing's outcome is whether the
client's own tasks are in it and how many of the tasks from before: a live agent shared by
more clients lists theirs too.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from recorder.capture import Capture, read_capture
from recorder.demo import DemoAgent
from recorder.record import RecordingProxy
from recorder.replay import Replayer

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "scripts" / "peers"))
from envs import ENVS, is_built  # noqa: E402

TIMEOUT = 20.0
TESTS = 50
ERRORS = {-32001: "TaskNotFound", -32002: "TaskNotCancelable", -32004: "Unsupported"}


@dataclass
class RawClient:
    """A JSON-RPC client written from the spec: one connection per request."""

    base: str
    agent: str  # its User-Agent: what tells it from another client
    tasks: list[str] = field(default_factory=list)

    def call(self, method: str, params: dict[str, Any], stream: bool = False) -> Any:
        parts = urlsplit(self.base)
        connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=TIMEOUT)
        body = {"jsonrpc": "2.0", "id": uuid.uuid4().int % 10**9, "method": method}
        headers = {
            "Content-Type": "application/json",
            "A2A-Version": "1.0",
            "User-Agent": self.agent,
            "Accept": "text/event-stream" if stream else "application/json",
        }
        try:
            connection.request(
                "POST", "/a2a/jsonrpc", json.dumps({**body, "params": params}), headers
            )
            response = connection.getresponse()
            kind = response.getheader("content-type") or ""
            data = response.read()
        finally:
            connection.close()
        if "event-stream" in kind:
            return [
                json.loads(line[5:])
                for line in data.decode().splitlines()
                if line.startswith("data:")
            ]
        return json.loads(data)

    @staticmethod
    def outcome(document: Any) -> str:
        if "error" in document:
            return "error:" + ERRORS.get(document["error"]["code"], str(document["error"]["code"]))
        result = document["result"]
        task = result.get("task", result)
        return f"state:{task['status']['state']}"

    def message(self, text: str, task: str | None = None) -> dict[str, Any]:
        message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
        return {"message": {**message, "taskId": task} if task else message}

    def send(self, text: str) -> str:
        params = self.message(text)
        if text == "wait":  # it stays working: the client does not wait for the end
            params["configuration"] = {"returnImmediately": True}
        answer = self.call("SendMessage", params)
        if "result" in answer:
            self.tasks.append(answer["result"]["task"]["id"])
        return self.outcome(answer)

    def read(self, how: str, n: int = -1) -> str:
        task = self.tasks[n]
        if how == "follow":
            return self.outcome(self.call("SendMessage", self.message("more", task)))
        if how == "subscribe":
            events = self.call("SubscribeToTask", {"id": task}, stream=True)
            return self.outcome(events[-1] if isinstance(events, list) else events)
        method = {"get": "GetTask", "cancel": "CancelTask"}[how]
        return self.outcome(self.call(method, {"id": task}))

    def listed(self, before: list[str]) -> str:
        ids = {t["id"] for t in self.call("ListTasks", {})["result"]["tasks"]}
        return f"own listed:{set(self.tasks) <= ids} from before:{len(ids & set(before))}"


# ---- the store: tasks from before, two different clients ---------------------------------------

Script = list[tuple[str, Callable[[RawClient, list[str]], str]]]
STEPS: dict[str, Script] = {
    "client-a": [
        ("send", lambda c, _: c.send("echo a")),
        ("get", lambda c, _: c.read("get")),
        ("list", lambda c, before: c.listed(before)),
    ],
    "client-b": [
        ("send", lambda c, _: c.send("wait")),
        ("cancel", lambda c, _: c.read("cancel")),
        ("list", lambda c, before: c.listed(before)),
        ("get", lambda c, _: c.read("get")),
    ],
}
TURNS = ["client-a", "client-b", "client-a", "client-b", "client-b", "client-a", "client-b"]


def run_pair(base: str, before: list[str]) -> dict[str, list[str]]:
    clients = {name: RawClient(base, name) for name in STEPS}
    done: dict[str, list[str]] = {name: [] for name in STEPS}
    for name in TURNS:
        _, step = STEPS[name][len(done[name])]
        done[name].append(step(clients[name], before))
    return done


def run_alone(base: str, name: str, before: list[str]) -> list[str]:
    client = RawClient(base, name)
    return [step(client, before) for _, step in STEPS[name]]


@dataclass(frozen=True)
class Store:
    capture: Capture
    before: list[str]
    live: dict[str, list[str]]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    out = tmp_path_factory.mktemp("store") / "store.http"
    with DemoAgent(enable_grpc=False) as agent:
        setup = RawClient(agent.base_url, "setup")
        for text in ("echo one", "echo two", "echo three"):
            setup.send(text)  # straight to the agent: tasks from before the recording
        with RecordingProxy(upstream=agent.base_url, out=out) as proxy:
            live = run_pair(proxy.url, setup.tasks)
    return Store(read_capture(out), setup.tasks, live)


def test_the_live_store_listed_both_clients_and_the_tasks_from_before(store: Store) -> None:
    assert store.live["client-a"][2] == "own listed:True from before:3"
    assert store.live["client-b"][1] == "state:TASK_STATE_CANCELED"
    listing = next(e for e in store.capture.exchanges if e.classification.operation == "ListTasks")
    assert listing.response is not None
    tasks = json.loads(listing.response.body)["result"]["tasks"]
    assert len(tasks) == 5  # three from before, one of each client


def test_two_clients_replayed_as_recorded_see_what_they_saw_live(store: Store) -> None:
    with Replayer([store.capture]) as replayer:
        replayed = run_pair(replayer.url, store.before)
        report = replayer.report
        listing = next(
            e for e in replayer.journal.requests if e.classification.operation == "ListTasks"
        )
        assert report.clean and report.synthesized_answers == [], report.as_json()
    assert replayed == store.live
    # Replayed as recorded, the listing is the agent's own answer, ids and all.
    assert listing.answer == "recorded", listing.changes


def test_ten_identical_clients_of_each_at_once_see_what_they_saw_live(store: Store) -> None:
    names = [name for name in STEPS for _ in range(10)]
    with Replayer([store.capture]) as replayer, ThreadPoolExecutor(20) as pool:
        replayed = list(pool.map(lambda n: run_alone(replayer.url, n, store.before), names))
        report = replayer.report
        assert report.clean and report.synthesized_answers == [], report.as_json()
        assert replayer.service.state.problems() == []
    for name, outcomes in zip(names, replayed, strict=True):
        assert outcomes == store.live[name], name


# ---- a conformance-style suite: identical creates, different reads ----------------------------

READS = ["get", "cancel", "subscribe", "follow"]


def run_suite(base: str, schedule: list[tuple[int, int]]) -> dict[int, list[str]]:
    """Runs (test, step) pairs: step 0 creates the test's task, step 1 reads it its way."""
    client = RawClient(base, "suite")
    task_of: dict[int, int] = {}
    outcomes: dict[int, list[str]] = {}
    for test, step in schedule:
        if step == 0:
            outcomes[test] = [client.send("echo conformance")]
            task_of[test] = len(client.tasks) - 1
        else:
            outcomes[test].append(client.read(READS[test % len(READS)], task_of[test]))
    return outcomes


ORDERS: dict[str, list[tuple[int, int]]] = {
    "as recorded": [(t, s) for t in range(TESTS) for s in (0, 1)],
    "all creates first": [(t, 0) for t in range(TESTS)] + [(t, 1) for t in range(TESTS)],
    "some tests skipped": [(t, s) for t in range(TESTS) if t % 7 not in (2, 5) for s in (0, 1)],
}


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Capture, dict[int, list[str]]]:
    out = tmp_path_factory.mktemp("suite") / "suite.http"
    with (
        DemoAgent(enable_grpc=False) as agent,
        RecordingProxy(upstream=agent.base_url, out=out) as proxy,
    ):
        live = run_suite(proxy.url, ORDERS["as recorded"])
    return read_capture(out), live


def test_the_live_suite_reads_each_task_its_own_way(
    suite: tuple[Capture, dict[int, list[str]]],
) -> None:
    _, live = suite
    assert {tuple(live[t]) for t in range(TESTS)} == {
        ("state:TASK_STATE_COMPLETED", "state:TASK_STATE_COMPLETED"),
        ("state:TASK_STATE_COMPLETED", "error:TaskNotCancelable"),
        ("state:TASK_STATE_COMPLETED", "error:Unsupported"),
    }


@pytest.mark.parametrize("order", list(ORDERS))
def test_the_suite_replayed_in_any_order_sees_what_it_saw_live(
    suite: tuple[Capture, dict[int, list[str]]], order: str
) -> None:
    capture, live = suite
    with Replayer([capture]) as replayer:
        replayed = run_suite(replayer.url, ORDERS[order])
        report = replayer.report
        assert report.clean and report.synthesized_answers == [], report.as_json()
        assert replayer.service.state.problems() == []
    assert replayed == {t: live[t] for t in replayed}


# ---- what no agent route serves: the agent's own answers --------------------------------------

BAD = [
    (
        b'{"jsonrpc": "2.0", "id": 7, "method": "tasks/explode"}',
        b'{"jsonrpc": "2.0", "id": 8, "method": "x/y"}',
    ),
    (b'{"jsonrpc":', b"\xff\xfe not json"),
    (b'[{"jsonrpc": "2.0", "id": 1, "method": "GetTask"}]', b'[{"jsonrpc": "2.0", "id": 2}]'),
]


def post(base: str, body: bytes) -> tuple[int, Any]:
    parts = urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=TIMEOUT)
    try:
        connection.request("POST", "/a2a/jsonrpc", body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_the_agent_s_own_answers_to_bad_requests_serve_others_like_them(tmp_path: Path) -> None:
    out = tmp_path / "bad.http"
    with (
        DemoAgent(enable_grpc=False) as agent,
        RecordingProxy(upstream=agent.base_url, out=out) as proxy,
    ):
        RawClient(proxy.url, "client").send("echo card")  # the endpoint is known from here on
        live = [post(proxy.url, recorded) for recorded, _ in BAD]
    with Replayer([read_capture(out)]) as replayer:
        same = [post(replayer.url, recorded) for recorded, _ in BAD]
        others = [post(replayer.url, other) for _, other in BAD]
        entries = replayer.journal.requests
        assert replayer.report.synthesized_answers == [], replayer.report.as_json()
    assert same == live
    for (status, answer), (live_status, live_answer) in zip(others, live, strict=True):
        assert status == live_status
        assert answer["error"] == live_answer["error"]  # the agent's words, not a2a-sdk's
    assert [e.answer for e in entries] == ["recorded"] * 3 + ["adapted"] * 3
    assert all("could not serve" in e.changes[0] for e in entries[3:])


# ---- the @a2a-js/sdk client's push-config flow, twice -------------------------------------------

JS = ENVS["a2a-js-1.3.x"]


def js_flow(base_url: str, binding: str) -> list[Any]:
    env = {**os.environ, "A2A_PEER_NODE_ENV": str(JS.path)}
    card = base_url + "/.well-known/agent-card.json"
    done = subprocess.run(
        ["node", str(HERE / "js" / "push_config_flow.mjs"), card, binding],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    outcomes: list[Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return outcomes


@pytest.mark.skipif(
    not is_built(JS) or not shutil.which("node"),
    reason="the @a2a-js/sdk environment under .peers/ is not built",
)
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
def test_the_js_client_s_push_config_flow_twice_sees_what_it_saw_live(
    binding: str, tmp_path: Path
) -> None:
    out = tmp_path / "js.http"
    with (
        DemoAgent(event_delay=0.05) as agent,
        RecordingProxy(upstream=agent.base_url, out=out, grpc_upstream=agent.grpc_target) as proxy,
    ):
        live = js_flow(proxy.url, binding)
    assert [step for step, _ in live] == [
        "send", "create", "get", "list", "delete", "list-after-delete"
    ]  # fmt: skip
    assert not any(str(outcome).startswith("error:") for _, outcome in live), live
    with Replayer([read_capture(out)]) as replayer:
        runs = [js_flow(replayer.url, binding) for _ in range(2)]
        report = replayer.report
        assert report.clean and report.synthesized_answers == [], report.as_json()
    assert runs == [live, live]
