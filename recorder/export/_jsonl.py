"""A capture's stream events as JSON Lines (pure: `Capture` in, lines out).

One line per SSE event and per streamed gRPC message, in capture order, naming its exchange,
operation, binding, index and offset; `data` is the event's JSON (else text) or the message's
proto-JSON (one not decoded: `base64`).  An SSE block's comments are in `comments`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

from recorder.capture import Capture, Exchange, GrpcMessage, SseEvent
from recorder.export._har import json_or_text
from recorder.protocol import event_fields


def capture_to_jsonl(capture: Capture) -> list[str]:
    """One compact JSON object per stream event (see the module docstring), without newlines."""
    return [json.dumps(line, ensure_ascii=False) for line in stream_events(capture)]


def stream_events(capture: Capture) -> Iterator[dict[str, Any]]:
    for x in capture.exchanges:
        if x.response is None:
            continue
        for index, event in enumerate(x.response.events):
            yield {**_where(x, index, event.offset_us), **_sse(event)}
        if x.classification.streaming:
            for index, message in enumerate(x.response.messages):
                yield {**_where(x, index, message.offset_us), **_grpc(message)}


def _where(x: Exchange, index: int, offset_us: int) -> dict[str, Any]:
    c = x.classification
    return {
        "exchange": x.number,
        "operation": c.operation,
        "binding": c.binding_name,
        "index": index,
        "offset_us": offset_us,
    }


def _sse(event: SseEvent) -> dict[str, Any]:
    fields = event_fields(event.lines)
    only_comments = all(line.startswith(":") for line in event.lines)
    out: dict[str, Any] = {
        "event": None if only_comments else fields.event,
        "id": fields.id,
        "data": json_or_text(fields.data) if fields.data else None,
    }
    if fields.comments:
        out["comments"] = list(fields.comments)
    return out


def _grpc(message: GrpcMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"type": message.type_name}
    if message.json is not None:
        out["data"] = json_or_text(message.json)
    else:
        out["data"] = None
        out["base64"] = base64.b64encode(message.raw or b"").decode("ascii")
    return out
