"""`a2a-recorder convert`: mitmproxy flow files and HAR files -> one capture (the shell).

Reads every INPUT (format by extension, else by sniffing: HAR is JSON), converts them in the
order given, and writes one capture.  Exit status 2 with `file: what is wrong` when an input
cannot be read or is damaged; nothing is written then.  The exception is a flow file cut short
after some complete flows (mitmdump killed while writing): those flows are converted, with a
warning naming where the file breaks off, so nothing that was recorded is lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

from recorder._errors import ConvertError
from recorder._shell import Command
from recorder.capture import check_regular, write_capture
from recorder.convert._flows import observed_from_flows, read_flows
from recorder.convert._har import load_har, observed_from_har
from recorder.convert._observed import Observed, convert

HAR_SUFFIXES = frozenset({".har"})
FLOW_SUFFIXES = frozenset({".mitm", ".flow", ".flows", ".dump"})


@dataclass(frozen=True)
class Loaded:
    """One input's exchanges, how many of its flows were not HTTP, and any damage at its end."""

    observed: list[Observed]
    not_http: int = 0
    damage: str | None = None


def load_observed(path: Path) -> Loaded:
    """The exchanges in one input file.  Raises `ConvertError` (`path: what is wrong`)."""
    if _is_har(path):
        try:
            return Loaded(observed_from_har(load_har(path)))
        except ConvertError as exc:
            if str(exc).startswith(f"{path}:"):
                raise
            raise ConvertError(f"{path}: {exc}") from exc
    read = read_flows(path)
    observed, not_http = observed_from_flows(read.flows)
    return Loaded(observed, not_http, read.damage)


def _is_har(path: Path) -> bool:
    suffix = path.suffix.lower()
    if suffix in HAR_SUFFIXES or suffix in FLOW_SUFFIXES:
        return suffix in HAR_SUFFIXES
    try:
        check_regular(path)
        with path.open("rb") as handle:
            head = handle.read(64)
    except OSError:
        return False  # the flow reader reports the error
    return head.removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b"{")


@click.command("convert", cls=Command)
@click.argument("inputs", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Capture file to write.",
)
@click.option("--all", "include_all", is_flag=True, help="Also keep exchanges that are not A2A.")
@click.option("--keep-secrets", is_flag=True, help="Write secrets instead of redacting them.")
def convert_command(
    inputs: tuple[Path, ...], out: Path, include_all: bool, keep_secrets: bool
) -> None:
    """Convert mitmproxy flow files (.mitm/.flow) and HAR files (.har) INPUT... into a capture.

    Exchanges are classified as the recorder does (an agent card's interfaces help once the
    card has been seen), secrets are redacted unless --keep-secrets, and exchanges that are
    not A2A are left out unless --all.
    """
    observed: list[Observed] = []
    not_http = 0
    for path in inputs:
        loaded = load_observed(path)
        observed.extend(loaded.observed)
        not_http += loaded.not_http
        if loaded.damage:
            click.echo(f"warning: {loaded.damage}; kept the complete flows before it", err=True)
    result = convert(observed, keep_secrets=keep_secrets, include_all=include_all)
    for problem in result.problems:
        click.echo(f"warning: left out {problem}", err=True)
    write_capture(out, result.capture)
    skipped = result.skipped + not_http
    click.echo(
        f"converted {result.converted} exchange(s) to {out}; "
        f"skipped {skipped} as non-A2A"
        + (f"; {len(result.problems)} could not be written" if result.problems else "")
    )
