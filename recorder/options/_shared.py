"""The rows several commands share, written once: each means the same in every command."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recorder.options._table import NAMES, Option, command_option
from recorder.options._values import parse_address

BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC", "HTTP", "custom")  # recorder.protocol.Binding's
ADDRESS = "HOST:PORT"


def address(name: str, default: tuple[str, int] | None, help: str, **settings: Any) -> Option:
    """Where the recorder or the replayer listens: bound by it, so no mitmproxy option."""
    return Option(
        name, tuple, default, help, metavar=ADDRESS, parse=parse_address, mitm=None, **settings
    )


def output(what: str = "the report", *, was: tuple[str, ...] = ()) -> Option:
    return command_option(
        "output",
        str,
        None,
        f"Write {what} to FILE instead of standard output.",
        short="-o",
        metavar="FILE",
        parse=Path,
        was=was,
    )


def capture_out(help: str, *, default: str | None = None, **settings: object) -> Option:
    return command_option("out", str, default, help, metavar="PATH", parse=Path, **settings)


def report_format(formats: Sequence[str], help: str = "Report format.") -> Option:
    return command_option("format", str, formats[0], help, choices=tuple(formats))


BASELINE = command_option(
    "baseline",
    str,
    None,
    "Accepted findings or drift: fail only on new ones, and on entries that no longer occur "
    "(the file is written when it does not exist).",
    metavar="FILE",
    parse=Path,
)
UPDATE_BASELINE = command_option(
    "update_baseline",
    bool,
    False,
    "Rewrite the --baseline file from this run (the reasons written in it are kept).",
)


def ignore(help: str) -> Option:
    return command_option("ignore", NAMES, (), help + "  Repeatable.", metavar="PATH")


def compare(help: str) -> Option:
    return command_option("compare", NAMES, (), help + "  Repeatable.", metavar="shape:PATH")


def binding(help: str, *, choices: tuple[str, ...] = BINDINGS, repeat: bool = False) -> Option:
    """`--binding`: a card's binding name in any case (`repeat`: repeatable, a filter)."""
    kind, default = (NAMES, ()) if repeat else (str, choices[0])
    return command_option("binding", kind, default, help, choices=choices)
