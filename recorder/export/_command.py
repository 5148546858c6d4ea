"""`a2a-recorder export FILE --to har|jsonl`: the thin shell around the pure exports.

Writes to standard output, or to `-o/--output FILE`.  Exit status 0, or 2 when the capture
cannot be read or the output cannot be written (nothing is half-written then: the text is
built whole first).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NoReturn

import click

from recorder.capture import Capture, CaptureParseError, read_capture
from recorder.export._har import capture_to_har
from recorder.export._jsonl import capture_to_jsonl

EXIT_ERROR = 2


def har_text(capture: Capture) -> str:
    text = json.dumps(capture_to_har(capture), indent=2, ensure_ascii=False)
    return text.encode("utf-8", "backslashreplace").decode("utf-8") + "\n"


def jsonl_text(capture: Capture) -> str:
    text = "".join(line + "\n" for line in capture_to_jsonl(capture))
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


EXPORTS: Mapping[str, Callable[[Capture], str]] = {"har": har_text, "jsonl": jsonl_text}


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_ERROR)


@click.command("export")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--to",
    "to",
    type=click.Choice(list(EXPORTS)),
    required=True,
    help="har: HAR 1.2 (SSE events under _eventSourceMessages, gRPC messages as JSON); "
    "jsonl: one stream event per line.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to FILE instead of standard output.",
)
def export_command(file: Path, to: str, output: Path | None) -> None:
    """Export capture FILE for other tools: HAR 1.2, or JSON Lines of its stream events."""
    try:
        capture = read_capture(file)
    except CaptureParseError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"{file}: {exc.strerror or exc}")
    text = EXPORTS[to](capture)
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        _fail(f"{output}: {exc.strerror or exc}")
