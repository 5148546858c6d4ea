"""`--timing` parsing and the pacer's schedule: waits aim at absolute due times, so a late
wake-up is absorbed by the next wait instead of adding up along a stream.  The clock and the
sleep are replaced: the schedule arithmetic is what is under test."""

from __future__ import annotations

import asyncio

import pytest

from recorder.replay.faces._timing import Pacer, Timing


@pytest.mark.parametrize(
    ("text", "speed"), [("none", 0.0), ("recorded", 1.0), ("x2", 2.0), ("x0.5", 0.5)]
)
def test_timing_parses(text: str, speed: float) -> None:
    assert Timing.parse(text).speed == speed


@pytest.mark.parametrize("text", ["x0", "x-1", "xfast", "fast", ""])
def test_bad_timing_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="none, recorded or xN"):
        Timing.parse(text)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.waits: list[float] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(round(seconds, 6))
        self.now += seconds + 0.02  # every wake-up is 20 ms late


def run_schedule(monkeypatch: pytest.MonkeyPatch, timing: str, offsets: list[int]) -> Clock:
    clock = Clock()
    monkeypatch.setattr("recorder.replay.faces._timing.time.monotonic", clock.monotonic)
    monkeypatch.setattr("recorder.replay.faces._timing.asyncio.sleep", clock.sleep)

    async def pace() -> None:
        pacer = Pacer(Timing.parse(timing))
        for offset in offsets:
            await pacer.until(offset)

    asyncio.run(pace())
    return clock


def test_late_wake_ups_do_not_add_up(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = run_schedule(monkeypatch, "recorded", [300_000, 600_000, 900_000])
    assert clock.waits == [0.3, 0.28, 0.28]
    assert clock.now == pytest.approx(100.92)  # one lateness, not three


def test_speed_scales_the_schedule(monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_schedule(monkeypatch, "x2", [300_000, 600_000]).waits == [0.15, 0.13]


def test_none_and_past_offsets_never_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_schedule(monkeypatch, "none", [300_000, 600_000]).waits == []
    assert run_schedule(monkeypatch, "recorded", [0, -5, 0]).waits == []
