"""The pytest plugin's model and its replay: a test's capture, how to get it, the replayer that
serves it, and `--a2a-verify`'s check of the capture against a live agent.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from recorder._unanswered import Unanswered, miss_message, misses_among

if TYPE_CHECKING:
    from recorder.capture import Capture
    from recorder.redaction import RecorderConfig, Rules
    from recorder.replay import JournalDelivery, JournalRequest, Replayer, Report


class RecordMode(StrEnum):
    NONE = "none"
    ONCE = "once"
    NEW_EPISODES = "new_episodes"
    ALL = "all"


MODE_ALIASES = {"missing": RecordMode.ONCE, "rewrite": RecordMode.ALL}
MODE_CHOICES = [*(m.value for m in RecordMode), *MODE_ALIASES]
HOW_TO_RECORD = "--a2a-record=missing --a2a-upstream URL [--a2a-grpc-upstream HOST:PORT]"
REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()
VERIFIED = pytest.StashKey[dict[Path, "str | None"]]()  # capture -> drift message (or None)
DRIFT = pytest.StashKey["str | None"]()
UNANSWERED = pytest.StashKey[Unanswered]()  # what the test's replay could not answer


def parse_mode(text: str) -> RecordMode:
    return MODE_ALIASES.get(text) or RecordMode(text)


@dataclass(frozen=True, slots=True)
class A2AEndpoint:
    """What a test talks to: `url` for the A2A client (`card_url` its card), and `grpc_target` the
    card's GRPC interface names (the replayer's or the recorder's)."""

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

    # What the fake agent got and did; recording runs have none (the capture is their record).
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
class Settings:
    """One test's capture and how to get it."""

    path: Path
    mode: RecordMode
    timing: str
    upstream: str | None
    grpc_upstream: str | None
    verify: str | None = None  # the live agent to verify the capture against
    recorder: RecorderConfig | None = None  # redaction: the project's and the fixture's
    faults: Sequence[str] = ()  # the marker's fault profile, applied when replaying
    credentials: bool = True  # the marker's credentials=False: answer as if they were sent


def refuse_unknown(marker: pytest.Mark, takes: Sequence[str], said: str) -> None:
    """Fail the test on a keyword `marker` does not take (`takes`, in words `said`): a misspelt
    one would otherwise be a setting silently not applied."""
    unknown = sorted(set(marker.kwargs) - set(takes))
    if unknown:
        pytest.fail(f"{marker.name} does not take {', '.join(unknown)}= (it takes {said})",
                    pytrace=False)  # fmt: skip


def passed_test(node: pytest.Item) -> bool:
    reports = node.stash.get(REPORTS, {})
    return all(reports[p].passed for p in ("setup", "call") if p in reports) and "call" in reports


def replay_rules(config: RecorderConfig | None) -> Rules:
    """The rules a replayer redacts what it serves with (`a2a_replay`'s and `a2a_fleet`'s)."""
    from recorder.redaction import ConfigError, Rules

    if config is None:
        return Rules()
    try:
        return config.rules()
    except ConfigError as exc:
        pytest.fail(str(exc), pytrace=False)


# --- replay -------------------------------------------------------------------------------------


def load(path: Path) -> Capture:
    from recorder.capture import CaptureParseError, read_capture

    if not path.exists():
        pytest.fail(f"capture {path} is missing: record it with {HOW_TO_RECORD}", pytrace=False)
    try:
        return read_capture(path)
    except CaptureParseError as exc:
        pytest.fail(f"capture is damaged: {exc}", pytrace=False)


def replay(settings: Settings, node: pytest.Item) -> Iterator[A2AEndpoint]:
    capture = load(settings.path)
    # grpc_port=0: the gRPC face runs even for a capture without gRPC, so that the card never
    # sends a client to the live agent's gRPC port.
    replayer = replayer_for(settings, capture)
    report = replayer.report
    unanswered = node.stash[UNANSWERED] = Unanswered(
        lambda: report.synthesized_answers,
        lambda lines: miss_message(misses_among(report.misses, lines), capture, lines),
    )
    with replayer:
        yield endpoint(settings, replayer, replayer)
    message = unanswered.unsaid()  # misses after the test's body (the body's were said)
    if message is not None:
        pytest.fail(message, pytrace=False)
    unused = report.faults_unused
    if unused:
        pytest.fail(f"faults asked for that never happened: {', '.join(unused)}", pytrace=False)


def replayer_for(settings: Settings, capture: Capture, **more: Any) -> Replayer:
    """A replayer of `capture` for one test, with the marker's fault profile."""
    from recorder._errors import FaultSpecError, OptionError
    from recorder.replay import Replayer

    try:
        return Replayer(
            [capture],
            timing=settings.timing,
            grpc_port=0,
            redaction=replay_rules(settings.recorder),
            faults=settings.faults,
            credentials=settings.credentials,
            **more,
        )
    except OptionError as exc:  # a value the replayer's table refuses: the marker's
        problem = exc.spelt(  # as the marker gives it: `a2a_capture(faults=...)`
            lambda name, value: f"a2a_capture({name}={'...' if value is None else value})"
        )
    except FaultSpecError as exc:  # a spec that names no exchange it can apply to
        problem = f"a2a_capture(faults=...): {exc}"
    pytest.fail(problem, pytrace=False)


def endpoint(settings: Settings, server: Any, replayer: Replayer | None = None) -> A2AEndpoint:
    """What the test talks to: the replayer (given again as `replayer`) or the recorder."""
    report = replayer.report if replayer is not None else None
    url, grpc_target = server.url, server.grpc_target
    recording = replayer is None
    return A2AEndpoint(url, settings.path, recording, report, grpc_target, settings.mode, replayer)


# --- verify -------------------------------------------------------------------------------------


def verified(settings: Settings, config: pytest.Config) -> str | None:
    """The capture verified against the live agent, once a session (None: no drift, else why)."""
    found = config.stash.setdefault(VERIFIED, {})
    if settings.path not in found:
        found[settings.path] = _verify(settings, config)
    return found[settings.path]


def _verify(settings: Settings, config: pytest.Config) -> str | None:
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
    capture = load(settings.path)
    path = settings.path
    kept = path.with_name(f"{path.stem}.drift{path.suffix}")  # removed again unless it drifts
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
