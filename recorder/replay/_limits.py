"""How much a live client may cost the replayer: read timeouts and request sizes.

Enforced by both faces: the HTTP one in its uvicorn protocol (`_uvicorn`), the gRPC one with
grpcio's options and its handler (`_grpcserver`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    read_timeout: float = 10.0  # seconds to receive one request, head and body
    max_body_bytes: int = 16 * 1024 * 1024
    max_head_bytes: int = 64 * 1024
    idle_timeout: float = 60.0  # gRPC: an HTTP/2 connection with no call open
