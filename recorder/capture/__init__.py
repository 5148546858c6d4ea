"""The capture model and the `.http` file format."""

from recorder.capture._model import (
    FORMAT_VERSION,
    Capture,
    Exchange,
    GrpcMessage,
    Headers,
    Request,
    Response,
    SseEvent,
)

__all__ = [
    "FORMAT_VERSION",
    "Capture",
    "Exchange",
    "GrpcMessage",
    "Headers",
    "Request",
    "Response",
    "SseEvent",
]
