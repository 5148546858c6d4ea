"""Read a report page back with the stdlib HTML parser: what a browser would show, as data.

Independent of the renderer: it knows only the page's documented hooks (`a.row` with
`data-exchange`, `section.exchange` with `data-exchange`, `data-item="N:side:i"` on every tick
and block), and collects the visible text of each row and detail section.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from html.parser import HTMLParser

from recorder.capture import Capture
from recorder.protocol import event_data

VOID = frozenset(
    {
        "meta",
        "br",
        "input",
        "img",
        "hr",
        "link",
        "line",
        "polygon",
        "path",
        "circle",
        "rect",
        "source",
        "wbr",
    }
)


@dataclass
class Page:
    tags: Counter[str] = field(default_factory=Counter)
    attributes: list[tuple[str, str, str]] = field(default_factory=list)  # (tag, name, value)
    rows: dict[int, dict[str, str]] = field(default_factory=dict)  # number -> attributes
    row_text: dict[int, str] = field(default_factory=lambda: defaultdict(str))
    sections: dict[int, str] = field(default_factory=lambda: defaultdict(str))
    items: Counter[str] = field(default_factory=Counter)
    styles: list[str] = field(default_factory=list)  # <style> contents and style attributes
    scripts: list[str] = field(default_factory=list)
    text: str = ""


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self._stack: list[tuple[str, int | None, int | None]] = []  # tag, row, section
        self._raw: str | None = None

    def _where(self) -> tuple[int | None, int | None]:
        return self._stack[-1][1:] if self._stack else (None, None)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        self.page.tags[tag] += 1
        self.page.attributes += [(tag, name, value) for name, value in values.items()]
        if "style" in values:
            self.page.styles.append(values["style"])
        if "data-item" in values:
            self.page.items[values["data-item"]] += 1
        row, section = self._where()
        classes = values.get("class", "").split()
        if tag == "a" and "row" in classes:
            row = int(values["data-exchange"])
            assert row not in self.page.rows, f"two rows for exchange {row}"
            self.page.rows[row] = values
        if tag == "section" and "exchange" in classes:
            section = int(values["data-exchange"])
            assert section not in self.page.sections, f"two sections for exchange {section}"
            self.page.sections[section] = ""
        if tag in ("style", "script"):
            self._raw = ""
        if tag not in VOID:
            self._stack.append((tag, row, section))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self._stack.pop()

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "script") and self._raw is not None:
            (self.page.styles if tag == "style" else self.page.scripts).append(self._raw)
            self._raw = None
        if tag in VOID:
            return
        while self._stack:
            if self._stack.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._raw is not None:
            self._raw += data
            return
        self.page.text += data
        row, section = self._where()
        if row is not None:
            self.page.row_text[row] += data
        if section is not None:
            self.page.sections[section] += data


def read_page(html: str) -> Page:
    reader = _Reader()
    reader.feed(html)
    reader.close()
    return reader.page


def shown_json(text: str) -> str | None:
    """How the page shows a JSON text: pretty, indent 2, non-ASCII kept (None: not JSON)."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return None


def missing_from(page: Page, capture: Capture) -> list[str]:
    """What of the capture the page does not show; empty when every part is there."""
    gaps: list[str] = []
    numbers = [x.number for x in capture.exchanges]
    if sorted(page.rows) != numbers or sorted(page.sections) != numbers:
        gaps.append(f"rows {sorted(page.rows)} / sections {sorted(page.sections)} != {numbers}")
    for x in capture.exchanges:
        section, label = page.sections.get(x.number, ""), page.row_text.get(x.number, "")
        operation = x.classification.operation or "not A2A"
        if f"#{x.number}" not in label or operation not in label:
            gaps.append(f"#{x.number}: row label {label!r}")
        if f"{x.request.method} {x.request.target}" not in section:
            gaps.append(f"#{x.number}: request line")
        gaps += [
            f"#{x.number}: request header {k}"
            for k, v in x.request.headers
            if f"{k}: {v}" not in section
        ]
        gaps += _missing_body(section, x.number, "request", x.request.body)
        gaps += _missing_items(page, section, x.number, "request", x.request.messages, ())
        if x.response is None:
            if "No response" not in section:
                gaps.append(f"#{x.number}: no 'No response'")
            continue
        if f"{x.response.http_version} {x.response.status}" not in section:
            gaps.append(f"#{x.number}: status line")
        gaps += [
            f"#{x.number}: response header {k}"
            for k, v in (*x.response.headers, *x.response.trailers)
            if f"{k}: {v}" not in section
        ]
        gaps += _missing_body(section, x.number, "response", x.response.body)
        gaps += _missing_items(
            page, section, x.number, "response", x.response.messages, x.response.events
        )
    return gaps


def _missing_body(section: str, number: int, side: str, body: bytes) -> list[str]:
    if not body:
        return []
    text = body.decode("utf-8", "replace")
    forms = (shown_json(text), text)  # pretty when the wire form allows it, else verbatim
    return [] if any(f and f in section for f in forms) else [f"#{number}: {side} body"]


def _missing_items(
    page: Page, section: str, number: int, side: str, messages: tuple, events: tuple
) -> list[str]:
    gaps = []
    # A response's events and messages are ticks on the arrow and blocks in the detail.
    expected = 2 if side == "response" else 1
    texts = [event_data(e.lines) for e in events] or [m.json or "" for m in messages]
    for i, text in enumerate(texts):
        item = f"{number}:{side}:{i}"
        if page.items[item] != expected:
            gaps.append(f"{item}: {page.items[item]} items, expected {expected}")
        shown = shown_json(text) if text else None
        if shown is not None and shown not in section:
            gaps.append(f"{item}: data not shown")
    return gaps
