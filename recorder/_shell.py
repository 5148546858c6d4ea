"""What every command shares: how an error ends it, and the flags that mean the same everywhere.

`Command` ends a command on an error (`recorder._errors`) with `error: <message>` and the status
`EXIT_FOR` gives it (a bug shows its traceback too); commands raise, never `sys.exit(2)`.  Its
flags come from its option table (`recorder.options`).

Imports click and the light option tables only: `a2a-recorder --help` loads this.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from recorder._errors import EXPECTED, error_message, exit_status
from recorder.options import Table, click_params, folding_switches, renamed

if TYPE_CHECKING:
    from recorder.capture import Cut


HELP_NAMES = ["-h", "--help"]


class Command(click.Command):
    """A click command whose errors end it as `EXIT_FOR` says, its flags from `table`."""

    def __init__(self, *args: Any, table: Table | None = None, **kwargs: Any) -> None:
        # Its own, not only its group's: click makes a command's help option once, from the
        # first context it runs in, so a command first run alone would lose `-h` for good.
        settings = {"help_option_names": HELP_NAMES, **kwargs.get("context_settings", {})}
        kwargs["context_settings"] = settings
        self.table = table or Table([])
        kwargs["params"] = [*kwargs.get("params", ()), *click_params(self.table)]
        kwargs["callback"] = folding_switches(self.table, kwargs["callback"])
        super().__init__(*args, **kwargs)
        self.spell = self.table.spell("cli")

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            now = renamed(self.table, exc.option_name)
            raise click.UsageError(now, ctx) if now else exc from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:  # every error ends the command the same way
            if not isinstance(exc, EXPECTED):
                traceback.print_exc()
            click.echo(f"error: {error_message(exc, self.spell)}", err=True)
            ctx.exit(exit_status(exc))


def write_output(text: str, output: Path | None) -> None:
    """`text` to `output` whole (`recorder._files`) or to standard output; OSError if it cannot."""
    if output is None:
        click.echo(text, nl=False)
    else:
        from recorder._files import replace_file

        replace_file(output, text.encode("utf-8"))


def cut_short(cut: Cut | None) -> bool:
    """Warn of a capture cut short (`recorder.capture.salvage`); whether it was."""
    if cut is not None:
        click.echo(f"warning: {cut}", err=True)
    return cut is not None
