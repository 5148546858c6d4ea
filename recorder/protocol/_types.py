"""The vocabulary shared by every part of the tool: bindings, versions, a classification.

A classification is what the recorder knows of one exchange without knowing the agent's
business; a value the capture stores, `show` prints and replay and diff match on.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Binding(StrEnum):
    """How an exchange travelled; the values are the card's `protocolBinding` names."""

    JSONRPC = "JSONRPC"
    HTTP_JSON = "HTTP+JSON"
    GRPC = "GRPC"
    HTTP = "HTTP"  # agent card fetches, the same for every binding
    CUSTOM = "custom"  # a binding a card names by a URI (spec §5.8): see `binding_uri`


class Version(StrEnum):
    """The dialect an exchange speaks, told by its names on the wire.

    `0.1` is A2A v0.1.0's (`tasks/send` ...), still served by v0.2-era agents (fasta2a)."""

    V1_0 = "1.0"
    V0_3 = "0.3"
    V0_1 = "0.1"


# Operations of an A2A session that are not among the proto's eleven rpcs.
AGENT_CARD = "AgentCard"
PUSH_DELIVERY = "PushDelivery"
# At an A2A endpoint, an operation no table knows: recorded, as the answer is agent behaviour.
UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Classification:
    """What one exchange is, in A2A terms: `operation` is the v1.0 rpc name whatever the wire's
    version, or `AgentCard`, `PushDelivery`, `unknown`, or None (not A2A; `reason` says why);
    `method` keeps the name the wire used (`message/send`, `GET /v1/card`)."""

    binding: Binding | None = None
    operation: str | None = None
    method: str | None = None
    version: Version | None = None
    tenant: str | None = None
    task_id: str | None = None
    context_id: str | None = None
    config_id: str | None = None
    streaming: bool = False
    error: str | None = None
    reason: str | None = None
    binding_uri: str | None = None  # the custom binding's URI (`Binding.CUSTOM`)

    @property
    def binding_name(self) -> str | None:
        """The binding as the card names it, or a custom binding's URI."""
        return self.binding_uri or (self.binding.value if self.binding else None)

    @property
    def is_a2a(self) -> bool:
        """Whether the exchange belongs to an A2A session (recorded without `--all`)."""
        return self.operation is not None

    @property
    def is_known(self) -> bool:
        """Whether the tables know the operation (not `unknown`, not non-A2A)."""
        return self.operation is not None and self.operation != UNKNOWN
