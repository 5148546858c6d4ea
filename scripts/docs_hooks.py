"""mkdocs hook: the CLI reference, one page per command, rendered from the option tables.

Each command's flags, their values, defaults and help come from its option table
(`recorder.options`: `Command.table`), the same rows its `-h` comes from, so the pages cannot
drift from the help; `tests/unit/test_cli_reference.py` checks that every page says what
`-h` says.  The pages are made at build time (`reference/cli/<command>.md`); none is
written by hand or kept in the repository.

Run alone, it prints a page: `python scripts/docs_hooks.py diff`.
"""

from __future__ import annotations

import re
import sys
from typing import Any

import click

from recorder._shell import Command
from recorder.cli import main
from recorder.options import NAMES, Option

FOLDER = "reference/cli"
_MARKDOWN = re.compile(r"([\\*_<>\[\]])")


def _root() -> click.Context:
    """The group's context as the command line makes it (`-h` as well as `--help`)."""
    return click.Context(main, info_name="a2a-recorder", **main.context_settings)


def commands() -> list[str]:
    return main.list_commands(_root())


def command(name: str) -> Command:
    found = main.get_command(_root(), name)
    assert isinstance(found, Command), name
    return found


def pages() -> dict[str, str]:
    """Every page, by its path under docs/."""
    return {f"{FOLDER}/{name}.md": page(name) for name in commands()}


def page(name: str) -> str:
    """The reference page of one command: usage, what it does, its arguments and flags."""
    found = command(name)
    context = click.Context(found, info_name=name, parent=_root())
    usage = " ".join(found.collect_usage_pieces(context))
    lines = [f"# a2a-recorder {name}", "", "```text", f"a2a-recorder {name} {usage}", "```", ""]
    lines += [_text(paragraph) + "\n" for paragraph in _paragraphs(found.help or "")]
    lines += ["## Options", "", "| Option | Default | What it does |", "|---|---|---|"]
    lines += [_row(*cells) for option in found.table for cells in entries(option)]
    lines += [_row("-h, --help", "", "Show the help and exit."), ""]
    lines += [
        "Made from the command's option table, as its `-h` is ([conventions](../command-line.md)).",
        "",
    ]
    return "\n".join(lines)


def entries(option: Option) -> list[tuple[str, str, str]]:
    """A row's flags as (flag, default, help) entries: one, or one per switch."""
    flag = option.cli_flag
    if flag is None:
        return []
    if option.switches:
        return [(spelt, "", text) for spelt, text in option.switches.values()]
    names = f"{option.short}, {flag}" if option.short else flag.replace("/", " / ")
    value = _value(option)
    text = option.no_help if option.no_help and flag.startswith("--no-") else option.help
    if option.was:
        text += f" (It was {', '.join(option.was)} before.)"
    return [(f"{names} {value}".strip(), _default(option), text)]


def _value(option: Option) -> str:
    if option.kind is bool:
        return ""
    if option.choices is not None:
        return "[" + "|".join(option.choices) + "]"
    return option.metavar or option.kind.__name__.upper()


def _default(option: Option) -> str:
    default = option.default
    if option.required:
        return "required"
    if option.kind is bool:  # a flag is off unless given; of a pair, the one in force
        pair = str(option.cli_flag).split("/")
        return pair[0 if default else 1].removeprefix("--") if len(pair) == 2 else ""
    if default is None or option.kind == NAMES:
        return ""
    return f"{default[0]}:{default[1]}" if isinstance(default, tuple) else str(default)


def _paragraphs(text: str) -> list[str]:
    return [" ".join(block.split()) for block in text.split("\n\n") if block.strip()]


def _text(text: str) -> str:
    """Help text as Markdown: what is between backticks stays code, the rest is escaped."""
    parts = text.split("`")
    return "".join(p if i % 2 else _MARKDOWN.sub(r"\\\1", p) for i, p in enumerate(parts))


def _row(flag: str, default: str, text: str) -> str:
    """A table row: flag and default as code (a `|` in code splits no cell), the help as text."""
    code = [f"`{flag}`", f"`{default}`" if default else ""]
    return "| " + " | ".join([*code, _text(text).replace("|", "\\|")]) + " |"


def on_files(files: Any, config: Any) -> Any:
    """mkdocs: add the generated pages to the site's files."""
    from mkdocs.structure.files import File

    for path, text in pages().items():
        files.append(File.generated(config, path, content=text))
    return files


if __name__ == "__main__":
    print(page(sys.argv[1]) if len(sys.argv) > 1 else "\n".join(commands()))
