"""The SDK matrix over the corpus in the repository: the committed table is what the matrix
says today, every difference in it is accepted with a reason, and a changed capture, or an
accepted difference that went away, fails the run and shows on the page."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from recorder.cli import main

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "captures"
# scripts/record-corpus's order: the first is the reference.
FOLDERS = [
    "a2a-python-1.3.0", "a2a-python-1.2.3", "a2a-python-0.3.26", "a2a-js-1.3.0",
    "a2a-go-2.4.0", "a2a-java-1.0.0.Alpha3",
]  # fmt: skip
GO = "a2a-go-2.4.0"


def _matrix(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["matrix", *args])
    return result.exit_code, result.output


def test_the_committed_table_is_the_matrix_of_the_corpus(tmp_path: Path) -> None:
    table = tmp_path / "matrix.md"
    folders = [str(CAPTURES / name) for name in FOLDERS]
    accepted = CAPTURES / "matrix-accepted.json"
    before = accepted.read_bytes()
    code, out = _matrix(*folders, "--baseline", str(accepted), "--markdown", str(table))
    assert code == 0, out
    assert "new:" not in out and "stale:" not in out and "no reason:" not in out
    assert accepted.read_bytes() == before  # checked, not rewritten
    assert table.read_text() == (CAPTURES / "matrix.md").read_text(), (
        "captures/matrix.md is stale: scripts/record-corpus regenerates it"
    )
    entries = json.loads(before)["entries"]
    assert entries and all(e["reason"].strip() for e in entries)


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    """The reference and a2a-go copied, with a2a-go's accepted entries beside them."""
    for name in (FOLDERS[0], GO):
        shutil.copytree(CAPTURES / name, tmp_path / name)
    known = json.loads((CAPTURES / "matrix-accepted.json").read_text())
    known["entries"] = [e for e in known["entries"] if e["sdk"] == GO]
    accepted = tmp_path / "accepted.json"
    accepted.write_text(json.dumps(known))
    return tmp_path, accepted


def _edit(path: Path, number: int, old: str, new: str, after: str = "") -> None:
    """Replace `old` by `new` once, in exchange `number` of the capture at `path`, after the
    first `after` in it."""
    head, _, rest = path.read_text().partition(f"\n### {number} ")
    start = rest.index(after)
    assert old in rest[start:]
    path.write_text(f"{head}\n### {number} " + rest[:start] + rest[start:].replace(old, new, 1))


def test_a_changed_capture_fails_the_run_and_the_page_says_what(
    corpus: tuple[Path, Path],
) -> None:
    folder, accepted = corpus
    args = [str(folder / FOLDERS[0]), str(folder / GO), "--baseline", str(accepted)]
    page = folder / "matrix.html"
    assert _matrix(*args)[0] == 0
    _edit(folder / GO / "grpc" / "07-cancel.http", 3, "grpc-status: 0", "grpc-status: 13")
    code, out = _matrix(*args, "-o", str(page))
    assert code == 1
    new = [line for line in out.splitlines() if line.startswith("new: ")]
    assert new == [
        f'new: {GO} grpc/07-cancel.http [error shapes and codes] trailer:grpc-status: "0" → "13"'
    ]
    html = page.read_text()
    assert "1 new finding, 0 stale entries, 0 without a reason." in html
    assert "trailer:grpc-status: &#34;0&#34; → &#34;13&#34;</code> (CancelTask) <b>new</b>" in html
    # the finding links to both exchanges, as recorded
    assert 'href="#x-a2a-python-1.3.0-grpc-07-cancel.http-3"' in html
    assert 'id="x-a2a-go-2.4.0-grpc-07-cancel.http-3"' in html


def test_an_accepted_difference_that_went_away_is_stale(corpus: tuple[Path, Path]) -> None:
    folder, accepted = corpus
    # a2a-go's delete answers with an empty body where a2a-python sends {} (JSON-RPC: null)
    capture = folder / GO / "08-push-configs.http"
    reference = (folder / FOLDERS[0] / "08-push-configs.http").read_text()
    assert '"result": null' in reference.partition("\n### 6 ")[2].partition("\n### 7 ")[0]
    known = json.loads(accepted.read_text())
    gone = [e for e in known["entries"] if e["finding"] == "body: removed null"]
    assert len(gone) == 1
    _edit(capture, 6, '"jsonrpc": "2.0"', '"jsonrpc": "2.0",\n  "result": null', "HTTP/1.1 200")
    code, out = _matrix(str(folder / FOLDERS[0]), str(folder / GO), "--baseline", str(accepted))
    assert code == 1
    assert [line for line in out.splitlines() if line.startswith(("new:", "stale:"))] == [
        f"stale: sdk={GO} kind=field presence and spelling finding=body: removed null"
    ]


def test_an_entry_without_a_reason_fails(corpus: tuple[Path, Path]) -> None:
    folder, accepted = corpus
    known = json.loads(accepted.read_text())
    known["entries"][0]["reason"] = " "
    accepted.write_text(json.dumps(known))
    code, out = _matrix(str(folder / FOLDERS[0]), str(folder / GO), "--baseline", str(accepted))
    assert code == 1
    assert f"no reason: sdk={GO} kind={known['entries'][0]['kind']}" in out
