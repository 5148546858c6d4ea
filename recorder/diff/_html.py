"""The diff as one self-contained HTML page: no scripts, no fetches, everything escaped.

Each capture pair gets a table of its listed differences (A, B, operation, binding, what, path,
A value, B value; the span that changed is marked) and, below it, the exchanges those rows
name, as the capture holds them (`recorder.capture.render_exchange`); the A and B cells link to
them.  A folder diff ends with a table of its files.  Exchanges are only shown when the
`CaptureDiff` carries its captures (`diff_captures` sets them).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

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
    printable,
    rows,
)

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0;width:100%}
th,td{border:1px solid #ccc;padding:.3em .5em;text-align:left;vertical-align:top}
td.v{font-family:ui-monospace,monospace;word-break:break-all}
td.v mark{background:#ffe58a} td.v mark.gap{background:none;border-left:2px solid #d9a400}
tr.rename td{background:#e8f6fb} tr.added td{background:#eafbe8} tr.removed td{background:#fbeaea}
tr.inserted td{background:#eafbe8} tr.framing td{background:#f6eafb}
tr.empty-default td,tr.polls td{color:#888}
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
section.exchange{margin:1em 0} section.exchange:target h4{background:#ffe58a}
details{margin:.2em 0} .summary{font-weight:bold}
"""
_HEAD = (
    "<tr><th>A</th><th>B</th><th>operation</th><th>binding</th><th>what</th><th>path</th>"
    "<th>A value</th><th>B value</th></tr>"
)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def render_html(
    diffs: Sequence[CaptureDiff], *, unpaired: Unpaired = (), color: bool = False
) -> str:
    """The whole page; `color` is ignored (the page has its own styles)."""
    body: list[str] = []
    for k, diff in enumerate(diffs):
        body += _capture_section(k, diff)
    if unpaired:
        items = "".join(f"<li>only in {_e(s)}: <code>{_e(n)}</code></li>" for s, n in unpaired)
        body.append(f"<h2>Unpaired files</h2><ul>{items}</ul>")
    if is_folder_report(diffs, unpaired):
        body.append(_files_table(diffs, unpaired))
    return printable(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>a2a-recorder diff</title><style>{_CSS}</style></head><body>"
        "<h1>a2a-recorder diff</h1>" + "\n".join(body) + "</body></html>\n"
    )


def _capture_section(k: int, diff: CaptureDiff) -> list[str]:
    out = [f"<h2><code>{_e(diff.a_name)}</code> ~ <code>{_e(diff.b_name)}</code></h2>"]
    pairs = listed(diff)
    if pairs:
        out += ["<table>" + _HEAD, *(_pair_rows(k, diff, p) for p in pairs), "</table>"]
    out.append(f'<p class="summary">Summary: {_e(diff.summary())}</p>')
    out += _exchanges(k, diff, pairs)
    return out


def _anchor(k: int, side: str, number: int) -> str:
    return f"d{k}-{side}{number}"


def _link(k: int, diff: CaptureDiff, side: str, number: int | None) -> str:
    if number is None:
        return ""
    capture = diff.a_capture if side == "a" else diff.b_capture
    label = f"{side.upper()}#{number}"
    if _find(capture, number) is None:
        return _e(label)
    return f'<a href="#{_anchor(k, side, number)}">{_e(label)}</a>'


def _value(excerpt: Excerpt) -> str:
    if not excerpt.before and not excerpt.after:
        return _e(excerpt.changed)
    # An empty span (the other side inserted text here) is marked by a bar where it goes.
    changed = (
        f"<mark>{_e(excerpt.changed)}</mark>" if excerpt.changed else '<mark class="gap"></mark>'
    )
    return _e(excerpt.before) + changed + _e(excerpt.after)


def _pair_rows(k: int, diff: CaptureDiff, pair: ExchangeDiff) -> str:
    out = []
    renames = {r.text: r for r in pair.renames}
    for what, path, old, new in rows(pair):
        cell = _e(path)
        rename = renames.get(path) if what == "rename" else None
        if rename is not None and rename.raw:
            raw = "".join(f"<li><code>{_e(describe(d))}</code></li>" for d in rename.raw)
            cell = f"<details><summary>{_e(path)}</summary><ul>{raw}</ul></details>"
        out.append(
            f'<tr class="{_e(what)}"><td>{_link(k, diff, "a", pair.a)}</td>'
            f"<td>{_link(k, diff, 'b', pair.b)}</td><td>{_e(pair.operation)}</td>"
            f"<td>{_e(pair.binding or '')}</td><td>{_e(what)}</td><td>{cell}</td>"
            f'<td class="v">{_value(old)}</td><td class="v">{_value(new)}</td></tr>'
        )
    return "\n".join(out)


def _find(capture: Capture | None, number: int) -> Exchange | None:
    if capture is None:
        return None
    return next((x for x in capture.exchanges if x.number == number), None)


def _exchanges(k: int, diff: CaptureDiff, pairs: Sequence[ExchangeDiff]) -> list[str]:
    """The exchanges the rows name, each under its anchor, as the capture holds it."""
    out = []
    for pair in pairs:
        for side, number, capture, name in (
            ("a", pair.a, diff.a_capture, diff.a_name),
            ("b", pair.b, diff.b_capture, diff.b_name),
        ):
            exchange = _find(capture, number) if number is not None else None
            if exchange is not None and number is not None:
                title = f"{label_a(pair) if side == 'a' else label_b(pair)} {pair.operation}"
                out.append(
                    f'<section class="exchange" id="{_anchor(k, side, number)}">'
                    f"<h4>{_e(title)} <small><code>{_e(name)}</code></small></h4>"
                    f"<pre>{_e(_exchange_text(exchange))}</pre></section>"
                )
    if not out:
        return []
    # Shown open, not in <details>: a link into a closed <details> does not open it everywhere.
    return ["<h3>The exchanges above, as recorded</h3>", *out]


def _exchange_text(exchange: Exchange) -> str:
    try:
        return render_exchange(exchange)
    except ValueError as exc:  # a value the file format cannot hold; never lose the page
        return f"(exchange {exchange.number} cannot be shown as text: {exc})"


def _files_table(diffs: Sequence[CaptureDiff], unpaired: Unpaired) -> str:
    files = file_rows(diffs, unpaired)
    lines = "".join(
        f"<tr><td><code>{_e(f.name)}</code></td><td>{_e(f.outcome)}</td>"
        f"<td>{_e(f.summary)}</td></tr>"
        for f in files
    )
    counts = file_counts(files)
    head = "".join(f"<th>{_e(outcome)}</th>" for outcome in counts)
    cells = "".join(f"<td>{n}</td>" for n in counts.values())
    return (
        f"<h2>Files</h2><table><tr><th>file</th><th>outcome</th><th>exchanges</th></tr>"
        f"{lines}</table><table><tr>{head}</tr><tr>{cells}</tr></table>"
    )
