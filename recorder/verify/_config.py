"""A project's standing verify settings: `verify.toml`, or `[tool.a2a-recorder.verify]`.

Found from a directory upward (the current one for the command, the test file's for the
pytest plugin): the first directory holding a `verify.toml`, or a `pyproject.toml` with a
`[tool.a2a-recorder.verify]` table, wins.  The format (the same keys in both places)::

    ignore = ["header:etag", "body.result.metadata"]   # the diff's --ignore patterns
    timeout = 20                                       # seconds per exchange and wait
    max-slowdown = 3.0                                 # fail beyond 3x the recorded time

    [captures."grpc/*.http"]                           # more for the captures matching a
    ignore = ["trailer:grpc-message"]                  # glob, relative to this file

What the command line says comes on top: `--ignore` adds patterns, `--timeout` and
`--max-slowdown` replace the file's.  An unknown key, a pattern the diff does not know, or a
value of the wrong type is a `ConfigError` naming the file.
"""

from __future__ import annotations

import fnmatch
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recorder.diff import parse_ignores

CONFIG_NAME = "verify.toml"
PYPROJECT = "pyproject.toml"
KEYS = ("ignore", "timeout", "max-slowdown", "captures")


class ConfigError(ValueError):
    """A verify.toml or pyproject section that cannot be used (the message names the file)."""


@dataclass(frozen=True)
class VerifyConfig:
    path: Path | None = None  # None: no file was found
    ignore: tuple[str, ...] = ()
    timeout: float | None = None
    max_slowdown: float | None = None
    captures: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (glob, more ignores)

    def ignores_for(self, capture: Path) -> tuple[str, ...]:
        """The file's ignores for one capture: the standing ones, then its globs'."""
        found = list(self.ignore)
        if self.path is not None:
            name = _relative(capture, self.path.parent)
            for glob, more in self.captures:
                if fnmatch.fnmatch(name, glob):
                    found += more
        return tuple(found)


def _relative(capture: Path, root: Path) -> str:
    try:
        return capture.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return capture.as_posix()


def find_config(start: Path) -> VerifyConfig:
    """The first verify settings from `start` upward; an empty `VerifyConfig` when none."""
    for folder in (start.resolve(), *start.resolve().parents):
        own = folder / CONFIG_NAME
        if own.is_file():
            return parse_config(_load(own), own)
        pyproject = folder / PYPROJECT
        if pyproject.is_file():
            table = _load(pyproject).get("tool", {}).get("a2a-recorder", {}).get("verify")
            if table is not None:
                return parse_config(table, pyproject)
    return VerifyConfig()


def load_config(path: Path) -> VerifyConfig:
    """The settings of one named file: a verify.toml, or a pyproject.toml's section."""
    table = _load(path)
    if path.name == PYPROJECT:
        table = table.get("tool", {}).get("a2a-recorder", {}).get("verify", {})
    return parse_config(table, path)


def _load(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def parse_config(table: Mapping[str, Any], path: Path | None = None) -> VerifyConfig:
    where = str(path) if path is not None else "verify settings"
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: the verify settings must be a table")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; expected {', '.join(KEYS)}")
    captures = table.get("captures", {})
    if not isinstance(captures, Mapping):
        raise ConfigError(f"{where}: captures must be a table of globs")
    return VerifyConfig(
        path,
        _ignores(table.get("ignore", []), where, "ignore"),
        _number(table.get("timeout"), where, "timeout"),
        _number(table.get("max-slowdown"), where, "max-slowdown"),
        tuple(
            (
                glob,
                _ignores(
                    _glob_table(more, where, glob).get("ignore", []),
                    where,
                    f"captures.{glob!r}.ignore",
                ),
            )
            for glob, more in captures.items()
        ),
    )


def _glob_table(value: Any, where: str, glob: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping) or set(value) - {"ignore"}:
        raise ConfigError(f"{where}: captures.{glob!r} takes only ignore = [...]")
    return value


def _ignores(value: Any, where: str, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: {key} must be a list of strings")
    try:
        parse_ignores(value)
    except ValueError as exc:
        raise ConfigError(f"{where}: {key}: {exc}") from exc
    return tuple(value)


def _number(value: Any, where: str, key: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"{where}: {key} must be a positive number")
    return float(value)
