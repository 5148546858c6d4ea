"""The SDK matrix as one self-contained HTML page (`templates/matrix.html.j2`, pure): the
table, the verdict, then each exchange a finding links to, once under its own anchor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice

from recorder._pages import anchor, render_page
from recorder.capture import Capture
from recorder.diff._matrix import EVERY, KINDS, Finding, Matrix, Seen, Verdict, finding_order
from recorder.diff._report import Link, Shown, exchange_text, find_exchange

LINKS = 12  # links per finding: where it was seen first


@dataclass(frozen=True, slots=True)
class Item:
    text: str
    operations: str
    links: tuple[Link, ...]
    new: bool
    reason: str


class _Page:
    def __init__(self, matrix: Matrix, verdict: Verdict | None) -> None:
        self.matrix = matrix
        self.verdict = verdict
        self.new = {(sdk, s, f.text) for sdk, s, f in verdict.new} if verdict else set()
        self.shown: dict[str, Shown] = {}

    def cell(self, scenario: str | None, sdk: str) -> list[tuple[str, list[Item]]] | None:
        if scenario is not None and (scenario, sdk) not in self.matrix.cells:
            return None
        if scenario is None:
            findings: Sequence[Finding] = sorted(self.matrix.common(sdk), key=finding_order)
        else:
            findings = self.matrix.shown(scenario, sdk)
        return [
            (kind, [self._item(f, scenario, sdk) for f in findings if f.kind == kind])
            for kind in KINDS
            if any(f.kind == kind for f in findings)
        ]

    def _item(self, finding: Finding, scenario: str | None, sdk: str) -> Item:
        scenarios = [scenario] if scenario else self.matrix.scenarios
        links = (  # lazily: only the exchanges linked are shown
            link
            for s in scenarios
            for seen in self._seen(s, sdk, finding)
            for link in self._links(s, sdk, seen)
        )
        reasons = self.verdict.reasons if self.verdict else {}
        new = any((sdk, s, finding.text) in self.new for s in scenarios)
        keys = [(sdk, s, finding.text) for s in scenarios]
        reason = next((reasons[k] for k in keys if k in reasons), "")
        return Item(finding.text, finding.operations, tuple(islice(links, LINKS)), new, reason)

    def _seen(self, scenario: str, sdk: str, finding: Finding) -> tuple[Seen, ...]:
        cell = self.matrix.cells.get((scenario, sdk))
        same = [f for f in cell.findings if f == finding] if cell else []
        return same[0].seen if same else ()

    def _links(self, scenario: str, sdk: str, seen: Seen) -> list[Link]:
        diff = self.matrix.cells[scenario, sdk].diff
        if diff is None:
            return []
        out = []
        for folder, capture, number in (
            (self.matrix.reference, diff.a_capture, seen.a),
            (sdk, diff.b_capture, seen.b),
        ):
            anchor = self._show(folder, scenario, capture, number)
            if anchor is not None:
                out.append(Link(f"{folder}#{number}", anchor))
        return out

    def _show(
        self, folder: str, scenario: str, capture: Capture | None, number: int | None
    ) -> str | None:
        exchange = find_exchange(capture, number)
        if exchange is None:
            return None
        at = anchor(f"x-{folder}-{scenario}-{number}")
        if at not in self.shown:
            title = f"{folder}/{scenario} #{number} {exchange.classification.operation or ''}"
            self.shown[at] = Shown(at, title, exchange_text(exchange))
        return at


def render_matrix_html(matrix: Matrix, verdict: Verdict | None = None) -> str:
    """The whole page."""
    page = _Page(matrix, verdict)
    rows = [(EVERY, [page.cell(None, sdk) for sdk in matrix.sdks])]
    for scenario in matrix.scenarios:
        cells = [page.cell(scenario, sdk) for sdk in matrix.sdks]
        rows.append((scenario, cells))
    return render_page(
        "matrix.html.j2",
        matrix=matrix,
        rows=rows,
        verdict=verdict,
        exchanges=list(page.shown.values()),
        every=EVERY,
    )
