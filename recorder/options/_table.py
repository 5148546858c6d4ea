"""Options as a table: each setting once, with its one default, and how each surface says it.

A surface is a keyword argument, a command-line flag, a pytest option or a mitmproxy option;
an `Option` names each spelling (derived from its name unless it says otherwise), so the
surfaces cannot drift.  `default` is in the keyword argument's type; `parse` turns text into it
(ValueError saying what is wrong).  An error names an option by a template (`{read_timeout}`,
see `OptionError`) that each surface spells its way.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recorder._errors import OptionError, Spell, python_spelling

NAMES = Sequence[str]  # a list of names: the kind of a repeatable option
MITM_PREFIX = "a2a_"
PYTEST_PREFIX = "--a2a-"
DERIVED = ""  # a spelling derived from the option's name


@dataclass(frozen=True, slots=True)
class Option:
    """One setting (see the module docstring).

    `kind`: `bool`, `str`, `float`, `int`, `NAMES` (repeatable, singular `flag`) or `tuple`
    (HOST:PORT).  `flag` None has none, `--a/--b` spells a bool both ways; `switches` gives values
    flags of their own (`--append`, `--force`); `no_help` helps a `--no-x` flag; `was` are old
    spellings the command line answers with the new one.  `mitm` None: the proxy uses it itself;
    `keyword` False: no keyword argument.  `command_option` makes a row of a command alone."""

    name: str
    kind: Any
    default: Any
    help: str
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    flag: str | None = DERIVED
    short: str | None = None  # `-q`
    switches: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # value: flag, help
    optional_value: Any = None  # `--lint` alone means `--lint 1.0.1`
    parse: Callable[[str], Any] | None = None
    minimum: float | None = None  # the smallest number allowed
    mitm: str | None = DERIVED
    keyword: bool = True
    pytest: bool = False
    required: bool = False
    no_help: str | None = None
    was: tuple[str, ...] = ()

    @property
    def cli_flag(self) -> str | None:
        if self.flag != DERIVED:
            return self.flag
        negated = self.kind is bool and self.default is True
        return "--" + ("no-" if negated else "") + self.name.replace("_", "-")

    @property
    def mitm_name(self) -> str | None:
        return MITM_PREFIX + self.name if self.mitm == DERIVED else self.mitm

    @property
    def pytest_flag(self) -> str | None:
        flag = self.cli_flag
        return PYTEST_PREFIX + flag.removeprefix("--") if self.pytest and flag else None

    def flag_for(self, value: str | None) -> str | None:
        """How the command line gives this option (`value`: with that value)."""
        if value is not None and value in self.switches:
            return self.switches[value][0]
        flag = self.cli_flag
        if flag is None or value is None or self.kind is bool:
            return flag
        return f"{flag} {value}"

    def mitm_for(self, value: str | None) -> str | None:
        """How mitmdump's `--set` gives this option."""
        name = self.mitm_name
        return name if name is None or value is None else f"{name}={value}"

    def checked(self, value: Any) -> Any:
        """`value` as the keyword argument takes it (text through `parse`), or OptionError."""
        if value is None and self.default is None:
            return None
        if self.kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if self.kind is str and isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not _is(value, self.kind):
            raise OptionError(f"{{{self.name}}} must be {_KIND_NAMES[self.kind]}, not {value!r}")
        if self.choices is not None and value not in self.choices:
            allowed = ", ".join(self.choices)
            raise OptionError(f"{{{self.name}}} must be one of {allowed}, not {value!r}")
        if self.minimum is not None and value < self.minimum:
            raise OptionError(f"{{{self.name}}} must be at least {self.minimum:g}, not {value!r}")
        if self.parse is not None and isinstance(value, str):
            return _parsed(self, value)
        if self.parse is not None and self.kind == NAMES:
            return tuple(_parsed(self, name) for name in value)
        return value


def command_option(name: str, kind: Any, default: Any, help: str, **settings: Any) -> Option:
    """A row of one command's own table: a flag only (no mitmproxy option, no keyword)."""
    return Option(name, kind, default, help, **{"mitm": None, "keyword": False, **settings})


def _parsed(option: Option, text: str) -> Any:
    assert option.parse is not None
    try:
        return option.parse(text)
    except ValueError as exc:
        raise OptionError(f"{{{option.name}}}: {exc}") from None


_KIND_NAMES: Mapping[Any, str] = {
    bool: "True or False",
    str: "a string",
    float: "a number",
    int: "a whole number",
    NAMES: "a list of strings",
    tuple: "a (host, port) pair",
}


def _is(value: Any, kind: Any) -> bool:
    if kind == NAMES:
        return isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)
    if kind is tuple:
        return (
            isinstance(value, tuple)
            and len(value) == 2
            and isinstance(value[0], str)
            and isinstance(value[1], int)
        )
    if kind in (int, float) and isinstance(value, bool):
        return False
    return isinstance(value, kind)


class Table:
    """The options of one part of the tool, in the order its help lists them."""

    def __init__(self, options: Iterable[Option]) -> None:
        self.options = tuple(options)
        self.by_name = {option.name: option for option in self.options}
        if len(self.by_name) != len(self.options):
            raise ValueError("two options of one table share a name")

    def __iter__(self) -> Iterator[Option]:
        return iter(self.options)

    def pick(self, *names: str) -> tuple[Option, ...]:
        return tuple(self.by_name[name] for name in names)

    @property
    def keywords(self) -> tuple[Option, ...]:
        return tuple(option for option in self.options if option.keyword)

    def settings(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Every keyword option's value, `given` or default; TypeError for an unknown name."""
        keywords = {option.name: option for option in self.keywords}
        unknown = sorted(set(given) - set(keywords))
        if unknown:
            raise TypeError(
                f"unexpected keyword argument {unknown[0]!r} (the options are: "
                + ", ".join(keywords)
                + ")"
            )
        return {
            name: option.checked(given[name]) if name in given else option.default
            for name, option in keywords.items()
        }

    def spell(self, surface: str) -> Spell:
        """A `Spell` for `python`, `cli`, `mitm` or `pytest` (an option, or a marker keyword)."""
        if surface == "python":
            return python_spelling

        def spell(name: str, value: str | None) -> str | None:
            option = self.by_name.get(name)
            if option is None:
                return None
            if surface == "pytest":  # a flag, and the marker's keyword
                keyword, flag = python_spelling(option.name, value), option.pytest_flag
                return keyword if flag is None else f"{flag} (or the marker's {keyword})"
            return option.flag_for(value) if surface == "cli" else option.mitm_for(value)

        return spell


def mitm_value(value: Any) -> Any:
    """A keyword argument's value as mitmproxy's option takes it (no None, Path or tuple)."""
    if value is None:
        return ""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple):
        return list(value)
    return value
