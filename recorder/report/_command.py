"""`a2a-recorder report FILE --html OUT`: read a capture, write its page (the only I/O)."""

from __future__ import annotations

from pathlib import Path

import click

from recorder.report._page import render_report


@click.command("report")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--html", "out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the page (one self-contained HTML file).")
def report_command(file: Path, out: Path) -> None:
    """Draw a capture FILE as a sequence diagram and timeline in one HTML page.

    Open OUT in any browser; it loads nothing from the network.  Click an arrow for the
    exchange's request and response.
    """
    from recorder.cli import EXIT_ERROR, load_capture

    page = render_report(load_capture(file), name=file.name)
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        click.echo(f"error: {out}: {exc.strerror or exc}", err=True)
        raise SystemExit(EXIT_ERROR) from exc
    click.echo(str(out))
