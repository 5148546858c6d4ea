"""What a verify run found: the diff of recorded against live, and verify's own facts (pure).

Drift is a difference the diff counts, a request not sent because of an earlier answer
(`NotSent`), with `max_slowdown` an exchange slower than that factor, or with a baseline a
stale entry.  Exchanges recorded without a response are `skipped`: neither compared nor drift.
A slowdown counts only beyond `SLOWDOWN_FLOOR_US` of added time (the diff's timing tolerance).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from recorder._errors import Exit
from recorder.capture import Capture, Exchange
from recorder.ci import BaselineOutcome
from recorder.diff import CaptureDiff

SLOWDOWN_FLOOR_US = 50_000


@dataclass(frozen=True, slots=True)
class NotSent:
    number: int  # in the recorded capture
    operation: str
    reason: str


@dataclass(frozen=True, slots=True)
class Latency:
    a: int  # recorded exchange
    b: int  # live exchange (in the new capture)
    operation: str
    recorded_us: int
    live_us: int

    @property
    def ratio(self) -> float | None:
        return self.live_us / self.recorded_us if self.recorded_us > 0 else None

    def slower_than(self, factor: float) -> bool:
        added = self.live_us - self.recorded_us
        return added > SLOWDOWN_FLOOR_US and self.live_us > factor * self.recorded_us


@dataclass(frozen=True)
class VerifyResult:
    capture: str  # the recorded capture's name
    agent: str  # the live agent's URL
    diff: CaptureDiff  # A: recorded, B: the new capture
    not_sent: tuple[NotSent, ...] = ()
    skipped: tuple[NotSent, ...] = ()
    latencies: tuple[Latency, ...] = ()
    max_slowdown: float | None = None
    notes: tuple[str, ...] = ()  # what verify did that a reader should know
    new_capture: Path | None = None  # kept only with --out
    ids: Mapping[str, str] = field(default_factory=dict)  # recorded id -> live id
    # With --baseline: what it accepted (left out of `diff` and `not_sent`) and its stale entries.
    baseline: BaselineOutcome | None = None

    @property
    def slow(self) -> tuple[Latency, ...]:
        if self.max_slowdown is None:
            return ()
        return tuple(x for x in self.latencies if x.slower_than(self.max_slowdown))

    @property
    def stale(self) -> tuple[str, ...]:
        return self.baseline.stale if self.baseline is not None else ()

    @property
    def drift(self) -> bool:
        return not self.diff.same or bool(self.not_sent) or bool(self.slow) or bool(self.stale)

    @property
    def status(self) -> Exit:
        return Exit.FOUND if self.drift else Exit.OK

    def summary(self) -> str:
        words = [self.diff.summary()]
        if self.not_sent:
            words.append(f"{len(self.not_sent)} not sent")
        if self.max_slowdown is not None:
            words.append(f"{len(self.slow)} slower than ×{self.max_slowdown:g}")
        if self.baseline is not None:
            words.append(self.baseline.summary())
        verdict = "drift" if self.drift else "no drift"
        return f"{verdict}: " + ", ".join(words)


def latencies(diff: CaptureDiff) -> tuple[Latency, ...]:
    """Recorded against live duration of every pair the diff aligned, in the diff's order."""
    a = _by_number(diff.a_capture)
    b = _by_number(diff.b_capture)
    found = []
    for pair in diff.exchanges:
        x, y = a.get(pair.a or 0), b.get(pair.b or 0)
        if x is not None and y is not None and x.response is not None and y.response is not None:
            found.append(Latency(x.number, y.number, pair.operation, x.duration_us, y.duration_us))
    return tuple(found)


def _by_number(capture: Capture | None) -> dict[int, Exchange]:
    return {e.number: e for e in capture.exchanges} if capture is not None else {}
