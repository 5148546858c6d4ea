"""The pytest plugin: replay a capture for one test, or record it when it is missing.

    @pytest.mark.a2a_capture("captures/echo.http")
    def test_client(a2a_replay):
        run_my_client(a2a_replay.url)

The capture path is relative to the test file.  `--a2a-record=none` (the default) fails a test
whose capture is missing; `missing` records it through the recorder from `--a2a-upstream URL`;
`all` records every capture again.  A request the capture cannot answer fails the test at
teardown, with the nearest recorded exchange named.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from recorder.replay import Report

# pytest loads this module in every session of every project that has a2a-recorder installed;
# the replayer (uvicorn, grpcio, the capture parser) and the recorder (mitmproxy) load only in
# tests that use the fixture.


class RecordMode(StrEnum):
    NONE = "none"
    MISSING = "missing"
    ALL = "all"


@dataclass(frozen=True, slots=True)
class A2AEndpoint:
    """What a test talks to: `url` is the base URL to give the A2A client."""

    url: str
    capture: Path
    recording: bool
    report: Report | None = None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("a2a-recorder", "A2A capture replay")
    group.addoption("--a2a-record", choices=[m.value for m in RecordMode], default="none",
                    help="record captures: none (replay only), missing, or all")
    group.addoption("--a2a-upstream", default=None, metavar="URL",
                    help="the live agent to record from when recording")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "a2a_capture(path, timing='none'): the capture the a2a_replay fixture serves"
    )


@pytest.fixture
def a2a_replay(request: pytest.FixtureRequest) -> Iterator[A2AEndpoint]:
    """A replayer of the test's capture on a free port (or a recorder when recording)."""
    marker = request.node.get_closest_marker("a2a_capture")
    if marker is None or not marker.args:
        pytest.fail("a2a_replay needs @pytest.mark.a2a_capture('path/to/capture.http')")
    path = Path(request.path).parent / str(marker.args[0])
    mode = RecordMode(request.config.getoption("--a2a-record"))
    if mode is RecordMode.ALL or (mode is RecordMode.MISSING and not path.exists()):
        yield from _record(path, request.config.getoption("--a2a-upstream"))
        return
    yield from _replay(path, str(marker.kwargs.get("timing", "none")))


def _replay(path: Path, timing: str) -> Iterator[A2AEndpoint]:
    from recorder.capture import CaptureParseError, read_capture
    from recorder.replay import Replayer

    if not path.exists():
        pytest.fail(f"capture {path} is missing: record it with "
                    "--a2a-record=missing --a2a-upstream URL", pytrace=False)
    try:
        capture = read_capture(path)
    except CaptureParseError as exc:
        pytest.fail(f"capture is damaged: {exc}", pytrace=False)
    with Replayer([capture], timing=timing) as replayer:
        yield A2AEndpoint(replayer.url, path, recording=False, report=replayer.report)
        misses = list(replayer.report.misses)
    if misses:
        pytest.fail("requests the capture could not answer:\n  " + "\n  ".join(misses),
                    pytrace=False)


def _record(path: Path, upstream: str | None) -> Iterator[A2AEndpoint]:
    from recorder.record import RecordingProxy  # mitmproxy loads only when recording

    if not upstream:
        pytest.fail("recording needs --a2a-upstream URL", pytrace=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    with RecordingProxy(upstream=upstream, out=path) as proxy:
        yield A2AEndpoint(proxy.url, path, recording=True)
