"""`replay --fault` and `--faults` as a user runs them: a real process, real exit codes.

A fault the user asked for leaves `--strict` clean (its answer is listed as `faulted`, not
`synthesized`); a fault that never happened makes it fail, and so does a client that never
retries a request the fault kept from being carried out (its exchange is unserved); a spec
that cannot be read stops the command before it listens, naming the spec and the kinds.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from _helpers import free_port
from click.testing import CliRunner
from test_cli import command, stop

from recorder.capture import read_capture
from recorder.cli import main

DATA = Path(__file__).parent.parent / "data"
CAPTURE = DATA / "jsonrpc-send.http"  # one SendMessage, numbered 3


def post_recorded(url: str) -> httpx.Response:
    request = read_capture(CAPTURE).exchanges[0].request
    headers = {"content-type": "application/json", "a2a-version": "1.0"}
    return httpx.post(url + request.target, content=request.body, headers=headers, timeout=10)


def test_a_requested_fault_happens_and_leaves_strict_clean(tmp_path: Path) -> None:
    profile = tmp_path / "faults.toml"
    profile.write_text('faults = ["SendMessage:status=503,retry-after=2"]\n')
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    args = ("replay", str(CAPTURE), "--listen", f"127.0.0.1:{port}", "--strict")
    with command(*args, "--faults", str(profile), "--fault", "#3:delay=0.01") as (process, _):
        assert process.stderr is not None
        said = process.stderr.readline()  # (read here: the pipe's buffer may hold it already)
        faulted, retry = post_recorded(url), post_recorded(url)
        journal = httpx.get(url + "/__a2a_recorder/requests", timeout=5).json()["requests"]
        code, err = stop(process)
    assert (faulted.status_code, faulted.headers["retry-after"]) == (503, "2")
    assert retry.status_code == 200 and "result" in retry.json()
    assert [(r["answer"], r["faults"]) for r in journal] == [
        ("synthesized", ["SendMessage:status=503,retry-after=2", "#3:delay=0.01"]),
        ("adapted", ["#3:delay=0.01"]),
    ]
    assert said == "fault profile: SendMessage:status=503,retry-after=2, #3:delay=0.01\n"
    assert code == 0, err


def test_a_fault_that_never_happened_fails_strict() -> None:
    port = free_port()
    args = ("replay", str(CAPTURE), "--listen", f"127.0.0.1:{port}", "--strict")
    with command(*args, "--fault", "SendMessage:status=429") as (process, _):
        code, err = stop(process)  # no client came
    assert code == 1
    report = json.loads(err[err.index("{") :])
    assert report["faults_unused"] == ["SendMessage:status=429"] and report["synthesized"] == []
    assert "fault 'SendMessage:status=429' never hit a request" in err


def test_a_client_that_never_retries_leaves_the_exchange_unserved() -> None:
    port = free_port()
    args = ("replay", str(CAPTURE), "--listen", f"127.0.0.1:{port}", "--strict")
    with command(*args, "--fault", "SendMessage:status=429") as (process, _):
        assert post_recorded(f"http://127.0.0.1:{port}").status_code == 429  # and no retry
        code, err = stop(process)
    assert code == 1
    report = json.loads(err[err.index("{") :])
    assert report["unserved"] == ["#3 SendMessage"] and report["faults_unused"] == []
    assert report["synthesized"] == [] and len(report["faulted"]) == 1


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--fault", "SendMessage:explode"], "fault 'SendMessage:explode': no fault kind"),
        (["--fault", "#9:reset"], "fault '#9:reset': the captures hold no exchange #9"),
        (["--faults", "missing.toml"], "missing.toml: cannot read fault profile"),
    ],
)
def test_a_bad_fault_stops_the_command_naming_it(args: list[str], problem: str) -> None:
    result = CliRunner().invoke(main, ["replay", str(CAPTURE), "--listen", "127.0.0.1:0", *args])
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert problem in text
    if "--fault" in args:  # a spec's error lists the kinds
        assert "the kinds are cut-after=N, delay=SECONDS" in text


def test_a_fleet_takes_no_fault_profile(tmp_path: Path) -> None:
    (tmp_path / "agent.http").write_bytes(CAPTURE.read_bytes())
    for args in (["--fault", "SendMessage:reset"], ["--faults", str(tmp_path / "f.toml")]):
        result = CliRunner().invoke(main, ["replay", str(tmp_path), *args])
        assert result.exit_code == 2
        assert "a fleet (DIR) takes no --fault/--faults" in " ".join(result.output.split())
