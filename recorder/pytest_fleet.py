"""The pytest plugin's fleet: a folder of captures replayed for one test (docs/guides/fleet.md).

With `forward=True` the proxy variables point at the fleet's proxy and the bypass ones are
unset, so no call to a recorded agent bypasses it; monkeypatch restores them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from recorder.pytest_replay import refuse_unknown

if TYPE_CHECKING:
    from recorder._unanswered import Unanswered
    from recorder.capture import Capture
    from recorder.redaction import Rules
    from recorder.replay import Fleet

MARKER = (
    "a2a_fleet(folder, forward=False, timing='none'): the folder of captures the a2a_fleet "
    "fixture serves, each agent on a port of its own, or (forward=True) behind one proxy "
    "set as HTTP_PROXY for the test"
)
HOW_TO_RECORD = "a2a-recorder record --forward --out DIR (with the test's clients proxied)"
PROXY_VARIABLES = ("HTTP_PROXY", "http_proxy", "grpc_proxy")
BYPASS_VARIABLES = ("NO_PROXY", "no_proxy", "no_grpc_proxy")


def serve_fleet(
    node: pytest.Item,
    monkeypatch: pytest.MonkeyPatch,
    rules: Rules,
    watch: Callable[[Unanswered], None],
) -> Iterator[Fleet]:
    """The `a2a_fleet` fixture: the marker's folder replayed, served text redacted with `rules`;
    `watch` is given what the fleet could not answer, for the plugin to say once."""
    from recorder.replay import Fleet

    marker = node.get_closest_marker("a2a_fleet")
    if marker is None or not marker.args:
        pytest.fail("a2a_fleet needs @pytest.mark.a2a_fleet('path/to/folder/')", pytrace=False)
    refuse_unknown(marker, ("forward", "timing"), "a folder, forward= and timing=")
    folder = node.path.parent / str(marker.args[0])
    fleet = Fleet(
        _load(folder),
        forward=bool(marker.kwargs.get("forward", False)),
        timing=str(marker.kwargs.get("timing", "none")),
        redaction=rules,
    )
    unanswered = fleet_unanswered(fleet)
    watch(unanswered)
    with fleet:
        if fleet.proxy_url is not None:
            for name in PROXY_VARIABLES:
                monkeypatch.setenv(name, fleet.proxy_url)
            for name in BYPASS_VARIABLES:
                monkeypatch.delenv(name, raising=False)
        yield fleet
    message = unanswered.unsaid()  # what came after the test's body (the body's was said)
    if message is not None:
        pytest.fail(message, pytrace=False)


def _load(folder: Path) -> list[tuple[Path, Capture]]:
    from recorder.capture import CaptureParseError, read_capture
    from recorder.replay import fleet_paths

    try:
        paths = fleet_paths(folder)
        if not paths:
            pytest.fail(
                f"no capture in {folder}: record the fleet with {HOW_TO_RECORD}", pytrace=False
            )
        return [(path, read_capture(path)) for path in paths]
    except CaptureParseError as exc:
        pytest.fail(f"capture is damaged: {exc}", pytrace=False)
    except OSError as exc:
        pytest.fail(f"cannot read a capture of {folder}: {exc}", pytrace=False)


# Each problem line is the agent's index and what its report says, or `UNROUTED` and the
# request no agent answered, apart by `SEPARATOR` (no report line holds a NUL).
SEPARATOR = "\x00"
UNROUTED = "-"


def fleet_unanswered(fleet: Fleet) -> Unanswered:
    """What the fleet could not answer: each agent's unanswered, and requests that reached none."""
    from recorder._unanswered import Unanswered

    def lines() -> list[str]:
        found = [
            f"{i}{SEPARATOR}{line}"
            for i, agent in enumerate(fleet.agents)
            for line in agent.report.synthesized_answers
        ]
        return found + [f"{UNROUTED}{SEPARATOR}{r.line()}" for r in fleet.unrouted.requests]

    return Unanswered(lines, lambda new: fleet_message(fleet, new))


def fleet_message(fleet: Fleet, lines: Sequence[str]) -> str:
    """`lines` (see `fleet_unanswered`) in words, agent by agent."""
    from recorder._unanswered import miss_message, misses_among

    split = [line.split(SEPARATOR, 1) for line in lines]
    parts = []
    for i, agent in enumerate(fleet.agents):
        synthesized = [text for key, text in split if key == str(i)]
        if synthesized:
            captures = agent.plan.captures
            held = replace(captures[0], exchanges=tuple(e for c in captures for e in c.exchanges))
            text = miss_message(misses_among(agent.report.misses, synthesized), held, synthesized)
            paths = ", ".join(str(p) for p in agent.plan.paths)
            parts.append(f"agent {agent.name} ({paths}):\n{text}")
    unrouted = [text for key, text in split if key == UNROUTED]
    if unrouted:
        parts.append("requests no agent of the fleet answers:\n  " + "\n  ".join(unrouted))
    return "\n".join(parts)
