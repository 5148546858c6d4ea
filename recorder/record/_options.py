"""The addons' mitmproxy options, from the recorder's table (`recorder.options.RECORD`): each addon
picks its rows, `load()` declares them, `configure()` validates them (mitmproxy keeps `choices`
for help only) and reacts only when one changed.

Every option carries the `a2a_` prefix, so `mitmdump --options` shows them together.  An error
about one is an `AddonOptionError`: mitmproxy's `OptionsError` (mitmdump reports it as its own)
and our `OptionError`, naming the option as each surface spells it (`a2a_existing=append`,
`existing='append'`, `--append`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mitmproxy import ctx, exceptions

from recorder._errors import OptionError
from recorder.options import NAMES, RECORD, Option, mitm_value

MITM_TYPES: dict[Any, Any] = {str: str, bool: bool, float: float, int: int, NAMES: NAMES}


class AddonOptionError(OptionError, exceptions.OptionsError):
    """An addon option that cannot be used (see the module docstring)."""

    def __str__(self) -> str:
        return self.spelt(RECORD.spell("mitm"))


def addon_options(*names: str) -> tuple[Option, ...]:
    """The table's rows an addon declares, by name."""
    options = RECORD.pick(*names)
    for option in options:
        name = option.mitm_name
        if name is None or not name.startswith("a2a_"):
            raise ValueError(f"{option.name} is not an addon option")
    return options


def declare(loader: Any, options: Sequence[Option]) -> None:
    """`load()`: add every option of the table."""
    for option in options:
        typespec = MITM_TYPES.get(option.kind, option.kind)
        default = mitm_value(option.default)
        if option.choices is None:
            loader.add_option(option.mitm_name, typespec, default, option.help)
        else:
            choices = [*option.choices, *([""] if option.default is None else [])]
            loader.add_option(option.mitm_name, typespec, default, option.help, choices=choices)


def touched(updated: set[str], options: Sequence[Option]) -> bool:
    """Whether any option of the table was updated; AddonOptionError for a value refused."""
    changed = [option for option in options if option.mitm_name in updated]
    for option in changed:
        value = getattr(ctx.options, str(option.mitm_name))
        if option.choices is not None and value not in option.choices and value != "":
            raise AddonOptionError(
                f"{{{option.name}}} must be one of {', '.join(option.choices)}, not {value!r}"
            )
    return bool(changed)


def value(option: Option) -> Any:
    """An option's value now, as the keyword argument takes it (`""`: None)."""
    current = getattr(ctx.options, str(option.mitm_name))
    return None if current == "" and option.default is None else current
