"""What CI reads: JUnit XML reports and baselines of accepted findings.

Pure: `render_junit(suites, name)` from `Suite`/`Case`/`Failure` values (a case per capture, a
failure per finding or difference); `check`/`updated` match findings against a baseline's
entries (`_baseline` has the file format).  The shell: `gate(path, findings, tool,
update=...)` reads, checks and writes a baseline file.  Errors: `BaselineError(ValueError)`.

May import only the root's shared modules: `lint`, `diff` and `verify` build on it.
"""

from recorder._errors import BaselineError
from recorder.ci._baseline import (
    BASELINE_FORMAT,
    KEYS,
    BaselineOutcome,
    Entry,
    check,
    describe,
    render_baseline,
    updated,
)
from recorder.ci._gate import gate, read_baseline, write_baseline
from recorder.ci._junit import Case, Failure, Suite, render_junit

__all__ = [
    "BASELINE_FORMAT",
    "KEYS",
    "BaselineError",
    "BaselineOutcome",
    "Case",
    "Entry",
    "Failure",
    "Suite",
    "check",
    "describe",
    "gate",
    "read_baseline",
    "render_baseline",
    "render_junit",
    "updated",
    "write_baseline",
]
