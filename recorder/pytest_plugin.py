"""The pytest plugin: replay a capture for one test, or record it through the recorder.

The hooks and fixtures; the modes, `--a2a-verify` and `a2a_fleet` are docs/guides/pytest.md's.
Invariants:
- A recording is a draft beside the capture, which replaces it (atomically) only when the test
  passed and the recording is whole; otherwise it is kept as `<name>.rejected.http`.
- A test never reaches a live agent by accident: the card's gRPC interface points at the
  recorder's gRPC listener or, when replaying, at the replayer's gRPC face.
- A request the capture cannot answer fails the test once (`recorder._unanswered`).
Loaded in every pytest session where a2a-recorder is installed: the heavy modules load only in
tests that use the fixtures.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from recorder._unanswered import Unanswered
from recorder.options import RECORD, REPLAY
from recorder.pytest_fleet import MARKER as FLEET_MARKER
from recorder.pytest_fleet import serve_fleet
from recorder.pytest_record import new_episodes, record
from recorder.pytest_replay import (
    DRIFT,
    MODE_CHOICES,
    REPORTS,
    UNANSWERED,
    A2AEndpoint,
    RecordMode,
    Settings,
    parse_mode,
    passed_test,
    refuse_unknown,
    replay,
    replay_rules,
    verified,
)

if TYPE_CHECKING:
    from recorder.redaction import RecorderConfig
    from recorder.replay import Fleet

__all__ = ["A2AEndpoint", "RecordMode", "default_capture", "parse_mode"]
_PROJECT = pytest.StashKey["RecorderConfig"]()  # `[tool.a2a-recorder]`, read once a session


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("a2a-recorder", "A2A capture replay")
    group.addoption(
        "--a2a-record",
        choices=MODE_CHOICES,
        default="none",
        help="none (replay only), once (record missing captures; alias missing), "
        "new_episodes (append what the capture cannot answer), "
        "all (record every capture again; alias rewrite)",
    )
    for option in RECORD:  # the recorder's options that a test run may set
        if option.pytest_flag is not None:
            group.addoption(
                option.pytest_flag, default=None, metavar=option.metavar, help=option.help
            )
    group.addoption(
        "--a2a-verify",
        default=None,
        metavar="URL",
        help="verify each test's capture against the live agent at URL (the test "
        "fails when it drifted), then run the test against its replay",
    )
    group.addoption(
        "--a2a-verify-header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="a value for a header the captures hold redacted (or "
        "A2A_VERIFY_HEADER_<NAME>); repeatable",
    )


def pytest_configure(config: pytest.Config) -> None:
    if (
        config.getoption("--a2a-verify", None)
        and parse_mode(str(config.getoption("--a2a-record"))) is not RecordMode.NONE
    ):
        raise pytest.UsageError(
            "--a2a-verify checks captures, --a2a-record makes them: pass one of the two"
        )
    config.addinivalue_line(
        "markers",
        "a2a_capture(path=captures/<test module>/<test name>.http, timing='none', "
        "upstream=None, grpc_upstream=None, faults=()): the capture the a2a_replay fixture "
        "serves; upstream/grpc_upstream are this test's when --a2a-upstream/"
        "--a2a-grpc-upstream are not given; faults: specs as replay's --fault takes them",
    )
    config.addinivalue_line("markers", FLEET_MARKER)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[Any]:
    """Keep each phase's report for teardown; a failed body gets what replay could not answer."""
    outcome: Any = yield
    report: pytest.TestReport = outcome.get_result()
    if report.when == "call" and report.failed and UNANSWERED in item.stash:
        message = item.stash[UNANSWERED].unsaid()
        if message is not None:
            report.sections.append(("a2a-recorder", message))
    item.stash.setdefault(REPORTS, {})[report.when] = report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """In verify mode a drifted capture fails the test after its body, as unanswered replay does."""
    result = yield
    drift = item.stash.get(DRIFT, None)
    if drift is not None:
        pytest.fail(drift, pytrace=False)
    message = item.stash[UNANSWERED].unsaid() if UNANSWERED in item.stash else None
    if message is not None:
        pytest.fail(message, pytrace=False)
    return result


@pytest.fixture
def a2a_recorder_config() -> dict[str, Any]:
    """Redaction for this test's recording and replay, on top of `[tool.a2a-recorder]` in
    pyproject.toml: override it in a conftest.py, as pytest-recording's `vcr_config`.

        @pytest.fixture
        def a2a_recorder_config():
            return {"redact_headers": ["X-Tenant-Seal"], "before_record": drop_health_checks}

    Keys: `redact_headers`, `redact_params`, `card`, `keep_secrets`, `before_record` (a
    function of the exchange returning it, changed or not, or None to leave it out); see
    `recorder.redaction._config`.
    """
    return {}


@pytest.fixture
def a2a_replay(request: pytest.FixtureRequest) -> Iterator[A2AEndpoint]:
    """A replayer of the test's capture on free ports (or a recorder when recording)."""
    settings = _settings(request)
    node = request.node
    assert isinstance(node, pytest.Item)
    exists = settings.path.exists()
    if settings.verify is not None:
        node.stash[DRIFT] = verified(settings, request.config)
        yield from replay(settings, node)
    elif settings.mode is RecordMode.ALL or (settings.mode is not RecordMode.NONE and not exists):
        yield from record(settings, lambda: passed_test(node))
    elif settings.mode is RecordMode.NEW_EPISODES:
        yield from new_episodes(settings, node)
    else:
        yield from replay(settings, node)


def _settings(request: pytest.FixtureRequest) -> Settings:
    marker = request.node.get_closest_marker("a2a_capture")
    if marker is None:
        pytest.fail("a2a_replay needs @pytest.mark.a2a_capture (with a path, or none)")
    said = "a path and " + ", ".join(f"{name}=" for name in MARKER_KEYWORDS)
    refuse_unknown(marker, MARKER_KEYWORDS, said)
    folder = Path(request.path).parent
    option = request.config.getoption
    return Settings(
        path=folder / str(marker.args[0]) if marker.args else default_capture(request),
        mode=parse_mode(str(option("--a2a-record"))),
        timing=str(marker.kwargs.get("timing", REPLAY.by_name["timing"].default)),
        upstream=_given(request, marker, "upstream"),
        grpc_upstream=_given(request, marker, "grpc_upstream"),
        verify=option("--a2a-verify"),
        recorder=_recorder_config(request),
        faults=marker.kwargs.get("faults", ()),  # the replayer's table checks it
        credentials=bool(marker.kwargs.get("credentials", True)),
    )


# What `a2a_capture` takes besides its path; any other keyword fails the test (a misspelt one
# would otherwise be a setting silently not applied).
MARKER_KEYWORDS = ("timing", "faults", "credentials", "upstream", "grpc_upstream")


def _given(request: pytest.FixtureRequest, marker: pytest.Mark, name: str) -> Any:
    """A recorder option for this test: the command line's, else the marker's."""
    flag = RECORD.by_name[name].pytest_flag
    return request.config.getoption(str(flag)) or marker.kwargs.get(name)


CAPTURES = "captures"
_NOT_IN_A_NAME = re.compile(r'[\\/:*?"<>|\x00-\x1f]')  # forbidden in a file name somewhere


def default_capture(request: pytest.FixtureRequest) -> Path:
    """`captures/<test module>/<test name>.http` beside the test, as pytest-recording has it."""
    test_file = Path(request.path)
    name = request.node.name
    if request.cls is not None:
        name = f"{request.cls.__name__}.{name}"
    return test_file.parent / CAPTURES / test_file.stem / f"{_NOT_IN_A_NAME.sub('-', name)}.http"


def _recorder_config(request: pytest.FixtureRequest) -> RecorderConfig:
    """The project's redaction settings, the `a2a_recorder_config` fixture's on top."""
    from recorder.redaction import ConfigError, RecorderConfig, read_pyproject

    given = request.getfixturevalue("a2a_recorder_config")
    root = request.config.rootpath
    try:
        if not isinstance(given, dict):
            raise ConfigError(f"a2a_recorder_config must return a dict, not {given!r}")
        if _PROJECT not in request.config.stash:
            request.config.stash[_PROJECT] = read_pyproject(root / "pyproject.toml")
        fixture = RecorderConfig.from_mapping(given, "a2a_recorder_config").relative_to(root)
    except ConfigError as exc:
        pytest.fail(str(exc), pytrace=False)
    return request.config.stash[_PROJECT].merged(fixture)


@pytest.fixture
def a2a_fleet(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Fleet]:
    """Every capture of the `a2a_fleet` marker's folder replayed at once, one agent each
    (`recorder.pytest_fleet`); what it could not answer is said once, as for `a2a_replay`."""
    node = request.node
    assert isinstance(node, pytest.Item)

    def watch(unanswered: Unanswered) -> None:
        node.stash[UNANSWERED] = unanswered

    rules = replay_rules(_recorder_config(request))
    yield from serve_fleet(node, monkeypatch, rules, watch)
