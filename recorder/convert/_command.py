"""`a2a-recorder convert`: mitmproxy flow files and HAR files -> one capture (the shell).

Reads every INPUT (format by extension, else by sniffing: HAR is JSON), and hands their
exchanges, in the order given, to the recorder's own addons (`convert`), which write one
capture.  Exit status 2 with `file: what is wrong` when an input cannot be read or is damaged;
nothing is written then.  The exception is a flow file cut short after some complete flows
(mitmdump killed while writing): those flows are converted, with a warning naming where the
file breaks off, so nothing that was recorded is lost.  Exit status 1 when the recorder lost
an exchange or failed inside (its summary says what), as `record` does.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import click

from recorder._errors import ConvertError, Exit
from recorder._shell import Command
from recorder.capture import check_regular
from recorder.convert._convert import Conversion, convert
from recorder.convert._flows import http_flows, read_flows
from recorder.convert._har import har_items, load_har
from recorder.options import RECORD, Table, shared
from recorder.record import OfflineItem

HAR_SUFFIXES = frozenset({".har"})
FLOW_SUFFIXES = frozenset({".mitm", ".flow", ".flows", ".dump"})
CAPTURE_HEADER = b"# a2a-recorder capture format"


@dataclass(frozen=True)
class Loaded:
    """One input's exchanges, how many of its flows were not HTTP, and any damage at its end."""

    items: list[OfflineItem]
    not_http: int = 0
    damage: str | None = None


def load_items(path: Path) -> Loaded:
    """The exchanges in one input file.  Raises `ConvertError` (`path: what is wrong`)."""
    if _is_har(path):
        try:
            return Loaded(har_items(load_har(path)))
        except ConvertError as exc:
            if str(exc).startswith(f"{path}:"):
                raise
            raise ConvertError(f"{path}: {exc}") from exc
    read = read_flows(path)
    flows, not_http = http_flows(read.flows)
    return Loaded(list(flows), not_http, read.damage)


def _is_har(path: Path) -> bool:
    """HAR by its suffix, else by its first bytes (JSON); ConvertError for a capture."""
    try:
        check_regular(path)
        with path.open("rb") as handle:
            head = handle.read(64).removeprefix(b"\xef\xbb\xbf")
    except OSError:
        head = b""  # the readers report the error
    if head.startswith(CAPTURE_HEADER):
        raise ConvertError(f"{path}: already an a2a-recorder capture; nothing to convert")
    suffix = path.suffix.lower()
    if suffix in HAR_SUFFIXES or suffix in FLOW_SUFFIXES:
        return suffix in HAR_SUFFIXES
    return head.lstrip().startswith(b"{")


CONVERT = Table(
    [
        shared.capture_out("Capture file to write.", required=True, was=("-o",)),
        *RECORD.pick("record_all", "keep_secrets"),
    ]
)  # fmt: skip


@click.command("convert", cls=Command, table=CONVERT)
@click.argument("inputs", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
def convert_command(
    inputs: tuple[Path, ...], out: Path, record_all: bool, keep_secrets: bool
) -> None:
    """Convert mitmproxy flow files (.mitm/.flow) and HAR files (.har) INPUT... into a capture.

    The recorder's own addons classify, redact and write the exchanges, as when recording
    live (an agent card's interfaces help once the card has been seen); secrets are redacted
    unless --keep-secrets, and exchanges that are not A2A are left out unless --all.
    """
    items: list[OfflineItem] = []
    not_http = 0
    for path in inputs:
        loaded = load_items(path)
        items.extend(loaded.items)
        not_http += loaded.not_http
        if loaded.damage:
            click.echo(f"warning: {loaded.damage}; kept the complete flows before it", err=True)
    _report(convert(items, out, keep_secrets=keep_secrets, include_all=record_all), not_http)


def _report(result: Conversion, not_http: int) -> None:
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    for problem in result.problems:
        click.echo(f"error: {problem}", err=True)
    where = f"to {result.out}" if result.converted else "(no capture written)"
    click.echo(
        f"converted {result.converted} exchange(s) {where}; "
        f"skipped {result.skipped + not_http} as non-A2A"
    )
    if result.problems:
        sys.exit(Exit.FOUND)
