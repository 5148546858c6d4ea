"""Diff two captures: normalisation, alignment, comparison, v0.3 -> v1.0 renames, reports.

Pure core (values in, values out) plus one thin shell, `diff_command` (the click command).
The normalisation (`Normaliser`, `normalise_capture`, ...) finds ids by the protocol's id model
(`recorder.protocol`: field names, whose bare `id` an object's is, resource names and paths,
user content never searched), the table the replayer matches by; timestamps by the same
`TIMESTAMP_FIELDS`.

As a library::

    result = diff_captures(capture_a, capture_b, ignore=["header:etag"], strict_order=False)
    result.same, result.summary()
    render_text([result]), render_json([result]), render_html([result])

`corpus_matrix(folders)` diffs a corpus (a folder per SDK) against a reference folder as a
matrix of findings by kind (`_matrix`: `build_matrix`, `judge` against accepted findings,
`render_matrix_markdown`; `render_matrix_html`); `matrix_command` is its shell.

`parse_ignores` checks patterns (`IgnorePattern`, `KEYWORDS`) without diffing anything;
`parse_compare` the `shape:PATH` settings that compare sampled text by presence (`sampled`).
Protocol facts (operation names, v0.3 shapes, task states, SSE fields, gRPC status details)
come from `recorder.protocol`; nothing here restates them.

Errors: `ValueError` for a bad ignore pattern (naming the valid keywords) or report format;
`recorder.InputError` (command shell only) for a file that cannot be read.

May import `recorder.capture`, `recorder.protocol`, `recorder.versions` (v0.3 renames),
`recorder.redaction`, `recorder.ci` and `recorder.options`; verify and the demo build on it.
"""

from recorder.diff._align import Alignment, Step, StepKind, align, align_levels
from recorder.diff._command import diff_command, run_diff
from recorder.diff._compare import (
    REQUEST_HEADERS,
    RESPONSE_HEADERS,
    TRAILERS,
    compare_exchanges,
    diff_captures,
    diff_exchanges,
    diff_normalised,
    group_empty_defaults,
)
from recorder.diff._correspondence import Correspondence
from recorder.diff._exchanges import (
    exchange_key,
    normalise_body,
    normalise_capture,
    normalise_exchange,
    normalise_request,
    normalise_response,
)
from recorder.diff._html import diff_page, render_html
from recorder.diff._ignore import (
    KEYWORDS,
    IgnorePattern,
    parse_compare,
    parse_ignores,
    sampled,
    segments,
    side_path,
)
from recorder.diff._junit import diff_case, diff_failures, diff_notes
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
from recorder.diff._normal import (
    Body,
    NormalEvent,
    NormalExchange,
    NormalGrpc,
    NormalRequest,
    NormalResponse,
)
from recorder.diff._normalise import VOLATILE_HEADERS, Normaliser
from recorder.diff._polls import POLL_OPERATIONS, last_polls
from recorder.diff._renames import RenameNote, Rule, to_v1
from recorder.diff._report import (
    FORMATS,
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
    RenameSummary,
)
from recorder.diff._shown import Excerpt, describe, excerpts, file_content, printable
from recorder.protocol import ID_FIELDS, ID_OWNERS, OPAQUE_FIELDS, TIMESTAMP_FIELDS, IdKind

__all__ = [
    "ABSENT",
    "FORMATS",
    "ID_FIELDS",
    "ID_OWNERS",
    "KEYWORDS",
    "OPAQUE_FIELDS",
    "POLL_OPERATIONS",
    "REQUEST_HEADERS",
    "RESPONSE_HEADERS",
    "TIMESTAMP_FIELDS",
    "TRAILERS",
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
    "NormalEvent",
    "NormalExchange",
    "NormalGrpc",
    "NormalRequest",
    "NormalResponse",
    "Normaliser",
    "PairKind",
    "RenameNote",
    "RenameSummary",
    "Rule",
    "Step",
    "StepKind",
    "Verdict",
    "align",
    "align_levels",
    "build_matrix",
    "compare_exchanges",
    "corpus_matrix",
    "describe",
    "diff_captures",
    "diff_case",
    "diff_command",
    "diff_exchanges",
    "diff_failures",
    "diff_normalised",
    "diff_notes",
    "diff_page",
    "excerpts",
    "exchange_key",
    "file_content",
    "group_empty_defaults",
    "judge",
    "last_polls",
    "matrix_command",
    "normalise_body",
    "normalise_capture",
    "normalise_exchange",
    "normalise_request",
    "normalise_response",
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
    "to_v1",
]
