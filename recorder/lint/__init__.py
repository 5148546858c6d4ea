"""Lint captures against the A2A spec: what in a recording breaks which rule.

Owns the rule table, the checks its rows name, the view of an exchange they read, card
signatures (JWS), and the engine and command around them; a pure API for the console and the
report too (docs/lint.md).  May import `recorder.protocol`, `recorder.capture`, `recorder.ci`
and `recorder.options`.  Errors: `recorder.InputError` for a capture or key file that cannot be
used, OSError for one that cannot be read.
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
    SARIF_SCHEMA,
    LintRun,
    render,
    render_text,
)
from recorder.lint._rules import RULE_IDS, RULES, Level, Rule
from recorder.lint._view import (
    ExchangeLike,
    jwks_keys,
)

__all__ = [
    "RULES",
    "RULE_IDS",
    "SARIF_SCHEMA",
    "ExchangeLike",
    "Finding",
    "Level",
    "LintContext",
    "LintRun",
    "Linter",
    "Rule",
    "canonical_json",
    "capture_files",
    "exchange_lines",
    "jwks_keys",
    "lint_capture",
    "lint_command",
    "lint_exchange",
    "lint_file",
    "render",
    "render_text",
    "sdk_payload",
    "spec_payload",
]
