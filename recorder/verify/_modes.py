"""The shells of verify's ways to run: once (with a baseline), `--learn N`, `--trials K`.

Each returns the report text and the exit status; `VerifyError`, `ConfigError` and
`BaselineError` (verify could not run) go up to the command.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from recorder._errors import ConfigError, Exit
from recorder.capture import Capture
from recorder.ci import gate
from recorder.verify._baseline import accept, baseline_items
from recorder.verify._config import PYPROJECT, VerifyConfig
from recorder.verify._learn import Learning, learn
from recorder.verify._learnt import checked, learnt_table, with_learnt, write_learnt
from recorder.verify._report import FORMATS
from recorder.verify._result import VerifyResult
from recorder.verify._run import verify_capture
from recorder.verify._trials import TRIALS_FORMATS, Trials

CONFIG_NAME = "verify.toml"
LEARN_FORMAT = "a2a-recorder-verify-learn"
LEARN_FORMATS = ("text", "json")


@dataclass(frozen=True)
class Job:
    """One capture to verify: what to send, where, and how to compare."""

    capture: Path
    recorded: Capture
    agent: str
    config: VerifyConfig
    ignore: tuple[str, ...] = ()  # the command line's, on top of the config's
    compare: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)  # verify_capture's others

    def ignores(self, *, learnt: bool = True) -> tuple[str, ...]:
        return (*self.config.ignores_for(self.capture, learnt=learnt), *self.ignore)

    def compares(self) -> tuple[str, ...]:
        return (*self.config.compares_for(self.capture), *self.compare)

    def run(self, *, learnt: bool = True, out: Path | None = None) -> VerifyResult:
        return verify_capture(
            self.recorded,
            self.agent,
            ignore=self.ignores(learnt=learnt),
            compare=self.compares(),
            out=out,
            name=str(self.capture),
            **self.options,
        )


def once(
    job: Job, fmt: str, color: bool, baseline: Path | None, update: bool, out: Path | None
) -> tuple[str, int]:
    result = job.run(out=out)
    if baseline is not None:
        items = baseline_items(result)
        check, outcome = gate(baseline, [e for e, _ in items], "verify", update=update)
        result = accept(result, {items[i][1] for i in check.accepted}, outcome)
    return FORMATS[fmt](result, color=color), result.status


def run_trials(job: Job, fmt: str, count: int, min_pass: int) -> tuple[str, int]:
    results = Trials(str(job.capture), job.agent, tuple(job.run() for _ in range(count)), min_pass)
    return TRIALS_FORMATS[fmt](results), results.status


def learn_into(job: Job, fmt: str, count: int, config_path: Path | None) -> tuple[str, int]:
    """Run `count` times, and write what differed between the runs into verify.toml, in place
    of what an earlier --learn wrote for the capture (which no run uses)."""
    target = _learn_target(job.config, config_path)
    runs = [job.run(learnt=False) for _ in range(count)]
    captures = [r.diff.b_capture for r in runs if r.diff.b_capture is not None]
    learning = learn(captures, ignore=job.ignores(learnt=False), compare=job.compares())
    key = VerifyConfig(target).key_of(job.capture)
    when = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    text = target.read_text(encoding="utf-8") if target.exists() else ""
    table = learnt_table(key, learning, agent=job.agent, when=when)
    patterns = [x.pattern for x in learning.learnt]
    write_learnt(target, checked(with_learnt(text, key, table), key, patterns, target))
    not_sent = [f"run {k}: not sent: {n.reason}" for k, r in enumerate(runs, 1) for n in r.not_sent]
    return _LEARN_REPORTS[fmt](learning, key, target, not_sent), Exit.OK


def _learn_target(config: VerifyConfig, given: Path | None) -> Path:
    target = given or config.path or Path.cwd() / CONFIG_NAME
    if target.name == PYPROJECT:
        raise ConfigError(
            f"{target}: --learn writes its ignores into a verify.toml, and the settings "
            "come from pyproject.toml; move them into a verify.toml beside it, or pass "
            "--config verify.toml"
        )
    return target


def _learn_text(learning: Learning, key: str, target: Path, not_sent: list[str]) -> str:
    out = [
        f"learnt {len(learning.learnt)} ignores for {key} from {learning.runs} runs, "
        f"written to {target}:"
    ]
    out += [f"  {x.pattern}  ({x.comment()})" for x in learning.learnt]
    if learning.unlearnt or not_sent:
        out.append("differed too, but no ignore pattern can name it:")
        out += [f"  {line}" for line in (*learning.unlearnt, *not_sent)]
    return "\n".join(out) + "\n"


def _learn_json(learning: Learning, key: str, target: Path, not_sent: list[str]) -> str:
    document = {
        "format": LEARN_FORMAT,
        "version": 1,
        "capture": key,
        "config": str(target),
        "runs": learning.runs,
        "learnt": [
            {"pattern": x.pattern, "runs": [list(r) for r in x.runs]} for x in learning.learnt
        ],
        "unlearnt": [*learning.unlearnt, *not_sent],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


_LEARN_REPORTS: dict[str, Callable[[Learning, str, Path, list[str]], str]] = {
    "text": _learn_text,
    "json": _learn_json,
}
