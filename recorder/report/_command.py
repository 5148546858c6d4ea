"""`a2a-recorder report FILE --html OUT`: read a capture, write its page (the only I/O)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from recorder.capture import Capture, CaptureParseError, read_capture
from recorder.report._page import render_report

EXIT_ERROR = 2  # could not run


@click.command("report")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--html",
    "out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the page (one self-contained HTML file).",
)
@click.option(
    "--lint",
    "lint_spec",
    is_flag=False,
    flag_value="1.0.1",
    default=None,
    metavar="[SPEC]",
    help="Mark each exchange with what `lint` finds in it (spec 1.0.1, or 1.0.0).",
)
def report_command(file: Path, out: Path, lint_spec: str | None) -> None:
    """Draw a capture FILE as a sequence diagram and timeline in one HTML page.

    Open OUT in any browser; it loads nothing from the network.  Click an arrow for the
    exchange's request and response.  With --lint, the exchanges that break an A2A rule carry
    a mark and the finding.
    """
    capture = _read(file)
    marks: dict[int, list[str]] = {}
    if lint_spec is not None:
        from recorder.lint import lint_capture

        for finding in lint_capture(capture, spec=lint_spec):
            marks.setdefault(finding.exchange, []).append(finding.brief)
    page = render_report(capture, name=file.name, marks=marks)
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        click.echo(f"error: {out}: {exc.strerror or exc}", err=True)
        raise SystemExit(EXIT_ERROR) from exc
    click.echo(str(out))


def _read(path: Path) -> Capture:
    """The capture at `path`, or exit 2 with `file:line: what is wrong`."""
    try:
        return read_capture(path)
    except CaptureParseError as exc:
        click.echo(f"error: {exc}", err=True)
    except OSError as exc:
        click.echo(f"error: {path}: {exc.strerror or exc}", err=True)
    sys.exit(EXIT_ERROR)
