"""Diff two captures: normalisation, alignment, comparison, v0.3 -> v1.0 renames, reports.

A pure core (`diff_captures`, the `render_*` reports, the SDK matrix's `build_matrix`) under
the shells `diff_command`, `matrix_command` and `corpus_matrix`.  Ids are found by the
protocol's id model, the one the replayer matches by.  A bad ignore pattern or report format is
a `ValueError` naming the valid ones; a file that cannot be read is `recorder.InputError`.

May import `recorder.capture`, `recorder.protocol`, `recorder.versions`, `recorder.redaction`,
`recorder.ci` and `recorder.options`.
"""

from recorder.diff._align import Alignment, Step, StepKind, align, align_levels
from recorder.diff._command import diff_command, run_diff
from recorder.diff._compare import diff_captures
from recorder.diff._correspondence import Correspondence
from recorder.diff._ignore import (
    KEYWORDS,
    IgnorePattern,
    parse_compare,
    parse_ignores,
    sampled,
    segments,
    side_path,
)
from recorder.diff._junit import diff_failures, diff_notes
from recorder.diff._matrix import (
    Finding,
    Matrix,
    Verdict,
    build_matrix,
    judge,
    render_matrix_markdown,
)
from recorder.diff._matrixcommand import corpus_matrix, matrix_command
from recorder.diff._matrixpage import render_matrix_html
from recorder.diff._normal import Body, normalise_body, normalise_capture
from recorder.diff._normalise import VOLATILE_HEADERS, Normaliser
from recorder.diff._polls import POLL_OPERATIONS
from recorder.diff._report import (
    FORMATS,
    diff_page,
    exchange_text,
    md_text,
    render_html,
    render_json,
    render_markdown,
    render_report,
    render_text,
    report_dict,
)
from recorder.diff._result import (
    ABSENT,
    CaptureDiff,
    Difference,
    DiffKind,
    ExchangeDiff,
    PairKind,
)
from recorder.diff._shown import Excerpt, describe, excerpts, file_content, json_text, printable
from recorder.protocol import IdKind

__all__ = [
    "ABSENT",
    "FORMATS",
    "KEYWORDS",
    "POLL_OPERATIONS",
    "VOLATILE_HEADERS",
    "Alignment",
    "Body",
    "CaptureDiff",
    "Correspondence",
    "DiffKind",
    "Difference",
    "Excerpt",
    "ExchangeDiff",
    "Finding",
    "IdKind",
    "IgnorePattern",
    "Matrix",
    "Normaliser",
    "PairKind",
    "Step",
    "StepKind",
    "Verdict",
    "align",
    "align_levels",
    "build_matrix",
    "corpus_matrix",
    "describe",
    "diff_captures",
    "diff_command",
    "diff_failures",
    "diff_notes",
    "diff_page",
    "excerpts",
    "exchange_text",
    "file_content",
    "json_text",
    "judge",
    "matrix_command",
    "md_text",
    "normalise_body",
    "normalise_capture",
    "parse_compare",
    "parse_ignores",
    "printable",
    "render_html",
    "render_json",
    "render_markdown",
    "render_matrix_html",
    "render_matrix_markdown",
    "render_report",
    "render_text",
    "report_dict",
    "run_diff",
    "sampled",
    "segments",
    "side_path",
]
