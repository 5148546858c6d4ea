"""A capture's stream events as JSON Lines (pure: `Capture` in, lines out).

One line per SSE event of an event-stream response and per message of a streaming gRPC
response, in capture order, naming its exchange::

    {"exchange": 3, "operation": "SendStreamingMessage", "binding": "JSONRPC", "index": 0,
     "offset_us": 4120, "event": "message", "id": null, "data": {"jsonrpc": "2.0", ...}}

`data` is the event's data as JSON (else its text), or the message's proto-JSON (`type` names
it; one not decoded has `data` null and its bytes in `base64`).  An SSE block's comment lines
are in `comments`; a block of comments only is a line too, with `event` null.
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
