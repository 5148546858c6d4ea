"""Convert foreign recordings (mitmproxy flow files, HAR 1.2) into captures.

The readers turn each format into what the recorder's addons take: `read_flows` and
`http_flows` (mitmproxy flows), `load_har` and `har_items` (a flow per HTTP entry, a gRPC call
per gRPC one).  `convert` hands them to the recorder's own addon set, run offline
(`recorder.record.record_offline`), which classifies, filters, redacts, numbers and writes
them as it does live; `convert_command` is the click command.
Errors: `ConvertError` (a `recorder.InputError`, so a ValueError), with `file: what is wrong`
from the readers; `OptionError` naming `out` for an output the recorder refuses.

May import `recorder.record` (the addons it runs offline), `recorder.capture`,
`recorder.protocol` and `recorder.options`.
"""

from recorder._errors import ConvertError
from recorder.convert._command import convert_command
from recorder.convert._convert import Conversion, convert
from recorder.convert._flows import FlowFile, http_flows, read_flows
from recorder.convert._har import har_items, load_har

__all__ = [
    "Conversion",
    "ConvertError",
    "FlowFile",
    "convert",
    "convert_command",
    "har_items",
    "http_flows",
    "load_har",
    "read_flows",
]
