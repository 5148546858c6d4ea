"""Lint captures against the A2A spec: what in a recording breaks which rule.

The rules, their checks and the facts they use are protocol knowledge and live in
`recorder.protocol` (`RULES`, `select_rules`); this package is the engine and the shells.

Pure API, for the recorder's live console and the HTML report as much as for the command:

- `lint_exchange(exchange, context) -> list[Finding]` lints one completed exchange;
  `context.saw_request(x)` / `context.saw_response(x)` move a `LintContext` on (the card
  and push configs seen so far).  `Linter` wraps that for a live, thread-safe feed.
- `lint_capture(capture, spec=..., file=..., text=...)` lints a recorded session, each
  finding located at its exchange's `file:line`.
- `render(LintRun, "text" | "json" | "sarif")` builds a report.

Errors: `recorder.InputError` for a capture or key file that cannot be used, OSError for
one that cannot be read.
"""

from recorder.lint._command import capture_files, lint_command, lint_file
from recorder.lint._engine import (
    Finding,
    LintContext,
    Linter,
    exchange_lines,
    lint_capture,
    lint_exchange,
)
from recorder.lint._report import (
    FORMATS,
    SARIF_SCHEMA,
    LintRun,
    fails,
    render,
    render_json,
    render_rules,
    render_sarif,
    render_text,
)

__all__ = [
    "FORMATS",
    "SARIF_SCHEMA",
    "Finding",
    "LintContext",
    "LintRun",
    "Linter",
    "capture_files",
    "exchange_lines",
    "fails",
    "lint_capture",
    "lint_command",
    "lint_exchange",
    "lint_file",
    "render",
    "render_json",
    "render_rules",
    "render_sarif",
    "render_text",
]
