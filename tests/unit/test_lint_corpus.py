"""`lint` over the capture corpus: findings pinned in golden files, per SDK and spec version.

`tests/data/lint/corpus/<sdk>.spec-<spec>.txt` is the text report of `a2a-recorder lint
captures/<sdk> --spec <spec>`, run from the repository root.  Regenerate with
`A2A_UPDATE_GOLDEN=1 pytest tests/unit/test_lint_corpus.py` after re-recording the corpus, and
read the diff: every new finding is a claim about an SDK that someone must check against the
spec.  The README's Lint section summarises these files.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from recorder.lint import RULES, Finding, LintRun, capture_files, lint_file, render_text
from recorder.protocol import SpecVersion

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "data" / "lint" / "corpus"
SDKS = ("a2a-python-1.3.0", "a2a-python-1.2.3", "a2a-python-0.3.26", "a2a-js-1.3.0")
UPDATE = os.environ.get("A2A_UPDATE_GOLDEN") == "1"


def _lint(sdk: str, spec: SpecVersion, monkeypatch: pytest.MonkeyPatch) -> LintRun:
    monkeypatch.chdir(ROOT)  # paths in the report are relative, as a user at the root sees them
    files = capture_files([Path("captures") / sdk])
    findings = [f for path in files for f in lint_file(path, spec=spec)[0]]
    return LintRun(spec, RULES, tuple(map(str, files)), tuple(findings))


@pytest.mark.parametrize("spec", list(SpecVersion), ids=str)
@pytest.mark.parametrize("sdk", SDKS)
def test_corpus_findings_match_the_golden_file(
    sdk: str, spec: SpecVersion, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = render_text(_lint(sdk, spec, monkeypatch))
    golden = GOLDEN / f"{sdk}.spec-{spec.value}.txt"
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(report, encoding="utf-8")
    assert report == golden.read_text(encoding="utf-8")


def _by_rule(findings: tuple[Finding, ...], rule: str) -> list[Finding]:
    return [f for f in findings if f.rule == rule]


@pytest.mark.parametrize("sdk", ["a2a-python-1.3.0", "a2a-python-1.2.3"])
def test_the_reference_sdk_sends_http_json_errors_as_application_json(
    sdk: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _lint(sdk, SpecVersion.V1_0_1, monkeypatch)
    errors = _by_rule(run.findings, "content-type.response")
    assert {(f.operation, f.actual) for f in errors} == {
        ("GetTask", "application/json"),
        ("CancelTask", "application/json"),
    }
    assert all(f.file and f.file.endswith("http-json/11-errors.http") for f in errors)


def test_the_js_sdk_types_its_errors_as_the_spec_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    run = _lint("a2a-js-1.3.0", SpecVersion.V1_0_1, monkeypatch)
    assert _by_rule(run.findings, "content-type.response") == []


@pytest.mark.parametrize("sdk", ["a2a-python-1.3.0", "a2a-python-1.2.3", "a2a-js-1.3.0"])
def test_the_spec_versions_differ_on_task_not_cancelable(
    sdk: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = _by_rule(_lint(sdk, SpecVersion.V1_0_0, monkeypatch).findings, "error.mapping")
    new = _by_rule(_lint(sdk, SpecVersion.V1_0_1, monkeypatch).findings, "error.mapping")
    assert new == []
    (finding,) = old
    assert finding.message == "TaskNotCancelableError sent with HTTP 400"
    assert (finding.expected, finding.actual) == ("HTTP 409", "HTTP 400")


def test_a_v0_3_sdk_is_judged_only_by_rules_of_its_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _lint("a2a-python-0.3.26", SpecVersion.V1_0_1, monkeypatch).findings == ()
