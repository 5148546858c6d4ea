"""A2A protocol knowledge as data and pure functions."""

from recorder.protocol._types import (
    AGENT_CARD,
    PUSH_DELIVERY,
    Binding,
    Classification,
    Version,
)

__all__ = ["AGENT_CARD", "PUSH_DELIVERY", "Binding", "Classification", "Version"]
