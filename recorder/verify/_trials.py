"""`verify --trials K --min-pass P`: K runs against a noisy agent, a pass rate per exchange.

A trial passes when it shows no drift; the whole passes when at least P of K do.  Per recorded
exchange, the report gives the trials it came through unchanged and what changed in the
others; an inserted exchange is listed with its run.  Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from recorder._errors import Exit
from recorder.ci import Case, Failure, Suite, render_junit
from recorder.diff import ExchangeDiff, PairKind, describe, json_text, md_text
from recorder.verify._report import CLASSNAME, render_text, report, report_head
from recorder.verify._result import VerifyResult

REPORT_FORMAT = "a2a-recorder-verify-trials"
REPORT_VERSION = 1


@dataclass
class ExchangeRate:
    """How one recorded exchange fared over the trials."""

    number: int
    operation: str
    passed: int = 0
    runs: int = 0  # trials that compared it (a collapsed poll may be in fewer)
    failures: list[str] = field(default_factory=list)  # "run 2: path: old → new"

    @property
    def rate(self) -> float:
        return self.passed / self.runs if self.runs else 0.0


@dataclass(frozen=True)
class Trials:
    capture: str
    agent: str
    runs: tuple[VerifyResult, ...]
    min_pass: int

    @property
    def passed(self) -> int:
        return sum(1 for r in self.runs if not r.drift)

    @property
    def ok(self) -> bool:
        return self.passed >= self.min_pass

    @property
    def status(self) -> int:
        return Exit.OK if self.ok else Exit.FOUND

    def summary(self) -> str:
        verdict = "pass" if self.ok else "fail"
        return (
            f"{verdict}: {self.passed} of {len(self.runs)} runs without drift "
            f"(at least {self.min_pass} needed)"
        )

    def rates(self) -> list[ExchangeRate]:
        """Per recorded exchange, in recorded order."""
        found: dict[int, ExchangeRate] = {}
        for k, run in enumerate(self.runs, 1):
            slow = {x.a for x in run.slow}
            for pair in run.diff.exchanges:
                if pair.a is not None:
                    rate = found.setdefault(pair.a, ExchangeRate(pair.a, pair.operation))
                    _count(rate, k, pair, pair.a in slow)
            for item in run.not_sent:
                rate = found.setdefault(item.number, ExchangeRate(item.number, item.operation))
                rate.runs += 1
                rate.failures.append(f"run {k}: not sent: {item.reason}")
        return [found[n] for n in sorted(found)]

    def inserted(self) -> list[str]:
        """Exchanges only a live run had, as `run 3: B#7 GetTask`."""
        return [
            f"run {k}: B#{pair.b} {pair.operation}"
            for k, run in enumerate(self.runs, 1)
            for pair in run.diff.exchanges
            if pair.kind is PairKind.INSERTED
        ]


def _count(rate: ExchangeRate, k: int, pair: ExchangeDiff, slow: bool) -> None:
    rate.runs += 1
    if pair.kind is PairKind.SAME and not slow:
        rate.passed += 1
        return
    if pair.kind is PairKind.REMOVED:
        rate.failures.append(f"run {k}: missing from the live run")
    rate.failures += [f"run {k}: {r.text}" for r in pair.renames]
    rate.failures += [f"run {k}: {describe(d)}" for d in pair.differences if d.counts]
    if slow:
        rate.failures.append(f"run {k}: slower than allowed")


def _rate_line(rate: ExchangeRate) -> str:
    return f"A#{rate.number} {rate.operation}: {rate.passed}/{rate.runs} passed"


def trials_text(trials: Trials, *, color: bool = False) -> str:
    out = [f"Verify {trials.capture} against {trials.agent}: {len(trials.runs)} runs"]
    for rate in trials.rates():
        out.append(f"  {_rate_line(rate)}")
        out += [f"      {line}" for line in rate.failures]
    out += [f"  inserted: {line}" for line in trials.inserted()]
    out.append("Runs:")
    out += [f"  run {k}: {run.summary()}" for k, run in enumerate(trials.runs, 1)]
    out.append(f"Trials: {trials.summary()}")
    return "\n".join(out) + "\n"


def trials_markdown(trials: Trials, *, color: bool = False) -> str:
    out = [
        f"## Verify `{trials.capture}` against `{trials.agent}`: {len(trials.runs)} runs",
        "",
        "| exchange | operation | passed | rate | what changed |",
        "|---|---|---|---|---|",
    ]
    for rate in trials.rates():
        what = "<br>".join(md_text(f) for f in rate.failures)
        out.append(
            f"| A#{rate.number} | {md_text(rate.operation)} | {rate.passed}/{rate.runs} | "
            f"{rate.rate:.0%} | {what} |"
        )
    out += ["", *(f"- inserted: {md_text(line)}" for line in trials.inserted())]
    out += [f"- run {k}: {md_text(r.summary())}" for k, r in enumerate(trials.runs, 1)]
    return "\n".join([*out, "", f"**Trials:** {md_text(trials.summary())}", ""])


def trials_report(trials: Trials) -> dict[str, Any]:
    """The JSON-ready report."""
    return {
        **report_head(REPORT_FORMAT, REPORT_VERSION, trials.capture, trials.agent),
        "trials": len(trials.runs),
        "min_pass": trials.min_pass,
        "passed": trials.passed,
        "pass": trials.ok,
        "status": trials.status,
        "summary": trials.summary(),
        "exchanges": [
            {
                "number": r.number,
                "operation": r.operation,
                "passed": r.passed,
                "runs": r.runs,
                "rate": r.rate,
                "failures": r.failures,
            }
            for r in trials.rates()
        ],
        "inserted": trials.inserted(),
        "runs": [report(run) for run in trials.runs],
    }


def trials_json(trials: Trials, *, color: bool = False) -> str:
    return json_text(trials_report(trials))


def trials_junit(trials: Trials, *, color: bool = False) -> str:
    """One case, the capture: when fewer than P trials passed, a failure per drifted run."""
    failures = () if trials.ok else tuple(
        Failure(f"run {k}: {run.summary()}", "drift", render_text(run))
        for k, run in enumerate(trials.runs, 1)
        if run.drift
    )  # fmt: skip
    case = Case(trials.capture, CLASSNAME, failures, output=trials_text(trials))
    properties = (("agent", trials.agent), ("trials", str(len(trials.runs))),
                  ("min-pass", str(trials.min_pass)))  # fmt: skip
    return render_junit([Suite("verify", (case,), properties)], "a2a-recorder verify")


TRIALS_FORMATS: Mapping[str, Callable[..., str]] = {
    "text": trials_text, "markdown": trials_markdown, "json": trials_json, "junit": trials_junit,
}  # fmt: skip
