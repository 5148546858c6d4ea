"""The diff as one self-contained HTML page: no scripts, no fetches, everything escaped
(`templates/diff.html.j2`, through `recorder._pages`, with the stylesheet all pages share).

Each capture pair gets a table of its listed differences (A, B, operation, binding, what, path,
A value, B value; the span that changed is marked) and, below it, the exchanges those rows
name, as the capture holds them (`recorder.capture.render_exchange`); the A and B cells link to
them.  A folder diff ends with a table of its files.  Exchanges are only shown when the
`CaptureDiff` carries its captures (`diff_captures` sets them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from recorder._pages import render_page
from recorder.capture import Capture, Exchange, render_exchange
from recorder.diff._result import CaptureDiff, ExchangeDiff
from recorder.diff._shown import (
    Excerpt,
    Unpaired,
    describe,
    file_counts,
    file_rows,
    is_folder_report,
    label_a,
    label_b,
    listed,
    rows,
)


def render_html(
    diffs: Sequence[CaptureDiff], *, unpaired: Unpaired = (), color: bool = False
) -> str:
    """The whole page; `color` is ignored (the page has its own styles)."""
    return render_page("diff.html.j2", **diff_page(diffs, unpaired))


def diff_page(diffs: Sequence[CaptureDiff], unpaired: Unpaired = ()) -> dict[str, object]:
    """What the diff page shows (`templates/diff.html.j2`), for pages that extend it."""
    folder = is_folder_report(diffs, unpaired)
    files = file_rows(diffs, unpaired) if folder else []
    return {
        "sections": [_section(k, diff) for k, diff in enumerate(diffs)],
        "unpaired": list(unpaired),
        "files": files,
        "file_counts": file_counts(files),
    }


@dataclass(frozen=True, slots=True)
class Link:
    label: str  # A#4
    anchor: str | None  # where the page shows that exchange, if it does


@dataclass(frozen=True, slots=True)
class Row:
    what: str
    path: str
    operation: str
    binding: str
    a: Link | None
    b: Link | None
    old: Excerpt
    new: Excerpt
    raw: tuple[str, ...] = ()  # the changes a rename stands for


@dataclass(frozen=True, slots=True)
class Shown:
    """An exchange a row names, as the capture holds it."""

    anchor: str
    title: str
    name: str
    text: str


@dataclass(frozen=True, slots=True)
class Section:
    a_name: str
    b_name: str
    rows: list[Row]
    summary: str
    exchanges: list[Shown]


def _section(k: int, diff: CaptureDiff) -> Section:
    pairs = listed(diff)
    return Section(
        diff.a_name,
        diff.b_name,
        [row for pair in pairs for row in _pair_rows(k, diff, pair)],
        diff.summary(),
        _exchanges(k, diff, pairs),
    )


def _anchor(k: int, side: str, number: int) -> str:
    return f"d{k}-{side}{number}"


def _link(k: int, diff: CaptureDiff, side: str, number: int | None) -> Link | None:
    if number is None:
        return None
    capture = diff.a_capture if side == "a" else diff.b_capture
    shown = find_exchange(capture, number) is not None
    return Link(f"{side.upper()}#{number}", _anchor(k, side, number) if shown else None)


def _pair_rows(k: int, diff: CaptureDiff, pair: ExchangeDiff) -> list[Row]:
    renames = {r.text: r for r in pair.renames}
    a, b = _link(k, diff, "a", pair.a), _link(k, diff, "b", pair.b)
    out = []
    for what, path, old, new in rows(pair):
        rename = renames.get(path) if what == "rename" else None
        raw = tuple(describe(d) for d in rename.raw) if rename is not None else ()
        out.append(Row(what, path, pair.operation, pair.binding or "", a, b, old, new, raw))
    return out


def find_exchange(capture: Capture | None, number: int) -> Exchange | None:
    if capture is None:
        return None
    return next((x for x in capture.exchanges if x.number == number), None)


def _exchanges(k: int, diff: CaptureDiff, pairs: Sequence[ExchangeDiff]) -> list[Shown]:
    """The exchanges the rows name, each under its anchor, as the capture holds it."""
    out = []
    for pair in pairs:
        for side, number, capture, name in (
            ("a", pair.a, diff.a_capture, diff.a_name),
            ("b", pair.b, diff.b_capture, diff.b_name),
        ):
            exchange = find_exchange(capture, number) if number is not None else None
            if exchange is not None and number is not None:
                title = f"{label_a(pair) if side == 'a' else label_b(pair)} {pair.operation}"
                out.append(Shown(_anchor(k, side, number), title, name, exchange_text(exchange)))
    return out


def exchange_text(exchange: Exchange) -> str:
    try:
        return render_exchange(exchange)
    except ValueError as exc:  # a value the file format cannot hold; never lose the page
        return f"(exchange {exchange.number} cannot be shown as text: {exc})"
