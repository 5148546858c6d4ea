"""The HTML pages (diff, verify, report): jinja2 templates with autoescaping, one stylesheet
inlined in each, no markup written by hand in the package."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest

import recorder.verify as verify
from recorder._pages import TEMPLATES, asset
from recorder.capture import Capture, read_capture
from recorder.diff import diff_captures, render_html
from recorder.report import render_report
from recorder.verify._result import latencies

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = ROOT / "tests/data/jsonrpc-send.http"
HOSTILE = '</pre></td><script>alert("x")</script><style>*{display:none}</style>'


def _hostile(capture: Capture) -> Capture:
    """The capture with a response header and an exchange note that try to end the markup."""
    first, *rest = capture.exchanges
    assert first.response is not None
    headers = (*first.response.headers, ("X-Odd", HOSTILE))
    changed = replace(
        first,
        response=replace(first.response, headers=headers),
        notes=(*first.notes, HOSTILE),
    )
    return replace(capture, exchanges=(changed, *rest))


def _pages() -> dict[str, str]:
    capture = read_capture(CAPTURE)
    odd = _hostile(capture)
    diff = diff_captures(capture, odd, a_name=f"a{HOSTILE}", b_name="b")
    result = verify.VerifyResult(
        "rec", "http://agent", diff, latencies=latencies(diff), notes=(HOSTILE,)
    )
    return {
        "diff": render_html([diff], unpaired=[("A", HOSTILE)]),
        "verify": verify.render_html(result),
        "report": render_report(odd, name=HOSTILE),
    }


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return _pages()


def test_every_page_inlines_the_one_stylesheet(pages: dict[str, str]) -> None:
    css = str(asset("page.css"))
    assert "table.rows" in css and "#detail" in css  # the diff's tables and the report's panel
    for name, page in pages.items():
        assert page.count(css) == 1, name
        style = page.split("<style>", 1)[1].split("</style>", 1)[0]
        assert style.strip() == css.strip(), name
        assert "default-src 'none'" in page, name  # and nothing may be fetched


def test_what_the_capture_says_is_text_on_every_page(pages: dict[str, str]) -> None:
    for name, page in pages.items():
        assert HOSTILE not in page, name
        assert '<script>alert("x")' not in page and "<style>*{display" not in page, name
        assert "&lt;/pre&gt;&lt;/td&gt;&lt;script&gt;" in page, name


def test_the_verify_page_is_the_diff_page_with_its_own_sections(pages: dict[str, str]) -> None:
    diff, page = pages["diff"], pages["verify"]
    assert "<title>a2a-recorder verify</title>" in page and "<h1>a2a-recorder verify</h1>" in page
    assert "<h2>Notes</h2>" in page and "<h2>Timing</h2>" in page
    assert page.index("<h2>Timing</h2>") < page.index("Verify: ") < page.index("</main>")
    assert diff.split("<main", 1)[1].split("<h2>Unpaired")[0] in page  # the same sections


def _literals(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def test_no_module_writes_markup_by_hand() -> None:
    """Pages come from templates: no Python string holds a table cell, a heading or a list
    item, and nothing escapes HTML itself (the templates' autoescaping does)."""
    offenders = []
    for path in sorted((ROOT / "recorder").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imports = [
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in (
                node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")]
            )
        ]
        if "html" in imports:
            offenders.append(f"{path.relative_to(ROOT)} imports html")
        tags = ("<td", "<tr", "<h2", "<li>", "<table", "<section")
        offenders += [
            f"{path.relative_to(ROOT)}: {text[:40]!r}"
            for text in _literals(path)
            if any(tag in text for tag in tags)
        ]
    assert offenders == []


def test_the_templates_ship_with_the_package() -> None:
    assert {p.name for p in TEMPLATES.iterdir()} >= {
        "page.css",
        "diff.html.j2",
        "verify.html.j2",
        "report.html.j2",
        "report.js",
    }
