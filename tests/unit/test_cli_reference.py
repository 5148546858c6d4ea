"""The CLI reference pages (scripts/docs_hooks.py) say what each command's `-h` says: the same
flags, each with its help, its value and its default; and nothing `-h` does not list."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import click
import pytest
from click.testing import CliRunner

from recorder.cli import main

HOOKS = Path(__file__).resolve().parents[2] / "scripts" / "docs_hooks.py"


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", HOOKS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOOK = _hooks()
NAMES = HOOK.commands()


def _words(text: str, table: bool = False) -> str:
    """Text as both places show it: escapes, code marks and (`table`) a Markdown table's cell
    borders off, spaces collapsed."""
    cells = re.sub(r"(?m)(^| )\|( |$)", " ", text) if table else text
    return " ".join(re.sub(r"\\(.)", r"\1", cells).replace("`", "").split())


def _page_flags(page: str) -> set[str]:
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    cells = [row.split(" | ")[0].removeprefix("| `").rstrip("`") for row in rows]
    return {flag for cell in cells for flag in re.findall(r"(?<![\w-])(-{1,2}[\w-]+)", cell)}


def test_every_command_has_a_page() -> None:
    assert main.list_commands(click.Context(main)) == NAMES
    assert set(HOOK.pages()) == {f"reference/cli/{name}.md" for name in NAMES}


@pytest.mark.parametrize("name", NAMES)
def test_a_page_says_what_dash_h_says(name: str) -> None:
    page = HOOK.page(name)
    shown = CliRunner().invoke(main, [name, "-h"], terminal_width=10_000).output
    options = [p for p in HOOK.command(name).params if isinstance(p, click.Option)]
    flags = {flag for option in options for flag in (*option.opts, *option.secondary_opts)}
    assert _page_flags(page) == flags | {"-h", "--help"}
    words = _words(page, table=True)
    for option in options:
        help_text = _words(option.help or "")
        assert help_text in words, (name, option.opts)
        assert help_text in _words(shown), (name, option.opts)
        if option.metavar:
            metavar = _words(option.metavar)
            assert f"{option.opts[0]} {metavar}" in words, option.opts
        if option.required:
            assert "required" in words
    assert _words(HOOK.command(name).help or "").split(".")[0] in words
    assert "Usage:" in shown and f"a2a-recorder {name} " in page


def test_the_choices_and_defaults_are_the_tables() -> None:
    page = _words(HOOK.page("diff"), table=True)
    assert "--format [text|markdown|json|html|junit] text Report format." in page
    record = _words(HOOK.page("record"), table=True)
    assert "--listen HOST:PORT 127.0.0.1:8480" in record
    assert "--no-card-rewrite Serve the agent card as the agent sent it" in record
    report = _words(HOOK.page("report"), table=True)
    assert "-o, --output FILE" in report and "It was --html before." in report
