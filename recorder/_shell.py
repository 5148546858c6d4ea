"""What every command shares: how an error ends it, and the flags that mean the same
everywhere.

- `Command`: an error (`recorder._errors`) ends a command with `error: <message>` on stderr
  and the status `EXIT_FOR` gives it; a bug also shows its traceback.  Commands raise, they
  never call `sys.exit(2)` themselves.
- The flags, one meaning each (`tests/unit/test_cli_flags.py` walks every command's help):
  `-o/--output FILE` is where a report goes (standard output without it); `--out` is a
  capture (a file, or a folder of them); `--binding` takes the card's binding names in any
  case; `--ignore PATH` drops differences at a path (diff, verify).

Imports click only: `a2a-recorder --help` loads this for every command.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from recorder._errors import EXPECTED, Spell, error_message, exit_status

F = TypeVar("F", bound=Callable[..., Any])
BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC", "HTTP")  # recorder.protocol.Binding's values


class Command(click.Command):
    """A click command whose errors end it as `EXIT_FOR` says (see the module docstring);
    `spell` names options in an `OptionError` as its flags (`RECORD.spell("cli")`)."""

    def __init__(self, *args: Any, spell: Spell | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.spell = spell

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:  # noqa: BLE001 - every error ends the command the same way
            if not isinstance(exc, EXPECTED):
                traceback.print_exc()
            click.echo(f"error: {error_message(exc, self.spell)}", err=True)
            ctx.exit(exit_status(exc))


class BindingChoice(click.Choice):  # type: ignore[type-arg]  # generic from click 8.2 on
    """A binding name in any case (`jsonrpc`, `http+json`), given on as the card spells it;
    the help lists them as the card does (click would show them lower-cased)."""

    def __init__(self, choices: Sequence[str] = BINDINGS) -> None:
        super().__init__(list(choices), case_sensitive=False)

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(self.choices) + "]"


def output_option(what: str = "the report") -> Callable[[F], F]:
    """`-o/--output FILE`: where `what` goes instead of standard output."""
    return click.option(
        "--output",
        "-o",
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="FILE",
        help=f"Write {what} to FILE instead of standard output.",
    )


def write_output(text: str, output: Path | None) -> None:
    """`text` to `output` (whole, or not at all: `recorder._files`), or to standard output; an
    OSError when the file cannot be written."""
    if output is None:
        click.echo(text, nl=False)
    else:
        from recorder._files import replace_file

        replace_file(output, text.encode("utf-8"))
