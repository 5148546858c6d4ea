"""The pytest plugin's fleet: a folder of captures replayed for one test (`recorder.replay.Fleet`).

    @pytest.mark.a2a_fleet("captures/trip/")
    def test_planner(a2a_fleet):
        plan_trip(weather_url=a2a_fleet.urls["http://127.0.0.1:9001"], ...)

    @pytest.mark.a2a_fleet("captures/trip/", forward=True)
    def test_planner_as_configured(a2a_fleet):
        plan_trip()  # its clients call the recorded URLs, through HTTP_PROXY

The folder is relative to the test file; every capture in it is served, one replayer per
agent (see `recorder.replay._fleet`).  The fixture is the running `Fleet`: `urls` maps each
recorded upstream to where it is served, `agent(name)` gives an agent (its `url`,
`grpc_target`, `report`, `journal`), `proxy_url` is the forward proxy.

With `forward=True` the test runs with `HTTP_PROXY`, `http_proxy` and `grpc_proxy` set to
the fleet's proxy (httpx reads the first two, grpcio `grpc_proxy` and `http_proxy`), and
`NO_PROXY`, `no_proxy` and `no_grpc_proxy` unset, so that no call to a recorded agent
bypasses it; everything is restored after the test.  A request no agent of the fleet was
recorded to answer is answered `502` by the proxy.

The test fails at teardown when an agent answered what its captures do not hold (a miss, or
an answer the replayer wrote itself), or a request reached no agent, as `a2a_replay` does.
What the agents serve about themselves (journal, report) is redacted with the project's
rules (`[tool.a2a-recorder]`, `a2a_recorder_config`), as for `a2a_replay`.
Recording a fleet is `a2a-recorder record --forward --out DIR` (see the README).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from recorder.capture import Capture
    from recorder.replay import Fleet, FleetAgent

MARKER = (
    "a2a_fleet(folder, forward=False, timing='none'): the folder of captures the a2a_fleet "
    "fixture serves, each agent on a port of its own, or (forward=True) behind one proxy "
    "set as HTTP_PROXY for the test"
)
HOW_TO_RECORD = "a2a-recorder record --forward --out DIR (with the test's clients proxied)"
PROXY_VARIABLES = ("HTTP_PROXY", "http_proxy", "grpc_proxy")
BYPASS_VARIABLES = ("NO_PROXY", "no_proxy", "no_grpc_proxy")


@pytest.fixture
def a2a_fleet(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Fleet]:
    """Every capture of the marker's folder replayed at once (see the module docstring)."""
    from recorder.pytest_plugin import project_rules
    from recorder.replay import Fleet

    marker = request.node.get_closest_marker("a2a_fleet")
    if marker is None or not marker.args:
        pytest.fail("a2a_fleet needs @pytest.mark.a2a_fleet('path/to/folder/')", pytrace=False)
    folder = Path(request.path).parent / str(marker.args[0])
    forward = bool(marker.kwargs.get("forward", False))
    fleet = Fleet(
        _load(folder),
        forward=forward,
        timing=str(marker.kwargs.get("timing", "none")),
        redaction=project_rules(request),
    )
    with fleet:
        if fleet.proxy_url is not None:
            for name in PROXY_VARIABLES:
                monkeypatch.setenv(name, fleet.proxy_url)
            for name in BYPASS_VARIABLES:
                monkeypatch.delenv(name, raising=False)
        yield fleet
    problems = fleet_problems(fleet)
    if problems:
        pytest.fail(problems, pytrace=False)


def _load(folder: Path) -> list[tuple[Path, Capture]]:
    from recorder.capture import CaptureParseError, read_capture
    from recorder.replay import fleet_paths

    paths = fleet_paths(folder)
    if not paths:
        pytest.fail(f"no capture in {folder}: record the fleet with {HOW_TO_RECORD}", pytrace=False)
    try:
        return [(path, read_capture(path)) for path in paths]
    except CaptureParseError as exc:
        pytest.fail(f"capture is damaged: {exc}", pytrace=False)
    except OSError as exc:
        pytest.fail(f"cannot read a capture of {folder}: {exc}", pytrace=False)


def fleet_problems(fleet: Fleet) -> str:
    """What fails the test: each agent's answers its captures do not hold, and requests
    that reached no agent ("" when there are none)."""
    parts = [_agent_problems(agent) for agent in fleet.agents]
    unrouted = [r.line() for r in fleet.unrouted.requests]
    if unrouted:
        parts.append("requests no agent of the fleet answers:\n  " + "\n  ".join(unrouted))
    return "\n".join(p for p in parts if p)


def _agent_problems(agent: FleetAgent) -> str:
    from recorder.pytest_plugin import miss_message

    synthesized = agent.report.synthesized_answers
    if not synthesized:
        return ""
    capture = agent.plan.captures[0]
    text = miss_message(agent.report.misses, capture, synthesized)
    return f"agent {agent.name} ({', '.join(str(p) for p in agent.plan.paths)}):\n{text}"
