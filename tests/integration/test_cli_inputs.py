"""What the command line is given, taken badly (issue 20): bad options are one-line usage
errors, files that are not regular files are refused, `--out /dev/full` is named for what it
is, and `show FILE N` reads exchange N alone."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from recorder.capture import read_capture
from recorder.cli import main

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
CAPTURE = str(DATA / "jsonrpc-send.http")
AGENT = "http://127.0.0.1:9"
OUT = ["--out", "unused.http"]


def _run(*args: str, timeout: float = 60, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recorder", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


BAD_OPTIONS = {
    "upstream without a scheme": ["record", "--upstream", "127.0.0.1:9000", *OUT],
    "upstream misspelt scheme": ["record", "--upstream", "htp://127.0.0.1:9000", *OUT],
    "upstream bad IPv6": ["record", "--upstream", "http://[::1", *OUT],
    "upstream port too large": ["record", "--upstream", "http://127.0.0.1:99999", *OUT],
    "record listen port too large": ["record", "--forward", *OUT, "--listen", "127.0.0.1:99999"],
    "grpc upstream misspelt": ["record", "--upstream", AGENT, *OUT, "--grpc-upstream", "htp://x:1"],
    "grpc listen port too large": [
        *("record", "--upstream", AGENT, *OUT, "--grpc-upstream", "127.0.0.1:9"),
        *("--grpc-listen", "127.0.0.1:70000"),
    ],
    "grpc listen without grpc upstream": [
        *("record", "--upstream", AGENT, *OUT, "--grpc-listen", "127.0.0.1:0"),
    ],
    "push proxy not HOST:PORT": ["record", "--upstream", AGENT, *OUT, "--push-proxy", "1.2.3"],
    "replay listen port too large": ["replay", CAPTURE, "--listen", "127.0.0.1:99999"],
    "replay grpc listen port too large": ["replay", CAPTURE, "--grpc-listen", "127.0.0.1:99999"],
    "replay grpc listen elsewhere": ["replay", CAPTURE, "--grpc-listen", "10.9.9.9:0"],
    "replay forward misspelt": ["replay", CAPTURE, "--on-miss", "forward", "htp://x"],
    "verify agent without a scheme": ["verify", CAPTURE, "--agent", "127.0.0.1:9000"],
    "verify grpc not HOST:PORT": ["verify", CAPTURE, "--agent", AGENT, "--grpc", "nope"],
}


@pytest.mark.parametrize("args", list(BAD_OPTIONS.values()), ids=list(BAD_OPTIONS))
def test_a_bad_option_is_a_one_line_usage_error(args: list[str], tmp_path: Path) -> None:
    """A process of its own, with a timeout: some of these used to start a server."""
    done = _run(*args, cwd=tmp_path, timeout=30)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert not list(tmp_path.iterdir())  # nothing written


def test_a_usage_error_of_click_itself_is_one_line_too() -> None:
    result = CliRunner().invoke(main, ["show"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "error: Missing argument 'FILE'. (see 'main show -h')"
    ]


@pytest.mark.parametrize("command", ["show", "lint", "replay", "diff"])
def test_a_device_is_refused_not_read_for_ever(command: str) -> None:
    """`show /dev/full` ran for ever: /dev/full reads as endless zeros."""
    args = [command, "/dev/full"] + (["/dev/full"] if command == "diff" else [])
    done = _run(*args, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "/dev/full: not a regular file (a character device)" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "capture.http"
    os.mkfifo(fifo)
    done = _run("show", str(fifo), timeout=60)
    assert done.returncode == 2 and "not a regular file (a FIFO)" in done.stderr


def test_out_dev_full_is_named_for_what_it_is() -> None:
    """It was refused as "already holds recorded exchanges"."""
    result = CliRunner().invoke(main, ["record", "--upstream", AGENT, "--out", "/dev/full"])
    assert result.exit_code == 2
    assert "/dev/full is a character device" in result.output
    assert "already holds" not in result.output


def _holding(folder: Path) -> Path:
    capture = folder / "held.http"
    capture.write_bytes(Path(CAPTURE).read_bytes())
    return capture


def test_an_existing_capture_is_refused_naming_our_flags(tmp_path: Path) -> None:
    """Issue 23: it said `(--append, a2a_existing=append)`, mitmproxy's option beside ours."""
    capture = _holding(tmp_path)
    result = CliRunner().invoke(main, ["record", "--upstream", AGENT, "--out", str(capture)])
    assert result.exit_code == 2
    assert "already holds recorded exchanges" in result.output
    assert "(--append)" in result.output and "(--force)" in result.output
    assert "a2a_" not in result.output and "bad proxy options" not in result.output


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--max-body-size", "lots"], "--max-body-size"),
        (["--read-timeout", "-1"], "--read-timeout"),
        (["--lint=9.9"], "--lint"),
        (["--listen", "127.0.0.1:99999"], "--listen"),
        (["--split", "sideways"], "--split"),
        (["--append", "--force"], "--append and --force"),
    ],
)
def test_a_bad_value_is_named_by_its_flag(tmp_path: Path, args: list[str], flag: str) -> None:
    """Issue 23: `--max-body-size lots` was `bad proxy options: ... body_size_limit`."""
    argv = ["record", "--upstream", AGENT, "--out", str(tmp_path / "x.http"), *args]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2, result.output
    assert flag in result.output and "a2a_" not in result.output
    assert "body_size_limit" not in result.output and "bad proxy options" not in result.output


def test_show_n_reads_exchange_n_alone(tmp_path: Path) -> None:
    """`show FILE N` parsed (and, for its body, escaped character by character) the whole
    capture; now the other exchanges are stepped over: damage in them is not even seen."""
    source = (DATA / "sessions").glob("*.http")
    capture = next(p for p in sorted(source) if len(read_capture(p).exchanges) >= 3)
    text = capture.read_text("utf-8")
    third = text.index("### 3 ")
    damaged = tmp_path / "damaged.http"
    damaged.write_text(text[:third] + text[third:].replace("HTTP/1.1", "HTTP/1.1 x", 1))
    runner = CliRunner()
    assert runner.invoke(main, ["show", str(damaged)]).exit_code == 2
    first = runner.invoke(main, ["show", str(damaged), "1"])
    assert first.exit_code == 0, first.output
    assert first.output == runner.invoke(main, ["show", str(capture), "1"]).output
    missing = runner.invoke(main, ["show", str(capture), "999"])
    assert missing.exit_code == 2 and "no exchange 999 (the capture has 1.." in missing.output


def _limited(*args: str, limit: int) -> subprocess.CompletedProcess[str]:
    """A command whose files may not grow past `limit` bytes (RLIMIT_FSIZE, signal ignored):
    a write past it fails with EFBIG, as on a disk that fills up."""

    def limit_size() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "recorder", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=limit_size,
    )


@pytest.mark.parametrize("command", ["report", "diff", "export", "lint"])
def test_a_failed_output_write_leaves_no_partial_file(tmp_path: Path, command: str) -> None:
    """Issue 29: a failed `report -o` or `diff -o` left a 0-byte file behind."""
    args = {
        "diff": [CAPTURE, str(DATA / "rest-send.http")],
        "lint": ["--format=sarif", CAPTURE],
        "export": ["--to=har", CAPTURE],
    }
    new, old = tmp_path / "new.out", tmp_path / "old.out"
    old.write_text("the report of an earlier run\n")
    for output in (new, old):
        done = _limited(command, *args.get(command, [CAPTURE]), "-o", str(output), limit=64)
        assert done.returncode == 2, done.stderr
        assert "File too large" in done.stderr and "Traceback" not in done.stderr
    assert not new.exists()
    assert old.read_text() == "the report of an earlier run\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.out"]  # no temporary left
