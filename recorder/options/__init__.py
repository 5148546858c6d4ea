"""Each option once: the tables that give the keyword arguments, command-line flags, pytest
options and mitmproxy options of the recorder (`RECORD`) and the replayer (`REPLAY`).  Every
other command has a table beside its code, of its own rows and the shared ones (`shared`).

Light on purpose: the command line's help and the pytest plugin read the tables without
loading mitmproxy or the protocol tables.

May import `recorder.protocol` (lazily: spec versions, fault kinds) and the root's shared
modules.
"""

from recorder.options import _shared as shared
from recorder.options._click import click_params, folding_switches, renamed
from recorder.options._record import LATEST, RECORD, parse_spec, split_for
from recorder.options._replay import REPLAY
from recorder.options._table import NAMES, Option, Table, command_option, mitm_value
from recorder.options._values import (
    FORWARD,
    READ_TIMEOUT,
    grpc_upstream_parts,
    parse_grpc_upstream,
    parse_url,
    show_address,
    timing_speed,
)

__all__ = [
    "FORWARD",
    "LATEST",
    "NAMES",
    "READ_TIMEOUT",
    "RECORD",
    "REPLAY",
    "Option",
    "Table",
    "click_params",
    "command_option",
    "folding_switches",
    "grpc_upstream_parts",
    "mitm_value",
    "parse_grpc_upstream",
    "parse_spec",
    "parse_url",
    "renamed",
    "shared",
    "show_address",
    "split_for",
    "timing_speed",
]
