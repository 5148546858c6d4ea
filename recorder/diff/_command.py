"""`a2a-recorder diff A B`: the thin shell that reads files and writes the report.

Exit status: 0 same, 1 different (or a folder has unpaired files, or a capture is cut short:
diffed up to the cut, with a warning), 2 on an error.  Two folders pair their files by relative
path; the status is the worst over all pairs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict, Unpack

import click

from recorder._errors import Exit, InputError, error_message
from recorder._shell import Command, write_output
from recorder.capture import Cut, recover_capture
from recorder.diff._compare import diff_captures
from recorder.diff._ignore import parse_compare, parse_ignores
from recorder.diff._report import FORMATS, render_report
from recorder.diff._result import CaptureDiff
from recorder.options import Table, command_option, shared

CAPTURE_SUFFIX = ".http"


@dataclass
class _Run:
    diffs: list[CaptureDiff] = field(default_factory=list)
    unpaired: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    cuts: list[Cut] = field(default_factory=list)  # captures cut short: diffed up to the cut

    @property
    def status(self) -> Exit:
        if self.errors:
            return Exit.ERROR
        differ = self.unpaired or self.cuts or any(not d.same for d in self.diffs)
        return Exit.FOUND if differ else Exit.OK


def _pair_folders(a: Path, b: Path) -> tuple[list[str], list[tuple[str, str]]]:
    names_a = {p.relative_to(a).as_posix() for p in a.rglob(f"*{CAPTURE_SUFFIX}") if p.is_file()}
    names_b = {p.relative_to(b).as_posix() for p in b.rglob(f"*{CAPTURE_SUFFIX}") if p.is_file()}
    unpaired = [("A", n) for n in sorted(names_a - names_b)]
    unpaired += [("B", n) for n in sorted(names_b - names_a)]
    return sorted(names_a & names_b), unpaired


class DiffOptions(TypedDict, total=False):
    """`diff_captures`'s options, as `run_diff` and the command take them."""

    ignore: Sequence[str]
    compare: Sequence[str]
    timing: bool
    collapse_polls: bool
    strict_order: bool


def _diff_files(run: _Run, a: Path, b: Path, options: DiffOptions) -> None:
    try:
        (ca, cut_a), (cb, cut_b) = recover_capture(a), recover_capture(b)
    except (InputError, OSError) as exc:
        run.errors.append(error_message(exc))
        return
    run.cuts += [cut for cut in (cut_a, cut_b) if cut is not None]
    run.diffs.append(diff_captures(ca, cb, a_name=str(a), b_name=str(b), **options))


def run_diff(a: Path, b: Path, **options: Unpack[DiffOptions]) -> _Run:
    """Diff two files or folders (polls collapsed unless `collapse_polls=False`); read errors are
    collected, a bad pattern raises ValueError."""
    parse_ignores(options.get("ignore", ()))
    parse_compare(options.get("compare", ()))
    options.setdefault("collapse_polls", True)
    run = _Run()
    if a.is_dir() and b.is_dir():
        names, run.unpaired = _pair_folders(a, b)
        for name in names:
            _diff_files(run, a / name, b / name, options)
    elif a.is_dir() or b.is_dir():
        run.errors.append(f"{a if a.is_dir() else b}: a folder can only be diffed with a folder")
    else:
        _diff_files(run, a, b, options)
    return run


IGNORE_HELP = (
    "Drop differences at PATH and below.  A path starts with a keyword: status, "
    "request.target, header:NAME, trailer:NAME, body.PATH, events[N].data.PATH, "
    "messages[N].PATH, $.PATH (any JSON document), framing, timing, polls, empty-defaults, "
    "key-order, rename:RULE (rename:enum, rename:*).  An unknown one is an error that lists "
    "them all."
)
DIFF = Table(
    [
        shared.report_format(tuple(FORMATS)),
        shared.ignore(IGNORE_HELP),
        shared.compare(
            "Compare text under PATH by shape: a text changed for another is no difference, "
            "but states, part kinds, names, and whether text is there, still are."
        ),
        shared.output(),
        command_option("timing", bool, False, "Also compare timing (durations, event offsets)."),
        command_option(
            "strict_order", bool, False,
            "Also report object key order, which proto-JSON and JSON give no meaning.",
        ),
        command_option(
            "collapse_polls", bool, True,
            "Compare only the last of each run of identical GetTask/ListTasks polls (how many "
            "polls a client makes depends on timing; a different count is a note), or every poll.",
            flag="--collapse-polls/--keep-polls",
        ),
    ]
)  # fmt: skip


@click.command("diff", cls=Command, table=DIFF)
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
def diff_command(
    a: Path, b: Path, format: str, output: Path | None, **options: Unpack[DiffOptions]
) -> None:
    """Compare two captures A and B (or two folders of captures) of the same scenario.

    Volatile values (ids, timestamps, ports, tokens) are normalised, exchanges are aligned by
    operation, and v0.3 -> v1.0 renames are summarised.  Exit status: 0 same, 1 different,
    2 error.
    """
    try:
        run = run_diff(a, b, **options)
    except ValueError as exc:  # a bad --ignore or --compare pattern
        raise InputError(str(exc)) from exc
    for message in run.errors:
        click.echo(f"error: {message}", err=True)
    for cut in run.cuts:
        click.echo(f"warning: {cut}", err=True)
    if run.diffs or run.unpaired:
        color = output is None and format == "text" and sys.stdout.isatty()
        report = render_report(format, run.diffs, unpaired=run.unpaired, color=color)
        write_output(report, output)
    sys.exit(run.status)
