"""A project's redaction settings for the pytest plugin: `[tool.a2a-recorder]` in pyproject.toml
and the `a2a_recorder_config` fixture, as pytest-recording's `vcr_config` (docs/guides/pytest.md).

The fixture returns the same keys with `_` for `-` (a function as itself), on top of the file:
name lists add up, the other keys replace.  `before_record(exchange)` runs before redaction and
returns the exchange to write or None.  An unknown key or a wrong type is a `ConfigError`
naming where it was.
"""

from __future__ import annotations

import importlib
import json
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from recorder._errors import ConfigError
from recorder.capture import Exchange
from recorder.redaction._rules import Rules

BeforeRecord = Callable[[Exchange], Exchange | None]
TABLE = "a2a-recorder"
NOT_OURS = frozenset({"verify"})  # sub-tables other parts of the tool read


@dataclass(frozen=True, slots=True)
class RecorderConfig:
    redact_headers: tuple[str, ...] = ()
    redact_params: tuple[str, ...] = ()
    card: str | None = None
    keep_secrets: bool | None = None  # None: not said (redact)
    before_record: BeforeRecord | None = None

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], where: str) -> RecorderConfig:
        """Settings from a TOML table or a fixture's dict (keys with `-` or `_`)."""
        known = {f.name for f in fields(cls)}
        found: dict[str, Any] = {}
        for key, value in values.items():
            name = key.replace("-", "_")
            if key in NOT_OURS:
                continue
            if name not in known:
                raise ConfigError(f"{where}: unknown key {key!r} (known: {_known(known)})")
            found[name] = _checked(name, value, where)
        return cls(**found)

    def merged(self, more: RecorderConfig) -> RecorderConfig:
        """These settings with `more` on top: name lists add up, other settings replace."""
        return RecorderConfig(
            (*self.redact_headers, *more.redact_headers),
            (*self.redact_params, *more.redact_params),
            more.card if more.card is not None else self.card,
            more.keep_secrets if more.keep_secrets is not None else self.keep_secrets,
            more.before_record if more.before_record is not None else self.before_record,
        )

    def relative_to(self, folder: Path) -> RecorderConfig:
        """These settings with a relative card file taken from `folder`."""
        if self.card is None or "://" in self.card:
            return self
        return replace(self, card=str(folder / self.card))

    def rules(self) -> Rules:
        """The replayer's rules: the names, and the card when it is a file (replay is offline)."""
        rules = Rules(self.redact_headers, self.redact_params, keep_secrets=bool(self.keep_secrets))
        if self.card is None or "://" in self.card:
            return rules
        path = Path(self.card)
        try:
            card = json.loads(path.read_bytes())
        except (OSError, ValueError) as exc:
            raise ConfigError(f"card {path}: cannot read an agent card: {exc}") from exc
        return rules.with_card(card) if isinstance(card, dict) else rules


def read_pyproject(path: Path) -> RecorderConfig:
    """`[tool.a2a-recorder]` of the pyproject.toml at `path`, a card's path from its folder."""
    if not path.is_file():
        return RecorderConfig()
    try:
        document = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    return from_pyproject(document, str(path)).relative_to(path.parent)


def from_pyproject(document: Mapping[str, Any], where: str) -> RecorderConfig:
    """The `[tool.a2a-recorder]` settings of a parsed pyproject.toml (none: the defaults)."""
    table = document.get("tool", {}).get(TABLE, {})
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: [tool.{TABLE}] is not a table")
    return RecorderConfig.from_mapping(table, f"{where} [tool.{TABLE}]")


def _checked(name: str, value: Any, where: str) -> Any:
    if name in ("redact_headers", "redact_params"):
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}: {name} must be a list of names, not {value!r}")
        return tuple(value)
    if name == "keep_secrets":
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: keep_secrets must be true or false, not {value!r}")
        return value
    if name == "card":
        if not isinstance(value, str | Path):
            raise ConfigError(f"{where}: card must be a file or URL, not {value!r}")
        return str(value)
    return _hook(value, where)


def _hook(value: Any, where: str) -> BeforeRecord:
    """A callable, or one named `module:function`."""
    if callable(value):
        return value  # type: ignore[no-any-return]
    if not isinstance(value, str) or ":" not in value:
        raise ConfigError(f"{where}: before_record must be a function or 'module:function'")
    module, _, name = value.partition(":")
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{where}: before_record {value!r} cannot be imported: {exc}") from exc
    if not callable(found):
        raise ConfigError(f"{where}: before_record {value!r} is not a function")
    return found  # type: ignore[no-any-return]


def _known(names: set[str]) -> str:
    return ", ".join(sorted(n.replace("_", "-") for n in names))
