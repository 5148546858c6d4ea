"""Diff reports: text (coloured on a terminal), markdown, JSON and the HTML page (JUnit XML
is `_junit`), each from the `CaptureDiff`s of the file pairs and the files with no partner.

Same pairs are counted, not listed; a folder diff ends with a table of its files.
`report_dict` is the JSON shape, stable for CI.  Every report is valid UTF-8 whatever the
captures held.  The page shows the exchanges its rows name when the diffs carry their captures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import click

from recorder._pages import render_page
from recorder.capture import Capture, Exchange, render_exchange
from recorder.diff._junit import render_junit_report
from recorder.diff._result import (
    ABSENT,
    CaptureDiff,
    Difference,
    DiffKind,
    ExchangeDiff,
    PairKind,
    RenameSummary,
)
from recorder.diff._shown import (
    MARKS,
    Excerpt,
    Unpaired,
    describe,
    file_counts,
    file_rows,
    is_folder_report,
    json_text,
    listed,
    printable,
    rows,
    side_label,
)

REPORT_FORMAT = "a2a-recorder-diff"
# 2: paths `events[3~4]`, the `empty-defaults` note, each pair's `binding`, the `files` counts.
REPORT_VERSION = 2

_STYLES: Mapping[str, dict[str, Any]] = {
    "title": {"bold": True},
    "rename": {"fg": "cyan"},
    DiffKind.CHANGED: {"fg": "yellow"},
    DiffKind.ADDED: {"fg": "green"},
    DiffKind.REMOVED: {"fg": "red"},
    DiffKind.FRAMING: {"fg": "magenta"},
    DiffKind.TIMING: {"fg": "blue"},
    DiffKind.KEY_ORDER: {"fg": "yellow"},
    DiffKind.EMPTY_DEFAULT: {"dim": True},
    DiffKind.POLLS: {"dim": True},
    PairKind.INSERTED: {"fg": "green"},
    PairKind.REMOVED: {"fg": "red"},
    "summary": {"bold": True},
}


def render_text(
    diffs: Sequence[CaptureDiff], *, unpaired: Unpaired = (), color: bool = False
) -> str:
    """Plain text, styled with ANSI colours when `color` (a terminal) is set."""

    def style(text: str, key: str) -> str:
        return click.style(text, **_STYLES[key]) if color else text

    lines: list[str] = []
    for diff in diffs:
        lines.append(style(f"--- A: {diff.a_name}", "title"))
        lines.append(style(f"+++ B: {diff.b_name}", "title"))
        if diff.approximate:
            lines.append("note: the captures differ too much to align exactly; paired by position")
        for pair in listed(diff):
            lines.extend(_text_pair(pair, style))
        lines.append(style(f"Summary: {diff.summary()}", "summary"))
    lines.extend(f"unpaired: only in {side}: {name}" for side, name in unpaired)
    if is_folder_report(diffs, unpaired):
        lines += ["", *_text_files(diffs, unpaired, style)]
    return printable("\n".join(lines) + "\n")


def _text_pair(pair: ExchangeDiff, style: Callable[[str, str], str]) -> list[str]:
    if pair.kind in (PairKind.INSERTED, PairKind.REMOVED):
        return [style(f"{pair.label}  {pair.operation}  {pair.kind.value}", pair.kind)]
    out = [style(f"{pair.label}  {pair.operation}", "title")]
    for rename in pair.renames:
        raw = f"  [{len(rename.raw)} raw]" if rename.raw else ""
        times = f" ×{rename.count}" if rename.count > 1 else ""
        out.append(style(f"  = {rename.text}{times}{raw}", "rename"))
    for d in pair.differences:
        out.append(style(f"  {MARKS[d.kind]} {describe(d)}", d.kind))
    return out


def _text_files(
    diffs: Sequence[CaptureDiff], unpaired: Unpaired, style: Callable[[str, str], str]
) -> list[str]:
    """The files table that ends a folder diff: one line per file, then the counts."""
    files = file_rows(diffs, unpaired)
    width = max(len(f.name) for f in files)
    out = [style(f"Files: {len(files)}", "title")]
    out += [f"  {f.name.ljust(width)}  {f.outcome.ljust(9)}  {f.summary}".rstrip() for f in files]
    counts = ", ".join(f"{n} {outcome}" for outcome, n in file_counts(files).items())
    return [*out, style(f"Files summary: {counts}", "summary")]


def _difference_dict(diff: Difference) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": diff.kind.value, "path": diff.path}
    if diff.old is not ABSENT:
        out["old"] = diff.old
    if diff.new is not ABSENT:
        out["new"] = diff.new
    return out


def _rename_dict(rename: RenameSummary) -> dict[str, Any]:
    return {
        "rule": rename.rule,
        "text": rename.text,
        "old": rename.old,
        "new": rename.new,
        "count": rename.count,
        "direction": "v1.0 → v0.3" if rename.reverse else "v0.3 → v1.0",
        "raw": [_difference_dict(d) for d in rename.raw],
    }


def _pair_dict(pair: ExchangeDiff) -> dict[str, Any]:
    return {
        "a": pair.a,
        "b": pair.b,
        "operation": pair.operation,
        "binding": pair.binding,
        "status": pair.kind.value,
        "renames": [_rename_dict(r) for r in pair.renames],
        "differences": [_difference_dict(d) for d in pair.differences],
        "raw": [_difference_dict(d) for d in pair.raw],
    }


def report_dict(diff: CaptureDiff) -> dict[str, Any]:
    """The JSON-ready form of one capture diff."""
    return {
        "a": diff.a_name,
        "b": diff.b_name,
        "same": diff.same,
        "approximate": diff.approximate,
        "summary": {
            "compared": diff.compared,
            "differ": diff.count(PairKind.CHANGED),
            "inserted": diff.count(PairKind.INSERTED),
            "removed": diff.count(PairKind.REMOVED),
            "renames": diff.renames,
            "text": diff.summary(),
        },
        "exchanges": [_pair_dict(p) for p in diff.exchanges],
    }


def render_json(
    diffs: Sequence[CaptureDiff], *, unpaired: Unpaired = (), color: bool = False
) -> str:
    files = file_counts(file_rows(diffs, unpaired))
    document = {
        "format": REPORT_FORMAT,
        "version": REPORT_VERSION,
        "same": all(d.same for d in diffs) and not unpaired,
        "files": {outcome.replace(" ", "_"): n for outcome, n in files.items()},
        "diffs": [report_dict(d) for d in diffs],
        "unpaired": [{"side": side, "name": name} for side, name in unpaired],
    }
    return json_text(document)


_MD_HEAD = "| A | B | operation | what | path | A value | B value |"


def md_text(text: str) -> str:
    """`text` as it reads inside a markdown table cell: one line, `|` and `\\` escaped."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render_markdown(
    diffs: Sequence[CaptureDiff], *, unpaired: Unpaired = (), color: bool = False
) -> str:
    out: list[str] = []
    for diff in diffs:
        out += [f"## `{md_text(diff.a_name)}` ~ `{md_text(diff.b_name)}`", ""]
        pairs = listed(diff)
        if pairs:
            out += [_MD_HEAD, "|---|---|---|---|---|---|---|"]
            for pair in pairs:
                for what, path, old, new in rows(pair):
                    labels = (side_label(pair, "A"), side_label(pair, "B"))
                    cells = (*labels, pair.operation, what, path, old.text, new.text)
                    out.append("| " + " | ".join(md_text(c) for c in cells) + " |")
            out.append("")
            out += _md_raw(pairs)
        out += [f"**Summary:** {diff.summary()}", ""]
    if unpaired:
        out += ["## Unpaired files", ""]
        out += [f"- only in {side}: `{md_text(n)}`" for side, n in unpaired] + [""]
    if is_folder_report(diffs, unpaired):
        out += _md_files(diffs, unpaired)
    return printable("\n".join(out))


def _md_files(diffs: Sequence[CaptureDiff], unpaired: Unpaired) -> list[str]:
    files = file_rows(diffs, unpaired)
    out = ["## Files", "", "| file | outcome | exchanges |", "|---|---|---|"]
    out += [f"| `{md_text(f.name)}` | {f.outcome} | {md_text(f.summary)} |" for f in files]
    counts = file_counts(files)
    out += [
        "",
        "| " + " | ".join(counts) + " |",
        "|" + "---|" * len(counts),
        "| " + " | ".join(str(n) for n in counts.values()) + " |",
        "",
    ]
    return out


def _md_raw(pairs: Sequence[ExchangeDiff]) -> list[str]:
    renamed = [(p, r) for p in pairs for r in p.renames if r.raw]
    if not renamed:
        return []
    out = ["<details><summary>Raw differences under the renames</summary>", ""]
    for pair, rename in renamed:
        out.append(f"- {pair.label} {pair.operation}: {md_text(rename.text)}")
        out += [f"  - `{md_text(describe(d))}`" for d in rename.raw]
    return out + ["", "</details>", ""]


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
    """Where a page links to an exchange (the diff page and the matrix page)."""

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
    """An exchange a page shows, as the capture holds it; `name` is the capture's (the matrix
    page gives none)."""

    anchor: str
    title: str
    text: str
    name: str = ""


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
    return f"d{k}-{side.lower()}{number}"


def _link(k: int, diff: CaptureDiff, side: str, number: int | None) -> Link | None:
    if number is None:
        return None
    shown = find_exchange(diff.a_capture if side == "A" else diff.b_capture, number) is not None
    return Link(f"{side}#{number}", _anchor(k, side, number) if shown else None)


def _pair_rows(k: int, diff: CaptureDiff, pair: ExchangeDiff) -> list[Row]:
    renames = {r.text: r for r in pair.renames}
    a, b = _link(k, diff, "A", pair.a), _link(k, diff, "B", pair.b)
    out = []
    for what, path, old, new in rows(pair):
        rename = renames.get(path) if what == "rename" else None
        raw = tuple(describe(d) for d in rename.raw) if rename is not None else ()
        out.append(Row(what, path, pair.operation, pair.binding or "", a, b, old, new, raw))
    return out


def find_exchange(capture: Capture | None, number: int | None) -> Exchange | None:
    if capture is None or number is None:
        return None
    return next((x for x in capture.exchanges if x.number == number), None)


def _exchanges(k: int, diff: CaptureDiff, pairs: Sequence[ExchangeDiff]) -> list[Shown]:
    out = []
    for pair in pairs:
        for side, number, capture, name in (
            ("A", pair.a, diff.a_capture, diff.a_name),
            ("B", pair.b, diff.b_capture, diff.b_name),
        ):
            exchange = find_exchange(capture, number)
            if exchange is not None:
                title = f"{side_label(pair, side)} {pair.operation}"
                anchor = _anchor(k, side, exchange.number)
                out.append(Shown(anchor, title, exchange_text(exchange), name))
    return out


def exchange_text(exchange: Exchange) -> str:
    try:
        return render_exchange(exchange)
    except ValueError as exc:  # a value the file format cannot hold; never lose the page
        return f"(exchange {exchange.number} cannot be shown as text: {exc})"


Renderer = Callable[..., str]
FORMATS: Mapping[str, Renderer] = {
    "text": render_text, "markdown": render_markdown, "json": render_json, "html": render_html,
    "junit": render_junit_report,
}  # fmt: skip


def render_report(
    fmt: str, diffs: Sequence[CaptureDiff], *, unpaired: Unpaired = (), color: bool = False
) -> str:
    """Render in one of `FORMATS`; raise ValueError naming the valid ones for anything else."""
    renderer = FORMATS.get(fmt)
    if renderer is None:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return renderer(diffs, unpaired=unpaired, color=color)
