"""The random seeds every test run uses, said, so that a failure runs again as it ran.

Property tests run with random seeds (never `derandomize`) and no deadline: each run draws
one Hypothesis seed (unless `--hypothesis-seed` gives it) and uses it for every test, and
`scripts/test` draws the hash seed (`PYTHONHASHSEED`, which Python reads only at start-up).
Both are in the run's header, and a failed test's report says how to run it again with them.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from typing import Any

import pytest

_SEED = pytest.StashKey[object]()


def pytest_configure(config: pytest.Config) -> None:
    try:
        from hypothesis import core, settings
    except ImportError:  # an environment without hypothesis runs no property test
        return
    # No wall-clock limit per example (Hypothesis' default is 200 ms): the machines that run
    # the tests are shared and noisy, and speed is for the benchmarks to measure.
    settings.register_profile("a2a-recorder", deadline=None)
    settings.load_profile("a2a-recorder")
    seed = config.getoption("hypothesis_seed", None)
    if seed is None:
        seed = random.SystemRandom().getrandbits(32)
        core.global_force_seed = seed  # what `--hypothesis-seed` sets
    config.stash[_SEED] = seed


def _seeds(config: pytest.Config) -> str:
    hashing = os.environ.get("PYTHONHASHSEED") or "random (set PYTHONHASHSEED to fix it)"
    found = f"PYTHONHASHSEED={hashing}"
    if _SEED in config.stash:
        found += f" --hypothesis-seed={config.stash[_SEED]}"
    return found


def pytest_report_header(config: pytest.Config) -> str:
    return f"random seeds: {_seeds(config)}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[Any]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if report.failed and item.get_closest_marker("hypothesis") is not None:
        hashing = os.environ.get("PYTHONHASHSEED", "<unknown>")
        seed = item.config.stash.get(_SEED, None)
        again = f"PYTHONHASHSEED={hashing} pytest --hypothesis-seed={seed} '{item.nodeid}'"
        report.sections.append(("random seeds", f"run it again as it ran: {again}"))
