"""Diff reports: text (coloured on a terminal), markdown, JSON and a self-contained HTML page.

Every renderer takes the same input, a sequence of `CaptureDiff` (one per file pair) plus the
names of files that had no partner, and returns a string.  Same pairs are counted, not listed.
Each listed difference names both exchanges (`A#3 ~ B#4`), the operation, and `path: old → new`;
each capture ends with its summary line.  `report_dict` is the JSON shape, stable for CI.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import click

from recorder.diff._result import (
    ABSENT,
    CaptureDiff,
    Difference,
    DiffKind,
    ExchangeDiff,
    PairKind,
    RenameSummary,
)

REPORT_FORMAT = "a2a-recorder-diff"
REPORT_VERSION = 1
MAX_SHOWN = 160  # characters of a value shown in text, markdown and HTML rows

Unpaired = Sequence[tuple[str, str]]  # (side "A" or "B", file name)

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


def show(value: Any, limit: int | None = MAX_SHOWN) -> str:
    """A value as one line: strings and JSON quoted compactly, `(absent)` for nothing."""
    if value is ABSENT:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    if limit is not None and len(text) > limit:
        return text[: limit - 1] + "…"
    return text


def describe(diff: Difference) -> str:
    """`path: old → new`, `path: added new`, `path: removed old`, or a key-order note."""
    if diff.kind is DiffKind.KEY_ORDER:
        old, new = ", ".join(diff.old), ", ".join(diff.new)
        return f"key order at {diff.path or '(root)'}: {old} → {new}"
    if diff.kind is DiffKind.EMPTY_DEFAULT:
        return _describe_empty(diff)
    if diff.kind is DiffKind.POLLS:
        return f"polls: {diff.old} → {diff.new} identical polls in a row (only the last compared)"
    if diff.kind is DiffKind.ADDED:
        return f"{diff.path}: added {show(diff.new)}"
    if diff.kind is DiffKind.REMOVED:
        return f"{diff.path}: removed {show(diff.old)}"
    suffix = f" ({diff.kind.value})" if diff.kind in (DiffKind.FRAMING, DiffKind.TIMING) else ""
    return f"{diff.path}: {show(diff.old)} → {show(diff.new)}{suffix}"


def _describe_empty(diff: Difference) -> str:
    """The grouped note: which empty defaults ({}, [], "") only one side sends."""
    if not isinstance(diff.old, dict) or not isinstance(diff.new, dict):  # one ungrouped field
        side = "A" if diff.new is ABSENT else "B"
        value = diff.old if diff.new is ABSENT else diff.new
        return f"{diff.path}: empty default {show(value)} sent only by {side}"
    parts = [f"only {side} sends {_counted(names)}"
             for side, names in (("A", diff.old), ("B", diff.new)) if names]
    return "empty defaults (proto-JSON reads them as absent): " + "; ".join(parts)


def _counted(names: Mapping[str, int]) -> str:
    return ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in names.items())


_MARKS: Mapping[DiffKind, str] = {
    DiffKind.CHANGED: "~",
    DiffKind.ADDED: "+",
    DiffKind.REMOVED: "-",
    DiffKind.FRAMING: "~",
    DiffKind.TIMING: "~",
    DiffKind.KEY_ORDER: "~",
    DiffKind.EMPTY_DEFAULT: "·",
    DiffKind.POLLS: "·",
}


def _listed(diff: CaptureDiff) -> list[ExchangeDiff]:
    return [e for e in diff.exchanges if e.kind is not PairKind.SAME or e.differences]


# -- text ---------------------------------------------------------------------------------------


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
        for pair in _listed(diff):
            lines.extend(_text_pair(pair, style))
        lines.append(style(f"Summary: {diff.summary()}", "summary"))
    lines.extend(f"unpaired: only in {side}: {name}" for side, name in unpaired)
    return "\n".join(lines) + "\n"


def _text_pair(pair: ExchangeDiff, style: Callable[[str, str], str]) -> list[str]:
    if pair.kind in (PairKind.INSERTED, PairKind.REMOVED):
        return [style(f"{pair.label}  {pair.operation}  {pair.kind.value}", pair.kind)]
    out = [style(f"{pair.label}  {pair.operation}", "title")]
    for rename in pair.renames:
        raw = f"  [{len(rename.raw)} raw]" if rename.raw else ""
        times = f" ×{rename.count}" if rename.count > 1 else ""
        out.append(style(f"  = {rename.text}{times}{raw}", "rename"))
    for d in pair.differences:
        out.append(style(f"  {_MARKS[d.kind]} {describe(d)}", d.kind))
    return out


# -- JSON ---------------------------------------------------------------------------------------


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
    document = {
        "format": REPORT_FORMAT,
        "version": REPORT_VERSION,
        "same": all(d.same for d in diffs) and not unpaired,
        "diffs": [report_dict(d) for d in diffs],
        "unpaired": [{"side": side, "name": name} for side, name in unpaired],
    }
    return json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n"


# -- rows shared by markdown and HTML -----------------------------------------------------------


def _rows(pair: ExchangeDiff) -> list[tuple[str, str, str, str]]:
    """(what, path, A value, B value) rows for one listed pair."""
    if pair.kind in (PairKind.INSERTED, PairKind.REMOVED):
        return [(pair.kind.value, "", "", "")]
    rows = [("rename", r.text, r.old, r.new) for r in pair.renames]
    for d in pair.differences:
        old = "" if d.old is ABSENT else show(d.old)
        new = "" if d.new is ABSENT else show(d.new)
        rows.append((d.kind.value, d.path, old, new))
    return rows


def _a(pair: ExchangeDiff) -> str:
    return f"A#{pair.a}" if pair.a is not None else ""


def _b(pair: ExchangeDiff) -> str:
    return f"B#{pair.b}" if pair.b is not None else ""


# -- markdown -----------------------------------------------------------------------------------


_MD_HEAD = "| A | B | operation | what | path | A value | B value |"


def _md(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render_markdown(
    diffs: Sequence[CaptureDiff], *, unpaired: Unpaired = (), color: bool = False
) -> str:
    out: list[str] = []
    for diff in diffs:
        out += [f"## `{_md(diff.a_name)}` ~ `{_md(diff.b_name)}`", ""]
        listed = _listed(diff)
        if listed:
            out += [_MD_HEAD, "|---|---|---|---|---|---|---|"]
            for pair in listed:
                for what, path, old, new in _rows(pair):
                    cells = (_a(pair), _b(pair), pair.operation, what, path, old, new)
                    out.append("| " + " | ".join(_md(c) for c in cells) + " |")
            out.append("")
            out += _md_raw(listed)
        out += [f"**Summary:** {diff.summary()}", ""]
    if unpaired:
        out += ["## Unpaired files", ""]
        out += [f"- only in {side}: `{_md(n)}`" for side, n in unpaired] + [""]
    return "\n".join(out)


def _md_raw(pairs: Sequence[ExchangeDiff]) -> list[str]:
    renamed = [(p, r) for p in pairs for r in p.renames if r.raw]
    if not renamed:
        return []
    out = ["<details><summary>Raw differences under the renames</summary>", ""]
    for pair, rename in renamed:
        out.append(f"- {pair.label} {pair.operation}: {_md(rename.text)}")
        out += [f"  - `{_md(describe(d))}`" for d in rename.raw]
    return out + ["", "</details>", ""]


# -- HTML ---------------------------------------------------------------------------------------

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0;width:100%}
th,td{border:1px solid #ccc;padding:.3em .5em;text-align:left;vertical-align:top}
td.v{font-family:ui-monospace,monospace;word-break:break-all}
tr.rename td{background:#e8f6fb} tr.added td{background:#eafbe8} tr.removed td{background:#fbeaea}
tr.inserted td{background:#eafbe8} tr.framing td{background:#f6eafb} tr.key-order td{color:#888}
details{margin:.2em 0} .summary{font-weight:bold}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def render_html(
    diffs: Sequence[CaptureDiff], *, unpaired: Unpaired = (), color: bool = False
) -> str:
    body: list[str] = []
    for diff in diffs:
        body.append(f"<h2><code>{_e(diff.a_name)}</code> ~ <code>{_e(diff.b_name)}</code></h2>")
        listed = _listed(diff)
        if listed:
            body.append(
                "<table><tr><th>A</th><th>B</th><th>operation</th><th>what</th><th>path</th>"
                "<th>A value</th><th>B value</th></tr>"
            )
            body += [_html_pair(pair) for pair in listed]
            body.append("</table>")
        body.append(f'<p class="summary">Summary: {_e(diff.summary())}</p>')
    if unpaired:
        items = "".join(f"<li>only in {_e(s)}: <code>{_e(n)}</code></li>" for s, n in unpaired)
        body.append(f"<h2>Unpaired files</h2><ul>{items}</ul>")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>a2a-recorder diff</title><style>{_CSS}</style></head><body>"
        "<h1>a2a-recorder diff</h1>" + "\n".join(body) + "</body></html>\n"
    )


def _html_pair(pair: ExchangeDiff) -> str:
    rows = []
    renames = {r.text: r for r in pair.renames}
    for what, path, old, new in _rows(pair):
        cell = _e(path)
        rename = renames.get(path) if what == "rename" else None
        if rename is not None and rename.raw:
            raw = "".join(f"<li><code>{_e(describe(d))}</code></li>" for d in rename.raw)
            cell = f"<details><summary>{_e(path)}</summary><ul>{raw}</ul></details>"
        rows.append(
            f'<tr class="{_e(what)}"><td>{_e(_a(pair))}</td><td>{_e(_b(pair))}</td>'
            f"<td>{_e(pair.operation)}</td><td>{_e(what)}</td><td>{cell}</td>"
            f'<td class="v">{_e(old)}</td><td class="v">{_e(new)}</td></tr>'
        )
    return "\n".join(rows)


Renderer = Callable[..., str]
FORMATS: Mapping[str, Renderer] = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
    "html": render_html,
}


def render_report(
    fmt: str, diffs: Sequence[CaptureDiff], *, unpaired: Unpaired = (), color: bool = False
) -> str:
    """Render in one of `FORMATS`; raise ValueError naming the valid ones for anything else."""
    renderer = FORMATS.get(fmt)
    if renderer is None:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return renderer(diffs, unpaired=unpaired, color=color)
