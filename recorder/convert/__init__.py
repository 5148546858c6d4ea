"""Convert foreign recordings (mitmproxy flow files, HAR 1.2) into captures.

The readers (`read_flows` and `http_flows`, `load_har` and `har_items`) give what the
recorder's addons take; `convert` runs those addons offline (`recorder.record.record_offline`),
which write them as they do live; `convert_command` is the click command.  Errors:
`ConvertError` (a ValueError) `file: what is wrong`; `OptionError` naming `out`.

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
