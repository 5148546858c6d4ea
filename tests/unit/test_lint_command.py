"""`a2a-recorder lint`: exit codes, --fail-on, --select/--skip, formats, folders, keys, errors.

`tests/data/lint/clean.http` is the clean session of `_lintkit` written by the recorder's own
renderer (regenerate with `A2A_UPDATE_GOLDEN=1`), and `card-key.jwks.json` the public key of
its signed card.  The reference SDK's own captures come from `captures/`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
from _lintkit import JWK, assemble, card_fetch, good_session
from click.testing import CliRunner

from recorder.capture import parse, render
from recorder.cli import main
from recorder.lint import RULES, SARIF_SCHEMA

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
CLEAN = DATA / "lint" / "clean.http"
JWKS = DATA / "lint" / "card-key.jwks.json"
PY_REST_ERRORS = ROOT / "captures" / "a2a-python-1.3.0" / "http-json" / "11-errors.http"
UPDATE = os.environ.get("A2A_UPDATE_GOLDEN") == "1"


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["lint", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def test_the_data_files_are_the_kit_s_clean_session() -> None:
    # Compared as values, not text, so the file reads the same whatever format version
    # the renderer writes today.
    session = assemble(good_session())
    jwks = json.dumps({"keys": [JWK]}, indent=2) + "\n"
    if UPDATE:
        CLEAN.write_text(render(session), encoding="utf-8")
        JWKS.write_text(jwks, encoding="utf-8")
    assert parse(CLEAN.read_text(encoding="utf-8")).exchanges == session.exchanges
    assert JWKS.read_text(encoding="utf-8") == jwks


def test_a_clean_capture_exits_0() -> None:
    code, out, _ = run(CLEAN, "--jwks", JWKS)
    assert code == 0
    assert out == "lint (A2A 1.0.1): no findings in 1 file\n"


def test_the_reference_sdk_s_rest_errors_are_found() -> None:
    code, out, _ = run(PY_REST_ERRORS, "--select", "content-type.response")
    assert code == 0  # SHOULD findings only; --fail-on MUST by default
    assert out.count("content-type.response") == 2
    assert f"{PY_REST_ERRORS}:123: SHOULD content-type.response [A2A 1.0.1" in out
    assert "HTTP+JSON response error body sent as application/json" in out
    assert "  expected: application/a2a+json\n  actual:   application/json\n" in out


def test_fail_on_sets_the_threshold() -> None:
    assert run(PY_REST_ERRORS)[0] == 0
    assert run(PY_REST_ERRORS, "--fail-on", "SHOULD")[0] == 1
    assert run(PY_REST_ERRORS, "--fail-on", "MAY")[0] == 1
    assert run(PY_REST_ERRORS, "--spec", "1.0.0")[0] == 1  # TaskNotCancelable: 409 there


def test_spec_versions_give_different_findings_for_task_not_cancelable() -> None:
    _, new, _ = run(PY_REST_ERRORS, "--select", "error", "--format", "json")
    _, old, _ = run(PY_REST_ERRORS, "--select", "error", "--format", "json", "--spec", "1.0.0")
    assert json.loads(new)["findings"] == []
    (finding,) = json.loads(old)["findings"]
    assert finding["rule"] == "error.mapping" and finding["severity"] == "MUST"
    assert (finding["expected"], finding["actual"]) == ("HTTP 409", "HTTP 400")
    assert finding["citation"] == "A2A 1.0.0 §5.4" and finding["line"] == 234


def test_select_and_skip_take_ids_groups_globs_and_commas() -> None:
    _, out, _ = run(PY_REST_ERRORS, "--select", "content-type,card.*", "--format", "json")
    rules = {f["rule"] for f in json.loads(out)["findings"]}
    assert rules == {"content-type.request", "content-type.response", "card.cache-control"}
    _, out, _ = run(PY_REST_ERRORS, "--skip", "content-type", "--format", "json")
    assert {f["rule"] for f in json.loads(out)["findings"]} == {"card.cache-control"}


def test_an_unknown_rule_is_a_usage_error() -> None:
    code, _, err = run(CLEAN, "--select", "no-such-rule")
    assert code == 2
    assert "no lint rule matches 'no-such-rule'" in err


def test_a_damaged_capture_exits_2_with_file_and_line(tmp_path: Path) -> None:
    lines = CLEAN.read_text(encoding="utf-8").split("\n")
    number = next(i for i, line in enumerate(lines) if line.startswith("### 3 "))
    lines[number] = "### three SendMessage HTTP+JSON 200"
    damaged = tmp_path / "damaged.http"
    damaged.write_text("\n".join(lines), encoding="utf-8")
    code, out, err = run(CLEAN, damaged)
    assert code == 2 and out == ""
    assert err.startswith(f"error: {damaged}:{number + 1}: expected '### <number>")


@pytest.mark.parametrize("content", [b"\xff\xfe not utf-8\n", b""])
def test_unreadable_captures_exit_2(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.http"
    path.write_bytes(content)
    code, _, err = run(path)
    assert code == 2 and err.startswith(f"error: {path}")


def test_missing_paths_and_empty_folders_exit_2(tmp_path: Path) -> None:
    missing = tmp_path / "nothing.http"
    assert run(missing) == (2, "", f"error: {missing}: no such file or folder\n")
    code, _, err = run(tmp_path)
    assert code == 2 and "no .http captures in this folder" in err


def test_a_folder_is_every_capture_under_it(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.http").write_text(CLEAN.read_text(encoding="utf-8"), "utf-8")
    (tmp_path / "two.http").write_text(PY_REST_ERRORS.read_text(encoding="utf-8"), "utf-8")
    _, out, _ = run(tmp_path, "--jwks", JWKS, "--format", "json")
    document = json.loads(out)
    assert document["files"] == [str(tmp_path / "a" / "one.http"), str(tmp_path / "two.http")]
    assert {f["file"] for f in document["findings"]} == {str(tmp_path / "two.http")}


def test_keys_decide_whether_a_signature_is_checked(tmp_path: Path) -> None:
    tampered = [
        card_fetch({**json.loads(_card_body()), "description": "edited"}),
        *good_session()[1:],
    ]
    path = tmp_path / "tampered.http"
    path.write_text(render(assemble(tampered)), encoding="utf-8")
    assert run(path)[0] == 0  # no key: the signature cannot be judged
    code, out, _ = run(path, "--jwks", JWKS)
    assert code == 1
    assert "MUST card.signature-verifies" in out and "it does not verify" in out
    bad = tmp_path / "keys.json"
    bad.write_text('{"keys": []}', encoding="utf-8")
    assert run(path, "--jwks", bad)[0] == 2


def _card_body() -> str:
    exchange = good_session()[0]
    assert exchange.response is not None
    return exchange.response.body.decode()


def test_sarif_validates_against_the_sarif_2_1_0_schema(tmp_path: Path) -> None:
    out_file = tmp_path / "lint.sarif"
    code, out, _ = run(ROOT / "captures" / "a2a-js-1.3.0", "--format", "sarif", "-o", out_file)
    assert code == 1 and out == ""
    document = json.loads(out_file.read_text(encoding="utf-8"))
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(document)
    assert document["$schema"] == SARIF_SCHEMA and document["version"] == "2.1.0"
    (sarif_run,) = document["runs"]
    rules = sarif_run["tool"]["driver"]["rules"]
    results = sarif_run["results"]
    assert results and all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)
    first = results[0]["locations"][0]["physicalLocation"]
    assert first["artifactLocation"]["uri"].endswith(".http") and first["region"]["startLine"] > 0
    assert {r["level"] for r in results} <= {"error", "warning", "note"}


def test_sarif_of_a_clean_run_validates_too() -> None:
    _, out, _ = run(CLEAN, "--jwks", JWKS, "--format", "sarif")
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(json.loads(out))
    assert json.loads(out)["runs"][0]["results"] == []


def test_the_schema_rejects_a_broken_document() -> None:
    # The schema is strict enough to catch a mistake: a result without its message.
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    _, out, _ = run(PY_REST_ERRORS, "--format", "sarif")
    document = json.loads(out)
    del document["runs"][0]["results"][0]["message"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(schema).validate(document)


def test_list_rules_prints_the_table_docs_lint_md_holds() -> None:
    code, out, _ = run("--list-rules")
    assert code == 0 and out.count("\n| `") == len(RULES)
    docs = (ROOT / "docs" / "lint.md").read_text(encoding="utf-8")
    table = docs.split("checks it -->\n", 1)[1].split("<!-- /rules -->", 1)[0]
    if UPDATE:
        (ROOT / "docs" / "lint.md").write_text(docs.replace(table, out), encoding="utf-8")
        table = out
    assert table == out
    _, some, _ = run("--list-rules", "--select", "error.mapping")
    assert some.splitlines()[2].startswith("| `error.mapping` | MUST §5.4 | MUST §5.4 |")


def test_no_capture_is_a_usage_error() -> None:
    code, _, err = run()
    assert code == 2 and "give at least one CAPTURE" in err


def test_an_output_that_cannot_be_written_exits_2(tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "folder" / "report.txt"
    code, out, err = run(CLEAN, "-o", target)
    assert code == 2 and out == "" and err.startswith(f"error: {target}:")
