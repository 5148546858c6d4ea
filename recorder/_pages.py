"""The HTML pages the package writes (diff, verify, report): one jinja2 environment, one
stylesheet, one last pass.  For every page:
- **Everything shown is text**: captures hold what remote peers sent, so every value is
  autoescaped (an unknown one is an error, `StrictUndefined`); only the package's own files
  (`templates/page.css`, the report's script) are marked safe.
- **One look**: `templates/page.css` is every page's stylesheet, inlined; no page fetches
  anything, and its Content-Security-Policy says so to the browser.
- **Valid UTF-8, visible controls**: `printable` runs over the whole page last, so lone
  surrogates (valid in JSON as `"\\ud800"`) and control characters become `\\uXXXX` escapes.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

TEMPLATES = Path(__file__).parent / "templates"
_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_NOT_IN_ANCHOR = re.compile(r"[^A-Za-z0-9_.-]+")


def printable(text: str) -> str:
    """`text` with lone surrogates and control characters (but tab, LF, CR) as `\\uXXXX`."""
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def anchor(text: str) -> str:
    """`text` as an element id: each run of characters other than `A-Za-z0-9_.-` as `-`."""
    return _NOT_IN_ANCHOR.sub("-", text)


@cache
def asset(name: str) -> Markup:
    """One of the package's own files under `templates/`, trusted as markup."""
    return Markup((TEMPLATES / name).read_text("utf-8"))


def render_page(template: str, **values: Any) -> str:
    """The page `template` renders with `values` (and `css`, the stylesheet), made printable."""
    page = _ENV.get_template(template).render(css=asset("page.css"), **values)
    return printable(page)
