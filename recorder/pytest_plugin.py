"""The pytest plugin: replay a capture for one test, or record it through the recorder.

    @pytest.mark.a2a_capture("captures/echo.http")
    def test_client(a2a_replay):
        run_my_client(a2a_replay.card_url)

The capture path is relative to the test file; a marker without one names the capture after
the test, as pytest-recording names cassettes: `captures/<test module>/<test name>.http`
(`<Class>.<test name>` for a method).  `--a2a-upstream` and `--a2a-grpc-upstream` (the
recorder's `upstream` and `grpc_upstream`, `recorder.options.RECORD`) beat the marker's
`upstream=` and `grpc_upstream=`, as pytest-recording's command line beats its markers.
`--a2a-record` takes pytest-recording's mode names, with their meanings:

- `none` (default): replay only; a missing capture fails the test and says how to record it;
- `once` (alias `missing`): record the captures that do not exist yet, replay the others;
- `new_episodes`: replay the capture; a request it cannot answer goes to the live agent
  through the recorder and is appended to the capture, and a warning says what was (HTTP
  only: a gRPC miss fails, and so does a request naming an id the replay handed out that
  the live agent does not know);
- `all` (alias `rewrite`): record every capture again from scratch, as pytest-recording's
  `rewrite` does (vcrpy's `all` keeps old interactions; ours never mixes two sessions).

Invariants:
- Recording goes to a draft beside the capture, which the capture writer alone creates,
  renames and removes (`recorder.capture.draft_beside`, `promote`, `set_aside`), the capture
  claimed throughout (one another process writes fails the test, untouched).  The capture
  is replaced (renamed over, atomically) only when the test passed and the recording holds
  every exchange the test made: each with its response, and no call that the recorder could
  not follow.  A failed re-record leaves the old capture byte for byte.  Nothing recorded is
  thrown away either: a recording that does not replace the capture is kept beside it as
  `<name>.rejected.http` (what the recorder wrote, exchanges cut at teardown marked as such),
  and the failure says so; the next run that records that capture replaces or removes it.
- A test never reaches a live agent by accident.  When recording, the card's GRPC interface
  points at the recorder's gRPC listener: towards `--a2a-grpc-upstream`, or, without it, towards
  a refuser that fails the call and the test ("pass --a2a-grpc-upstream").  When replaying, the
  replayer's gRPC face always runs (even for a capture with no gRPC exchange) and the card's
  GRPC interface points at it, so a binding the capture cannot answer is a miss that names it.
- A request the capture cannot answer fails the test, once, with the nearest recorded exchange
  named: beside the test's own failure when its body failed, else as its failure (see
  `recorder._unanswered`).

`@pytest.mark.a2a_fleet("captures/trip/")` replays a folder of captures, one agent each
(the `a2a_fleet` fixture, `recorder.pytest_fleet`).

`--a2a-verify URL` checks the captures against a live agent instead (`recorder.verify`): each
test's capture is first played against the agent at URL (once per capture and session),
through the recorder, and diffed; then the test body runs as in replay mode, against a replay
of the same capture.  So the body still tests the client against the recorded agent, and the
verification tests the live agent against the recording: the test passes when both hold, and
fails with the diff as its message when the capture drifted (a drifting capture's new session
is kept beside it as `<name>.drift.http`).  The gRPC address is `--a2a-grpc-upstream`, or the
marker's `grpc_upstream`, or the live card's; redacted headers come from `--a2a-verify-header`
or `A2A_VERIFY_HEADER_<NAME>`; standing ignores from the `verify.toml` (or pyproject section)
found from the test file's folder upward.

pytest loads this module in every session of every project that has a2a-recorder installed:
the replayer (uvicorn, grpcio, the capture parser) and the recorder (mitmproxy) load only in
tests that use the fixture.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from recorder._unanswered import (
    Unanswered,
    episode_message,
    episode_problems,
    forwarded_summary,
    miss_message,
    misses_among,
)
from recorder.options import RECORD, REPLAY
from recorder.pytest_fleet import MARKER as FLEET_MARKER
from recorder.pytest_fleet import serve_fleet

if TYPE_CHECKING:
    from recorder.capture import Capture, Exchange
    from recorder.redaction import RecorderConfig, Rules
    from recorder.replay import Fleet, JournalDelivery, JournalRequest, Replayer, Report


class RecordMode(StrEnum):
    NONE = "none"
    ONCE = "once"
    NEW_EPISODES = "new_episodes"
    ALL = "all"


MODE_ALIASES = {"missing": RecordMode.ONCE, "rewrite": RecordMode.ALL}
MODE_CHOICES = [*(m.value for m in RecordMode), *MODE_ALIASES]
HOW_TO_RECORD = "--a2a-record=missing --a2a-upstream URL [--a2a-grpc-upstream HOST:PORT]"
_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()
_VERIFIED = pytest.StashKey[dict[Path, "str | None"]]()  # capture -> drift message (or None)
_DRIFT = pytest.StashKey["str | None"]()
_PROJECT = pytest.StashKey["RecorderConfig"]()  # `[tool.a2a-recorder]`, read once a session
_UNANSWERED = pytest.StashKey[Unanswered]()  # what the test's replay could not answer


def parse_mode(text: str) -> RecordMode:
    return MODE_ALIASES.get(text) or RecordMode(text)


@dataclass(frozen=True, slots=True)
class A2AEndpoint:
    """What a test talks to.

    `url` is the agent's base URL to give the A2A client (`card_url` its card); `grpc_target`
    is the `host:port` the card's GRPC interface names (the replayer's or the recorder's).
    """

    url: str
    capture: Path
    recording: bool
    report: Report | None = None
    grpc_target: str | None = None
    mode: RecordMode = RecordMode.NONE
    _replayer: Replayer | None = field(default=None, repr=False)

    @property
    def card_url(self) -> str:
        return self.url + "/.well-known/agent-card.json"

    # The request journal: what the fake agent got and did, as WireMock's journal tells it.
    # Recording runs have none (the recorder's capture is their record).
    @property
    def requests(self) -> Sequence[JournalRequest]:
        """Each live request the replayer received, as received, with its classification,
        its ids' provenance and the recorded exchange that answered it (or the miss)."""
        return self._replayer.journal.requests if self._replayer is not None else ()

    @property
    def deliveries(self) -> Sequence[JournalDelivery]:
        """Each push delivery the replayer made to the client's webhook, with its answer."""
        return self._replayer.journal.deliveries if self._replayer is not None else ()


@dataclass(frozen=True, slots=True)
class _Settings:
    """One test's capture and how to get it."""

    path: Path
    mode: RecordMode
    timing: str
    upstream: str | None
    grpc_upstream: str | None
    verify: str | None = None  # the live agent to verify the capture against
    recorder: RecorderConfig | None = None  # redaction: the project's and the fixture's
    faults: Sequence[str] = ()  # the marker's fault profile, applied when replaying


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
    """Keep each phase's report, so the fixture's teardown knows whether the test passed; a
    test body that failed gets what the replay could not answer beside its failure (once)."""
    outcome: Any = yield
    report: pytest.TestReport = outcome.get_result()
    if report.when == "call" and report.failed and _UNANSWERED in item.stash:
        message = item.stash[_UNANSWERED].unsaid()
        if message is not None:
            report.sections.append(("a2a-recorder", message))
    item.stash.setdefault(_REPORTS, {})[report.when] = report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """In verify mode, a test whose capture drifted fails once its body has run; a test whose
    replay could not answer a request fails then too (once: see `recorder._unanswered`)."""
    result = yield
    drift = item.stash.get(_DRIFT, None)
    if drift is not None:
        pytest.fail(drift, pytrace=False)
    message = item.stash[_UNANSWERED].unsaid() if _UNANSWERED in item.stash else None
    if message is not None:
        pytest.fail(message, pytrace=False)
    return result


def _passed(node: pytest.Item) -> bool:
    reports = node.stash.get(_REPORTS, {})
    return all(reports[p].passed for p in ("setup", "call") if p in reports) and "call" in reports


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
        node.stash[_DRIFT] = _verified(settings, request.config)
        yield from _replay(settings, node)
    elif settings.mode is RecordMode.ALL or (settings.mode is not RecordMode.NONE and not exists):
        yield from _record(settings, lambda: _passed(node))
    elif settings.mode is RecordMode.NEW_EPISODES:
        yield from _new_episodes(settings, node)
    else:
        yield from _replay(settings, node)


def _settings(request: pytest.FixtureRequest) -> _Settings:
    marker = request.node.get_closest_marker("a2a_capture")
    if marker is None:
        pytest.fail("a2a_replay needs @pytest.mark.a2a_capture (with a path, or none)")
    folder = Path(request.path).parent
    option = request.config.getoption
    return _Settings(
        path=folder / str(marker.args[0]) if marker.args else default_capture(request),
        mode=parse_mode(str(option("--a2a-record"))),
        timing=str(marker.kwargs.get("timing", REPLAY.by_name["timing"].default)),
        upstream=_given(request, marker, "upstream"),
        grpc_upstream=_given(request, marker, "grpc_upstream"),
        verify=option("--a2a-verify"),
        recorder=_recorder_config(request),
        faults=marker.kwargs.get("faults", ()),  # the replayer's table checks it
    )


def _given(request: pytest.FixtureRequest, marker: pytest.Mark, name: str) -> Any:
    """A recorder option for this test: the command line's, else the marker's."""
    flag = RECORD.by_name[name].pytest_flag
    return request.config.getoption(str(flag)) or marker.kwargs.get(name)


CAPTURES = "captures"
_NOT_IN_A_NAME = re.compile(r'[\\/:*?"<>|\x00-\x1f]')  # forbidden in a file name somewhere


def default_capture(request: pytest.FixtureRequest) -> Path:
    """`captures/<test module>/<test name>.http` beside the test file (pytest-recording's
    cassette path: `<Class>.<test name>` for a method, forbidden characters as `-`)."""
    test_file = Path(request.path)
    name = request.node.name
    if request.cls is not None:
        name = f"{request.cls.__name__}.{name}"
    return test_file.parent / CAPTURES / test_file.stem / f"{_NOT_IN_A_NAME.sub('-', name)}.http"


def _recorder_config(request: pytest.FixtureRequest) -> RecorderConfig:
    """The project's redaction settings with the `a2a_recorder_config` fixture's on top (a
    card file from the project's root)."""
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
        node.stash[_UNANSWERED] = unanswered

    yield from serve_fleet(node, monkeypatch, _project_rules(request), watch)


def _project_rules(request: pytest.FixtureRequest) -> Rules:
    """The project's redaction rules (`pyproject.toml`, `a2a_recorder_config`), which a
    replayer redacts what it serves about itself with (the `a2a_fleet` fixture's)."""
    from recorder.redaction import ConfigError

    try:
        return _recorder_config(request).rules()
    except ConfigError as exc:
        pytest.fail(str(exc), pytrace=False)


def _replay_rules(settings: _Settings) -> Rules:
    """The rules the replayer redacts what it serves with."""
    from recorder.redaction import ConfigError, Rules

    if settings.recorder is None:
        return Rules()
    try:
        return settings.recorder.rules()
    except ConfigError as exc:
        pytest.fail(str(exc), pytrace=False)


# --- replay -------------------------------------------------------------------------------------


def _load(path: Path) -> Capture:
    from recorder.capture import CaptureParseError, read_capture

    if not path.exists():
        pytest.fail(f"capture {path} is missing: record it with {HOW_TO_RECORD}", pytrace=False)
    try:
        return read_capture(path)
    except CaptureParseError as exc:
        pytest.fail(f"capture is damaged: {exc}", pytrace=False)


def _replay(settings: _Settings, node: pytest.Item) -> Iterator[A2AEndpoint]:
    capture = _load(settings.path)
    # grpc_port=0: the gRPC face runs even for a capture without gRPC, so that the card never
    # sends a client to the live agent's gRPC port.
    replayer = _replayer(settings, capture)
    report = replayer.report
    unanswered = node.stash[_UNANSWERED] = Unanswered(
        lambda: report.synthesized_answers,
        lambda lines: miss_message(misses_among(report.misses, lines), capture, lines),
    )
    with replayer:
        yield _replay_endpoint(settings, replayer)
    message = unanswered.unsaid()  # misses after the test's body (the body's were said)
    if message is not None:
        pytest.fail(message, pytrace=False)
    unused = report.faults_unused
    if unused:
        pytest.fail(f"faults asked for that never happened: {', '.join(unused)}", pytrace=False)


def _replayer(settings: _Settings, capture: Capture, **more: Any) -> Replayer:
    """A replayer of `capture` for one test, with the marker's fault profile."""
    from recorder._errors import FaultSpecError, OptionError
    from recorder.replay import Replayer

    try:
        return Replayer(
            [capture],
            timing=settings.timing,
            grpc_port=0,
            redaction=_replay_rules(settings),
            faults=settings.faults,
            **more,
        )
    except OptionError as exc:  # a value the replayer's table refuses: the marker's
        problem = exc.spelt(_marker_spelling)
    except FaultSpecError as exc:  # a spec that names no exchange it can apply to
        problem = f"a2a_capture(faults=...): {exc}"
    pytest.fail(problem, pytrace=False)


def _marker_spelling(name: str, value: str | None) -> str:
    """An option of `REPLAY` as the marker gives it: `a2a_capture(faults=...)`."""
    return f"a2a_capture({name}={'...' if value is None else value})"


def _replay_endpoint(settings: _Settings, replayer: Replayer) -> A2AEndpoint:
    return A2AEndpoint(
        replayer.url,
        settings.path,
        recording=False,
        report=replayer.report,
        grpc_target=replayer.grpc_target,
        mode=settings.mode,
        _replayer=replayer,
    )


# --- verify -------------------------------------------------------------------------------------


def drift_beside(path: Path) -> Path:
    """Where a drifting capture's new session is kept: `echo.drift.http`."""
    return path.with_name(f"{path.stem}.drift{path.suffix}")


def _verified(settings: _Settings, config: pytest.Config) -> str | None:
    """The capture verified against the live agent (once per session): None when it shows
    no drift, else the failure message."""
    found = config.stash.setdefault(_VERIFIED, {})
    if settings.path not in found:
        found[settings.path] = _verify(settings, config)
    return found[settings.path]


def _verify(settings: _Settings, config: pytest.Config) -> str | None:
    from recorder.capture import remove_capture
    from recorder.verify import (
        TIMEOUT,
        ConfigError,
        Credentials,
        VerifyError,
        find_config,
        render_text,
        verify_capture,
    )

    assert settings.verify is not None
    capture = _load(settings.path)
    kept = drift_beside(settings.path)  # written anew; removed again unless it drifted
    try:
        standing = find_config(settings.path.parent)
        credentials = Credentials.of(config.getoption("--a2a-verify-header"), (), os.environ)
        result = verify_capture(
            capture,
            settings.verify,
            grpc=settings.grpc_upstream,
            out=kept,
            name=str(settings.path),
            ignore=standing.ignores_for(settings.path),
            compare=standing.compares_for(settings.path),
            credentials=credentials,
            timeout=standing.timeout or TIMEOUT,
            max_slowdown=standing.max_slowdown,
        )
    except (VerifyError, ConfigError, ValueError) as exc:
        remove_capture(kept)
        return f"{settings.path}: verify could not run: {exc}"
    if not result.drift:
        remove_capture(kept)
        return None
    return (
        f"{settings.path} drifted against {settings.verify} (the new session is kept in "
        f"{kept}):\n{render_text(result)}"
    )


# --- record -------------------------------------------------------------------------------------


def rejected_beside(path: Path) -> Path:
    """Where a recording that did not replace the capture is kept: `echo.rejected.http`."""
    return path.with_name(f"{path.stem}.rejected{path.suffix}")


def _keep_rejected(temporary: Path, path: Path) -> Path | None:
    """Keep a recording that will not replace the capture; None when there is none."""
    from recorder.capture import set_aside

    kept = rejected_beside(path)
    return kept if set_aside(temporary, kept) else None


def _claim(path: Path) -> None:
    """Claim the capture a test records to; the test fails when another process writes it."""
    from recorder.capture import CaptureBusyError, claim

    try:
        claim(path)
    except CaptureBusyError as exc:
        pytest.fail(str(exc), pytrace=False)


def _record(settings: _Settings, passed: Callable[[], bool]) -> Iterator[A2AEndpoint]:
    from recorder.capture import draft_beside, promote, release, remove_capture

    _claim(settings.path)
    temporary = draft_beside(settings.path)
    remove_capture(rejected_beside(settings.path))  # an earlier run's, now stale
    try:
        with _recording(settings, temporary) as (proxy, refused):
            yield A2AEndpoint(
                proxy.url,
                settings.path,
                recording=True,
                grpc_target=proxy.grpc_target,
                mode=settings.mode,
            )
        _check_refused(refused, temporary, settings.path)
        _check_ledger(proxy, temporary, settings.path)
        if not passed():
            _keep_rejected(temporary, settings.path)  # the old capture stays as it was
            return
        recorded = _complete_recording(temporary, settings.path)
        if recorded is None:
            warnings.warn(
                f"{settings.path}: the test made no A2A request, nothing recorded", stacklevel=1
            )
        else:
            promote(temporary, settings.path)
    finally:
        remove_capture(temporary)
        release(settings.path)


def _new_episodes(settings: _Settings, node: pytest.Item) -> Iterator[A2AEndpoint]:
    from recorder.capture import draft_beside, release, remove_capture

    capture = _load(settings.path)
    _claim(settings.path)
    temporary = draft_beside(settings.path)
    answers: list[Exchange] = []  # what the live agent answered, as the recorder wrote it
    try:
        with (
            _recording(settings, temporary) as (proxy, refused),
            _replayer(settings, capture, on_miss=proxy.url) as replayer,
        ):
            proxy.addons.save.listeners.append(lambda _path, x, _size: answers.append(x))
            handed_out = replayer.service.sessions.families_of  # ids the replay gave out
            unanswered = node.stash[_UNANSWERED] = Unanswered(
                lambda: episode_problems(_forwarded(replayer), answers, handed_out),
                episode_message,
            )
            yield _replay_endpoint(settings, replayer)
        _check_refused(refused, temporary, settings.path)
        _check_ledger(proxy, temporary, settings.path)
        message = unanswered.unsaid()  # what came after the test's body (its own was said)
        if message is not None:
            pytest.fail(message, pytrace=False)
        new = _complete_recording(temporary, settings.path) if _passed(node) else None
        if new is not None and new.exchanges:
            added = _write_appended(settings.path, capture, new)
            warnings.warn(forwarded_summary(settings.path, added), stacklevel=1)
    finally:
        remove_capture(temporary)
        release(settings.path)


def _forwarded(replayer: Replayer) -> list[JournalRequest]:
    """The requests the capture could not answer: forwarded to the live agent, or not (a gRPC
    call, a forward that failed)."""
    return [r for r in replayer.journal.requests if r.outcome in ("forwarded", "miss")]


@contextmanager
def _recording(settings: _Settings, temporary: Path) -> Iterator[tuple[Any, GrpcRefuser | None]]:
    """A RecordingProxy to `temporary`, with gRPC towards the upstream or a refuser."""
    from recorder.record import RecordingProxy
    from recorder.redaction import RecorderConfig

    if not settings.upstream:
        pytest.fail(
            f"recording needs --a2a-upstream URL ({settings.path} is to be recorded)", pytrace=False
        )
    with contextlib.ExitStack() as stack:
        refuser = None
        grpc_upstream = settings.grpc_upstream
        if grpc_upstream is None:
            refuser = stack.enter_context(GrpcRefuser())
            grpc_upstream = refuser.target
        redaction = settings.recorder or RecorderConfig()
        proxy = stack.enter_context(
            _started(
                lambda: RecordingProxy(
                    upstream=settings.upstream,
                    out=temporary,
                    grpc_upstream=grpc_upstream,
                    keep_secrets=bool(redaction.keep_secrets),
                    redact_headers=redaction.redact_headers,
                    redact_params=redaction.redact_params,
                    card=redaction.card,
                    before_record=redaction.before_record,
                )
            )
        )
        yield proxy, refuser


BIND_ATTEMPTS = 3


@contextmanager
def _started(make: Callable[[], Any]) -> Iterator[Any]:
    """Start a RecordingProxy, again when a port it picked was taken before it bound it.

    RecordingProxy picks free ports for its extra listeners before mitmproxy binds them, so
    another process can take one in between ("address already in use"); a new pick is free.
    """
    from recorder._errors import OptionError
    from recorder.record import ProxyStartError

    for attempt in range(1, BIND_ATTEMPTS + 1):
        try:
            proxy = make()
        except OptionError as exc:  # named as this test run gives it, not as a keyword
            pytest.fail(f"a2a-recorder: {exc.spelt(RECORD.spell('pytest'))}", pytrace=False)
        try:
            proxy.start()
        except ProxyStartError as exc:
            if attempt == BIND_ATTEMPTS or "already in use" not in str(exc):
                raise
            continue
        try:
            yield proxy
        finally:
            proxy.stop()
        return


def _check_refused(refuser: GrpcRefuser | None, temporary: Path, path: Path) -> None:
    if refuser is not None and refuser.calls:
        kept = _keep_rejected(temporary, path)
        pytest.fail(
            "this test called gRPC (" + ", ".join(sorted(set(refuser.calls))) + ") while "
            "recording without a gRPC upstream: the calls were refused and are not in the "
            "capture, which was left as it was; pass --a2a-grpc-upstream HOST:PORT (or "
            "a2a_capture(..., grpc_upstream='HOST:PORT'))" + _kept_text(kept),
            pytrace=False,
        )


def _check_ledger(proxy: Any, temporary: Path, path: Path) -> None:
    """A recording that lost exchanges, or met an error inside the recorder, replaces no
    capture: the test fails saying what happened."""
    if not proxy.ledger.clean:
        kept = _keep_rejected(temporary, path)
        pytest.fail(
            f"recording {path} went wrong, the capture was left as it was: "
            + "; ".join(proxy.ledger.summary())
            + _kept_text(kept),
            pytrace=False,
        )


def _kept_text(kept: Path | None) -> str:
    return f"; what was recorded is kept in {kept}" if kept is not None else ""


def _complete_recording(temporary: Path, path: Path) -> Capture | None:
    """The recording, when it holds every exchange whole; fails the test when it does not
    (the recording is then kept beside the capture).

    None when nothing was recorded (the test made no A2A request): nothing to write.
    """
    from recorder.capture import CaptureParseError, read_capture

    if not temporary.exists():
        return None
    try:
        capture = read_capture(temporary)
    except CaptureParseError as exc:
        kept = _keep_rejected(temporary, path)
        pytest.fail(
            f"the recording is damaged, capture left as it was: {exc}" + _kept_text(kept),
            pytrace=False,
        )
    unanswered = [
        f"#{e.number} {e.classification.operation} ({e.error or 'no response'})"
        for e in capture.exchanges
        if e.response is None
    ]
    if unanswered:
        kept = _keep_rejected(temporary, path)
        pytest.fail(
            "the recording is incomplete, capture left as it was; no response for "
            + ", ".join(unanswered)
            + _kept_text(kept),
            pytrace=False,
        )
    return capture


def _write_appended(path: Path, old: Capture, new: Capture) -> tuple[Exchange, ...]:
    """`old` with `new`'s exchanges after its own, renumbered and timed after its end; the
    exchanges added."""
    from recorder.capture import write_capture

    end = max((e.started_us + e.duration_us for e in old.exchanges), default=0)
    added = tuple(
        dataclasses.replace(e, number=len(old.exchanges) + i, started_us=end + e.started_us)
        for i, e in enumerate(new.exchanges, start=1)
    )
    merged = dataclasses.replace(
        old,
        exchanges=old.exchanges + added,
        upstreams=tuple(dict.fromkeys(old.upstreams + new.upstreams)),
        redacted=tuple(dict.fromkeys(old.redacted + new.redacted)),
    )
    write_capture(path, merged)
    return added


# --- the gRPC refuser ---------------------------------------------------------------------------

REFUSAL = (
    "a2a-recorder is recording without a gRPC upstream: pass --a2a-grpc-upstream "
    "HOST:PORT to record gRPC"
)


class GrpcRefuser:
    """A gRPC server that fails every call (FAILED_PRECONDITION) and remembers its path.

    Recording without a gRPC upstream points the card's GRPC interface here, through the
    recorder, so that a gRPC client fails at once instead of reaching the live agent unseen.
    """

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.target = ""
        self._server: Any = None

    def start(self) -> GrpcRefuser:
        from concurrent.futures import ThreadPoolExecutor

        import grpc

        refuser = self

        class Handler(grpc.GenericRpcHandler):  # type: ignore[misc]
            def service(self, details: grpc.HandlerCallDetails) -> Any:
                refuser.calls.append(str(details.method))
                return grpc.unary_unary_rpc_method_handler(refuser.refuse)

        from recorder._background import GRPC_SERVER_OPTIONS

        self._server = grpc.server(ThreadPoolExecutor(max_workers=2), options=GRPC_SERVER_OPTIONS)
        self._server.add_generic_rpc_handlers((Handler(),))
        port = self._server.add_insecure_port("127.0.0.1:0")
        self._server.start()
        self.target = f"127.0.0.1:{port}"
        return self

    @staticmethod
    def refuse(_request: bytes, context: Any) -> bytes:
        import grpc

        context.abort(grpc.StatusCode.FAILED_PRECONDITION, REFUSAL)
        return b""

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop(grace=None)

    def __enter__(self) -> GrpcRefuser:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
