"""Smoke tests of the measuring instruments: scripts/bench-record and scripts/profile-record.

They run the scripts as a user does, tiny (a few exchanges per cell, concurrency 1), and check
that they finish with every table filled in; they assert nothing about speed.  py-spy is not
exercised here (it would be installed from PyPI); the cProfile route of profile-record is.
"""

from __future__ import annotations

import pstats
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NUMBER = r"[+-]?\d+(?:\.\d+)?"


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, *command], capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _rows(markdown: str, first: str) -> list[list[str]]:
    """The cells of the Markdown table rows that start with `first`."""
    return [
        [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
        for line in markdown.splitlines()
        if line.startswith(f"| {first} |")
    ]


def test_bench_record_prints_every_figure_for_a_tiny_run() -> None:
    done = _run(
        str(ROOT / "scripts" / "bench-record"),
        "--requests",
        "4",
        "--rounds",
        "2",
        "--concurrency",
        "1",
        "--only",
        "SendMessage",
        "--only",
        "SendStreamingMessage",
        "--markdown",
    )
    out = done.stdout
    cpu = _rows(out, "JSON-RPC SendMessage")
    assert len(cpu) == 2, out  # the CPU table and the latency table
    # A few exchanges may cost less than one clock tick of /proc: figures, not their size.
    agent, plain, flows, recorded = cpu[0][2:6]
    assert re.fullmatch(NUMBER, agent), cpu[0]
    assert all(re.fullmatch(rf"{NUMBER} ±\d+%", c) for c in (plain, flows, recorded)), cpu[0]
    latency = cpu[1]
    assert latency[2] == "4" and all(
        re.fullmatch(rf"{NUMBER} / {NUMBER}", c) for c in latency[3:7]
    ), latency
    sse = _rows(out, "1")
    assert [row[1] for row in sse] == [
        "direct",
        "mitmdump",
        "mitmdump -w",
        "recorder",
        "mitmdump streaming",
    ], out
    assert all(re.fullmatch(NUMBER, c) for row in sse[1:] for c in row[2:]), sse
    assert "capture parses and holds every exchange sent through it" in out


def test_profile_record_with_cprofile_profiles_the_addons(tmp_path: Path) -> None:
    done = _run(
        str(ROOT / "scripts" / "profile-record"),
        "--cprofile",
        "--requests",
        "20",
        "--concurrency",
        "2",
        "--top",
        "5",
        "--out",
        str(tmp_path),
    )
    assert "sorted by cumulative" in done.stdout and "sorted by tottime" in done.stdout
    profiled = pstats.Stats(str(tmp_path / "recorder.pstats")).stats  # type: ignore[attr-defined]
    files = {Path(filename).as_posix() for filename, _, _ in profiled}
    assert any("/recorder/record/" in f for f in files), sorted(files)[:20]
    assert any("/recorder/capture/" in f for f in files), sorted(files)[:20]
