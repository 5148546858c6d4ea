"""A recorded session as a trace: one span per exchange, one per stream event batch (pure).

Every capture of a session (a file, or a fleet folder) is read on one clock.  A span's parent is
the client's `traceparent`, else for a push delivery the latest call that named its task, else
the innermost call to another agent open throughout (all a proxy can see), else none
(`a2a_recorder.parent` says which; docs/guides/trace.md).  Ids are hashes of the capture's
name, start and exchange number, so the same capture gives the same trace.  Attribute names
follow the OpenTelemetry proposal for A2A and the HTTP and RPC conventions, in `_span` alone.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from recorder.capture import Capture, Exchange
from recorder.protocol import (
    AGENT_CARD,
    PUSH_DELIVERY,
    event_data,
    interfaces_from_card,
    parse_json,
    read_answer,
)
from recorder.show import capture_rows

BATCH_GAP_US = 50_000  # stream events closer than this to the one before are one batch
_TRACEPARENT = re.compile(r"[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}\Z")
Attributes = dict[str, str | int | bool]


@dataclass(frozen=True, slots=True)
class SpanPlan:
    """One span to emit, every value decided (ids as integers, times in Unix nanoseconds)."""

    name: str
    trace_id: int
    span_id: int
    parent_id: int | None
    start_ns: int
    end_ns: int
    service: str  # the caller's name: the resource's service.name
    internal: bool = False  # a stream event batch (else the call itself: a client span)
    attributes: Attributes = field(default_factory=dict)
    events: tuple[tuple[str, int, Attributes], ...] = ()
    error: str | None = None


@dataclass(frozen=True, slots=True)
class _Call:
    capture: str
    exchange: Exchange
    row: Mapping[str, Any]
    start_ns: int
    end_ns: int
    callee: str

    @property
    def delivery(self) -> bool:
        return self.exchange.classification.operation == PUSH_DELIVERY


def span_id(*parts: object) -> int:
    """A non-zero id of 64 bits from `parts` (128 with `trace_id`)."""
    return _hashed(8, parts)


def trace_id(*parts: object) -> int:
    return _hashed(16, parts)


def _hashed(size: int, parts: Sequence[object]) -> int:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8", "replace")).digest()
    return int.from_bytes(digest[:size], "big") or 1


def trace_plan(captures: Sequence[tuple[str, Capture]]) -> list[SpanPlan]:
    """Every span of the session the captures (`(name, capture)`, a fleet's files) recorded."""
    names = _agent_names(captures)
    calls = sorted(
        (_call(name, capture, x, row, names) for name, capture in captures
         for x, row in zip(capture.exchanges, capture_rows(capture), strict=True)),
        key=lambda c: (c.start_ns, -c.end_ns, c.capture, c.exchange.number),
    )  # fmt: skip
    session = trace_id(*sorted(f"{name}@{c.started}" for name, c in captures))
    spans: dict[int, SpanPlan] = {}
    out: list[SpanPlan] = []
    for index, call in enumerate(calls):
        parent, source, remote = _parent(call, calls, index)
        ids = (call.capture, call.exchange.number)
        above = spans.get(id(parent)) if parent is not None else None
        trace = remote[0] if remote else above.trace_id if above else session
        parent_span = remote[1] if remote else above.span_id if above else None
        service = parent.callee if parent is not None else "client"
        span = _span(call, trace, span_id(*ids), parent_span, service, source)
        spans[id(call)] = span
        out += [span, *_batches(call, span)]
    return out


def _agent_names(captures: Sequence[tuple[str, Capture]]) -> dict[str, str]:
    """`host:port` -> the name the agent's card gives that interface (else nothing)."""
    names: dict[str, str] = {}
    for _, capture in captures:
        for x in capture.exchanges:
            card = parse_json(x.response.body) if x.response is not None else None
            if x.classification.operation != AGENT_CARD or not isinstance(card, Mapping):
                continue
            for iface in interfaces_from_card(card):
                where = urlsplit(iface.url if "//" in iface.url else f"//{iface.url}").netloc
                if isinstance(card.get("name"), str):
                    names.setdefault(where, card["name"])
    return names


def _call(
    name: str, capture: Capture, x: Exchange, row: Mapping[str, Any], names: Mapping[str, str]
) -> _Call:
    start = _epoch_ns(capture.started) + x.started_us * 1000
    authority = x.request.header("host") or x.request.header(":authority") or name
    return _Call(name, x, row, start, start + x.duration_us * 1000, names.get(authority, authority))


def _epoch_ns(started: str) -> int:
    moment = datetime.fromisoformat(started)
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


Parent = tuple[_Call | None, str, tuple[int, int] | None]  # the call, why, a remote parent


def _parent(call: _Call, calls: Sequence[_Call], index: int) -> Parent:
    """`call`'s parent among earlier calls: a delivery's by task, else the innermost open one."""
    sent = _TRACEPARENT.match((call.exchange.request.header("traceparent") or "").strip())
    if sent:
        return None, "traceparent", (int(sent.group(1), 16), int(sent.group(2), 16))
    task = call.row.get("task") if call.delivery else None
    for c in (calls[i] for i in range(index - 1, -1, -1)):
        if c.delivery or (task and c.row.get("task") != task):
            continue
        if task:
            return c, "task", None
        if (
            c.end_ns >= call.end_ns
            and c.callee != call.callee
            and c.exchange.classification.operation != AGENT_CARD
        ):
            return c, "open-request", None
    return None, "none", None


def _span(
    call: _Call, trace: int, own: int, parent: int | None, service: str, source: str
) -> SpanPlan:
    x, row = call.exchange, call.row
    c = x.classification
    error = c.error or x.error or (f"HTTP {row['status']}" if (row["status"] or 0) >= 400 else None)
    values: dict[str, object] = {
        "a2a.method.name": c.operation or c.method,
        "a2a.protocol.binding": c.binding_name,
        "a2a.protocol.version": c.version.value if c.version else x.request.header("a2a-version"),
        "a2a.task.id": row["task"],
        "a2a.context.id": c.context_id or _answered_context(x),
        "a2a.task.state": row["state"],
        "jsonrpc.request.id": _jsonrpc_id(x),
        "rpc.response.status_code": row["grpc_status"],
        "error.type": error,
        "http.request.method": x.request.method,
        "url.path": x.request.target.partition("?")[0],
        "http.response.status_code": row["status"],
        "server.address": call.callee,
        "a2a_recorder.capture": call.capture,
        "a2a_recorder.exchange": x.number,
        "a2a_recorder.parent": source,
        "a2a_recorder.traceparent": x.request.header("traceparent"),
        "a2a_recorder.tracestate": x.request.header("tracestate"),
    }
    attributes = {k: v for k, v in values.items() if isinstance(v, str | int) and v != ""}
    name = str(c.operation or c.method or f"{x.request.method} {attributes['url.path']}")
    return SpanPlan(name, trace, own, parent, call.start_ns, call.end_ns, service, False,
                    attributes, error=error)  # fmt: skip


def _answered_context(x: Exchange) -> str | None:
    """The context the answer names (a first turn's request names none)."""
    r = x.response
    if r is None:
        return None
    texts = [r.body, *(event_data(e.lines) for e in r.events), *(m.json for m in r.messages)]
    return next((a.context_id for a in map(read_answer, texts) if a.context_id), None)


def _jsonrpc_id(x: Exchange) -> str | None:
    body = parse_json(x.request.body) if x.classification.binding == "JSONRPC" else None
    return str(body["id"]) if isinstance(body, Mapping) and body.get("id") is not None else None


def _batches(call: _Call, span: SpanPlan) -> list[SpanPlan]:
    """The stream's events, in batches of events that came together, each a child span."""
    response = call.exchange.response
    if response is None:
        return []
    items = [(e.offset_us, event_data(e.lines)) for e in response.events if event_data(e.lines)]
    if call.exchange.classification.streaming:
        items += [(m.offset_us, m.json) for m in response.messages if m.json]
    batches: list[list[tuple[int, str | None]]] = []
    for offset, data in items:
        if not batches or offset - batches[-1][-1][0] > BATCH_GAP_US:
            batches.append([])
        batches[-1].append((offset, data))
    return [_batch(call, span, k, batch) for k, batch in enumerate(batches)]


def _batch(call: _Call, span: SpanPlan, k: int, batch: list[tuple[int, str | None]]) -> SpanPlan:
    events = []
    for offset, data in batch:
        answer = read_answer(data)
        attributes: Attributes = {
            k: v
            for k, v in (("a2a.task.state", answer.state), ("a2a.task.id", answer.task_id))
            if v
        }
        events.append((answer.kind or "event", call.start_ns + offset * 1000, attributes))
    own = span_id(call.capture, call.exchange.number, "events", k)
    return SpanPlan(f"{span.name} events", span.trace_id, own, span.span_id,
                    events[0][1], events[-1][1], span.service, True,
                    {"a2a_recorder.events": len(events)}, tuple(events))  # fmt: skip
