"""`a2a-recorder report FILE -o OUT`: read a capture, write its page (the only I/O)."""

from __future__ import annotations

from pathlib import Path

import click

from recorder._shell import Command, output_option, write_output
from recorder.capture import read_capture
from recorder.report._page import render_report


@click.command("report", cls=Command)
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@output_option("the page (one self-contained HTML file)")
@click.option(
    "--lint",
    "lint_spec",
    is_flag=False,
    flag_value="1.0.1",
    default=None,
    metavar="[SPEC]",
    help="Mark each exchange with what `lint` finds in it (spec 1.0.1, or 1.0.0).",
)
def report_command(file: Path, output: Path | None, lint_spec: str | None) -> None:
    """Draw a capture FILE as a sequence diagram and timeline in one HTML page.

    Open the page in any browser; it loads nothing from the network.  Click an arrow for the
    exchange's request and response.  With --lint, the exchanges that break an A2A rule carry
    a mark and the finding.  With -o, the page's path is printed once it is written.
    """
    capture = read_capture(file)
    marks: dict[int, list[str]] = {}
    if lint_spec is not None:
        from recorder.lint import lint_capture

        for finding in lint_capture(capture, spec=lint_spec):
            marks.setdefault(finding.exchange, []).append(finding.brief)
    write_output(render_report(capture, name=file.name, marks=marks), output)
    if output is not None:
        click.echo(str(output))
