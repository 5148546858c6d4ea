"""Export captures for other tools: HAR 1.2, JSON Lines of stream events, OTLP traces.

Pure: `capture_to_har`, `capture_to_jsonl` and `trace_plan` (a session as spans), which
`otlp_request` encodes with the OpenTelemetry packages (the `otlp` extra) and `otlp_json` writes
as OTLP/JSON; the shell is `export_command`.  May import `recorder.capture`, `recorder.protocol`,
`recorder.options`, `recorder._shell`, and, for a trace, `recorder.show` (its rows) and
`recorder.replay` (which files of a fleet's folder are agents).
"""

from recorder.export._command import export_command, read_session
from recorder.export._har import capture_to_har
from recorder.export._jsonl import capture_to_jsonl, stream_events
from recorder.export._otlp import otlp_json, otlp_request
from recorder.export._trace import SpanPlan, span_id, trace_id, trace_plan

__all__ = [
    "SpanPlan",
    "capture_to_har",
    "capture_to_jsonl",
    "export_command",
    "otlp_json",
    "otlp_request",
    "read_session",
    "span_id",
    "stream_events",
    "trace_id",
    "trace_plan",
]
