"""`a2a-recorder verify CAPTURE --agent URL`: the thin shell around `verify_capture`.

Exit status: 0 no drift, 1 drift, 2 verify could not run (a capture that cannot be read, an
agent that cannot be reached, a redacted secret nothing fills, a bad option or settings file).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from recorder.capture import CaptureParseError, read_capture
from recorder.cli import check_grpc_upstream, check_url
from recorder.verify._config import ConfigError, VerifyConfig, find_config, load_config
from recorder.verify._report import FORMATS
from recorder.verify._result import EXIT_ERROR, VerifyError
from recorder.verify._run import verify_capture
from recorder.verify._secrets import Credentials


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_ERROR)


@click.command("verify")
@click.argument("capture", type=click.Path(path_type=Path))
@click.option(
    "--agent", required=True, metavar="URL", callback=check_url, help="The live agent's base URL."
)
@click.option(
    "--grpc",
    metavar="HOST:PORT",
    callback=check_grpc_upstream,
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
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the report to FILE instead of standard output.",
)
@click.option(
    "--ignore",
    multiple=True,
    metavar="PATH",
    help="Drop differences at PATH, as `diff --ignore` does; adds to verify.toml's. Repeatable.",
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
    headers: tuple[str, ...],
    params: tuple[str, ...],
    timeout: float | None,
    max_slowdown: float | None,
    config_path: Path | None,
) -> None:
    """Send the client side of CAPTURE to the live agent at URL and report what drifted.

    Each recorded request goes out in recorded order, with the ids the live agent hands out
    in place of the recorded ones; the new session is recorded through the recorder and
    diffed against CAPTURE.  Exit status: 0 no drift, 1 drift, 2 could not run.
    """
    config = _config(config_path)
    try:
        recorded = read_capture(capture)
        credentials = Credentials.of(headers, params, os.environ)
    except CaptureParseError as exc:
        _fail(str(exc))
        return
    except OSError as exc:
        _fail(f"{capture}: {exc.strerror or exc}")
        return
    except ValueError as exc:
        _fail(str(exc))
        return
    if out is not None and out.resolve() == capture.resolve():
        _fail(f"--out {out} is the capture being verified")
    try:
        result = verify_capture(
            recorded,
            agent,
            grpc=grpc,
            out=out,
            name=str(capture),
            ignore=(*config.ignores_for(capture), *ignore),
            credentials=credentials,
            timeout=timeout or config.timeout or 10.0,
            max_slowdown=max_slowdown or config.max_slowdown,
        )
    except VerifyError as exc:
        _fail(str(exc))
        return
    report = FORMATS[fmt](result, color=output is None and fmt == "text" and sys.stdout.isatty())
    if output is None:
        click.echo(report, nl=False)
    else:
        try:
            output.write_text(report, encoding="utf-8")
        except OSError as exc:
            _fail(f"{output}: {exc.strerror or exc}")
    sys.exit(result.status)


def _config(path: Path | None) -> VerifyConfig:
    try:
        return find_config(Path.cwd()) if path is None else load_config(path)
    except ConfigError as exc:
        _fail(str(exc))
        raise AssertionError("unreachable") from exc
