"""Golden diffs: `a2a-recorder diff` on real captures with one thing edited, output fixed.

Files side by side in tests/data/diff/: `CASE.a.http` and `CASE.b.http` (how each was made:
derive.py there), and one or more expected reports `CASE[.OPTION...].diff`.  An OPTION is a
report format (`markdown`, `json`, `html`) or a flag without its dashes (`strict-order`).  Each
expected file is the command's standard output followed by a line `# exit N`.

A2A_UPDATE_GOLDEN=1 rewrites the expected files from the current output (then read the diff).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from recorder.diff import FORMATS, diff_command

DATA = Path(__file__).resolve().parents[1] / "data" / "diff"
GOLDEN = sorted(DATA.glob("*.diff"))
UPDATE = os.environ.get("A2A_UPDATE_GOLDEN") == "1"


def _args(golden: Path) -> list[str]:
    case, *options = golden.name.removesuffix(".diff").split(".")
    args = [f"{case}.a.http", f"{case}.b.http"]
    for option in options:
        args += ["--format", option] if option in FORMATS else [f"--{option}"]
    return args


def test_every_case_has_its_inputs_and_a_golden_file() -> None:
    cases = {p.name.split(".")[0] for p in DATA.glob("*.http")}
    assert cases == {p.name.split(".")[0] for p in GOLDEN}
    assert {
        "stream-inserted-event",
        "stream-removed-event",
        "stream-changed-event",
        "long-text",
        "key-order",
    } <= cases
    for case in cases:
        assert (DATA / f"{case}.a.http").is_file() and (DATA / f"{case}.b.http").is_file()


@pytest.mark.parametrize("golden", [pytest.param(p, id=p.stem) for p in GOLDEN])
def test_golden(golden: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DATA)  # the report names the files as given: relative, stable
    result = CliRunner().invoke(diff_command, _args(golden))
    assert result.exception is None or isinstance(result.exception, SystemExit)
    actual = f"{result.stdout}# exit {result.exit_code}\n"
    if UPDATE:
        golden.write_text(actual, encoding="utf-8")
    assert actual == golden.read_text(encoding="utf-8")
