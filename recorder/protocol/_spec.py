"""Facts of the A2A spec versions a capture is checked against, as data, for the lint rules.

Sources: a2aproject/A2A `docs/specification.md` at v1.0.0 and v1.0.1, and
`specification/json/a2a.json` at v0.3.0.  Severity is the spec's RFC 2119 keyword; a
requirement stated with none (§9.1, §11.1) is SHOULD, so a MUST finding always points at a
MUST.  Push deliveries follow the HTTP+JSON media-type row (§3.5.1).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from recorder.protocol._states import TASK_STATES
from recorder.protocol._types import Binding


class SpecVersion(StrEnum):
    """A released A2A spec text a capture can be checked against."""

    V1_0_0 = "1.0.0"
    V1_0_1 = "1.0.1"


LATEST_SPEC = SpecVersion.V1_0_1
BOTH_SPECS: frozenset[SpecVersion] = frozenset(SpecVersion)


class Severity(StrEnum):
    """A rule's RFC 2119 strength; `rank` orders them (MUST is the strongest)."""

    MUST = "MUST"
    SHOULD = "SHOULD"
    MAY = "MAY"

    @property
    def rank(self) -> int:
        return _RANKS[self]


_RANKS: Mapping[Severity, int] = {Severity.MUST: 3, Severity.SHOULD: 2, Severity.MAY: 1}

JSON = "application/json"
A2A_JSON = "application/a2a+json"

# A JSON body's Content-Type by binding and spec version, first preferred (§11.1, §14.1).
BODY_MEDIA_TYPES: Mapping[tuple[Binding, SpecVersion], tuple[str, ...]] = {
    (Binding.JSONRPC, SpecVersion.V1_0_0): (JSON,),
    (Binding.JSONRPC, SpecVersion.V1_0_1): (JSON,),
    (Binding.HTTP_JSON, SpecVersion.V1_0_0): (JSON, A2A_JSON),
    (Binding.HTTP_JSON, SpecVersion.V1_0_1): (A2A_JSON,),
}


# Where a Part holds a file's content inline (base64 in JSON): v1.0, v0.3 JSON, v0.3 proto-JSON.
FILE_CONTENT_KEYS: tuple[tuple[str, ...], ...] = (
    ("raw",),
    ("file", "bytes"),
    ("file", "fileWithBytes"),
)


def media_type(value: str | None) -> str:
    """A Content-Type value's bare media type: lower case, parameters dropped."""
    return (value or "").split(";", 1)[0].strip().lower()


# Terminal states close a stream; interrupted ones may (§3.1.2, §11.7).
TERMINAL_STATES: frozenset[str] = frozenset(row.name for row in TASK_STATES if row.terminal)
INTERRUPTED_STATES: frozenset[str] = frozenset(row.name for row in TASK_STATES if row.interrupted)

# v0.3 JSON-RPC enum forms; v0.3 REST and gRPC used the proto's, which the descriptors give.
V03_JSONRPC_TASK_STATES: frozenset[str] = frozenset(row.v03 for row in TASK_STATES)
V03_JSONRPC_ROLES: frozenset[str] = frozenset({"user", "agent"})

# The v0.3 JSON-RPC discriminator that v1.0 removed (Appendix A.2.1); no proto carries it.
V03_DISCRIMINATOR = "kind"

# Message types whose REQUIRED fields the lint checks, with everything nested in them.
REQUIRED_FIELD_SCOPE: frozenset[str] = frozenset(
    {"Task", "Message", "TaskStatusUpdateEvent", "TaskArtifactUpdateEvent", "AgentCard"}
)
# Oneofs that must hold exactly one member (§3.2.3, §4.3.3, §9.4.1), not just at most one.
EXACTLY_ONE: frozenset[str] = frozenset({"StreamResponse", "SendMessageResponse"})

# The A2A core binding names a card may declare (§5.3; custom ones SHOULD be URIs, §5.8).
CORE_BINDINGS: frozenset[str] = frozenset(b.value for b in Binding if b is not Binding.HTTP)
# v1.0 types whose v0.3 JSON-RPC form carried `kind` (schema-0.3).
V03_KIND_TYPES: frozenset[str] = frozenset(
    {"Task", "Message", "TaskStatusUpdateEvent", "TaskArtifactUpdateEvent", "Part"}
)
