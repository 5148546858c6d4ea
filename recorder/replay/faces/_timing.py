"""`--timing none|recorded|xN`: how recorded gaps between events become real pauses."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from recorder.options import timing_speed


@dataclass(frozen=True, slots=True)
class Timing:
    """`speed` 0 sends at once; 1 keeps the recorded gaps; 2 halves them (`x2`)."""

    speed: float = 0.0

    @classmethod
    def parse(cls, text: str) -> Timing:
        """`none`, `recorded` or `xN` (`recorder.options.timing_speed`); ValueError else."""
        return cls(timing_speed(text))

    def delay(self, gap_us: int) -> float:
        """Seconds to wait for a recorded gap of `gap_us` microseconds."""
        if self.speed == 0.0 or gap_us <= 0:
            return 0.0
        return gap_us / 1_000_000 / self.speed


@dataclass(slots=True)
class Pacer:
    """Waits for recorded offsets from its creation, aiming at absolute due times so that late
    wake-ups do not add up along a long stream."""

    timing: Timing
    # A lambda, so the clock is looked up when a pacer is made (tests replace it).
    start: float = field(default_factory=lambda: time.monotonic())

    async def until(self, offset_us: int) -> None:
        if self.timing.speed == 0.0:
            return
        wait = self.start + self.timing.delay(offset_us) - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
