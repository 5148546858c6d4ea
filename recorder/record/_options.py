"""Addon options as a table: each addon lists its own, `load()` declares them from the table and
`configure()` validates them against it (mitmproxy keeps `choices` for help only) and reacts
only when one of them changed (mitmproxy's `load`/`configure` pattern).

Every option carries the `a2a_` prefix, so `mitmdump --set a2a_out=...` and `--options` show
them together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mitmproxy import ctx, exceptions

PREFIX = "a2a_"
OptionsError: Any = exceptions.OptionsError  # untyped in mitmproxy


@dataclass(frozen=True, slots=True)
class Option:
    name: str
    type: Any  # str, bool, int, float, Sequence[str], or Optional[...]
    default: Any
    help: str
    choices: Sequence[str] | None = None

    def __post_init__(self) -> None:
        if not self.name.startswith(PREFIX):
            raise ValueError(f"option {self.name!r} must start with {PREFIX!r}")


def declare(loader: Any, options: Sequence[Option]) -> None:
    """`load()`: add every option of the table."""
    for option in options:
        if option.choices is None:
            loader.add_option(option.name, option.type, option.default, option.help)
        else:
            loader.add_option(
                option.name, option.type, option.default, option.help, choices=option.choices
            )


def touched(updated: set[str], options: Sequence[Option]) -> bool:
    """`configure()`: whether any option of the table is among the updated ones; raises
    OptionsError when one holds a value its choices do not allow."""
    changed = [option for option in options if option.name in updated]
    for option in changed:
        value = getattr(ctx.options, option.name)
        if option.choices is not None and value not in option.choices:
            raise OptionsError(
                f"{option.name} must be one of {', '.join(option.choices)}, not {value!r}"
            )
    return bool(changed)
