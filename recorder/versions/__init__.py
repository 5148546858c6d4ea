"""Between A2A v0.3 and v1.0: the one translator, for the replay, verify and the diff (pure).

Owns the type and rename tables, the walk over them, the shapes renaming cannot do, whole
messages on the wire and the card an agent of several versions serves.  May import
`recorder.protocol` only.
"""

from __future__ import annotations

from recorder.protocol import VERSION_HEADER, encode_grpc_message
from recorder.versions._served import served_card
from recorder.versions._tables import (
    RULE_TEXT,
    Dialect,
    Lost,
    Rename,
    RenameRule,
    Translated,
    dialect_of,
)
from recorder.versions._wire import (
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
