"""The replay fuzzer in CI (`scripts/fuzz-replay`, issue #33): real processes throughout.

- 20 random programs with a random seed, recorded live and replayed with `replay --strict`:
  every outcome the same, every answer from the capture;
- the fixed programs, the issue's shortest known failure and every failure found since;
- the judge's self-test: programs run live twice show no difference, and every outcome
  altered on purpose is reported.

The seed is in the output and in the failure message; `scripts/fuzz-replay --seed S` runs the
same programs again.  Deselect them all with `-m "not fuzz"`.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "fuzz-replay"
TIMEOUT = 900

pytestmark = pytest.mark.fuzz


def fuzz(*args: str) -> tuple[int, str]:
    """Run the script; its exit status and output (stopped with SIGTERM at the timeout, so
    that it stops its agent, recorder and replayer)."""
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        output, _ = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=60)
        output += f"\n(stopped after {TIMEOUT} s)"
    return process.returncode, output


def test_twenty_random_programs_replay_as_they_ran_live() -> None:
    seed = random.SystemRandom().randrange(10**9)
    print(f"fuzz-replay seed {seed}")
    status, output = fuzz("--seed", str(seed), "--programs", "20")
    assert status == 0, f"seed {seed}: scripts/fuzz-replay --seed {seed}\n{output[-8000:]}"


def test_the_fixed_programs_replay_as_they_ran_live() -> None:
    status, output = fuzz("--regression", "all")
    assert status == 0, output[-8000:]


def test_the_judge_invents_no_difference_and_hides_none() -> None:
    seed = random.SystemRandom().randrange(10**9)
    status, output = fuzz("--self-test", "--seed", str(seed), "--programs", "4")
    assert status == 0, f"seed {seed}: scripts/fuzz-replay --self-test --seed {seed}\n{output}"
    assert "live twice: 0 of 4 program(s) differ" in output
    assert ", 0 not reported" in output
