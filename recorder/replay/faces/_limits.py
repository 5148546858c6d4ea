"""How much a live client may cost the replayer, enforced by both faces (`REPLAY`'s options)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

from recorder.options import REPLAY

_DEFAULT = {option.name: option.default for option in REPLAY}


@dataclass(frozen=True, slots=True)
class Limits:
    read_timeout: float = _DEFAULT["read_timeout"]  # seconds to receive a request, head and body
    max_body_bytes: int = _DEFAULT["max_request_bytes"]
    max_head_bytes: int = _DEFAULT["max_head_bytes"]
    idle_timeout: float = _DEFAULT["idle_timeout"]  # gRPC: an HTTP/2 connection with no call

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> Self:
        """The limits the replayer's options (`REPLAY.settings`) give."""
        return cls(
            read_timeout=options["read_timeout"],
            max_body_bytes=options["max_request_bytes"],
            max_head_bytes=options["max_head_bytes"],
            idle_timeout=options["idle_timeout"],
        )
