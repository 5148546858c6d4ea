"""A table's options as click options (the command line's surface): one flag per row
(`Option.cli_flag`), one per value for a row with `switches`, each handed to the command by
the row's name.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import click

from recorder.options._table import NAMES, Option, Table
from recorder.options._values import show_address

_SWITCH = "switch__{name}__{value}"  # a switch's own parameter, folded into its row's value


def click_params(table: Table) -> list[click.Parameter]:
    """The flags of `table`'s rows that have one, in the table's order."""
    return [param for option in table.options for param in _click_options(option)]


def renamed(table: Table, flag: str) -> str | None:
    """`--html is -o/--output FILE now`: what a flag the command once had is called now."""
    for option in table.options:
        if flag in option.was:
            short = f"{option.short}/" if option.short else ""
            metavar = f" {option.metavar}" if option.metavar and option.kind is not bool else ""
            return f"{flag} is {short}{option.cli_flag}{metavar} now"
    return None


def _click_options(option: Option) -> list[click.Option]:
    flag = option.cli_flag
    if flag is None:
        return []
    if option.switches:
        return [
            click.Option(
                [switch, _SWITCH.format(name=option.name, value=value)], is_flag=True, help=text
            )
            for value, (switch, text) in option.switches.items()
        ]
    names = [flag, *([option.short] if option.short else []), option.name]
    text = option.no_help if option.no_help and flag.startswith("--no-") else option.help
    return [click.Option(names, help=text, **_settings(option))]


class Choice(click.Choice):  # type: ignore[type-arg]  # generic from click 8.2 on
    """A choice in any case, given on and listed as the table spells it (`HTTP+JSON`)."""

    def __init__(self, choices: Sequence[str]) -> None:
        super().__init__(list(choices), case_sensitive=False)

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(self.choices) + "]"


def _settings(option: Option) -> dict[str, Any]:
    if option.kind is bool and "/" in str(option.cli_flag):
        return {"default": option.default, "show_default": True}
    if option.kind is bool:
        return {"is_flag": True, "flag_value": not option.default, "default": option.default}
    settings: dict[str, Any] = {
        "metavar": option.metavar,
        "required": option.required,
        "type": _type(option),
        "callback": _callback(option),
    }
    if option.kind == NAMES:
        settings["multiple"] = True
    elif option.optional_value is not None:
        settings.update(is_flag=False, flag_value=option.optional_value)
    elif option.default is not None:
        shown = option.default  # an address as the command line gives it
        shown = show_address(shown) if isinstance(shown, tuple) else shown
        settings.update(default=shown, show_default=True)
    return settings


def _callback(option: Option) -> Any:
    """Parse the flag's text (each value of a repeatable flag) with the row's `parse`."""
    parse = option.parse
    if parse is None:
        return None

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        try:
            if option.kind == NAMES:
                return tuple(parse(text) for text in value)
            return parse(value) if isinstance(value, str) else value
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None

    return callback


def _type(option: Option) -> Any:
    if option.choices is not None:
        return Choice(option.choices)
    if option.kind is float:
        return click.FloatRange(min=option.minimum)
    if option.kind is int:
        return click.IntRange(min=None if option.minimum is None else int(option.minimum))
    return str


def folding_switches[C: Callable[..., Any]](table: Table, command: C) -> C:
    """`command` taking each switched row by its name, from its switches' flags."""
    switched = [option for option in table.options if option.switches]
    if not switched:
        return command

    @functools.wraps(command)
    def fold(**given: Any) -> Any:
        for option in switched:
            chosen = [
                value
                for value in option.switches
                if given.pop(_SWITCH.format(name=option.name, value=value))
            ]
            if len(chosen) > 1:
                flags = " and ".join(option.switches[value][0] for value in option.switches)
                raise click.UsageError(f"give at most one of {flags}")
            given[option.name] = chosen[0] if chosen else option.default
        return command(**given)

    return fold  # type: ignore[return-value]
