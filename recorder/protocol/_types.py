"""The vocabulary shared by every part of the tool: bindings, versions, a classification.

A classification is what the recorder knows about one exchange without understanding the
agent's business: which binding carried it, which A2A operation it was, in which protocol
version, and which task, context and push config it names.  It is a value: the capture stores
it, `show` prints it, replay and diff match on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Binding(StrEnum):
    """How an exchange travelled; the values are the card's `protocolBinding` names."""

    JSONRPC = "JSONRPC"
    HTTP_JSON = "HTTP+JSON"
    GRPC = "GRPC"
    # Agent card fetches: plain HTTP, the same for every binding.
    HTTP = "HTTP"


class Version(StrEnum):
    V1_0 = "1.0"
    V0_3 = "0.3"


# Operations that are not among the proto's eleven rpcs but belong to an A2A session.
AGENT_CARD = "AgentCard"
PUSH_DELIVERY = "PushDelivery"


@dataclass(frozen=True, slots=True)
class Classification:
    """What one exchange is, in A2A terms.

    `operation` is the v1.0 rpc name (`SendMessage` ... `GetExtendedAgentCard`), or
    `AgentCard` / `PushDelivery`, whatever the version on the wire; `method` keeps the name the
    wire used (`message/send`, `/a2a.v1.A2AService/TaskSubscription`, `GET /v1/card`).
    An exchange that is not A2A has `operation=None` and says why in `reason`.
    """

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

    @property
    def is_a2a(self) -> bool:
        return self.operation is not None
