"""`a2a-recorder matrix DIR...`: the SDK matrix of a corpus (the thin shell).

Exit status: 0 when every finding is accepted and every entry still occurs (without
`--baseline`: when no SDK differs from the reference), 1 otherwise, 2 when a folder or capture
cannot be read.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import click

from recorder._errors import Exit, InputError
from recorder._shell import Command, write_output
from recorder.ci import describe, read_baseline, render_baseline, write_baseline
from recorder.diff._command import IGNORE_HELP, run_diff
from recorder.diff._matrix import (
    Entry,
    Matrix,
    Verdict,
    accepted_entries,
    build_matrix,
    judge,
    render_matrix_markdown,
)
from recorder.diff._matrixpage import render_matrix_html
from recorder.diff._result import CaptureDiff
from recorder.options import Table, command_option, shared

TOOL = "matrix"


def corpus_matrix(
    folders: list[Path], reference: str | None = None, ignore: tuple[str, ...] = ()
) -> tuple[Matrix, list[str]]:
    """The matrix of `folders` against `reference` (the first by default), and read errors."""
    ref = next((f for f in folders if f.name == reference), None) if reference else folders[0]
    if ref is None:
        raise InputError(f"--reference {reference}: no such folder among {_names(folders)}")
    pairs: dict[str, list[CaptureDiff]] = {}
    missing: dict[str, list[tuple[str, str]]] = {}
    errors: list[str] = []
    for folder in folders:
        if folder != ref:
            run = run_diff(ref, folder, ignore=ignore)
            pairs[folder.name] = [_named(d, ref) for d in run.diffs]
            missing[folder.name] = run.unpaired
            errors += run.errors
    return build_matrix(ref.name, pairs, missing), errors


def _names(folders: list[Path]) -> str:
    return ", ".join(f.name for f in folders)


def _named(diff: CaptureDiff, ref: Path) -> CaptureDiff:
    scenario = Path(diff.a_name).relative_to(ref).as_posix()
    return replace(diff, a_name=scenario, b_name=scenario)


def summary(matrix: Matrix, verdict: Verdict | None) -> list[str]:
    lines = [f"reference {matrix.reference}, {len(matrix.scenarios)} scenarios"]
    for sdk in matrix.sdks:
        cells = [c for (_, s), c in matrix.cells.items() if s == sdk]
        differ = sum(1 for c in cells if c.findings)
        found = len({f for c in cells for f in c.findings})
        lines.append(f"{sdk}: {differ} of {len(cells)} scenarios differ, {found} findings")
    if verdict is not None:
        lines += [f"new: {sdk} {s} [{f.kind}] {f.text}" for sdk, s, f in verdict.new]
        lines += [f"stale: {describe(e, TOOL)}" for e in verdict.stale]
        lines += [f"no reason: {describe(e, TOOL)}" for e in verdict.unreasoned]
    return lines


def check_accepted(
    matrix: Matrix, path: Path, *, update: bool = False
) -> tuple[Verdict, str | None]:
    """The verdict against the file at `path`; written first when missing or `update`."""
    entries: Sequence[Entry] = read_baseline(path, TOOL) if path.exists() else []
    if update or not path.exists():
        entries = accepted_entries(matrix, entries)
        write_baseline(path, render_baseline(entries, TOOL))
        return judge(matrix, entries), f"{path}: written with {len(entries)} entries"
    return judge(matrix, entries), None


MATRIX = Table(
    [
        shared.output("the page (one self-contained HTML file)"),
        command_option(
            "markdown", str, None, "Write the Markdown table to FILE.", metavar="FILE", parse=Path
        ),
        command_option(
            "reference", str, None,
            "The folder (by name) the others are compared with; the first by default.",
            metavar="NAME",
        ),
        shared.BASELINE,
        shared.UPDATE_BASELINE,
        shared.ignore(IGNORE_HELP),
    ]
)  # fmt: skip


@click.command("matrix", cls=Command, table=MATRIX)
@click.argument(
    "folders", nargs=-1, required=True, type=click.Path(file_okay=False, path_type=Path)
)
def matrix_command(
    folders: tuple[Path, ...],
    output: Path | None,
    markdown: Path | None,
    reference: str | None,
    baseline: Path | None,
    update_baseline: bool,
    ignore: tuple[str, ...],
) -> None:
    """Compare the same scenarios across SDK FOLDERS (one per SDK and version) as a matrix.

    Each SDK's captures are diffed with the reference folder's of the same name, and what
    differs is grouped by kind: routes and verbs, content types, error shapes and codes,
    stream framing, push headers, field presence and spelling.  With --baseline, known
    differences are accepted, each with a reason; a new one, or an accepted one no longer
    seen, fails.  Exit status: 0 all accepted (or all the same), 1 otherwise, 2 error.
    """
    for folder in folders:
        if not folder.is_dir():
            raise InputError(f"{folder}: not a folder")
    try:
        matrix, errors = corpus_matrix(list(folders), reference, ignore)
    except ValueError as exc:  # a bad --ignore pattern
        raise InputError(str(exc)) from exc
    verdict, written = None, None
    if baseline is not None:
        verdict, written = check_accepted(matrix, baseline, update=update_baseline)
    if output is not None:
        write_output(render_matrix_html(matrix, verdict), output)
    if markdown is not None:
        write_output(render_matrix_markdown(matrix, verdict), markdown)
    for line in [*summary(matrix, verdict), *filter(None, [written])]:
        click.echo(line)
    for message in errors:
        click.echo(f"error: {message}", err=True)
    sys.exit(_status(matrix, verdict, errors))


def _status(matrix: Matrix, verdict: Verdict | None, errors: list[str]) -> Exit:
    if errors:
        return Exit.ERROR
    if verdict is not None:
        return Exit.OK if verdict.clean else Exit.FOUND
    return Exit.FOUND if any(c.findings for c in matrix.cells.values()) else Exit.OK
