"""Every test module's file name is unique across tests/: pytest imports them by basename (the
default import mode, no __init__.py), so a second test_x.py under another folder stops the whole
run at collection, and only where both folders are collected at once (scripts/test, CI)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_module_basenames_are_unique() -> None:
    seen: defaultdict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        seen[path.name].append(str(path.relative_to(TESTS)))
    clashes = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not clashes, f"test modules that share a name: {clashes}"
