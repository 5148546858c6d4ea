"""The report page: a capture in, one self-contained HTML document out (pure).

Invariants: no network (CSS, script and SVG inline, and a Content-Security-Policy that allows
only the page's own script, by its hash); everything from the capture is text (autoescaped and
made printable by `recorder._pages`), never reaching a `<script>`, a `style` or an event
handler; clicks need no script (a row links to `#x<number>`, CSS `:target` opens it).
"""

from __future__ import annotations

import base64
import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from recorder._pages import asset, render_page
from recorder.capture import Capture, Exchange
from recorder.report._display import Side, request_side, response_side
from recorder.report._facts import ExchangeFacts, Lane, Tone, exchange_facts, short_id
from recorder.report._layout import (
    ARROW_Y,
    BINDING_X,
    DIAGRAM_WIDTH,
    LANE_X,
    ROW_HEIGHT,
    TIMELINE_WIDTH,
    Row,
    Timeline,
    place,
    start_order,
    timeline,
)
from recorder.report._units import duration_text, offset_text

Marks = Mapping[int, Sequence[str]]


@dataclass(frozen=True, slots=True)
class ExchangeView:
    """Everything the page shows for one exchange."""

    row: Row
    exchange: Exchange
    request: Side
    response: Side | None
    marks: tuple[str, ...]
    previous: int | None
    next: int | None

    @property
    def facts(self) -> ExchangeFacts:
        return self.row.facts

    @property
    def search(self) -> str:
        """What the filter box matches, lower case."""
        f, c = self.facts, self.exchange.classification
        words = [
            f"#{f.number}",
            f.binding,
            f.operation,
            c.method or "",
            f.task_id or "",
            c.context_id or "",
            f.outcome,
            *(flag.word for flag in f.flags),
            "mark" if self.marks else "",
        ]
        return " ".join(word for word in words if word).lower()


@dataclass(frozen=True, slots=True)
class Notable:
    """A line of the notes list: a flag or a mark, and the exchange it belongs to."""

    number: int
    word: str
    text: str
    tone: Tone
    known: bool = True  # False for a mark on a number the capture does not hold


def render_report(capture: Capture, *, name: str = "capture", marks: Marks | None = None) -> str:
    """The report page for `capture`; never raises on a capture's content.  `marks` are other
    tools' findings (exchange number -> messages), shown on the exchange and listed with the
    notes, a number the capture does not hold too."""
    marks = marks or {}
    pairs = sorted(
        ((exchange_facts(x), x) for x in capture.exchanges), key=lambda pair: start_order(pair[0])
    )
    facts = [f for f, _ in pairs]
    axis = timeline(facts)
    views = _views(pairs, axis, marks)
    return render_page(
        "report.html.j2",
        name=name,
        capture=capture,
        views=views,
        axis=axis,
        lanes=_lanes(capture, views),
        counts=_counts(facts),
        notables=_notables(views, marks),
        redaction=_redaction(capture, facts),
        **_script(),
        **_GEOMETRY,
    )


_GEOMETRY = {
    "duration_text": duration_text, "offset_text": offset_text, "short_id": short_id,
    "Lane": Lane, "LANE_X": LANE_X, "BINDING_X": BINDING_X, "ROW_HEIGHT": ROW_HEIGHT,
    "ARROW_Y": ARROW_Y, "DIAGRAM_WIDTH": DIAGRAM_WIDTH, "TIMELINE_WIDTH": TIMELINE_WIDTH,
}  # fmt: skip


@cache
def _script() -> dict[str, str]:
    """The page's own script, and its hash for the Content-Security-Policy."""
    script = asset("report.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return {"script": script, "script_hash": digest}


def _views(
    pairs: Sequence[tuple[ExchangeFacts, Exchange]], axis: Timeline, marks: Marks
) -> list[ExchangeView]:
    numbers = [f.number for f, _ in pairs]
    views = []
    for i, (f, exchange) in enumerate(pairs):
        views.append(
            ExchangeView(
                place(f, axis),
                exchange,
                request_side(exchange.request),
                response_side(exchange.response, f.ticks),
                tuple(marks.get(f.number, ())),
                numbers[i - 1] if i > 0 else None,
                numbers[i + 1] if i + 1 < len(numbers) else None,
            )
        )
    return views


def _lanes(capture: Capture, views: Sequence[ExchangeView]) -> list[tuple[Lane, str]]:
    """Each lane and the line under its name."""
    hooks = dict.fromkeys(
        v.exchange.request.header("host") or v.exchange.request.header(":authority") or ""
        for v in views
        if v.facts.is_push
    )
    lanes = [
        (Lane.CLIENT, ""),
        (Lane.RECORDER, f"a2a-recorder {capture.recorder_version}"),
        (Lane.AGENT, ", ".join(capture.upstreams)),
    ]
    if hooks:  # a webhook lane only where something was delivered to one
        lanes.append((Lane.WEBHOOK, ", ".join(h for h in hooks if h)))
    return lanes


def _counts(facts: Sequence[ExchangeFacts]) -> dict[str, object]:
    end = max((f.started_us + f.duration_us for f in facts), default=0)
    return {
        "exchanges": len(facts),
        "bindings": sorted(Counter(f.binding for f in facts).items()),
        "errors": sum(f.tone is Tone.ERROR for f in facts),
        "events": sum(len(f.ticks) for f in facts if f.binding != "GRPC"),
        "messages": sum(len(f.ticks) for f in facts if f.binding == "GRPC"),
        "deliveries": sum(f.is_push for f in facts),
        "span": duration_text(end),
    }


def _notables(views: Sequence[ExchangeView], marks: Marks) -> list[Notable]:
    found = [
        Notable(v.facts.number, flag.word, flag.text, flag.tone)
        for v in views
        for flag in v.facts.flags
    ]
    found += [Notable(v.facts.number, "mark", text, Tone.WARN) for v in views for text in v.marks]
    shown = {v.facts.number for v in views}
    found += [
        Notable(number, "mark", text, Tone.WARN, known=False)
        for number, texts in sorted(marks.items())
        if number not in shown
        for text in texts
    ]
    return sorted(found, key=lambda n: n.number)


def _redaction(capture: Capture, facts: Sequence[ExchangeFacts]) -> tuple[tuple[str, ...], int]:
    """What the recorder redacted, each name once whatever its case, and in how many exchanges."""
    names: dict[str, str] = {}
    for name in capture.redacted:
        names.setdefault(name.lower(), name)
    return tuple(names.values()), sum(f.redacted for f in facts)
