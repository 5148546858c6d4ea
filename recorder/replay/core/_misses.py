"""Answers for requests the capture cannot serve, in each binding's own error shape (pure).

A *miss* (no recorded exchange matches) names the nearest exchange and how they differ, in a
shape whose text every SDK client surfaces (tests/integration/test_replay_misses.py), with an
ErrorInfo `REPLAY_NO_MATCH`.  A *refusal* (a request no agent would accept) is answered as
a2a-sdk does: JSON-RPC -32700 or -32600 with id null, HTTP+JSON 400 INVALID_ARGUMENT.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from recorder.capture import Exchange, Request
from recorder.protocol import (
    ERROR_DOMAIN,
    ERROR_INFO_TYPE,
    NOT_JSON,
    Binding,
    Classification,
    parse_json,
)
from recorder.replay.core._answer import HttpAnswer
from recorder.replay.core._fallback import id_fits
from recorder.replay.core._grpcanswer import INTERNAL, UNIMPLEMENTED, GrpcAnswer, error_answer
from recorder.script import Json, Step, differences, json_bytes

MISS_REASON = "REPLAY_NO_MATCH"
MISS_DOMAIN = "a2a-recorder"
NEAREST_SCAN = 200  # recorded steps compared when looking for the nearest
JSON_HEADERS = (("content-type", "application/json"),)

Answer = HttpAnswer | GrpcAnswer


@dataclass(frozen=True, slots=True)
class MissReport:
    """Why nothing answers: the nearest recorded exchange and how it differs."""

    classification: Classification
    nearest: Exchange | None
    differs: tuple[str, ...]
    elsewhere: tuple[str, ...] = ()  # bindings that do have the operation
    places: tuple[str, ...] = ()  # where `differs` quote the live request's values

    def describe(self, *, quoting: bool = True) -> str:
        """Why nothing answers; without `quoting`, no live value (a console cannot unsay it)."""
        c = self.classification
        what = f"{c.operation or c.method or 'a request'} ({c.binding or 'not A2A'})"
        if self.nearest is None:
            text = f"no recorded exchange matches {what}; the capture has none of that operation"
            if self.elsewhere:
                text += f" over {c.binding}, only over {', '.join(self.elsewhere)}"
            return text
        n = self.nearest
        near = f"#{n.number} {n.classification.operation or n.classification.method}"
        differs = self.differs
        if self.places and not quoting:
            differs = (f"they differ at {', '.join(self.places)}",)
        return f"no recorded exchange matches {what}; nearest is {near}: " + "; ".join(
            differs or ("its answer depends on a session this request is not part of",)
        )


def nearest(
    classification: Classification, shaped: Json, same: Sequence[Step], others: Sequence[str]
) -> MissReport:
    """The nearest of `same` (steps of the same binding and operation) to a live shape."""
    if not same:
        return MissReport(classification, None, (), tuple(others))
    scored = [(list(differences(shaped, json.loads(s.key[2]))), s) for s in same[:NEAREST_SCAN]]
    found, step = min(scored, key=lambda item: (len(item[0]), item[1].index))
    where = tuple(protocol_path(text, classification.binding) for text in found[:8])
    places = tuple(text.partition(": ")[0] for text in where)
    return MissReport(classification, step.exchange, where, places=places)


# Where the parts of a compared request value sit, as each binding names them.
_ROOTS: dict[Binding | None, dict[str, str]] = {
    Binding.JSONRPC: {"body": "params", "tenant": "params.tenant"},
    Binding.HTTP_JSON: {"body": "body", "path": "path", "query": "query", "tenant": "path tenant"},
    Binding.GRPC: {"body": "message", "tenant": "message.tenant"},
}


def protocol_path(text: str, binding: Binding | None) -> str:
    """`$.body.id: ...` as the binding says it: `params.id`, `body.id`, `message.id`."""
    if not text.startswith("$."):
        return text
    section, dot, rest = text[2:].partition(".")
    name, colon, tail = section.partition(":")
    root = _ROOTS.get(binding, {}).get(name, name)
    if dot:
        return f"{root}.{rest}"
    return f"{root}{colon}{tail}"


# ---- answers ------------------------------------------------------------------------------


def _info(reason: str, domain: str, metadata: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "@type": ERROR_INFO_TYPE,
        "reason": reason,
        "domain": domain,
        "metadata": metadata or {},
    }


_INVALID = [_info("INVALID_REQUEST", ERROR_DOMAIN)]  # what a2a-sdk details a refusal with


def miss_info(miss: MissReport) -> dict[str, Any]:
    near = f"#{miss.nearest.number}" if miss.nearest else ""
    return _info(MISS_REASON, MISS_DOMAIN, {"nearest": near})


def miss_answer(miss: MissReport, jsonrpc_id: Json, *, grpc: bool = False) -> Answer:
    """The miss in its binding's error shape (a call over gRPC always gets a gRPC status)."""
    text = miss.describe()
    binding = miss.classification.binding
    if grpc or binding is Binding.GRPC:
        return error_answer(INTERNAL, text, [miss_info(miss)])
    if binding is Binding.JSONRPC:
        return _jsonrpc_error(jsonrpc_id, -32603, text, [miss_info(miss)])
    # a2a-sdk 1.x maps only the first ErrorInfo of an HTTP+JSON error, and only A2A reasons;
    # a2a-sdk 0.3 shows only the status line: the text goes there too.
    reason = f"Replay miss: {text}"
    if binding is Binding.HTTP_JSON:
        details = [_info("INTERNAL_ERROR", ERROR_DOMAIN), miss_info(miss)]
        return _status(500, "INTERNAL", text, details, reason)
    return _status(404, "NOT_FOUND", text, [miss_info(miss)], reason)


def refusal(request: Request, classification: Classification, jsonrpc: bool) -> Answer | None:
    """The error an agent gives a request it cannot read, or None if it can read it."""
    if request.method.upper() != "POST" or request.messages:
        return None
    body = parse_json(request.body)
    if jsonrpc:
        if body is NOT_JSON:
            return _jsonrpc_error(None, -32700, "Parse error: the body is not JSON")
        if isinstance(body, list):
            return _jsonrpc_error(None, -32600, "Batch requests are not supported", _INVALID)
        if (
            not isinstance(body, dict)
            or body.get("jsonrpc") != "2.0"
            or not id_fits(body.get("id"))
        ):
            return _jsonrpc_error(None, -32600, "Invalid Request", _INVALID)
        return None
    if classification.binding is Binding.HTTP_JSON and request.body and body is NOT_JSON:
        return _status(
            400, "INVALID_ARGUMENT", "Failed to load JSON: the body is not JSON", _INVALID
        )
    return None


def _jsonrpc_error(
    jsonrpc_id: Json, code: int, message: str, data: list[dict[str, Any]] | None = None
) -> HttpAnswer:
    error: dict[str, Any] = {"code": code, "message": message}
    if data:
        error["data"] = data
    body = (
        b'{"jsonrpc":"2.0","id":' + json_bytes(jsonrpc_id) + b',"error":' + json_bytes(error) + b"}"
    )
    return HttpAnswer(200, "OK", JSON_HEADERS, body)


def _status(
    http: int, status: str, message: str, details: list[dict[str, Any]], reason: str = ""
) -> HttpAnswer:
    error = {"error": {"code": http, "status": status, "message": message, "details": details}}
    return HttpAnswer(http, reason, JSON_HEADERS, json_bytes(error))


def unserved_version(
    classification: Classification, why: str, jsonrpc_id: Json, *, grpc: bool = False
) -> Answer:
    """A request in a version the replay does not serve, refused as an agent not knowing its names
    does: JSON-RPC -32601, HTTP+JSON 404, gRPC UNIMPLEMENTED."""
    info = [_info("VERSION_NOT_SERVED", MISS_DOMAIN)]
    if grpc or classification.binding is Binding.GRPC:
        return error_answer(UNIMPLEMENTED, why, info)
    if classification.binding is Binding.JSONRPC:
        return _jsonrpc_error(jsonrpc_id, -32601, f"Method not found: {why}", info)
    return _status(404, "NOT_FOUND", why, info, "Not Found")
