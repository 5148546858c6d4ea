"""Each option once: the tables that give the keyword arguments, command-line flags, pytest
options and mitmproxy options of the recorder (`RECORD`) and the replayer (`REPLAY`), with
one default each.

Light on purpose (click, the standard library and `recorder._errors`): the command line's
help and the pytest plugin read the tables without loading mitmproxy or the protocol tables.
"""

from recorder.options._click import parsed, table_options
from recorder.options._record import RECORD, parse_spec, split_for
from recorder.options._replay import REPLAY
from recorder.options._table import NAMES, Option, Table, mitm_value
from recorder.options._values import (
    FORWARD,
    GRPC_SCHEMES,
    READ_TIMEOUT,
    grpc_upstream_parts,
    parse_address,
    parse_grpc_upstream,
    parse_on_miss,
    parse_size,
    parse_timing,
    parse_url,
    show_address,
    timing_speed,
)

__all__ = [
    "FORWARD",
    "GRPC_SCHEMES",
    "NAMES",
    "READ_TIMEOUT",
    "RECORD",
    "REPLAY",
    "Option",
    "Table",
    "grpc_upstream_parts",
    "mitm_value",
    "parse_address",
    "parse_grpc_upstream",
    "parse_on_miss",
    "parse_size",
    "parse_spec",
    "parse_timing",
    "parse_url",
    "parsed",
    "show_address",
    "split_for",
    "table_options",
    "timing_speed",
]
