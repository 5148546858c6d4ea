"""HAR 1.2 documents (mitmproxy's `savehar`, browsers' "Save all as HAR") -> what the
recorder's addons take: an HTTP flow per entry, or a gRPC call (`OfflineCall`).

HAR keeps bodies decoded: a flow gets its body encoded again when `Content-Encoding` names an
encoding mitmproxy knows, so the recorder decodes it as live.  Event times come from
`_eventSourceMessages`, else are noted unknown; `export`'s custom fields are read back; an
entry with messages, or a gRPC content type, is a gRPC call.  Damage is reported, never skipped:
`ConvertError` names the entry.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import SplitResult, urlsplit

from mitmproxy import connection, http
from mitmproxy.flow import Error
from mitmproxy.net import encoding

from recorder._background import default_port, host_port
from recorder._errors import ConvertError
from recorder.capture import GrpcMessage, Headers, Request, Response, header_value, read_regular
from recorder.protocol import NOTE_NO_RESPONSE, is_grpc_content_type
from recorder.record import EVENT_OFFSETS, GrpcRecord, OfflineCall, OfflineItem

# Browser spellings of the protocol -> the capture's `HTTP/x` form.
HTTP_VERSIONS: dict[str, str] = {
    "h2": "HTTP/2.0",
    "http/2": "HTTP/2.0",
    "http/2.0": "HTTP/2.0",
    "h3": "HTTP/3",
    "http/3": "HTTP/3",
    "http/1.0": "HTTP/1.0",
    "http/1.1": "HTTP/1.1",
}
DEFAULT_VERSION = "HTTP/1.1"


def har_items(document: object) -> list[OfflineItem]:
    """Every entry of a HAR document (parsed JSON) as a flow or a gRPC call, in file order."""
    log = document.get("log") if isinstance(document, Mapping) else None
    if not isinstance(log, Mapping):
        raise ConvertError("not a HAR file: no top-level 'log' object")
    entries = log.get("entries")
    if not isinstance(entries, list):
        raise ConvertError("not a HAR file: 'log.entries' is missing or not a list")
    if not entries:
        raise ConvertError("HAR file holds no entries: nothing to convert")
    return [_entry(index, entry) for index, entry in enumerate(entries, 1)]


def load_har(path: Path) -> object:
    """The parsed JSON of a HAR file; `ConvertError` (`path: what is wrong`) if unreadable."""
    try:
        return json.loads(read_regular(path).decode("utf-8-sig"))
    except OSError as exc:
        raise ConvertError(f"{path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConvertError(f"{path}: not UTF-8 text: {exc.reason}") from exc
    except json.JSONDecodeError as exc:
        raise ConvertError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc


def _entry(index: int, entry: object) -> OfflineItem:
    where = f"entry {index}"
    if not isinstance(entry, Mapping):
        raise ConvertError(f"{where}: not an object")
    request_part = _object(entry, "request", where)
    url = _string(request_part, "url", f"{where}: request")
    parts = urlsplit(url)
    if not parts.scheme or not parts.hostname:
        raise ConvertError(f"{where}: request.url {url!r} is not an absolute URL")
    started = _started(entry, where)
    ended = started + _duration_us(entry.get("time")) / 1_000_000
    request = _request(request_part, where, started)
    response, error = _response(entry.get("response"), where, started)
    if _is_grpc(request, response):
        port = parts.port or default_port(parts.scheme)
        origin = f"{parts.scheme}://{host_port(parts.hostname, port)}"
        return OfflineCall(origin, GrpcRecord(request, response, started, ended, (), error))
    found = _flow(parts, request, response, started, ended, error)
    offsets = _event_times(entry.get("_eventSourceMessages"), started)
    if offsets:
        found.metadata[EVENT_OFFSETS] = offsets
    return found


def _is_grpc(request: Request, response: Response | None) -> bool:
    return bool(
        request.messages
        or (response is not None and response.messages)
        or is_grpc_content_type(request.header("content-type"))
    )


def _flow(
    parts: SplitResult,
    request: Request,
    response: Response | None,
    started: float,
    ended: float,
    error: str | None,
) -> http.HTTPFlow:
    """The entry as the mitmproxy flow a proxy would have made of it."""
    assert parts.hostname is not None
    port = parts.port or default_port(parts.scheme)
    client = connection.Client(peername=("", 0), sockname=("", 0), timestamp_start=started)
    server = connection.Server(address=(parts.hostname, port))
    found = http.HTTPFlow(client, server)
    found.request = http.Request(
        host=parts.hostname,
        port=port,
        method=request.method.encode("latin-1", "replace"),
        scheme=parts.scheme.encode("ascii"),
        authority=b"",
        path=request.target.encode("utf-8", "surrogateescape"),
        timestamp_end=started,
        **_wire_message(request, started),
    )
    if response is not None:
        found.response = http.Response(
            status_code=response.status,
            reason=response.reason.encode("latin-1", "replace"),
            timestamp_end=ended,
            **_wire_message(response, started),
        )
    if error is not None:
        found.error = Error(error, ended)
    return found


def _wire_message(message: Request | Response, started: float) -> dict[str, Any]:
    """What a flow's request and response both hold, as the wire carried them: the HTTP
    version, headers and body (no trailers), and the time the entry started."""
    return {
        "http_version": message.http_version.encode("ascii", "replace"),
        "headers": _wire_headers(message.headers),
        "content": _wire_body(message.body, message.headers),
        "trailers": None,
        "timestamp_start": started,
    }


def _wire_headers(headers: Headers) -> http.Headers:
    """Header pairs as bytes: latin-1 where it holds them, else the UTF-8 a client sends."""
    return http.Headers([(_wire(name), _wire(value)) for name, value in headers])


def _wire(text: str) -> bytes:
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape")


def _wire_body(body: bytes, headers: Headers) -> bytes:
    """The body as the wire carried it: encoded again by its `Content-Encoding`, if known."""
    name = (header_value(headers, "content-encoding") or "").strip().lower()
    if not body or not name or name == "identity":
        return body
    try:
        return bytes(encoding.encode(body, name))
    except ValueError:
        return body


def _request(part: Mapping[str, Any], where: str, started: float) -> Request:
    url = urlsplit(part["url"])
    target = (url.path or "/") + (f"?{url.query}" if url.query else "")
    post = part.get("postData")
    text = post.get("text") if isinstance(post, Mapping) else None
    headers = _headers(part.get("headers"), f"{where}: request")
    messages = _messages(part.get("_grpcMessages"), started, f"{where}: request")
    return Request(
        method=_string(part, "method", f"{where}: request"),
        target=target,
        headers=headers,
        body=text.encode("utf-8") if isinstance(text, str) and not messages else b"",
        http_version=_version(part.get("httpVersion")),
        messages=messages,
    )


def _messages(value: object, started: float, where: str) -> tuple[GrpcMessage, ...]:
    """gRPC messages as `a2a-recorder export` lists them under `_grpcMessages`."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(m, Mapping) for m in value):
        raise ConvertError(f"{where}._grpcMessages is not a list of objects")
    return tuple(_message(m, started, f"{where}._grpcMessages[{i}]") for i, m in enumerate(value))


def _message(item: Mapping[str, Any], started: float, where: str) -> GrpcMessage:
    offset = _offset_us(item.get("time"), started)
    type_name = item.get("type") if isinstance(item.get("type"), str) else None
    compressed = item.get("compressed") is True
    if "json" in item:
        text = json.dumps(item["json"], separators=(",", ":"), ensure_ascii=False)
        return GrpcMessage(offset, json=text, compressed=compressed, type_name=type_name)
    raw = item.get("base64")
    try:
        data = base64.b64decode(raw if isinstance(raw, str) else "", validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ConvertError(f"{where}: neither json nor valid base64") from exc
    return GrpcMessage(offset, raw=data, compressed=compressed, type_name=type_name)


def _event_times(value: object, started: float) -> tuple[int, ...]:
    """Each event's offset from `_eventSourceMessages`; () when the entry has none."""
    if not isinstance(value, list):
        return ()
    return tuple(
        _offset_us(m.get("time") if isinstance(m, Mapping) else None, started) for m in value
    )


def _offset_us(value: object, started: float) -> int:
    """Microseconds from the entry's start to `value` (seconds since the epoch), at least 0."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return 0
    return max(0, round((value - started) * 1_000_000))


def _response(part: object, where: str, started: float) -> tuple[Response | None, str | None]:
    """The response, and the error: why none came (status 0), or why it broke off (`_error`)."""
    if not isinstance(part, Mapping):
        raise ConvertError(f"{where}: response is missing or not an object")
    status = part.get("status")
    if not isinstance(status, int) or isinstance(status, bool):
        raise ConvertError(f"{where}: response.status is missing or not a number")
    error = part.get("_error")
    if status == 0:
        return None, str(error) if error else NOTE_NO_RESPONSE
    reason = part.get("statusText")
    messages = _messages(part.get("_grpcMessages"), started, f"{where}: response")
    response = Response(
        status=status,
        reason=reason if isinstance(reason, str) else "",
        headers=_headers(part.get("headers"), f"{where}: response"),
        body=b"" if messages else _content(part.get("content"), where),
        http_version=_version(part.get("httpVersion")),
        messages=messages,
        trailers=_headers(part.get("_trailers"), f"{where}: response._trailers"),
    )
    return response, str(error) if error else None  # an answer that began and then broke off


def _content(content: object, where: str) -> bytes:
    if not isinstance(content, Mapping):
        return b""
    text = content.get("text")
    if not isinstance(text, str):
        return b""
    if content.get("encoding") != "base64":
        return text.encode("utf-8")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ConvertError(f"{where}: response.content.text is not valid base64") from exc


def _headers(value: object, where: str) -> Headers:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ConvertError(f"{where}.headers is not a list")
    pairs = [_header(item, where) for item in value]
    grpc = any(n.lower() == "content-type" and is_grpc_content_type(v) for n, v in pairs)
    return tuple(pair for pair in pairs if grpc or not pair[0].startswith(":"))


def _header(item: object, where: str) -> tuple[str, str]:
    if not isinstance(item, Mapping):
        raise ConvertError(f"{where}.headers: an item is not an object")
    name, value = item.get("name"), item.get("value")
    if not isinstance(name, str) or not isinstance(value, str):
        raise ConvertError(f"{where}.headers: an item lacks a string name or value")
    return name, value


def _started(entry: Mapping[str, Any], where: str) -> float:
    value = _string(entry, "startedDateTime", where)
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError as exc:
        raise ConvertError(f"{where}: startedDateTime {value!r} is not ISO 8601") from exc


def _duration_us(value: object) -> int:
    """HAR `time` is milliseconds; -1 or junk means unknown (0)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return round(value * 1000)
    return 0


def _version(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        return DEFAULT_VERSION
    text = value.strip()
    if text.startswith("HTTP/"):  # already the capture's form (HTTP/2 for gRPC): kept
        return text
    return HTTP_VERSIONS.get(text.lower(), DEFAULT_VERSION)


def _object(parent: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = parent.get(key)
    if not isinstance(value, Mapping):
        raise ConvertError(f"{where}: {key} is missing or not an object")
    return value


def _string(parent: Mapping[str, Any], key: str, where: str) -> str:
    value = parent.get(key)
    if not isinstance(value, str) or not value:
        raise ConvertError(f"{where}: {key} is missing or not a string")
    return value
