"""Lint captures against the A2A spec: what in a recording breaks which rule.

Owns the rule table (`RULES`, `select_rules`), the checks its rows name (wire, body, card),
the view of an exchange they read (`ExchangeView`), card signatures (JWS) and the engine and
command around them.  May import `recorder.protocol` (the spec facts the rules read: the
operation and error tables, `SpecVersion`), `recorder.capture`, `recorder.ci` and
`recorder.options`; the recorder's live console and the report import it.

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
from recorder.lint._jws import canonical_json, sdk_payload, spec_payload
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
from recorder.lint._rules import RULE_IDS, RULES, Level, Rule, rule_by_id, select_rules
from recorder.lint._view import (
    ExchangeLike,
    ExchangeView,
    PushConfig,
    Session,
    Violation,
    jwks_keys,
    major_minor,
    view_exchange,
)

__all__ = [
    "FORMATS",
    "RULES",
    "RULE_IDS",
    "SARIF_SCHEMA",
    "ExchangeLike",
    "ExchangeView",
    "Finding",
    "Level",
    "LintContext",
    "LintRun",
    "Linter",
    "PushConfig",
    "Rule",
    "Session",
    "Violation",
    "canonical_json",
    "capture_files",
    "exchange_lines",
    "fails",
    "jwks_keys",
    "lint_capture",
    "lint_command",
    "lint_exchange",
    "lint_file",
    "major_minor",
    "render",
    "render_json",
    "render_rules",
    "render_sarif",
    "render_text",
    "rule_by_id",
    "sdk_payload",
    "select_rules",
    "spec_payload",
    "view_exchange",
]
