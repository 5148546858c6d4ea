"""What an HTTP status is to a gRPC client, and a gRPC status to an HTTP one (tables).

`HTTP_TO_GRPC` is gRPC's own mapping (grpc/doc/http-grpc-status-mapping.md; UNKNOWN for the
rest); `GRPC_TO_HTTP` is google.rpc.Code's documented HTTP status for each code.
"""

from __future__ import annotations

from collections.abc import Mapping

HTTP_TO_GRPC: Mapping[int, str] = {
    400: "INTERNAL",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "UNIMPLEMENTED",
    429: "UNAVAILABLE",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "UNAVAILABLE",
}

GRPC_TO_HTTP: Mapping[str, int] = {
    "CANCELLED": 499,
    "UNKNOWN": 500,
    "INVALID_ARGUMENT": 400,
    "DEADLINE_EXCEEDED": 504,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "PERMISSION_DENIED": 403,
    "RESOURCE_EXHAUSTED": 429,
    "FAILED_PRECONDITION": 400,
    "ABORTED": 409,
    "OUT_OF_RANGE": 400,
    "UNIMPLEMENTED": 501,
    "INTERNAL": 500,
    "UNAVAILABLE": 503,
    "DATA_LOSS": 500,
    "UNAUTHENTICATED": 401,
}


def grpc_status_for_http(status: int) -> str:
    """The gRPC code a gRPC client reads an HTTP error status as."""
    return HTTP_TO_GRPC.get(status, "UNKNOWN")
