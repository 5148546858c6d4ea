"""A capture as a HAR 1.2 document (pure: `Capture` in, a JSON-ready dict out).

An exchange is an entry, timed from the capture, bodies in `content.text` (base64 when not
UTF-8).  Custom fields (a leading underscore) carry what HAR has no field for
(docs/guides/inspect.md): an event stream's blocks (`_eventSourceMessages`, as Chrome writes
them), gRPC messages (`_grpcMessages`) and trailers (`_trailers`), and `_a2a`.  A request's URL
is its `Host` (or `:authority`) with the scheme of the matching upstream, else the first one.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from recorder import __version__
from recorder.capture import Capture, Exchange, GrpcMessage, Request, Response, SseEvent
from recorder.protocol import event_fields, render_events

HAR_VERSION = "1.2"
NEWLINE_NAMES = {"\n": "LF", "\r\n": "CRLF", "\r": "CR"}


def capture_to_har(capture: Capture) -> dict[str, Any]:
    """The HAR 1.2 document of `capture` (see the module docstring)."""
    started = datetime.fromisoformat(capture.started.replace("Z", "+00:00"))
    return {
        "log": {
            "version": HAR_VERSION,
            "creator": {"name": "a2a-recorder", "version": __version__},
            "entries": [_entry(x, capture, started) for x in capture.exchanges],
        }
    }


def _entry(x: Exchange, capture: Capture, t0: datetime) -> dict[str, Any]:
    at = t0 + timedelta(microseconds=x.started_us)
    entry: dict[str, Any] = {
        "startedDateTime": at.isoformat(timespec="microseconds").replace("+00:00", "Z"),
        "time": x.duration_us / 1000,
        "request": _request(x.request, capture.upstreams),
        "response": _response(x.response, x.error),
        "cache": {},
        "timings": {"send": 0, "wait": x.duration_us / 1000, "receive": 0},
        "_a2a": _facts(x),
    }
    start = at.timestamp()
    if x.request.messages:
        entry["request"]["_grpcMessages"] = [_message(m, start) for m in x.request.messages]
    if x.response is not None and x.response.messages:
        entry["response"]["_grpcMessages"] = [_message(m, start) for m in x.response.messages]
    if x.response is not None and x.response.events:
        entry["_eventSourceMessages"] = [_event(e, start) for e in x.response.events]
        entry["_sseNewline"] = NEWLINE_NAMES.get(x.response.newline, x.response.newline)
    return entry


def _facts(x: Exchange) -> dict[str, Any]:
    c = x.classification
    return {
        "exchange": x.number,
        "operation": c.operation,
        "binding": c.binding_name,
        "version": c.version.value if c.version else None,
        "notes": list(x.notes),
        "error": x.error,
    }


def _event(event: SseEvent, start: float) -> dict[str, Any]:
    fields = event_fields(event.lines)
    return {
        "time": start + event.offset_us / 1_000_000,
        "eventName": fields.event,
        "eventId": fields.id or "",
        "data": fields.data,
        "_lines": list(event.lines),
    }


def _request(request: Request, upstreams: Sequence[str]) -> dict[str, Any]:
    url = _url(request, upstreams)
    out: dict[str, Any] = {
        "method": request.method,
        "url": url,
        "httpVersion": request.http_version,
        "cookies": [],
        "headers": _headers(request.headers),
        "queryString": [{"name": k, "value": v} for k, v in parse_qsl(urlsplit(url).query)],
        "headersSize": -1,
        "bodySize": len(request.body),
    }
    if request.messages or request.body:
        shown = _grpc(request.messages) if request.messages else _text(request.body)
        out["postData"] = {"mimeType": request.header("content-type") or "", **shown}
    return out


def _response(response: Response | None, error: str | None) -> dict[str, Any]:
    if response is None:  # HAR's way to say that no response came
        return {
            "status": 0, "statusText": "", "httpVersion": "", "cookies": [], "headers": [],
            "content": {"size": 0, "mimeType": ""}, "redirectURL": "", "headersSize": -1,
            "bodySize": -1, "_error": error or "no response",
        }  # fmt: skip
    body = _body(response)
    content = {"size": len(body), "mimeType": response.header("content-type") or "", **_text(body)}
    out: dict[str, Any] = {
        "status": response.status,
        "statusText": response.reason,
        "httpVersion": response.http_version,
        "cookies": [],
        "headers": _headers(response.headers),
        "content": content,
        "redirectURL": response.header("location") or "",
        "headersSize": -1,
        "bodySize": len(body),
    }
    if response.messages:
        out["content"] = {**content, **_grpc(response.messages)}
    if response.trailers:
        out["_trailers"] = _headers(response.trailers)
    if error:  # the answer began, then broke off (a stream cut, a client gone)
        out["_error"] = error
    return out


def _body(response: Response) -> bytes:
    if response.events:
        return render_events((e.lines for e in response.events), response.newline)
    return response.body


def _text(body: bytes) -> dict[str, str]:
    if not body:
        return {"text": ""}
    try:
        return {"text": body.decode("utf-8")}
    except UnicodeDecodeError:
        return {"text": base64.b64encode(body).decode("ascii"), "encoding": "base64"}


def _grpc(messages: Sequence[GrpcMessage]) -> dict[str, str]:
    decoded = [json_or_text(m.json) if m.json is not None else None for m in messages]
    return {"text": json.dumps(decoded, ensure_ascii=False)}


def json_or_text(text: str) -> Any:
    """`text` parsed as JSON, else the text itself (an event's data, a hand-edited capture)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _message(m: GrpcMessage, start: float) -> dict[str, Any]:
    out: dict[str, Any] = {"time": start + m.offset_us / 1_000_000, "type": m.type_name}
    if m.json is not None:
        out["json"] = json_or_text(m.json)
    else:
        out["base64"] = base64.b64encode(m.raw or b"").decode("ascii")
    if m.compressed:
        out["compressed"] = True
    return out


def _headers(headers: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"name": name, "value": value} for name, value in headers]


def _url(request: Request, upstreams: Sequence[str]) -> str:
    host = request.header("host") or request.header(":authority")
    fallback = upstreams[0] if upstreams else "http://localhost"
    if not host:
        return fallback.rstrip("/") + request.target
    scheme = next(
        (urlsplit(u).scheme for u in upstreams if urlsplit(u).netloc == host),
        urlsplit(fallback).scheme or "http",
    )
    return f"{scheme}://{host}{request.target}"
