"""Where things go on the page: lanes, arrows, ticks and timeline bars, in pixels (pure).

One fixed-height row per exchange, in start order.  Ticks sit on an arrow at `offset /
duration` of its length, and on the timeline bar at `start + offset`; SSE offsets count from
the response head, whose time the capture does not keep, so such a tick is at most that early.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from recorder.report._facts import ExchangeFacts, Lane, Tick
from recorder.report._units import axis_step, axis_text

ROW_HEIGHT = 30
ARROW_Y = 21
LANE_X: dict[Lane, int] = {Lane.CLIENT: 90, Lane.RECORDER: 330, Lane.AGENT: 570, Lane.WEBHOOK: 760}
BINDING_X = 80  # the binding's name, right-aligned left of the client's lane
DIAGRAM_WIDTH = 810
TIMELINE_WIDTH = 440
TIMELINE_PAD = 12
ARROW_GAP = 4  # between a lane and an arrow's ends
MIN_BAR = 2


@dataclass(frozen=True, slots=True)
class Placed:
    tick: Tick
    x: float


@dataclass(frozen=True, slots=True)
class Row:
    facts: ExchangeFacts
    x1: float
    x2: float
    arrow_ticks: tuple[Placed, ...]
    bar_x: float
    bar_width: float
    bar_ticks: tuple[Placed, ...]

    @property
    def via_recorder(self) -> bool:
        """Whether the arrow crosses the recorder's lane (requests do, deliveries do not)."""
        return self.x1 < LANE_X[Lane.RECORDER] < self.x2


@dataclass(frozen=True, slots=True)
class Timeline:
    span_us: int
    scale: float  # pixels per microsecond
    marks: tuple[tuple[float, str], ...]

    def x(self, us: int) -> float:
        return TIMELINE_PAD + max(us, 0) * self.scale


def timeline(facts: Sequence[ExchangeFacts]) -> Timeline:
    span = max((f.started_us + f.duration_us for f in facts), default=0) or 1
    scale = (TIMELINE_WIDTH - 2 * TIMELINE_PAD) / span
    step = axis_step(span)
    marks = tuple((TIMELINE_PAD + t * scale, axis_text(t)) for t in range(0, span + 1, step))
    return Timeline(span, scale, marks)


def start_order(facts: ExchangeFacts) -> tuple[int, int]:
    """The rows' sort key: start time, then number."""
    return facts.started_us, facts.number


def place(facts: ExchangeFacts, axis: Timeline) -> Row:
    x1 = LANE_X[facts.source] + ARROW_GAP
    x2 = LANE_X[facts.target] - ARROW_GAP
    duration = max(facts.duration_us, 1)
    on_arrow = tuple(
        Placed(t, x1 + (x2 - x1) * _fraction(t.offset_us, duration)) for t in facts.ticks
    )
    bar_x = axis.x(facts.started_us)
    bar_width = max(facts.duration_us * axis.scale, MIN_BAR)
    on_bar = tuple(
        Placed(t, bar_x + bar_width * _fraction(t.offset_us, duration)) for t in facts.ticks
    )
    return Row(facts, x1, x2, on_arrow, bar_x, bar_width, on_bar)


def _fraction(offset_us: int, duration_us: int) -> float:
    return min(max(offset_us / duration_us, 0.0), 1.0)
