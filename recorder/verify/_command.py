"""`a2a-recorder verify CAPTURE --agent URL`: the thin shell around `verify_capture`.

Exit status: 0 no drift, 1 drift, 2 verify could not run.  Three ways to run (`_modes`): once
(optionally against a baseline), `--learn N` and `--trials K --min-pass P`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from recorder._errors import InputError
from recorder._shell import Command, write_output
from recorder.capture import read_capture
from recorder.options import NAMES, Table, command_option, parse_grpc_upstream, parse_url, shared
from recorder.protocol import Version
from recorder.verify._config import VerifyConfig, find_config, load_config
from recorder.verify._modes import LEARN_FORMATS, Job, learn_into, once, run_trials
from recorder.verify._report import FORMATS
from recorder.verify._schedule import TIMEOUT
from recorder.verify._secrets import Credentials
from recorder.verify._trials import TRIALS_FORMATS

VERIFY = Table(
    [
        command_option(
            "agent", str, None, "The live agent's base URL.",
            metavar="URL", parse=parse_url, required=True,
        ),
        command_option(
            "grpc", str, None,
            "The live agent's gRPC address (default: its card's GRPC interface).",
            metavar="HOST:PORT", parse=parse_grpc_upstream,
        ),
        shared.capture_out("Keep the new session's capture here (written anew)."),
        shared.report_format(tuple(FORMATS)),
        shared.output(),
        shared.ignore(
            "Drop differences at PATH, as `diff --ignore` does; adds to verify.toml's."
        ),
        shared.compare(
            "Compare text under PATH by shape (what an LLM samples anew each run): a text "
            "changed for another is no drift; states, part kinds, names and whether text is "
            "there still are.  Adds to verify.toml's."
        ),
        command_option(
            "learn", int, None,
            "Run the capture N times (3 if no N) and write every path that differed between the "
            "runs into verify.toml as learnt ignores for this capture.",
            metavar="[N]", optional_value=3, minimum=2,
        ),
        command_option(
            "trials", int, None,
            "Run K times; pass when at least --min-pass runs show no drift.  The report gives "
            "the pass rate per exchange.",
            metavar="K", minimum=1,
        ),
        command_option(
            "min_pass", int, None,
            "With --trials: the runs that must show no drift (default: all K).",
            metavar="P", minimum=1,
        ),
        shared.BASELINE,
        shared.UPDATE_BASELINE,
        command_option(
            "headers", NAMES, (),
            "A value for a header the capture holds redacted (or A2A_VERIFY_HEADER_<NAME> in the "
            "environment).  Repeatable.",
            metavar="'NAME: VALUE'", flag="--header",
        ),
        command_option(
            "params", NAMES, (),
            "A value for a redacted query parameter (or A2A_VERIFY_PARAM_<NAME>).  Repeatable.",
            metavar="NAME=VALUE", flag="--param",
        ),
        command_option(
            "timeout", float, None,
            "Time allowed per exchange and per wait (default 10, or verify.toml's).",
            metavar="SECONDS", minimum=0,
        ),
        command_option(
            "max_slowdown", float, None,
            "Drift when an exchange takes more than X times as long as recorded.",
            metavar="X", minimum=0,
        ),
        command_option(
            "as_version", str, None,
            "Send the capture in this A2A version, translated, and compare with its answers "
            "translated too: check an agent's migration against a recording of the other version.",
            choices=("1.0", "0.3"),
        ),
        command_option(
            "config_path", str, None,
            "Settings file (default: verify.toml or pyproject.toml's [tool.a2a-recorder.verify], "
            "found from here upward).",
            metavar="FILE", parse=Path, flag="--config",
        ),
    ]
)  # fmt: skip


@click.command("verify", cls=Command, table=VERIFY)
@click.argument("capture", type=click.Path(path_type=Path))
def verify_command(
    capture: Path,
    agent: str,
    grpc: str | None,
    out: Path | None,
    format: str,
    output: Path | None,
    ignore: tuple[str, ...],
    compare: tuple[str, ...],
    learn: int | None,
    trials: int | None,
    min_pass: int | None,
    baseline: Path | None,
    update_baseline: bool,
    headers: tuple[str, ...],
    params: tuple[str, ...],
    timeout: float | None,
    max_slowdown: float | None,
    as_version: str | None,
    config_path: Path | None,
) -> None:
    """Send the client side of CAPTURE to the live agent at URL and report what drifted.

    Each recorded request goes out in recorded order, with the ids the live agent hands out
    in place of the recorded ones; the new session is recorded through the recorder and
    diffed against CAPTURE.  Exit status: 0 no drift, 1 drift, 2 could not run.

    A noisy (LLM-backed) agent: --learn runs the capture N times and writes what varied
    into verify.toml; --trials K --min-pass P passes when P of K runs show no drift;
    --compare shape:PATH compares sampled text by whether it is there.
    """
    _check_modes(format, out, learn, trials, min_pass, baseline, update_baseline)
    config = _config(config_path, learning=learn is not None)
    recorded = read_capture(capture)
    if out is not None and out.resolve() == capture.resolve():
        raise InputError(f"--out {out} is the capture being verified")
    settings = {
        "grpc": grpc,
        "credentials": Credentials.of(headers, params, os.environ),
        "timeout": timeout or config.timeout or TIMEOUT,
        "max_slowdown": max_slowdown or config.max_slowdown,
        "as_version": Version(as_version) if as_version else None,
    }
    job = Job(capture, recorded, agent, config, ignore, compare, settings)
    color = output is None and format == "text" and sys.stdout.isatty()
    if learn is not None:
        report, status = learn_into(job, format, learn, config_path)
    elif trials is not None:
        report, status = run_trials(job, format, trials, min_pass or trials)
    else:
        report, status = once(job, format, color, baseline, update_baseline, out)
    write_output(report, output)
    sys.exit(status)


def _check_modes(
    fmt: str,
    out: Path | None,
    learn: int | None,
    trials: int | None,
    min_pass: int | None,
    baseline: Path | None,
    update_baseline: bool,
) -> None:
    """Usage errors (exit 2) for options that do not go together."""
    if min_pass is not None and trials is None:
        raise click.UsageError("--min-pass goes with --trials K")
    if trials is not None and min_pass is not None and min_pass > trials:
        raise click.UsageError(f"--min-pass {min_pass} is more than the {trials} trials")
    if update_baseline and baseline is None:
        raise click.UsageError("--update-baseline needs --baseline FILE")
    several = [name for name, given in (("--learn", learn), ("--trials", trials)) if given]
    several += ["--baseline"] if baseline is not None and several else []
    several += ["--out"] if out is not None and several else []
    if len(several) > 1:
        raise click.UsageError(f"{' and '.join(several)} do not go together")
    if learn is not None and fmt not in LEARN_FORMATS:
        raise click.UsageError(f"--learn reports as {' or '.join(LEARN_FORMATS)}")
    if trials is not None and fmt not in TRIALS_FORMATS:
        raise click.UsageError(f"--trials reports as {', '.join(TRIALS_FORMATS)}")


def _config(path: Path | None, *, learning: bool = False) -> VerifyConfig:
    """The settings in force (with --learn, a --config file not there yet is one to write)."""
    if learning and path is not None and not path.exists():
        return VerifyConfig(path)
    return find_config(Path.cwd()) if path is None else load_config(path)
