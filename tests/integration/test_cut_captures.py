"""A real capture cut short in its last exchange (issue 29): every reader recovers the complete
exchanges before the cut and says where it was cut; where the user asked for all of it, the
exit status says it is not all there; `migrate --salvage` writes the recovered capture.

The capture is a real recording (the demo agent's session, `tests/data/sessions`), cut in the
middle of its last exchange as a copy interrupted or a disk that filled would leave it; the
commands are the real ones (`python -m recorder ...`), and the replay is served on a real socket.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from recorder.capture import parse_bytes, read_capture

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "tests" / "data" / "sessions" / "demo-session-jsonrpc.http"
WHOLE = SESSION.read_bytes()
LAST = WHOLE.rindex(b"\n###") + 1  # where the last exchange starts
COUNT = len(parse_bytes(WHOLE).exchanges)
CUT_LINE = WHOLE.count(b"\n", 0, LAST) + 1


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recorder", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


@pytest.fixture(params=[9, 0.5, 1.0], ids=["in-its-line", "in-its-middle", "its-last-byte"])
def cut(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The session cut inside its last exchange: 9 bytes into it, half-way, or one byte
    short of the end."""
    at = request.param
    end = LAST + at if isinstance(at, int) else LAST + int((len(WHOLE) - LAST) * at) - 1
    path = tmp_path / "cut.http"
    path.write_bytes(WHOLE[:end])
    return path


def said_cut(stderr: str, path: Path) -> bool:
    return f"warning: {path}:{CUT_LINE}: the capture is cut short in its last exchange" in stderr


def test_show_lists_the_exchanges_before_the_cut_and_fails(cut: Path) -> None:
    table = run("show", str(cut))
    assert table.returncode == 1 and said_cut(table.stderr, cut), table.stderr
    numbers = re.findall(r"^\s*(\d+)\s", table.stdout, re.MULTILINE)
    assert [int(n) for n in numbers] == list(range(1, COUNT))
    lines = run("show", "--json", str(cut))
    assert lines.returncode == 1 and said_cut(lines.stderr, cut)
    shown = [json.loads(line)["number"] for line in lines.stdout.splitlines()]
    assert shown == list(range(1, COUNT))


def test_show_n_shows_a_whole_exchange_and_names_the_cut_one(cut: Path) -> None:
    whole = run("show", str(cut), str(COUNT - 1))
    assert whole.returncode == 0, whole.stderr
    assert whole.stdout == run("show", str(SESSION), str(COUNT - 1)).stdout
    gone = run("show", str(cut), str(COUNT))
    assert gone.returncode == 2 and said_cut(gone.stderr, cut)
    assert f"no exchange {COUNT} (the capture has 1..{COUNT - 1})" in gone.stderr


def test_lint_and_diff_read_up_to_the_cut_and_fail(cut: Path) -> None:
    lint = run("lint", "--format=json", str(cut))
    assert lint.returncode == 1 and said_cut(lint.stderr, cut), lint.stderr
    assert {f["exchange"] for f in json.loads(lint.stdout)["findings"]} <= set(range(1, COUNT))
    diff = run("diff", str(SESSION), str(cut))
    assert diff.returncode == 1 and said_cut(diff.stderr, cut), diff.stderr
    assert f"#{COUNT}" in diff.stdout  # the exchange B lacks
    same = run("diff", str(cut), str(cut))
    assert same.returncode == 1 and same.stderr.count("warning:") == 2


def test_replay_serves_the_exchanges_before_the_cut(cut: Path) -> None:
    command = [sys.executable, "-m", "recorder", "replay", str(cut), "--listen", "127.0.0.1:0"]
    process = subprocess.Popen([*command, "--strict"], stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        assert said_cut(first, cut), first
        started = process.stderr.readline()
        url = re.search(r"at (http://\S+)", started)
        assert url is not None, started
        card = httpx.get(f"{url.group(1)}/.well-known/agent-card.json", timeout=10)
        assert card.status_code == 200 and card.json()["name"] == "a2a-recorder demo agent"
    finally:
        process.send_signal(signal.SIGINT)
        code = process.wait(60)
    assert code == 1  # --strict: what was served is not all the capture held


def test_migrate_salvage_writes_the_recovered_capture_and_keeps_the_rest(cut: Path) -> None:
    before = cut.read_bytes()
    assert run("migrate", str(cut)).returncode == 2  # asked for nothing but the format
    assert cut.read_bytes() == before
    done = run("migrate", "--salvage", str(cut))
    assert done.returncode == 0, done.stderr
    assert f"{COUNT - 1} exchanges kept, the cut-off rest in {cut}.cut" in done.stdout
    repaired = read_capture(cut)
    assert repaired.exchanges == parse_bytes(WHOLE).exchanges[: COUNT - 1]
    rest = Path(f"{cut}.cut").read_bytes()
    assert rest == before[LAST:]  # nothing recorded is lost (the capture is format 1: migrated)
    assert run("show", str(cut)).returncode == 0
