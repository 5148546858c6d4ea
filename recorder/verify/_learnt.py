"""Writing what `verify --learn` learnt into verify.toml, and leaving the rest of it alone.

One capture's learnt ignores are one table, `[learnt."<capture path>"]`, with comments on when,
against which agent and from which runs.  Learning again replaces that table and nothing else:
the file is edited as text (TOML writers drop comments), and the result must parse back holding
exactly what was learnt, or nothing is written (`ConfigError`).
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from recorder._errors import ConfigError
from recorder._files import replace_file
from recorder.verify._learn import Learning

_HEADER = re.compile(r"^\s*\[")


def table_header(key: str) -> str:
    return f"[learnt.{json.dumps(key)}]"


def learnt_table(key: str, learning: Learning, *, agent: str, when: str) -> str:
    """The `[learnt."key"]` table's text, ending with a newline."""
    lines = [
        table_header(key),
        f"# `a2a-recorder verify --learn {learning.runs}` against {agent}, {when}:",
        "# what differed between those runs; `verify` ignores it for this capture.",
    ]
    if not learning.learnt:
        lines.append("# (nothing differed)")
    lines.append("ignore = [")
    lines += [f"  {json.dumps(x.pattern)},  # {x.comment()}" for x in learning.learnt]
    lines.append("]")
    return "\n".join(lines) + "\n"


def with_learnt(text: str, key: str, table: str) -> str:
    """`text` (a verify.toml) with the learnt table of `key` replaced by `table`, or added."""
    lines = text.splitlines(keepends=True)
    header = table_header(key)
    start = next((i for i, line in enumerate(lines) if line.strip() == header), None)
    if start is None:
        gap = "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
        return text + gap + table
    end = _table_end(lines, start)
    return "".join(lines[:start]) + table + "".join(lines[end:])


def _table_end(lines: list[str], start: int) -> int:
    """Where the learnt table at `start` ends: its closing `]`, else (edited) the next table."""
    following = range(start + 1, len(lines))
    header = next((i for i in following if _HEADER.match(lines[i])), len(lines))
    close = next((i for i in range(start + 1, header) if lines[i].strip() == "]"), None)
    return header if close is None else close + 1


def checked(text: str, key: str, patterns: list[str], where: Path) -> str:
    """`text` if it parses and its learnt table of `key` holds exactly `patterns`."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{where}: the learnt ignores would break the file ({exc}); nothing was written"
        ) from exc
    found = document.get("learnt", {}).get(key, {}).get("ignore")
    if found != patterns:
        raise ConfigError(
            f"{where}: the learnt table of {key!r} would not read back; nothing was written"
        )
    return text


def write_learnt(path: Path, text: str) -> None:
    """Replace `path` with `text` in one rename (a failed write leaves the old file)."""
    try:
        replace_file(path, text.encode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror or exc}") from exc
