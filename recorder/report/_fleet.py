"""A fleet's session as one waterfall across its agents (pure): who called whom, when, with
which task, each bar opening the exchange as recorded.

The rows are the calls of `recorder.export.trace_plan` (the same parents), in start order,
indented under their parents, on one time axis; stream event batches are ticks on a bar.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from recorder._pages import anchor, render_page
from recorder.capture import Capture
from recorder.diff import exchange_text
from recorder.export import SpanPlan, trace_plan
from recorder.report._units import axis_step, axis_text, duration_text


@dataclass(frozen=True, slots=True)
class Bar:
    span: SpanPlan
    depth: int
    left: float  # percent of the axis
    width: float
    ticks: tuple[float, ...]  # stream event batches, percent of the axis
    anchor: str

    @property
    def label(self) -> str:
        a = self.span.attributes
        task = f" task {a['a2a.task.id']}" if "a2a.task.id" in a else ""
        return f"{self.span.service} → {a.get('server.address')} {self.span.name}{task}"


def fleet_page(captures: Sequence[tuple[str, Capture]], name: str = "fleet") -> str:
    """The waterfall page of a fleet's captures (`(file name, capture)`)."""
    plans = trace_plan(captures)
    start = min((p.start_ns for p in plans), default=0)
    span = max((p.end_ns for p in plans), default=0) - start or 1
    calls = [p for p in plans if not p.internal]
    depth: dict[int, int] = {}
    bars = []
    for plan in calls:
        depth[plan.span_id] = depth.get(plan.parent_id or 0, -1) + 1
        ticks = [p.start_ns for p in plans if p.internal and p.parent_id == plan.span_id]
        where = str(plan.attributes["a2a_recorder.capture"])
        anchor = _anchor(where, int(plan.attributes["a2a_recorder.exchange"]))
        bars.append(Bar(plan, depth[plan.span_id], 100 * (plan.start_ns - start) / span,
                        max(100 * (plan.end_ns - plan.start_ns) / span, 0.2),
                        tuple(100 * (t - start) / span for t in ticks), anchor))  # fmt: skip
    step = axis_step(span // 1000)
    marks = [(100 * t * 1000 / span, axis_text(t)) for t in range(0, span // 1000 + 1, step)]
    shown = [(_anchor(n, x.number), f"{n} #{x.number}", exchange_text(x)) for n, c in captures
             for x in c.exchanges]  # fmt: skip
    return render_page("fleet.html.j2", name=name, bars=bars, marks=marks, shown=shown,
                       span=duration_text(span // 1000), agents=len(captures))  # fmt: skip


def _anchor(capture: str, number: int) -> str:
    return anchor(f"x-{capture}-{number}")
