"""The one shell of baselines: read the file, check against it, (re)write it.

`--baseline FILE` writes the file when it does not exist (every current finding accepted,
with an empty reason to fill in), else checks against it; `--update-baseline` rewrites it,
keeping the reasons that still apply.  It is written whole and atomically (`replace_file`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from recorder._errors import BaselineError
from recorder._files import replace_file
from recorder.ci._baseline import (
    BaselineCheck,
    BaselineOutcome,
    Entry,
    check,
    describe,
    parse_baseline,
    render_baseline,
    updated,
)


def gate(
    path: Path, current: Sequence[Entry], tool: str, *, update: bool = False
) -> tuple[BaselineCheck, BaselineOutcome]:
    """Check `current` findings against the baseline at `path`, written if missing or asked."""
    if update or not path.exists():
        entries = updated(read_baseline(path, tool) if path.exists() else [], current, tool)
        write_baseline(path, render_baseline(entries, tool))
        everything = BaselineCheck(tuple(range(len(current))), (), ())
        return everything, BaselineOutcome(str(path), len(current), written=len(entries))
    result = check(read_baseline(path, tool), current, tool)
    stale = tuple(describe(e, tool) for e in result.stale)
    return result, BaselineOutcome(str(path), len(result.accepted), stale)


def read_baseline(path: Path, tool: str) -> list[Entry]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from exc
    return parse_baseline(text, str(path), tool)


def write_baseline(path: Path, text: str) -> None:
    try:
        replace_file(path, text.encode("utf-8"))
    except OSError as exc:
        raise BaselineError(f"{path}: {exc.strerror or exc}") from exc
