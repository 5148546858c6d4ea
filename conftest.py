"""pytest at the repository's root: the examples of README.md and docs/ run as tests
(`tests/docs_examples.py`, with Sybil, which the `test` extra installs).  An environment
without Sybil (the install tests run some test files in bare environments) collects none.
"""

import importlib.util

if importlib.util.find_spec("sybil") is not None:
    from tests.docs_examples import pytest_collect_file

    __all__ = ["pytest_collect_file"]
