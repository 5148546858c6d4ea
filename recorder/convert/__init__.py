"""Convert foreign recordings (mitmproxy flow files, HAR 1.2) into captures.

Pure parts: `observed_from_flow(s)` and `observed_from_har` read one format into `Observed`
exchanges; `convert` classifies, filters, redacts and numbers them into a `Conversion`.
Shells: `read_flows`, `load_har` (the file reading) and `convert_command` (the click command).
Errors: `ConvertError(ValueError)`, with `file: what is wrong` from the readers.
"""

from recorder._errors import ConvertError
from recorder.convert._command import Loaded, convert_command, load_observed
from recorder.convert._flows import FlowFile, observed_from_flow, observed_from_flows, read_flows
from recorder.convert._har import load_har, observed_from_har
from recorder.convert._observed import Conversion, Observed, convert

__all__ = [
    "Conversion",
    "ConvertError",
    "FlowFile",
    "Loaded",
    "Observed",
    "convert",
    "convert_command",
    "load_har",
    "load_observed",
    "observed_from_flow",
    "observed_from_flows",
    "observed_from_har",
    "read_flows",
]
