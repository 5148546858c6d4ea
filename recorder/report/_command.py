"""`a2a-recorder report FILE -o OUT`: read a capture, write its page (the only I/O)."""

from __future__ import annotations

from pathlib import Path

import click

from recorder._shell import Command, write_output
from recorder.capture import read_capture
from recorder.options import LATEST, Table, command_option, parse_spec, shared
from recorder.report._fleet import fleet_page
from recorder.report._page import render_report

REPORT = Table(
    [
        shared.output("the page (one self-contained HTML file)", was=("--html",)),
        command_option(
            "lint_spec", str, None,
            "Mark each exchange with what `lint` finds in it (against this A2A spec; the latest "
            "when SPEC is left out).",
            flag="--lint", metavar="[SPEC]", optional_value=LATEST, parse=parse_spec,
        ),
    ]
)  # fmt: skip


@click.command("report", cls=Command, table=REPORT)
@click.argument("file", type=click.Path(path_type=Path))
def report_command(file: Path, output: Path | None, lint_spec: str | None) -> None:
    """Draw a capture FILE as a sequence diagram and timeline in one HTML page.

    Open the page in any browser; it loads nothing from the network.  Click an arrow for the
    exchange's request and response.  With --lint, the exchanges that break an A2A rule carry
    a mark and the finding.  A fleet's folder (record --forward) is drawn as one waterfall
    across its agents: who called whom, when, with which task.  With -o, the page's path is
    printed once it is written.
    """
    if file.is_dir():
        from recorder.export import read_session

        write_output(fleet_page(read_session(file), name=file.name), output)
        if output is not None:
            click.echo(str(output))
        return
    capture = read_capture(file)
    marks: dict[int, list[str]] = {}
    if lint_spec is not None:
        from recorder.lint import lint_capture

        for finding in lint_capture(capture, spec=lint_spec):
            marks.setdefault(finding.exchange, []).append(finding.brief)
    write_output(render_report(capture, name=file.name, marks=marks), output)
    if output is not None:
        click.echo(str(output))
