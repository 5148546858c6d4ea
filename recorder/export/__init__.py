"""Export captures for other tools: HAR 1.2 and JSON Lines of stream events.

Pure: `capture_to_har(capture) -> dict` (`_har`'s docstring lists the custom fields) and
`capture_to_jsonl(capture) -> list[str]` (`stream_events` gives the objects).  The shell is
`export_command` (`a2a-recorder export FILE --to har|jsonl`).  `recorder.convert` reads the
HAR back.
"""

from recorder.export._command import EXPORTS, export_command, har_text, jsonl_text
from recorder.export._har import HAR_VERSION, capture_to_har
from recorder.export._jsonl import capture_to_jsonl, stream_events

__all__ = [
    "EXPORTS",
    "HAR_VERSION",
    "capture_to_har",
    "capture_to_jsonl",
    "export_command",
    "har_text",
    "jsonl_text",
    "stream_events",
]
