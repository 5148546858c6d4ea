"""Times as a reader wants them: offsets as in the capture, durations in a readable unit."""

from __future__ import annotations


def offset_text(us: int) -> str:
    """`+1.250000s`, as the capture writes an offset."""
    sign = "-" if us < 0 else "+"
    return f"{sign}{abs(us) // 1_000_000}.{abs(us) % 1_000_000:06d}s"


def duration_text(us: int) -> str:
    """`0.4 ms`, `14 ms`, `1.23 s`, `2 min 3 s`."""
    if us < 10_000:
        return f"{us / 1000:.1f} ms"
    if us < 1_000_000:
        return f"{us // 1000} ms"
    if us < 60_000_000:
        return f"{us / 1_000_000:.2f} s"
    minutes, seconds = divmod(us // 1_000_000, 60)
    return f"{minutes} min {seconds} s"


def axis_step(span_us: int, wanted: int = 6) -> int:
    """The smallest step of 1, 2 or 5 times a power of ten giving at most `wanted` marks."""
    step = 1
    while True:
        for factor in (1, 2, 5):
            if span_us // (step * factor) <= wanted:
                return step * factor
        step *= 10


def axis_text(us: int) -> str:
    """An axis mark: `0`, `250 ms`, `1.5 s`, `2 min`."""
    if us == 0:
        return "0"
    if us < 1_000_000:
        return f"{us / 1000:g} ms"
    if us < 60_000_000 or us % 60_000_000:
        return f"{us / 1_000_000:g} s"
    return f"{us // 60_000_000} min"
