"""A project's standing verify settings: `verify.toml`, or `[tool.a2a-recorder.verify]`.

Found from a directory upward: the first holding a `verify.toml`, or a `pyproject.toml` with
that table, wins; its keys are in docs/guides/verify.md, with `[learnt."capture"]` tables
written by `verify --learn` (`_learnt`).  `--ignore` and `--compare` add to the file's,
`--timeout` and `--max-slowdown` replace them.  An unknown key, a bad pattern or a value of the
wrong type is a `ConfigError` naming the file.
"""

from __future__ import annotations

import fnmatch
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recorder._errors import ConfigError
from recorder.diff import parse_compare, parse_ignores

CONFIG_NAME = "verify.toml"
PYPROJECT = "pyproject.toml"
KEYS = ("ignore", "compare", "timeout", "max-slowdown", "captures", "learnt")
GLOB_KEYS = ("ignore", "compare")


@dataclass(frozen=True)
class VerifyConfig:
    path: Path | None = None  # None: no file was found
    ignore: tuple[str, ...] = ()
    timeout: float | None = None
    max_slowdown: float | None = None
    captures: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (glob, more ignores)
    compare: tuple[str, ...] = ()
    capture_compares: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (glob, more compares)
    learnt: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (capture path, learnt ignores)

    def ignores_for(self, capture: Path, *, learnt: bool = True) -> tuple[str, ...]:
        """The file's ignores for one capture: the standing ones, its globs', what it learnt."""
        found = list(self.ignore) + self._matching(capture, self.captures)
        if learnt and self.path is not None:
            key = self.key_of(capture)
            found += [p for name, more in self.learnt if name == key for p in more]
        return tuple(found)

    def compares_for(self, capture: Path) -> tuple[str, ...]:
        return tuple(self.compare) + tuple(self._matching(capture, self.capture_compares))

    def key_of(self, capture: Path) -> str:
        """How this file names `capture`: its path relative to the file's folder."""
        return _relative(capture, self.path.parent) if self.path is not None else capture.as_posix()

    def _matching(self, capture: Path, table: tuple[tuple[str, tuple[str, ...]], ...]) -> list[str]:
        if self.path is None:
            return []
        name = self.key_of(capture)
        return [p for glob, more in table if fnmatch.fnmatch(name, glob) for p in more]


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
    captures = _tables(table, "captures", where, GLOB_KEYS)
    learnt = _tables(table, "learnt", where, ("ignore",))
    return VerifyConfig(
        path,
        _ignores(table.get("ignore", []), where, "ignore"),
        _number(table.get("timeout"), where, "timeout"),
        _number(table.get("max-slowdown"), where, "max-slowdown"),
        _per(captures, "ignore", where, "captures", _ignores),
        _compares(table.get("compare", []), where, "compare"),
        _per(captures, "compare", where, "captures", _compares),
        _per(learnt, "ignore", where, "learnt", _ignores),
    )


def _tables(
    table: Mapping[str, Any], key: str, where: str, allowed: tuple[str, ...]
) -> Mapping[str, Mapping[str, Any]]:
    found = table.get(key, {})
    if not isinstance(found, Mapping):
        raise ConfigError(f"{where}: {key} must be a table of tables")
    for name, value in found.items():
        if not isinstance(value, Mapping) or set(value) - set(allowed):
            takes = " and ".join(f"{a} = [...]" for a in allowed)
            raise ConfigError(f"{where}: {key}.{name!r} takes only {takes}")
    return found


def _per(
    tables: Mapping[str, Mapping[str, Any]], field: str, where: str, key: str, check: Any
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple(
        (name, check(value.get(field, []), where, f"{key}.{name!r}.{field}"))
        for name, value in tables.items()
        if field in value
    )


def _patterns(parse: Callable[[list[str]], object]) -> Callable[[Any, str, str], tuple[str, ...]]:
    def read(value: Any, where: str, key: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}: {key} must be a list of strings")
        try:
            parse(value)
        except ValueError as exc:
            raise ConfigError(f"{where}: {key}: {exc}") from exc
        return tuple(value)

    return read


_compares, _ignores = _patterns(parse_compare), _patterns(parse_ignores)


def _number(value: Any, where: str, key: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"{where}: {key} must be a positive number")
    return float(value)
