"""Every command's `--help`, walked: a flag means the same in every command (issue 23).

- `-o/--output FILE` is where a report (or an export) goes, standard output without it;
- `--out` is a capture: a file or a folder of captures, never the report;
- `--binding` takes the card's binding names, in any case, and lists them as the card does;
- `--ignore PATH` is diff's (and verify's, which passes it to the diff); lint picks rules
  with `--select` and `--skip`;
- the listing of `a2a-recorder --help` says what each command's own help says.
"""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from recorder.cli import main
from recorder.protocol import Binding

CAPTURES = Path(__file__).resolve().parents[2] / "captures"
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
    assert with_ignore == ["diff", "matrix", "verify"]  # diff's paths, which the others pass on
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


def _error(*args: str) -> str:
    """What the command line says to `args`, which it refuses: one `error:` line, exit 2."""
    result = CliRunner().invoke(main, list(args), prog_name="a2a-recorder")
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def test_the_group_refuses_an_option_as_a_command_does() -> None:
    """`a2a-recorder --bogus` (issue 30: click's four-line usage block)."""
    assert _error("--bogus") == "error: No such option '--bogus'. (see 'a2a-recorder -h')"
    assert _error("bogus").startswith("error: No such command 'bogus'")


def test_a_missing_choice_lists_the_choices_on_one_line(tmp_path: Path) -> None:
    capture = tmp_path / "c.http"
    capture.write_text("# a2a-recorder capture format 2\n", encoding="utf-8")
    said = _error("export", str(capture))
    assert "Missing option '--to'. Choose from: har, jsonl" in said, said


@pytest.mark.parametrize(
    ("args", "now"),
    [
        (["report", "c.http", "--html", "page.html"], "--html is -o/--output FILE now"),
        (["convert", "s.mitm", "-o", "s.http"], "-o is --out PATH now"),
        (["lint", "c.http", "--ignore", "card.etag"], "--ignore is --skip RULES now"),
    ],
)
def test_a_flag_a_command_once_had_is_answered_with_its_new_name(args: list[str], now: str) -> None:
    assert _error(*args).startswith(f"error: {now}")


def test_convert_says_a_capture_is_already_one(tmp_path: Path) -> None:
    capture = CAPTURES / "a2a-python-1.3.0" / "03-blocking-task.http"
    result = CliRunner().invoke(main, ["convert", str(capture), "--out", str(tmp_path / "x.http")])
    assert result.exit_code == 2
    assert (
        result.stderr == f"error: {capture}: already an a2a-recorder capture; nothing to convert\n"
    )
    assert not (tmp_path / "x.http").exists()


@pytest.mark.parametrize("name", NAMES)
def test_a_no_flag_says_what_it_does(name: str) -> None:
    """`--no-card-rewrite` is described as what it turns off (issue 30: the help described
    the option it negates)."""
    for flag, option in options(name).items():
        if flag.startswith("--no-"):
            assert "on by default" not in (option.help or ""), (name, flag)
    if name == "record":
        shown = " ".join(CliRunner().invoke(main, ["record", "-h"]).output.split())
        assert "--no-card-rewrite Serve the agent card as the agent sent it" in shown
        assert "--no-fetch-card Do not fetch the upstream's agent card" in shown


def test_a_command_run_alone_first_keeps_dash_h_under_the_cli() -> None:
    """click makes a command's help option once, from the first context it runs in: a command
    first run alone (as a test or a tool calls it) lost `-h` for every later run under the
    CLI ("No such option '-h'")."""
    from recorder.convert import convert_command

    alone = CliRunner().invoke(convert_command, ["--help"])
    assert alone.exit_code == 0, alone.output
    shown = CliRunner().invoke(main, ["convert", "-h"])
    assert shown.exit_code == 0, shown.output
    assert "--out" in shown.output
