"""The pytest marker's fault profile: `@pytest.mark.a2a_capture(path, faults=[...])`.

A fault the test asked for happens, is in the journal with its spec, and does not fail the
test (it is no answer the replayer made up); one that never happens fails it at teardown; a
spec that cannot be read fails it at setup, naming the spec.  The README's example (a cut
stream that the client resumes) runs as written there, with the a2a-sdk 1.3.0 client.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
CAPTURE = Path(__file__).parent.parent / "data" / "jsonrpc-send.http"  # one SendMessage, #3
STREAM = Path(__file__).parents[2] / "captures" / "a2a-python-1.3.0" / "05-streaming.http"

TESTS = """
import httpx, pytest
from recorder.capture import read_capture


def post(a2a_replay):
    request = read_capture(a2a_replay.capture).exchanges[0].request
    headers = {"content-type": "application/json", "a2a-version": "1.0"}
    return httpx.post(a2a_replay.url + request.target, content=request.body, headers=headers)


@pytest.mark.a2a_capture("captures/send.http", faults=["SendMessage:status=429"])
def test_the_client_retries_after_a_429(a2a_replay):
    first, again = post(a2a_replay), post(a2a_replay)
    assert (first.status_code, first.headers["retry-after"]) == (429, "1")
    assert again.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    faulted = [(r.answer, r.faults) for r in a2a_replay.requests if r.faults]
    assert faulted == [("synthesized", ("SendMessage:status=429",))]


@pytest.mark.a2a_capture("captures/send.http", faults=["SendMessage:status=503"])
def test_never_asks_for_the_faulted_operation(a2a_replay):
    assert a2a_replay.url.startswith("http://127.0.0.1:")  # and sends nothing


@pytest.mark.a2a_capture("captures/send.http", faults=["SendMessage:explode"])
def test_asks_for_no_known_fault(a2a_replay):
    pass


@pytest.mark.a2a_capture("captures/send.http", faults="SendMessage:reset")
def test_gives_a_spec_for_a_list(a2a_replay):
    pass
"""


def test_the_marker_applies_its_fault_profile(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    (pytester.path / "captures").mkdir()
    shutil.copy(CAPTURE, pytester.path / "captures" / "send.http")
    pytester.makepyfile(TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(passed=2, errors=3)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_never_asks_for_the_faulted_operation*",
            "faults asked for that never happened: SendMessage:status=503",
            "*ERROR at setup of test_asks_for_no_known_fault*",
            "a2a_capture(faults=...): fault 'SendMessage:explode': no fault kind 'explode'; "
            "the kinds are cut-after=N*",
            "*ERROR at setup of test_gives_a_spec_for_a_list*",
            "a2a_capture(faults=...) must be a list of strings, not 'SendMessage:reset'",
            "PASSED *test_the_client_retries_after_a_429",
        ]
    )
    result.stdout.no_fnmatch_line("*During handling*")


# The README's "Testing what goes wrong" example, with run_my_client an a2a-sdk 1.3.0 client
# that resubscribes when its stream breaks.
README_EXAMPLE = """
import asyncio, uuid
import httpx, pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest, SubscribeToTaskRequest
from a2a.types.a2a_pb2 import TaskState


async def resumed_task(url):
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        client = ClientFactory(ClientConfig(httpx_client=http)).create(card)
        message = Message(message_id=str(uuid.uuid4()), context_id=str(uuid.uuid4()),
                          role=Role.ROLE_USER, parts=[Part(text="slow 3")])
        events = []
        try:
            async for event in client.send_message(SendMessageRequest(message=message)):
                events.append(event)
        except Exception:  # the cut
            async for event in client.subscribe(SubscribeToTaskRequest(id=events[0].task.id)):
                events.append(event)
        return events[-1].status_update  # the task's last status, with its id


def run_my_client(url):
    return asyncio.run(resumed_task(url))


@pytest.mark.a2a_capture("captures/stream.http", faults=["SendStreamingMessage:cut-after=2"])
def test_my_client_resumes(a2a_replay):
    task = run_my_client(a2a_replay.url)              # it must resubscribe after the cut
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    cut, resumed = [r for r in a2a_replay.requests if r.faults]
    assert resumed.classification.operation == "SubscribeToTask"
    assert (cut.answer, resumed.answer) == ("adapted", "synthesized")
"""


def test_the_readme_example_resumes_a_cut_stream(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    (pytester.path / "captures").mkdir()
    shutil.copy(STREAM, pytester.path / "captures" / "stream.http")
    pytester.makepyfile(README_EXAMPLE)
    result = pytester.runpytest("-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(passed=1)
