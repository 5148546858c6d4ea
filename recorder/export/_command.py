"""`a2a-recorder export FILE --to har|jsonl`: the thin shell around the pure exports.

Writes to standard output, or to `-o/--output FILE`.  Exit status 0, or 2 when the capture
cannot be read or the output cannot be written (nothing is half-written then: the text is
built whole first).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

import click

from recorder._shell import Command, write_output
from recorder.capture import Capture, read_capture
from recorder.export._har import capture_to_har
from recorder.export._jsonl import capture_to_jsonl
from recorder.options import Table, command_option, shared


def har_text(capture: Capture) -> str:
    text = json.dumps(capture_to_har(capture), indent=2, ensure_ascii=False)
    return text.encode("utf-8", "backslashreplace").decode("utf-8") + "\n"


def jsonl_text(capture: Capture) -> str:
    text = "".join(line + "\n" for line in capture_to_jsonl(capture))
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


EXPORTS: Mapping[str, Callable[[Capture], str]] = {"har": har_text, "jsonl": jsonl_text}


EXPORT = Table(
    [
        command_option(
            "to", str, None,
            "har: HAR 1.2 (SSE events under _eventSourceMessages, gRPC messages as JSON); jsonl: "
            "one stream event per line.",
            choices=tuple(EXPORTS), required=True,
        ),
        shared.output("the export"),
    ]
)  # fmt: skip


@click.command("export", cls=Command, table=EXPORT)
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
def export_command(file: Path, to: str, output: Path | None) -> None:
    """Export capture FILE for other tools: HAR 1.2, or JSON Lines of its stream events."""
    write_output(EXPORTS[to](read_capture(file)), output)
