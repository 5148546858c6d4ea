"""Every command's `--help`, walked: a flag means the same in every command (issue 23).

- `-o/--output FILE` is where a report (or an export) goes, standard output without it;
- `--out` is a capture: a file or a folder of captures, never the report;
- `--binding` takes the card's binding names, in any case, and lists them as the card does;
- `--ignore PATH` is diff's (and verify's, which passes it to the diff); lint picks rules
  with `--select` and `--skip`;
- the listing of `a2a-recorder --help` says what each command's own help says.
"""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from recorder.cli import main
from recorder.protocol import Binding

CONTEXT = click.Context(main, info_name="a2a-recorder")
NAMES = main.list_commands(CONTEXT)


def command(name: str) -> click.Command:
    found = main.get_command(CONTEXT, name)
    assert found is not None
    return found


def options(name: str) -> dict[str, click.Option]:
    """A command's options by each of their flags."""
    return {
        flag: param
        for param in command(name).params
        if isinstance(param, click.Option)
        for flag in (*param.opts, *param.secondary_opts)
    }


def test_the_commands_are_all_walked() -> None:
    assert set(NAMES) >= {
        "convert", "demo", "diff", "export", "lint", "migrate", "record", "replay",
        "report", "show", "verify",
    }  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_every_help_is_shown(name: str) -> None:
    result = CliRunner().invoke(main, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert f"Usage: a2a-recorder {name}" in result.output or f"{name} [OPTIONS]" in result.output


@pytest.mark.parametrize("name", NAMES)
def test_dash_o_is_always_the_report_output(name: str) -> None:
    found = options(name)
    if "-o" not in found:
        return
    output = found["-o"]
    assert output.opts == ["--output", "-o"] or set(output.opts) == {"--output", "-o"}
    assert "instead of standard output" in (output.help or "")
    assert "capture" not in (output.help or "").lower()


@pytest.mark.parametrize("name", NAMES)
def test_out_is_always_a_capture(name: str) -> None:
    found = options(name)
    if "--out" not in found:
        return
    out = found["--out"]
    assert out.opts == ["--out"], f"{name}: --out has another spelling: {out.opts}"
    assert "capture" in (out.help or "").lower(), out.help


def test_the_commands_that_write_captures_take_out() -> None:
    for name in ("record", "convert", "demo", "verify"):
        assert "--out" in options(name), name


@pytest.mark.parametrize("name", NAMES)
def test_binding_takes_the_card_names_in_any_case(name: str) -> None:
    found = options(name)
    if "--binding" not in found:
        return
    choice = found["--binding"].type
    assert isinstance(choice, click.Choice) and not choice.case_sensitive
    assert set(choice.choices) <= {b.value for b in Binding}
    shown = CliRunner().invoke(main, [name, "--help"]).output
    assert "[" + "|".join(choice.choices) + "]" in shown  # as the card spells them


def test_show_takes_every_binding() -> None:
    choice = options("show")["--binding"].type
    assert isinstance(choice, click.Choice)
    assert list(choice.choices) == [b.value for b in Binding]


def test_binding_in_any_case_is_given_on_as_the_card_spells_it() -> None:
    context = click.Context(command("demo"))
    assert options("demo")["--binding"].type_cast_value(context, "http+json") == "HTTP+JSON"
    assert options("show")["--binding"].type_cast_value(context, ["grpc"]) == ("GRPC",)


def test_ignore_is_diffs_and_lint_selects_and_skips_rules() -> None:
    with_ignore = [name for name in NAMES if "--ignore" in options(name)]
    assert with_ignore == ["diff", "verify"]
    for name in with_ignore:
        assert options(name)["--ignore"].metavar == "PATH"
    assert {"--select", "--skip"} <= set(options("lint"))


def test_the_listing_says_what_each_command_says() -> None:
    """The listing takes the lazy commands' lines from a table, not from their modules."""
    lazy = main.LAZY  # type: ignore[attr-defined]
    assert lazy
    limit = 45
    for name, (_, summary) in lazy.items():
        listed = click.Command(name, help=summary).get_short_help_str(limit)
        assert listed == command(name).get_short_help_str(limit), name
