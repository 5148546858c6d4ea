"""Start-up: `a2a-recorder --help` imports no command's heavy dependencies, and `show` no
mitmproxy (issue 23).  Checked by what Python imports (`-X importtime`), never by timing;
`scripts/bench-startup` measures the time."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import recorder

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "jsonrpc-send.http"
SOURCE = Path(recorder.__file__).resolve().parents[1]  # where `-m recorder` finds the package
HEAVY = ("mitmproxy", "a2a", "uvicorn", "grpc", "google.protobuf", "jinja2", "httpx")


def imported(*args: str) -> list[str]:
    """The modules `python -X importtime -m recorder ARGS` imports, in order."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "recorder", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "100"},
        cwd=SOURCE,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    return [line.rsplit("|", 1)[1].strip() for line in lines[1:]]  # the first is a heading


def heavy(modules: list[str], *roots: str) -> list[str]:
    return [m for m in modules if m.split(".")[0] in roots or m.startswith(roots)]


def test_help_imports_no_command_and_no_heavy_dependency() -> None:
    modules = imported("--help")
    assert "recorder.cli" in modules
    assert heavy(modules, *HEAVY) == []
    assert [m for m in modules if m.startswith("mitmproxy")] == []
    # No command's module either: the listing comes from the command table.
    assert heavy(modules, "recorder.capture", "recorder.protocol", "recorder.record") == []


@pytest.mark.parametrize("command", ["show", "lint", "diff", "export", "report", "verify"])
def test_a_commands_help_needs_no_mitmproxy(command: str) -> None:
    assert heavy(imported(command, "--help"), "mitmproxy") == []


def test_show_of_a_small_capture_imports_no_mitmproxy_server_or_crypto() -> None:
    modules = imported("show", str(SAMPLE))
    assert "recorder.capture" in modules
    assert heavy(modules, "mitmproxy", "uvicorn", "a2a", "jinja2", "cryptography") == []
