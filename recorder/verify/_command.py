"""`a2a-recorder verify CAPTURE --agent URL`: the thin shell around `verify_capture`.

Exit status: 0 no drift, 1 drift, 2 verify could not run (a capture that cannot be read, an
agent that cannot be reached, a redacted secret nothing fills, a bad option, settings or
baseline file).  Three ways to run (`_modes`): once (optionally against a baseline of
accepted drift), `--learn N` (learn a noisy agent's noise into verify.toml; exit 0 once
written) and `--trials K --min-pass P` (exit 0 when at least P of K runs show no drift).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from recorder._errors import InputError
from recorder._shell import Command, output_option, write_output
from recorder.capture import Capture, read_capture
from recorder.options import parse_grpc_upstream, parse_url, parsed
from recorder.protocol import Version
from recorder.verify._config import VerifyConfig, find_config, load_config
from recorder.verify._modes import LEARN_FORMATS, Job, learn_into, once, run_trials
from recorder.verify._report import FORMATS
from recorder.verify._schedule import TIMEOUT
from recorder.verify._secrets import Credentials
from recorder.verify._trials import TRIALS_FORMATS


@click.command("verify", cls=Command)
@click.argument("capture", type=click.Path(path_type=Path))
@click.option(
    "--agent",
    required=True,
    metavar="URL",
    callback=parsed(parse_url),
    help="The live agent's base URL.",
)
@click.option(
    "--grpc",
    metavar="HOST:PORT",
    callback=parsed(parse_grpc_upstream),
    help="The live agent's gRPC address (default: its card's GRPC interface).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="NEW.http",
    help="Keep the new session's capture here (written anew).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(FORMATS)),
    default="text",
    show_default=True,
    help="Report format.",
)
@output_option()
@click.option(
    "--ignore",
    multiple=True,
    metavar="PATH",
    help="Drop differences at PATH, as `diff --ignore` does; adds to verify.toml's. Repeatable.",
)
@click.option(
    "--compare",
    "compare",
    multiple=True,
    metavar="shape:PATH",
    help="Compare text under PATH by shape (what an LLM samples anew each run): a text "
    "changed for another is no drift; states, part kinds, names and whether text is there "
    "still are.  Adds to verify.toml's. Repeatable.",
)
@click.option(
    "--learn",
    type=click.IntRange(min=2),
    is_flag=False,
    flag_value=3,
    default=None,
    metavar="[N]",
    help="Run the capture N times (3 if no N) and write every path that differed between "
    "the runs into verify.toml as learnt ignores for this capture.",
)
@click.option(
    "--trials",
    type=click.IntRange(min=1),
    metavar="K",
    help="Run K times; pass when at least --min-pass runs show no drift. The report gives "
    "the pass rate per exchange.",
)
@click.option(
    "--min-pass",
    type=click.IntRange(min=1),
    metavar="P",
    help="With --trials: the runs that must show no drift (default: all K).",
)
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Accepted drift: fail only on new drift, and on entries that no longer occur "
    "(the file is written when it does not exist).",
)
@click.option(
    "--update-baseline",
    is_flag=True,
    help="Rewrite the --baseline file from this run's drift (reasons are kept).",
)
@click.option(
    "--header",
    "headers",
    multiple=True,
    metavar="'NAME: VALUE'",
    help="A value for a header the capture holds redacted (or A2A_VERIFY_HEADER_"
    "<NAME> in the environment). Repeatable.",
)
@click.option(
    "--param",
    "params",
    multiple=True,
    metavar="NAME=VALUE",
    help="A value for a redacted query parameter (or A2A_VERIFY_PARAM_<NAME>). Repeatable.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="Time allowed per exchange and per wait (default 10, or verify.toml's).",
)
@click.option(
    "--max-slowdown",
    type=click.FloatRange(min=0, min_open=True),
    metavar="X",
    help="Drift when an exchange takes more than X times as long as recorded.",
)
@click.option(
    "--as-version",
    type=click.Choice(["1.0", "0.3"]),
    help="Send the capture in this A2A version, translated, and compare with its answers "
    "translated too: check an agent's migration against a recording of the other version.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Settings file (default: verify.toml or pyproject.toml's "
    "[tool.a2a-recorder.verify], found from here upward).",
)
def verify_command(
    capture: Path,
    agent: str,
    grpc: str | None,
    out: Path | None,
    fmt: str,
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
    _check_modes(fmt, out, learn, trials, min_pass, baseline, update_baseline)
    config = _config(config_path, learning=learn is not None)
    recorded, credentials = _inputs(capture, headers, params)
    if out is not None and out.resolve() == capture.resolve():
        raise InputError(f"--out {out} is the capture being verified")
    job = Job(
        capture,
        recorded,
        agent,
        config,
        ignore,
        compare,
        {
            "grpc": grpc,
            "credentials": credentials,
            "timeout": timeout or config.timeout or TIMEOUT,
            "max_slowdown": max_slowdown or config.max_slowdown,
            "as_version": Version(as_version) if as_version else None,
        },
    )
    color = output is None and fmt == "text" and sys.stdout.isatty()
    if learn is not None:
        report, status = learn_into(job, fmt, learn, config_path)
    elif trials is not None:
        report, status = run_trials(job, fmt, trials, min_pass or trials)
    else:
        report, status = once(job, fmt, color, baseline, update_baseline, out)
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


def _inputs(
    capture: Path, headers: tuple[str, ...], params: tuple[str, ...]
) -> tuple[Capture, Credentials]:
    return read_capture(capture), Credentials.of(headers, params, os.environ)


def _config(path: Path | None, *, learning: bool = False) -> VerifyConfig:
    """The settings in force; with --learn, a --config file that does not exist yet is the
    one it will write."""
    if learning and path is not None and not path.exists():
        return VerifyConfig(path)
    return find_config(Path.cwd()) if path is None else load_config(path)
