"""The capture fuzzer in CI: a few thousand seeded mutants of every capture in the repo.

`scripts/fuzz-captures N [--seed S]` runs more.  See tests/capture_fuzz.py for the contract.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from capture_fuzz import check, corpus, mutants

COUNT = int(os.environ.get("A2A_FUZZ_MUTANTS", "2000"))
SEED = int(os.environ.get("A2A_FUZZ_SEED", "20261201"))


def test_the_corpus_is_there() -> None:
    assert len(corpus()) > 100


def test_every_mutant_parses_or_names_file_and_line_and_readers_survive() -> None:
    failures = []
    for index, mutant in enumerate(mutants(COUNT, SEED)):
        problem = check(mutant)
        if problem is not None:
            failures.append(f"mutant {index} of {mutant.source.name} {mutant.steps}: {problem}")
    assert not failures, f"{len(failures)} of {COUNT} mutants broke the contract:\n" + "\n".join(
        failures[:5]
    )
