"""Between A2A v0.3 and v1.0: the one translator, for the replay, verify and the diff.

The work is in the private modules (`_crossing` tables, `_crosswalk`, `_crossshapes`,
`_crosscard`, `_crosswire`, `_servedcard`); this module names what other packages use.
"""

from __future__ import annotations

from recorder.protocol._crossing import (
    RULE_TEXT,
    Dialect,
    Lost,
    Rename,
    RenameRule,
    Translated,
    dialect_of,
)
from recorder.protocol._crosswire import (
    ErrorAnswer,
    Side,
    Target,
    body,
    grpc_error,
    headers,
    read_body,
    rest_error,
    stream,
    target,
    wire_name,
)
from recorder.protocol._grpc import encode_grpc_message
from recorder.protocol._servedcard import served_card
from recorder.protocol._v03 import VERSION_HEADER

__all__ = [
    "RULE_TEXT",
    "VERSION_HEADER",
    "Dialect",
    "ErrorAnswer",
    "Lost",
    "Rename",
    "RenameRule",
    "Side",
    "Target",
    "Translated",
    "body",
    "dialect_of",
    "encode_grpc_message",
    "grpc_error",
    "headers",
    "read_body",
    "rest_error",
    "served_card",
    "stream",
    "target",
    "wire_name",
]
