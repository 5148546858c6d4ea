"""The `a2a-recorder` command line: a thin shell over the package's pure core."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from recorder import __version__
from recorder.capture import CaptureParseError, read_capture
from recorder.show import capture_rows, render_table


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="a2a-recorder")
def main() -> None:
    """Record, replay and diff A2A (Agent2Agent protocol) traffic."""


@main.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per exchange.")
def show(file: Path, as_json: bool) -> None:
    """Print a readable table of the exchanges in a capture FILE."""
    try:
        capture = read_capture(file)
    except CaptureParseError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except OSError as exc:
        click.echo(f"error: {file}: {exc.strerror or exc}", err=True)
        sys.exit(2)
    rows = capture_rows(capture)
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        click.echo(render_table(rows))
