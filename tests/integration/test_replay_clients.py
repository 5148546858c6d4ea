"""Clients we did not write, against the replayer: the outcomes must be the live agent's.

The clients (`_spec_clients`) are written from the spec: raw HTTP for JSON-RPC and HTTP+JSON,
grpcio calls for gRPC, a new connection for every request.  A suite of `TESTS` tests per
binding (each: a task's life, then ids nobody issued and a bogus continuation) is recorded
live through the recorder against the real a2a-sdk demo agent, then replayed: in the recorded
order, in reverse, as 10 copies at once, and against a capture that never probed (where every
probe must get an error, never a task).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from _spec_clients import GrpcClient, JsonRpcClient, RestClient, SpecClient, run_test

from recorder.capture import Capture, read_capture
from recorder.demo import DemoAgent
from recorder.record import RecordingProxy
from recorder.replay import Replayer

BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"]
TESTS = 3
Outcomes = list[tuple[str, str]]


def client(binding: str, url: str, grpc_target: str | None) -> SpecClient:
    if binding == "GRPC":
        assert grpc_target is not None
        return GrpcClient(grpc_target)
    return JsonRpcClient(url) if binding == "JSONRPC" else RestClient(url)


def suite(
    binding: str, url: str, grpc_target: str | None, order: list[int], probes: bool = True
) -> dict[int, Outcomes]:
    return {n: run_test(client(binding, url, grpc_target), probes=probes) for n in order}


Recorded = tuple[Capture, Capture, dict[int, Outcomes]]


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Recorded]:
    """Per binding, once: (capture with probes, capture without, the live outcomes)."""
    done: dict[str, Recorded] = {}

    def get(binding: str) -> Recorded:
        if binding not in done:
            done[binding] = _record(binding, tmp_path_factory.mktemp("clients"))
        return done[binding]

    return get


def _record(binding: str, tmp: Path) -> Recorded:
    captures, live = [], {}
    with DemoAgent(event_delay=0.05) as agent:
        for probes in (True, False):
            out = tmp / f"{binding.replace('+', '-')}-{probes}.http"
            with RecordingProxy(
                upstream=agent.base_url, out=out, grpc_upstream=agent.grpc_target
            ) as proxy:
                outcomes = suite(binding, proxy.url, proxy.grpc_target, list(range(TESTS)), probes)
            captures.append(read_capture(out))
            live = live or outcomes
    return captures[0], captures[1], live


@pytest.fixture(params=BINDINGS)
def recorded(
    request: pytest.FixtureRequest, recordings: Callable[[str], Recorded]
) -> tuple[str, Recorded]:
    return request.param, recordings(request.param)


def test_the_live_outcomes_are_what_the_spec_says(recorded: tuple[str, Recorded]) -> None:
    _, (_, _, live) = recorded
    outcomes = dict(live[0])
    assert outcomes["send"] == outcomes["get"] == "state:TASK_STATE_WORKING"
    assert outcomes["subscribe"].startswith("stream:task WORKING")
    assert outcomes["get-after-cancel"] == "state:TASK_STATE_CANCELED"
    assert outcomes["cancel-again"] == "error:TaskNotCancelable"
    probes = {k: v for k, v in outcomes.items() if "unknown" in k or "bogus" in k}
    assert len(probes) == 10 and set(probes.values()) == {"error:TaskNotFound"}


@pytest.mark.parametrize("order", ["recorded", "reversed"])
def test_replay_in_any_order_equals_live(recorded: tuple[str, Recorded], order: str) -> None:
    binding, (capture, _, live) = recorded
    tests = list(range(TESTS)) if order == "recorded" else list(reversed(range(TESTS)))
    with Replayer([capture]) as replayer:
        replayed = suite(binding, replayer.url, replayer.grpc_target, tests)
        assert replayer.report.misses == []
    assert replayed == live


def test_ten_copies_at_once_each_equal_live(recorded: tuple[str, Recorded]) -> None:
    binding, (capture, _, live) = recorded
    with Replayer([capture]) as replayer, ThreadPoolExecutor(10) as pool:
        copies = list(
            pool.map(
                lambda _: suite(binding, replayer.url, replayer.grpc_target, list(range(TESTS))),
                range(10),
            )
        )
        assert replayer.report.misses == []
    wrong = [
        (n, c, dict(live[n])[c], got)
        for copy in copies
        for n in copy
        for c, got in copy[n]
        if dict(live[n])[c] != got
    ]
    assert wrong == []


def test_a_capture_that_never_probed_answers_probes_with_errors(
    recorded: tuple[str, Recorded],
) -> None:
    binding, (_, unprobed, live) = recorded
    with Replayer([unprobed]) as replayer:
        replayed = suite(binding, replayer.url, replayer.grpc_target, list(range(TESTS)))
        misses = replayer.report.misses
    for n in range(TESTS):
        for (call, got), (_, want) in zip(replayed[n], live[n], strict=True):
            if "unknown" in call or "bogus" in call:
                assert got.startswith("error:") and want == "error:TaskNotFound", (call, got)
            else:
                assert got == want, (call, got)
    assert len(misses) == TESTS * 10
