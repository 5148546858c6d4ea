"""`a2a-recorder lint CAPTURE...`: the thin shell that reads files and prints the report.

Exit status (docs/lint.md): 0 when no finding reaches `--fail-on`, 1 when one does, a capture
is cut short (what comes before the cut is linted) or a baseline entry is stale, 2 on an error.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from recorder._errors import Exit, InputError
from recorder._shell import Command, write_output
from recorder.capture import Cut, read_regular, salvage
from recorder.ci import BaselineOutcome, Entry, gate
from recorder.lint._engine import Finding, lint_capture
from recorder.lint._report import FORMATS, LintRun, fails, fails_on, render, render_rules
from recorder.lint._rules import select_rules
from recorder.lint._view import jwks_keys
from recorder.options import NAMES, Table, command_option, shared
from recorder.protocol import LATEST_SPEC, Severity, SpecVersion

CAPTURE_SUFFIX = ".http"


def capture_files(paths: Sequence[Path]) -> list[Path]:
    """The capture files named: files as given, folders expanded to their `.http` files."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.rglob(f"*{CAPTURE_SUFFIX}") if p.is_file())
            if not inside:
                raise InputError(f"{path}: no {CAPTURE_SUFFIX} captures in this folder")
            found += inside
        elif path.exists():
            found.append(path)
        else:
            raise InputError(f"{path}: no such file or folder")
    return found


def lint_file(path: Path, **options: Any) -> tuple[list[Finding], Cut | None]:
    """One capture file's findings, and where it is cut short (what comes before is linted);
    CaptureParseError if it is damaged otherwise, OSError if it cannot be read."""
    data = read_regular(path)
    capture, cut = salvage(data, str(path))
    text = data[: cut.offset if cut else len(data)].decode("utf-8")
    return lint_capture(capture, file=str(path), text=text, **options), cut


def load_keys(paths: Sequence[Path]) -> dict[str, Any]:
    """JWKs by `kid` from JWK Set (or single JWK) files."""
    keys: dict[str, Any] = {}
    for path in paths:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"{path}: not a readable JWK Set ({exc})") from exc
        found = jwks_keys(document)
        if not found:
            raise InputError(f"{path}: no JWK with a kid in this file")
        keys.update(found)
    return keys


def _split(values: Sequence[str]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


LINT = Table(
    [
        command_option(
            "spec", str, LATEST_SPEC.value,
            "The A2A spec text to check against (they differ in error codes, HTTP+JSON content "
            "types, tenants).",
            choices=tuple(s.value for s in SpecVersion),
        ),
        shared.report_format(
            tuple(FORMATS), "Report format (sarif: SARIF 2.1.0; junit: JUnit XML)."
        ),
        command_option(
            "select", NAMES, (),
            "Only these rules: ids, groups (error) or globs (card.*), comma-separated.",
            metavar="RULES",
        ),
        command_option(
            "skip", NAMES, (), "Leave these rules out (as --select names them).",
            metavar="RULES", was=("--ignore",),
        ),
        command_option(
            "fail_on", str, Severity.MUST.value, "Exit 1 when a finding is at least this strong.",
            choices=tuple(s.value for s in Severity),
        ),
        command_option(
            "jwks", NAMES, (), "A JWK Set file whose keys verify signed agent cards.  Repeatable.",
            metavar="FILE", parse=Path,
        ),
        shared.output(),
        shared.BASELINE,
        shared.UPDATE_BASELINE,
        command_option("list_rules", bool, False, "Print the rules (those --select leaves)."),
    ]
)  # fmt: skip


@click.command("lint", cls=Command, table=LINT)
@click.argument("captures", nargs=-1, type=click.Path(path_type=Path))
def lint_command(
    captures: tuple[Path, ...],
    spec: str,
    format: str,
    select: tuple[str, ...],
    skip: tuple[str, ...],
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
        rules = select_rules(_split(select), _split(skip))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--select/--skip") from exc
    if list_rules:
        click.echo(render_rules(rules), nl=False)
        return
    if not captures:
        raise click.UsageError("give at least one CAPTURE (a .http file or a folder)")
    if update_baseline and baseline is None:
        raise click.UsageError("--update-baseline needs --baseline FILE")
    threshold = Severity(fail_on)
    files = capture_files(captures)
    keys = load_keys(jwks)
    linted = [lint_file(path, spec=spec, rules=rules, keys=keys) for path in files]
    cut = [where for _, where in linted if where is not None]
    for where in cut:
        click.echo(f"warning: {where}", err=True)
    findings = [finding for found, _ in linted for finding in found]
    findings, outcome = _against(baseline, findings, threshold, update_baseline)
    run = LintRun(
        SpecVersion(spec), rules, tuple(map(str, files)), tuple(findings), threshold, outcome
    )
    write_output(render(run, format), output)
    stale = outcome is not None and bool(outcome.stale)
    sys.exit(Exit.FOUND if fails(findings, threshold) or stale or cut else Exit.OK)


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
