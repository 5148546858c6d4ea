"""Lint reports: text for people, JSON for scripts, SARIF 2.1.0 for code-scanning UIs, JUnit
XML for CI test views.

Every renderer is pure: findings in, a string out.  Text puts each `file:line` first, so
editors link it.  With a baseline, every report ends with what it accepted and its stale
entries.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from recorder import __version__
from recorder.ci import BaselineOutcome, Case, Failure, Suite, render_junit
from recorder.lint._engine import Finding
from recorder.lint._rules import Rule
from recorder.protocol import Severity, SpecVersion

SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SPEC_URL = "https://a2a-protocol.org/latest/specification/"
_LEVELS: Mapping[Severity, str] = {
    Severity.MUST: "error", Severity.SHOULD: "warning", Severity.MAY: "note",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class LintRun:
    """What one `lint` invocation looked at and found."""

    spec: SpecVersion
    rules: tuple[Rule, ...]
    files: tuple[str, ...]
    findings: tuple[Finding, ...]  # those a baseline accepted are left out
    fail_on: Severity = Severity.MUST
    baseline: BaselineOutcome | None = None

    def counts(self) -> dict[str, int]:
        by = Counter(f.severity.value for f in self.findings)
        return {s.value: by.get(s.value, 0) for s in Severity}


def render_text(run: LintRun) -> str:
    """One block per finding, then a summary line."""
    blocks = [_text_block(f) for f in run.findings]
    return "".join(blocks) + _baseline_text(run.baseline) + _summary(run) + "\n"


def _baseline_text(outcome: BaselineOutcome | None) -> str:
    if outcome is None:
        return ""
    lines = [f"stale baseline entry (no longer found): {entry}" for entry in outcome.stale]
    return "".join(f"{line}\n" for line in [*lines, outcome.summary()])


def _text_block(f: Finding) -> str:
    what = " ".join(p for p in (f"#{f.exchange}", f.operation, f.binding) if p)
    part = f", {f.where}" if f.where else ""
    return (
        f"{f.location}: {f.severity.value} {f.rule} [{f.citation}]\n"
        f"  {what}{part}: {f.message}\n"
        f"  expected: {f.expected}\n"
        f"  actual:   {f.actual}\n"
    )


def _summary(run: LintRun) -> str:
    counts = ", ".join(f"{n} {s}" for s, n in run.counts().items() if n)
    with_findings = len({f.file for f in run.findings})
    files = f"{len(run.files)} file{'s' if len(run.files) != 1 else ''}"
    if not run.findings:
        return f"lint (A2A {run.spec.value}): no findings in {files}"
    return (
        f"lint (A2A {run.spec.value}): {len(run.findings)} finding"
        f"{'s' if len(run.findings) != 1 else ''} ({counts}) in {with_findings} of {files}"
    )


def render_json(run: LintRun) -> str:
    document = {
        "spec": run.spec.value,
        "files": list(run.files),
        "counts": run.counts(),
        "findings": [f.as_json() for f in run.findings],
    }
    if run.baseline is not None:
        document["baseline"] = _baseline_json(run.baseline)
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _baseline_json(outcome: BaselineOutcome) -> dict[str, Any]:
    return {
        "file": outcome.path,
        "accepted": outcome.accepted,
        "stale": list(outcome.stale),
        "written": outcome.written,
    }


def render_sarif(run: LintRun) -> str:
    index = {rule.id: i for i, rule in enumerate(run.rules)}
    document = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "a2a-recorder lint",
                "version": __version__,
                "rules": [_sarif_rule(rule, run.spec) for rule in run.rules],
            }},
            "results": [_sarif_result(f, index) for f in run.findings],
            "properties": {"spec": run.spec.value, **(
                {"baseline": _baseline_json(run.baseline)} if run.baseline else {}
            )},
        }],
    }  # fmt: skip
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _sarif_rule(rule: Rule, spec: SpecVersion) -> dict[str, Any]:
    level = rule.level(spec)
    severity = level.severity if level else Severity.MAY
    return {
        "id": rule.id,
        "shortDescription": {"text": rule.summary},
        "helpUri": SPEC_URL,
        "defaultConfiguration": {"level": _LEVELS[severity]},
        "properties": {"severity": severity.value, "citation": rule.citation(spec)},
    }


def _sarif_result(f: Finding, index: Mapping[str, int]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "level": _LEVELS[f.severity],
        "message": {"text": f"{f.message}: expected {f.expected}; actual {f.actual}"},
        "properties": {
            "severity": f.severity.value, "citation": f.citation, "exchange": f.exchange,
            "operation": f.operation, "binding": f.binding, "where": f.where,
            "expected": f.expected, "actual": f.actual,
        },
    }  # fmt: skip
    if f.rule in index:
        result["ruleIndex"] = index[f.rule]
    if f.file is not None:
        physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(f.file)}}
        if f.line:
            physical["region"] = {"startLine": f.line}
        result["locations"] = [{"physicalLocation": physical}]
    return result


def _uri(file: str) -> str:
    """A relative path as a relative URI reference (what code scanning maps to the repo)."""
    path = PurePath(file)
    return Path(path).as_uri() if path.is_absolute() else path.as_posix()


def render_junit_report(run: LintRun) -> str:
    """JUnit XML: a test case per capture file, a failure per finding that fails the run."""
    cases = [_junit_case(run, file) for file in run.files]
    if run.baseline is not None and run.baseline.stale:
        stale = tuple(Failure(f"stale baseline entry: {e}", "stale") for e in run.baseline.stale)
        cases.append(Case(run.baseline.path, "a2a-recorder.lint.baseline", stale))
    suite = Suite(f"lint (A2A {run.spec.value})", tuple(cases), (("spec", run.spec.value),))
    return render_junit([suite], "a2a-recorder lint")


def _junit_case(run: LintRun, file: str) -> Case:
    mine = [f for f in run.findings if f.file == file]
    failing = fails_on(mine, run.fail_on)
    failures = tuple(
        Failure(f"{f.severity.value} {f.rule}: {f.message}", f.rule, _text_block(f))
        for f in failing
    )
    others = "".join(_text_block(f) for f in mine if f not in failing)
    return Case(file, "a2a-recorder.lint", failures, output=others)


FORMATS: Mapping[str, Callable[[LintRun], str]] = {
    "text": render_text, "json": render_json, "sarif": render_sarif, "junit": render_junit_report,
}  # fmt: skip


def render(run: LintRun, fmt: str) -> str:
    """The report in `fmt` (text, json, sarif, junit); ValueError for another name."""
    try:
        return FORMATS[fmt](run)
    except KeyError:
        raise ValueError(f"unknown lint format {fmt!r}; use one of {', '.join(FORMATS)}") from None


def render_rules(rules: Sequence[Rule]) -> str:
    """The rule table as markdown: id, severity and section in each spec version, summary."""
    head = "| rule | v1.0.0 | v1.0.1 | speaks | what the spec asks |\n|---|---|---|---|---|\n"
    rows = [
        f"| `{rule.id}` | {_level(rule, SpecVersion.V1_0_0)} | {_level(rule, SpecVersion.V1_0_1)}"
        f" | {', '.join(sorted(v.value for v in rule.speaks))} | {rule.summary} |"
        for rule in rules
    ]
    return head + "\n".join(rows) + "\n"


def _level(rule: Rule, spec: SpecVersion) -> str:
    level = rule.level(spec)
    if level is None:
        return "-"
    where = f"guide: {level.section}" if rule.source == "guide" else level.section
    return f"{level.severity.value} {where}"


def fails(findings: Sequence[Finding], threshold: Severity) -> bool:
    """Whether any finding is at least as strong as `threshold` (`--fail-on`)."""
    return bool(fails_on(findings, threshold))


def fails_on(findings: Sequence[Finding], threshold: Severity) -> list[Finding]:
    """The findings at least as strong as `threshold`: those that fail a run."""
    return [f for f in findings if f.severity.rank >= threshold.rank]
