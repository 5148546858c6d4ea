"""`a2a-recorder lint CAPTURE...`: the thin shell that reads files and prints the report.

Exit status: 0 when no finding reaches `--fail-on` (MUST by default), 1 when one does, 2 on
an error (a missing or damaged capture, `file:line: ...` on stderr; an unknown rule; a bad key
or baseline file).  A folder stands for every `.http` file under it, in path order.

With `--baseline FILE`, the findings that reach `--fail-on` are matched against the file's
accepted ones (`recorder.ci`): exit 1 for a new finding or a stale entry, 0 otherwise.  The
file is written when it does not exist, and rewritten by `--update-baseline`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from recorder.capture import CaptureParseError, parse, read_regular
from recorder.ci import BaselineError, BaselineOutcome, Entry, gate
from recorder.lint._engine import Finding, lint_capture
from recorder.lint._report import FORMATS, LintRun, fails, fails_on, render, render_rules
from recorder.protocol import (
    LATEST_SPEC,
    Severity,
    SpecVersion,
    jwks_keys,
    select_rules,
)

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
CAPTURE_SUFFIX = ".http"


class LintInputError(Exception):
    """A lint input that cannot be used; the message is ready to print."""


def capture_files(paths: Sequence[Path]) -> list[Path]:
    """The capture files named: files as given, folders expanded to their `.http` files."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.rglob(f"*{CAPTURE_SUFFIX}") if p.is_file())
            if not inside:
                raise LintInputError(f"{path}: no {CAPTURE_SUFFIX} captures in this folder")
            found += inside
        elif path.exists():
            found.append(path)
        else:
            raise LintInputError(f"{path}: no such file or folder")
    return found


def lint_file(path: Path, **options: Any) -> list[Finding]:
    """Read and lint one capture file; LintInputError (with file:line) if it is damaged."""
    try:
        text = read_regular(path).decode("utf-8")
    except OSError as exc:
        raise LintInputError(f"{path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise LintInputError(f"{path}: not UTF-8 ({exc.reason})") from exc
    try:
        capture = parse(text, str(path))
    except CaptureParseError as exc:
        raise LintInputError(str(exc)) from exc
    return lint_capture(capture, file=str(path), text=text, **options)


def load_keys(paths: Sequence[Path]) -> dict[str, Any]:
    """JWKs by `kid` from JWK Set (or single JWK) files."""
    keys: dict[str, Any] = {}
    for path in paths:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise LintInputError(f"{path}: not a readable JWK Set ({exc})") from exc
        found = jwks_keys(document)
        if not found:
            raise LintInputError(f"{path}: no JWK with a kid in this file")
        keys.update(found)
    return keys


def _split(values: Sequence[str]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


@click.command("lint")
@click.argument("captures", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--spec",
    "spec",
    type=click.Choice([s.value for s in SpecVersion]),
    default=LATEST_SPEC.value,
    show_default=True,
    help="The A2A spec text to check against (they differ in error codes, "
    "HTTP+JSON content types, tenants).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(FORMATS)),
    default="text",
    show_default=True,
    help="Report format (sarif: SARIF 2.1.0; junit: JUnit XML).",
)
@click.option(
    "--select",
    multiple=True,
    metavar="RULES",
    help="Only these rules: ids, groups (error) or globs (card.*), comma-separated.",
)
@click.option("--ignore", multiple=True, metavar="RULES", help="Leave these rules out.")
@click.option(
    "--fail-on",
    type=click.Choice([s.value for s in Severity]),
    default="MUST",
    show_default=True,
    help="Exit 1 when a finding is at least this strong.",
)
@click.option(
    "--jwks",
    "jwks",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="A JWK Set file whose keys verify signed agent cards (repeatable).",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the report to FILE instead of standard output.",
)
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Accepted findings: fail only on new ones, and on entries that no longer occur "
    "(the file is written when it does not exist).",
)
@click.option(
    "--update-baseline",
    is_flag=True,
    help="Rewrite the --baseline file from this run's findings (reasons are kept).",
)
@click.option("--list-rules", is_flag=True, help="Print the rules (those --select leaves).")
def lint_command(
    captures: tuple[Path, ...],
    spec: str,
    fmt: str,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    fail_on: str,
    jwks: tuple[Path, ...],
    output: Path | None,
    baseline: Path | None,
    update_baseline: bool,
    list_rules: bool,
) -> None:
    """Check captures against the A2A spec: one finding per violated rule per exchange.

    Each finding gives the rule, its severity (MUST, SHOULD, MAY), the spec or guide
    section, the exchange's file:line, and what was expected and what the wire held.
    """
    try:
        rules = select_rules(_split(select), _split(ignore))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--select/--ignore") from exc
    if list_rules:
        click.echo(render_rules(rules), nl=False)
        return
    if not captures:
        raise click.UsageError("give at least one CAPTURE (a .http file or a folder)")
    if update_baseline and baseline is None:
        raise click.UsageError("--update-baseline needs --baseline FILE")
    threshold = Severity(fail_on)
    try:
        files = capture_files(captures)
        keys = load_keys(jwks)
        findings = [f for path in files for f in lint_file(path, spec=spec, rules=rules, keys=keys)]
        findings, outcome = _against(baseline, findings, threshold, update_baseline)
    except (LintInputError, BaselineError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    run = LintRun(
        SpecVersion(spec), rules, tuple(map(str, files)), tuple(findings), threshold, outcome
    )
    report = render(run, fmt)
    if output is not None:
        try:
            output.write_text(report, encoding="utf-8")
        except OSError as exc:
            click.echo(f"error: {output}: {exc.strerror or exc}", err=True)
            sys.exit(EXIT_ERROR)
    else:
        click.echo(report, nl=False)
    stale = outcome is not None and bool(outcome.stale)
    sys.exit(EXIT_FINDINGS if fails(findings, threshold) or stale else EXIT_CLEAN)


def baseline_entry(finding: Finding) -> Entry:
    """A finding as a baseline entry (`recorder.ci.KEYS["lint"]` identify it)."""
    return {
        "file": finding.file,
        "exchange": finding.exchange,
        "rule": finding.rule,
        "where": finding.where,
        "severity": finding.severity.value,
        "operation": finding.operation,
        "message": finding.message,
    }


def _against(
    path: Path | None, findings: list[Finding], threshold: Severity, update: bool
) -> tuple[list[Finding], BaselineOutcome | None]:
    """The findings less those the baseline accepts, and what the baseline said."""
    if path is None:
        return findings, None
    gated = fails_on(findings, threshold)
    result, outcome = gate(path, [baseline_entry(f) for f in gated], "lint", update=update)
    accepted = {id(gated[i]) for i in result.accepted}  # by identity: equal findings may differ
    return [f for f in findings if id(f) not in accepted], outcome
