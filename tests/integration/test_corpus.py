"""The checked-in capture corpus (captures/): it parses, it is classified, and it diffs clean.

The static checks run everywhere.  The regeneration check re-records one SDK's JSON-RPC corpus
with scripts/record-corpus into a temporary folder and diffs it against the checked-in one; it
needs the peer environments under .peers/ and is skipped, with the reason, when they are absent.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from recorder.capture import Capture, read_capture
from recorder.diff import diff_captures, run_diff

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "captures"
RECORD_CORPUS = ROOT / "scripts" / "record-corpus"
PEERS = ROOT / ".peers"
REGEN_SDK = "a2a-python-1.3.0"  # run.py key; its folder is captures/a2a-python-1.3.0
REGEN_FOLDER = "a2a-python-1.3.0"
REGEN_TIMEOUT = 600

FILES = sorted(CAPTURES.rglob("*.http"))
LATEST = sorted(p for p in FILES if p.parts[len(CAPTURES.parts)].endswith("-1.3.0"))
FOLDERS = (
    "a2a-python-1.3.0",
    "a2a-python-1.2.3",
    "a2a-python-0.3.26",
    "a2a-js-1.3.0",
    "a2a-go-2.4.0",
    "a2a-java-1.0.0.Alpha3",
)
# The scenarios every SDK records over JSON-RPC (0.3.x skips 09-list-tasks and 12-tenant).
CORE = (
    "01-agent-card",
    "03-blocking-task",
    "04-polling",
    "05-streaming",
    "06-subscribe",
    "07-cancel",
    "08-push-configs",
    "10-extended-card",
    "11-errors",
    "16-rest-binding",
)


def _rel(path: Path) -> str:
    return path.relative_to(CAPTURES).as_posix()


def test_corpus_has_every_sdk_and_core_scenario() -> None:
    names = {_rel(p) for p in FILES}
    missing = [
        f"{folder}/{s}.http"
        for folder in FOLDERS
        for s in CORE
        if f"{folder}/{s}.http" not in names
    ]
    assert not missing, missing
    assert (CAPTURES / "README.md").is_file()


@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_capture_parses_and_is_classified(path: Path) -> None:
    capture: Capture = read_capture(path)
    assert capture.exchanges, f"{_rel(path)} has no exchanges"
    unclassified = [
        (x.number, x.request.method, x.request.target, x.classification.reason)
        for x in capture.exchanges
        if x.classification.operation is None
    ]
    assert not unclassified, unclassified
    assert [x.number for x in capture.exchanges] == list(range(1, len(capture.exchanges) + 1))


@pytest.mark.parametrize("path", LATEST, ids=_rel)
def test_capture_diffs_clean_against_itself(path: Path) -> None:
    capture = read_capture(path)
    result = diff_captures(capture, capture)
    assert result.same, result


def test_regenerated_jsonrpc_corpus_diffs_clean(tmp_path: Path) -> None:
    if not (PEERS / "py-1.3.0" / ".installed.json").is_file():
        pytest.skip(
            f"{PEERS} is not built (run scripts/peers/envs.py); the checked-in corpus "
            "cannot be re-recorded here"
        )
    out = tmp_path / "captures"
    proc = subprocess.run(
        [
            sys.executable,
            str(RECORD_CORPUS),
            "--no-build",
            "--sdk",
            REGEN_SDK,
            "--binding",
            "JSONRPC",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=REGEN_TIMEOUT,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    fresh, kept = out / REGEN_FOLDER, CAPTURES / REGEN_FOLDER
    # Only the JSON-RPC files were regenerated (16-rest-binding is HTTP+JSON): pair those.
    keep_dir = tmp_path / "kept"
    keep_dir.mkdir()
    for path in sorted(kept.glob("*.http")):
        if path.stem != "16-rest-binding":
            (keep_dir / path.name).write_bytes(path.read_bytes())
    # 04-polling: how many polls the client makes depends on timing alone (README); the
    # command collapses runs of identical polls by default.
    run = run_diff(keep_dir, fresh)
    assert not run.errors, run.errors
    assert not run.unpaired, run.unpaired
    differing = [d for d in run.diffs if not d.same]
    assert run.status == 0, [str(d) for d in differing]
