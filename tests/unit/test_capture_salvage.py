"""A capture cut short anywhere (issue 29: a copy interrupted, a disk that filled, a writer
killed by hand) gives back every exchange before the cut, and says where it was cut; damage
that is no cut at its end is still an error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recorder.capture import CaptureParseError, parse_bytes, salvage

DATA = Path(__file__).resolve().parents[1] / "data"
CAPTURES = sorted([*DATA.glob("*.http"), *DATA.glob("sessions/*.http"), *DATA.glob("v1/*.http")])


def _starts(data: bytes) -> list[int]:
    """Where each exchange's `###` line starts."""
    return [m.start() + 1 for m in re.finditer(rb"\n###", data)]


@given(st.sampled_from(CAPTURES), st.data())
def test_every_cut_keeps_every_exchange_before_it(path: Path, data: st.DataObject) -> None:
    whole = path.read_bytes()
    starts = _starts(whole)
    cut = data.draw(st.integers(starts[0], len(whole)), label="cut")
    capture, where = salvage(whole[:cut], "cut.http")
    kept = sum(1 for start in (*starts[1:], len(whole)) if start <= cut)
    assert capture.exchanges == parse_bytes(whole).exchanges[:kept]
    if cut in (*starts, len(whole)):  # between two exchanges: a shorter capture, whole
        assert where is None
        return
    assert where is not None
    assert where.offset == starts[kept] and where.line == whole.count(b"\n", 0, where.offset) + 1
    assert str(where).startswith(f"cut.http:{where.line}: the capture is cut short")


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_a_cut_in_the_header_keeps_nothing_and_says_so(path: Path) -> None:
    whole = path.read_bytes()
    with pytest.raises(CaptureParseError, match="cut.http:"):
        salvage(whole[: _starts(whole)[0] - 2], "cut.http")


def test_damage_before_the_last_exchange_is_no_cut() -> None:
    whole = (DATA / "sessions" / "demo-session-jsonrpc.http").read_bytes()
    second = _starts(whole)[1]
    damaged = whole[:second] + b"### x\n" + whole[second:]
    with pytest.raises(CaptureParseError, match=r"expected '### <number>"):
        salvage(damaged[: len(damaged) - 10], "cut.http")


def test_damage_inside_a_whole_last_exchange_is_no_cut() -> None:
    whole = (DATA / "sessions" / "demo-session-jsonrpc.http").read_bytes()
    last = _starts(whole)[-1]
    damaged = whole[:last] + whole[last:].replace(b"HTTP/1.1 200 OK", b"HTTP/1.1 2x0 OK", 1)
    with pytest.raises(CaptureParseError, match="bad status line"):
        salvage(damaged, "cut.http")
