"""Reading a capture cut short (pure): `salvage(data)`.

A copy interrupted, a disk that filled, a writer killed: damage in its last exchange that is a
cut (said "truncated?", or found at the end of the text) is a `Cut`, and the exchanges before
that exchange are the capture; any other damage is still an error.
"""

from __future__ import annotations

from dataclasses import dataclass

from recorder._errors import CaptureParseError
from recorder.capture._model import Capture
from recorder.capture._parse import parse_bytes


@dataclass(frozen=True, slots=True)
class Cut:
    """Where a capture read by `salvage` stops short: its last exchange, from `line` on."""

    filename: str
    line: int
    offset: int
    damage: CaptureParseError

    def __str__(self) -> str:
        return (
            f"{self.filename}:{self.line}: the capture is cut short in its last exchange "
            f"({self.damage.message}, line {self.damage.line}); read up to the exchange before"
        )


def salvage(data: bytes, filename: str = "<capture>") -> tuple[Capture, Cut | None]:
    """`parse_bytes`, with the exchanges before a cut in the last one; else damage raises."""
    try:
        return parse_bytes(data, filename), None
    except CaptureParseError as damage:
        error = damage
        last = data.count(b"\n") + (not data.endswith(b"\n"))
        for start in _cut_points(data):
            line = data.count(b"\n", 0, start) + 1
            if damage.line < line or not ("truncated" in damage.message or damage.line >= last):
                continue
            try:
                return parse_bytes(data[:start], filename), Cut(filename, line, start, damage)
            except CaptureParseError as earlier:
                error = earlier
        raise error from None


def _cut_points(data: bytes) -> list[int]:
    """Where the last exchange may start, latest first: a last `##` line, then the last `###`."""
    tail = data.rfind(b"\n") + 1
    cut_line = tail < len(data) and b"### ".startswith(data[tail:])
    return [p for p in (tail if cut_line else 0, data.rfind(b"\n###") + 1) if p]
