"""One error tree and one exit table (issue 23): every exception class the package defines
descends from `RecorderError` and is drawn in `recorder._errors`' docstring; exit statuses
are defined there alone; every command ends an error the same way."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import recorder
from recorder import Exit, RecorderError
from recorder._errors import EXIT_FOR, error_message, exit_status
from recorder.cli import main

PACKAGE = Path(recorder.__file__).parent
OUTSIDE = ("recorder.demo",)  # needs a2a-sdk; its errors are a2a-sdk's


def defined_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined in the package, by qualified name."""
    found: dict[str, type[BaseException]] = {}
    for module_info in pkgutil.walk_packages([str(PACKAGE)], "recorder."):
        if module_info.name.startswith(OUTSIDE) or module_info.name.endswith("__main__"):
            continue
        module = importlib.import_module(module_info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
            ):
                found[f"{module.__name__}.{name}"] = value
    return found


def test_every_exception_class_is_in_the_tree() -> None:
    found = defined_exceptions()
    drawn = recorder._errors.__doc__ or ""
    # click's own usage error, shown as one line: a usage error is click's to raise.
    ours = {k: v for k, v in found.items() if not issubclass(v, click.ClickException)}
    assert len(ours) >= 15
    for name, kind in ours.items():
        assert issubclass(kind, RecorderError), name
        assert re.search(rf"\b{kind.__name__}\b", drawn), f"{name} is not drawn in the tree"


def test_built_ins_are_second_bases_where_the_meaning_fits() -> None:
    assert issubclass(recorder.CaptureParseError, ValueError)
    assert issubclass(recorder.ConfigError, ValueError)
    assert issubclass(recorder.OptionError, ValueError)
    assert issubclass(recorder.CaptureExistsError, FileExistsError)
    assert issubclass(recorder.ProxyStartError, RuntimeError)
    assert issubclass(recorder.VerifyError, RuntimeError)


def test_one_config_error_for_every_settings_file() -> None:
    from recorder.redaction import ConfigError as redaction_config
    from recorder.verify import ConfigError as verify_config

    assert redaction_config is verify_config is recorder.ConfigError


def test_the_exit_table() -> None:
    assert (Exit.OK, Exit.FOUND, Exit.ERROR) == (0, 1, 2)
    assert exit_status(recorder.CaptureParseError("x", "f", 1)) is Exit.ERROR
    assert exit_status(FileNotFoundError(2, "No such file", "a.http")) is Exit.ERROR
    assert exit_status(KeyError("a bug")) is Exit.ERROR  # a crash is no "differences found"
    assert click.UsageError("x").exit_code == Exit.ERROR  # click's own agrees
    assert [status for _, status in EXIT_FOR] == [Exit.ERROR] * len(EXIT_FOR)
    assert error_message(FileNotFoundError(2, "No such file", "a.http")) == "a.http: No such file"


# `sys.exit(2)` and its kin, or `EXIT_X = ...` (not quoted in a docstring: after a backtick).
EXIT_DEFINITION = re.compile(
    r"(?<![`.\w])(?:sys\.)?exit\(\s*[12]\s*\)|^\s*EXIT_[A-Z_]+\s*(?:,\s*EXIT_[A-Z_]+\s*)*="
)


def test_exit_statuses_are_defined_once() -> None:
    """No module but `_errors` writes an exit status as a number or defines one."""
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "_errors.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if EXIT_DEFINITION.search(line)
    ]
    assert offenders == []


@pytest.mark.parametrize(
    "args",
    [
        ["show", "{missing}"],
        ["lint", "{missing}"],
        ["export", "{missing}", "--to", "har"],
        ["report", "{missing}"],
        ["migrate", "{missing}"],
        ["convert", "{missing}", "--out", "{tmp}/c.http"],
        ["diff", "{missing}", "{missing}"],
    ],
    ids=lambda args: args[0],
)
def test_every_command_ends_an_error_with_one_line_and_status_2(
    tmp_path: Path, args: list[str]
) -> None:
    missing = tmp_path / "missing.http"
    argv = [a.format(missing=missing, tmp=tmp_path) for a in args]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == Exit.ERROR, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert lines and str(missing) in lines[0] and "Traceback" not in result.output
