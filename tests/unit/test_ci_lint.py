"""CI gates for `lint`: a baseline of accepted findings, and JUnit XML output.

The baseline's life, as the issue tells it: a capture gets a finding (exit 1), the finding is
accepted into the baseline (exit 0), the capture is fixed (exit 1: the entry is stale) until
`--update-baseline` drops it (exit 0).  JUnit reports validate against `tests/data/junit.xsd`,
our own schema of the Ant/Jenkins format CI systems read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _lintkit import assemble, card, card_fetch, good_session
from click.testing import CliRunner
from lxml import etree

from recorder.capture import Capture, write_capture
from recorder.ci import BASELINE_FORMAT, Case, Failure, Suite, check, render_junit, updated
from recorder.cli import main

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = etree.XMLSchema(etree.parse(str(ROOT / "tests" / "data" / "junit.xsd")))
PY_REST_ERRORS = ROOT / "captures" / "a2a-python-1.3.0" / "http-json" / "11-errors.http"


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["lint", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def junit(text: str) -> etree._Element:
    """The parsed report, after checking it against the schema (the error says where)."""
    document = etree.fromstring(text.encode("utf-8"))
    SCHEMA.assertValid(document)
    return document


def _nameless() -> Capture:
    session = good_session()
    broken = card()
    broken.pop("name")  # a MUST finding: fields.required
    session[0] = card_fetch(broken)
    return assemble(session)


def test_a_baseline_fails_new_findings_and_stale_entries(tmp_path: Path) -> None:
    capture, base = tmp_path / "session.http", tmp_path / "lint-baseline.json"
    write_capture(capture, assemble(good_session()))
    code, out, _ = run(capture, "--baseline", base)
    assert code == 0 and "written with 0 entries" in out
    write_capture(capture, _nameless())  # a finding appears
    code, out, _ = run(capture, "--baseline", base)
    assert code == 1 and "MUST fields.required" in out
    code, out, _ = run(capture, "--baseline", base, "--update-baseline")  # accepted
    assert code == 0 and "written with 1 entries" in out
    (entry,) = json.loads(base.read_text(encoding="utf-8"))["entries"]
    assert (entry["rule"], entry["exchange"], entry["reason"]) == ("fields.required", 1, "")
    code, out, _ = run(capture, "--baseline", base)
    assert code == 0 and "fields.required" not in out.split("baseline")[0]
    assert f"baseline {base}: 1 accepted" in out
    write_capture(capture, assemble(good_session()))  # fixed: the entry is stale
    code, out, _ = run(capture, "--baseline", base)
    assert code == 1
    assert "stale baseline entry (no longer found): " in out and "rule=fields.required" in out
    assert run(capture, "--baseline", base, "--update-baseline")[0] == 0
    assert json.loads(base.read_text(encoding="utf-8"))["entries"] == []
    assert run(capture, "--baseline", base)[0] == 0


def test_reasons_survive_an_update(tmp_path: Path) -> None:
    capture, base = tmp_path / "session.http", tmp_path / "base.json"
    write_capture(capture, _nameless())
    run(capture, "--baseline", base)
    document = json.loads(base.read_text(encoding="utf-8"))
    document["entries"][0]["reason"] = "the agent is a test double"
    base.write_text(json.dumps(document), encoding="utf-8")
    assert run(capture, "--baseline", base, "--update-baseline")[0] == 0
    (entry,) = json.loads(base.read_text(encoding="utf-8"))["entries"]
    assert entry["reason"] == "the agent is a test double"


def test_only_findings_that_fail_the_run_enter_the_baseline(tmp_path: Path) -> None:
    base = tmp_path / "base.json"
    assert run(PY_REST_ERRORS, "--baseline", base)[0] == 0  # SHOULD findings only
    assert json.loads(base.read_text(encoding="utf-8"))["entries"] == []
    code, out, _ = run(PY_REST_ERRORS, "--baseline", base, "--fail-on", "SHOULD")
    assert code == 1 and "SHOULD content-type.response" in out


@pytest.mark.parametrize(
    "content, message",
    [
        ("not json", "not JSON"),
        ('{"format": "other"}', "not an a2a-recorder baseline"),
        (f'{{"format": "{BASELINE_FORMAT}", "version": 1, "tool": "verify", "entries": []}}',
         "a baseline of 'verify', not of 'lint'"),
        (f'{{"format": "{BASELINE_FORMAT}", "version": 1, "tool": "lint", "entries": 3}}',
         "'entries' must be a list"),
    ],
)  # fmt: skip
def test_a_baseline_that_cannot_be_used_exits_2(tmp_path: Path, content: str, message: str) -> None:
    base = tmp_path / "base.json"
    base.write_text(content, encoding="utf-8")
    code, out, err = run(PY_REST_ERRORS, "--baseline", base)
    assert code == 2 and out == ""
    assert err.startswith(f"error: {base}: ") and message in err


def test_update_baseline_needs_a_file() -> None:
    code, _, err = run(PY_REST_ERRORS, "--update-baseline")
    assert code == 2 and "--update-baseline needs --baseline FILE" in err


def test_matching_is_by_identity_fields_and_counts_duplicates() -> None:
    a = {"file": "x.http", "exchange": 3, "rule": "r", "where": "", "message": "one"}
    b = {**a, "message": "worded differently"}  # not an identifying field
    result = check([a], [b, b], "lint")
    assert (result.accepted, result.new, result.stale) == ((0,), (1,), ())
    result = check([a, {**a, "exchange": 4}], [b], "lint")
    assert result.stale == ({**a, "exchange": 4},) and not result.clean
    assert [e["reason"] for e in updated([{**a, "reason": "why"}], [b, b], "lint")] == ["why", ""]


def test_junit_has_a_case_per_capture_and_a_failure_per_finding(tmp_path: Path) -> None:
    capture = tmp_path / "nameless.http"
    write_capture(capture, _nameless())
    code, out, _ = run(capture, PY_REST_ERRORS, "--format", "junit", "--fail-on", "SHOULD")
    assert code == 1
    document = junit(out)
    cases = document.findall("testsuite/testcase")
    assert [c.get("name") for c in cases] == [str(capture), str(PY_REST_ERRORS)]
    failures = [[f.get("type") for f in c.findall("failure")] for c in cases]
    assert failures[0] == ["fields.required"]
    _, listed, _ = run(PY_REST_ERRORS, "--format", "json", "--fail-on", "SHOULD")
    assert failures[1] == [f["rule"] for f in json.loads(listed)["findings"]]
    assert len(failures[1]) == 5
    assert document.get("failures") == "6" and document.get("tests") == "2"


def test_junit_lists_findings_below_fail_on_as_output_not_failures() -> None:
    code, out, _ = run(PY_REST_ERRORS, "--format", "junit")
    assert code == 0
    (case,) = junit(out).findall("testsuite/testcase")
    assert case.findall("failure") == []
    assert "SHOULD content-type.response" in case.findtext("system-out", "")


def test_junit_of_stale_entries_validates(tmp_path: Path) -> None:
    capture, base = tmp_path / "s.http", tmp_path / "base.json"
    write_capture(capture, _nameless())
    run(capture, "--baseline", base)
    write_capture(capture, assemble(good_session()))
    code, out, _ = run(capture, "--baseline", base, "--format", "junit")
    assert code == 1
    stale = junit(out).find("testsuite/testcase[@classname='a2a-recorder.lint.baseline']")
    assert stale is not None and stale.find("failure").get("type") == "stale"


def test_junit_writes_what_xml_cannot_hold_as_escapes() -> None:
    odd = "ansi \x1b[31m, nul \x00, a byte that was not UTF-8 \udcff, fine: é ✓"
    case = Case(odd, "c", (Failure(odd, "t", odd),), output=odd)
    document = junit(render_junit([Suite("s", (case,))], odd))
    shown = "ansi \\x1b[31m, nul \\x00, a byte that was not UTF-8 \\udcff, fine: é ✓"
    assert document.get("name") == shown
    failure = document.find("testsuite/testcase/failure")
    assert failure.get("message") == shown and failure.text == shown
    assert document.findtext("testsuite/testcase/system-out") == shown
