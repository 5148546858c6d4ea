"""What a file that is not a capture is, told from its first bytes, so that every reader of
captures says what it was given and what to do, not where the capture grammar broke.  A HAR
file is JSON with a `log` object; a mitmproxy flow file (`mitmdump -w`) is tnetstrings, each a
dictionary that starts `<length>:<length>:<key>`.  `a2a-recorder convert` reads both.
"""

from __future__ import annotations

import re

SNIFF_BYTES = 4096  # enough to find a HAR's "log" key among its first few
_TNETSTRING_DICT = re.compile(rb"[0-9]{1,12}:[0-9]{1,12}:")
_HAR_LOG = re.compile(rb'^\s*\{\s*"log"\s*:', re.DOTALL)
_BOM = b"\xef\xbb\xbf"
CONVERT = "convert it into a capture first: a2a-recorder convert FILE --out CAPTURE.http"


def foreign_kind(head: bytes) -> str | None:
    """The other format `convert` reads that `head` starts (`a HAR file`), else None."""
    if _TNETSTRING_DICT.match(head):
        return "a mitmproxy flow file"
    text = head[:SNIFF_BYTES].removeprefix(_BOM)
    if _HAR_LOG.match(text) or (text.lstrip().startswith(b"{") and b'"log"' in text):
        return "a HAR file"
    return None


def foreign_message(kind: str) -> str:
    """The error for a file that is `kind`, saying what to do."""
    return f"this is {kind}, not an a2a-recorder capture: {CONVERT}"
