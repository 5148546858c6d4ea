"""Spans (`_trace`) as OTLP, with the OpenTelemetry project's own packages (the `otlp` extra).

The SDK's tracer makes each span (the plan's ids, through an `IdGenerator` that hands them out;
the capture's times), and `opentelemetry-exporter-otlp-proto-common` encodes them as an
`ExportTraceServiceRequest`.  OTLP/JSON is that message in protobuf's JSON mapping, ids in hex
and enums as numbers.  Without the extra, `otlp_request` raises `InputError` saying what to
install.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Sequence
from typing import Any

from recorder._errors import InputError
from recorder.export._trace import SpanPlan

MISSING = "export --to otlp needs the OpenTelemetry packages: pip install 'a2a-recorder[otlp]'"
_IDS = frozenset({"traceId", "spanId", "parentSpanId"})


def otlp_request(plans: Sequence[SpanPlan]) -> Any:
    """The `ExportTraceServiceRequest` (protobuf) that carries the planned spans."""
    try:
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from opentelemetry.sdk.trace.id_generator import IdGenerator
        from opentelemetry.sdk.trace.sampling import ALWAYS_ON
        from opentelemetry.trace import (
            NonRecordingSpan,
            SpanContext,
            SpanKind,
            Status,
            StatusCode,
            TraceFlags,
            set_span_in_context,
        )
    except ImportError as exc:
        raise InputError(f"{MISSING} ({exc.name} is missing)") from exc

    class Planned(IdGenerator):
        def __init__(self) -> None:
            self.span: Iterator[int] = iter(())
            self.trace = 0

        def generate_span_id(self) -> int:
            return next(self.span)

        def generate_trace_id(self) -> int:
            return self.trace

    exporter, ids, providers = InMemorySpanExporter(), Planned(), {}
    for plan in plans:
        if plan.service not in providers:
            resource = Resource({"service.name": plan.service})  # no detectors: no random ids
            provider = TracerProvider(ALWAYS_ON, resource, False, id_generator=ids)
            provider.add_span_processor(SimpleSpanProcessor(exporter))
            providers[plan.service] = provider.get_tracer("a2a-recorder")
        ids.span, ids.trace = iter((plan.span_id,)), plan.trace_id
        parent = None
        if plan.parent_id is not None:
            context = SpanContext(plan.trace_id, plan.parent_id, True, TraceFlags(1))
            parent = set_span_in_context(NonRecordingSpan(context))
        kind = SpanKind.INTERNAL if plan.internal else SpanKind.CLIENT
        span = providers[plan.service].start_span(
            plan.name, parent, kind, plan.attributes, start_time=plan.start_ns
        )
        for name, at, attributes in plan.events:
            span.add_event(name, attributes, at)
        if plan.error is not None:
            span.set_status(Status(StatusCode.ERROR, plan.error))
        span.end(plan.end_ns)
    return encode_spans(exporter.get_finished_spans())


def otlp_json(request: Any) -> dict[str, Any]:
    """OTLP/JSON of an `ExportTraceServiceRequest`: ids in hex, enums as numbers."""
    from google.protobuf import json_format

    document = json_format.MessageToDict(request, use_integers_for_enums=True)
    return dict(_hex_ids(document))


def _hex_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _hex(v) if k in _IDS else _hex_ids(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


def _hex(value: str) -> str:
    return base64.b64decode(value).hex()
