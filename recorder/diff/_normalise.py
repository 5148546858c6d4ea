"""Volatile-value normalisation: one capture (or one live session) in, placeholders out.

A `Normaliser` gives each volatile value (ids, timestamps, ports, tokens) a placeholder stable
within one capture (the first task id seen is `<task-1>` wherever it occurs later: a path, an
event, an error message), so "the id exchange 2 returned is used in exchange 3" compares equal
across captures.  Two passes: `observe_*` finds ids by field name (the protocol's id model, the
one the replayer matches by), then `json`, `text`, `target` and `headers` replace them by value
wherever they occur.  Pure; never raises on odd input.
"""

from __future__ import annotations

import functools
import json
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from recorder.capture import Exchange, GrpcMessage, Headers, Response
from recorder.protocol import (
    GENERATION_FIELDS,
    ID_FIELDS,
    NOT_JSON,
    OPAQUE_FIELDS,
    PATH_IDS,
    RESOURCE_NAME_FIELDS,
    TIMESTAMP_FIELDS,
    USER_CONTENT_KEYS,
    IdKind,
    Json,
    decode_status_details,
    event_data,
    id_owner,
    is_push_config,
    parse_json,
)
from recorder.redaction import SCHEMED_HEADERS

QUERY_IDS: Mapping[str, IdKind] = {"contextId": IdKind.CONTEXT, "taskId": IdKind.TASK}

TIMESTAMP = "<timestamp>"
REDACTED = "<redacted>"

# HTTP headers and gRPC metadata that change on every run and say nothing about A2A.
VOLATILE_HEADERS = frozenset({
    "date", "content-length", "etag", "host", "user-agent", "keep-alive", "server", ":authority",
    "grpc-accept-encoding", "x-request-id",
})  # fmt: skip
SECRET_HEADERS: Mapping[str, str] = {
    "x-a2a-notification-token": "<token>",
    "cookie": "<credentials>",
    "set-cookie": "<credentials>",
}
STATUS_DETAILS_BIN = "grpc-status-details-bin"
STATUS_DETAILS = "grpc-status-details"  # the decoded, normalised form
# Values the gRPC spec percent-encodes on the wire (grpc-go and grpc-js encode spaces as %20,
# grpcio sends plain ASCII): decoded first, so ids inside them are found and both forms compare.
PERCENT_ENCODED_HEADERS = frozenset({"grpc-message"})

_RFC3339 = r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:?\d{2})"
_RFC3339_FULL = re.compile(_RFC3339 + r"\Z")
_RFC3339_ANY = re.compile(_RFC3339)
_REDACTED_RE = re.compile(r"<redacted:\d+>")
_URL_ORIGIN = re.compile(r"\b((?:https?|wss?|grpcs?)://)([^/\s\"'<>?#]+)")
_HOST_PORT = re.compile(r"\A[\w.\-]+:\d+\Z|\A\[[0-9a-fA-F:]+\]:\d+\Z")
# Placeholders match whole, so an id spelled like one (`task-1`) is not replaced inside one.
_TOKEN = re.compile(r"<[a-z-]+-\d+>|[A-Za-z0-9_\-~]+")
_MIN_TEXT_ID = 4  # shorter ids (or all-digit ones) are only replaced at their own fields


@dataclass
class Normaliser:
    """Volatile values to placeholders, consistently across one capture or one live session."""

    _ids: dict[str | int, str] = field(default_factory=dict)
    _text_ids: dict[str, str] = field(default_factory=dict)  # ids safe to replace inside text
    _counts: dict[IdKind, int] = field(default_factory=dict)
    _generations: dict[str, int] = field(default_factory=dict)  # task id -> its first generation
    _last_task: str = ""

    def register(self, kind: IdKind, value: object) -> str | None:
        """Give `value` a placeholder of `kind` unless it has one; return its placeholder."""
        if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
            return None
        known = self._ids.get(value)
        if known is not None:
            return known
        count = self._counts.get(kind, 0) + 1
        self._counts[kind] = count
        placeholder = f"<{kind.value}-{count}>"
        self._ids[value] = placeholder
        if isinstance(value, str) and len(value) >= _MIN_TEXT_ID and not value.isdigit():
            self._text_ids[value] = placeholder
        return placeholder

    def observe_json(self, value: Json) -> None:
        """Find ids in a JSON document by field name, in document order."""
        if isinstance(value, dict):
            self._observe_object(value)
        elif isinstance(value, list):
            for item in value:
                self.observe_json(item)

    def _observe_object(self, obj: dict[str, Any]) -> None:
        owner = id_owner(obj) if "id" in obj else None
        if is_push_config(obj) and isinstance(obj["url"], str):
            self._register_webhook(obj["url"])
        for key, value in obj.items():
            kind = owner if key == "id" else ID_FIELDS.get(key)
            if kind is not None:
                self._register_all(kind, value)
            elif key in RESOURCE_NAME_FIELDS and isinstance(value, str):
                self.observe_target("/" + value)
            elif key == "url" and isinstance(value, str):
                self._register_origin(value)
            elif key not in USER_CONTENT_KEYS:  # the agent's or user's data holds no ids
                self.observe_json(value)

    def _register_all(self, kind: IdKind, value: object) -> None:
        values = value if isinstance(value, list) else [value]
        for item in values:
            self.register(kind, item)

    def _register_origin(self, url: str) -> None:
        match = _URL_ORIGIN.search(url)
        if match:
            self.register(IdKind.ORIGIN, match.group(2))
        elif _HOST_PORT.match(url):
            self.register(IdKind.ORIGIN, url)

    def _register_webhook(self, url: str) -> None:
        match = _URL_ORIGIN.match(url)
        path = url[match.end() :] if match else ""
        if path not in ("", "/"):
            self.register(IdKind.WEBHOOK, path)

    def observe_target(self, target: str) -> None:
        """Find ids in a request target (REST path, query) or a v0.3 resource name."""
        path, _, query = target.partition("?")
        for pattern, kind in PATH_IDS:
            for match in pattern.finditer(path):
                self.register(kind, match.group(1))
        for name, value in _query_pairs(query):
            if name in QUERY_IDS:
                self.register(QUERY_IDS[name], value)

    def observe_exchange(self, exchange: Exchange) -> None:
        """Discover every id in one exchange: request, classification, then response."""
        request = exchange.request
        self.observe_target(request.target)
        self._observe_body(request.body)
        self._observe_messages(request.messages)
        c = exchange.classification
        for kind, value in (
            (IdKind.TASK, c.task_id),
            (IdKind.CONTEXT, c.context_id),
            (IdKind.CONFIG, c.config_id),
        ):
            self.register(kind, value)
        if exchange.response is not None:
            self._observe_response(exchange.response)

    def _observe_response(self, response: Response) -> None:
        self._observe_body(response.body)
        for event in response.events:
            self._observe_body(event_data(event.lines))
        self._observe_messages(response.messages)

    def _observe_body(self, body: bytes | str) -> None:
        parsed = parse_json(body)
        if parsed is not NOT_JSON:
            self.observe_json(parsed)

    def _observe_messages(self, messages: Iterable[GrpcMessage]) -> None:
        for message in messages:
            if message.json is not None:
                self._observe_body(message.json)

    def json(self, value: Json) -> Json:
        """A copy of a JSON document with every volatile value replaced."""
        if isinstance(value, dict):
            return self._object(value)
        if isinstance(value, list):
            return [self.json(item) for item in value]
        if isinstance(value, str):
            return self.text(value)
        return value

    def _object(self, obj: dict[str, Any]) -> dict[str, Any]:
        owner = id_owner(obj) if "id" in obj else None
        out = {key: self._field(key, value, owner) for key, value in obj.items()}
        for key in GENERATION_FIELDS.intersection(obj):
            out[key] = self._generation(obj, owner, obj[key])
        if is_push_config(obj) and isinstance(obj["url"], str):
            out["url"] = self._webhook(obj["url"])
        return out

    def _generation(self, obj: Mapping[str, Any], owner: IdKind | None, value: Any) -> Any:
        """A task's generation as its step from the first one seen of that task (`<gen+2>`);
        a request's (no task beside it) from the last task's."""
        try:
            number = int(value)
        except (TypeError, ValueError):
            return self.json(value)
        task = obj.get("id") if owner is IdKind.TASK else obj.get("taskId")
        if isinstance(task, str):
            self._last_task = task
        key = task if isinstance(task, str) else self._last_task
        base = self._generations.setdefault(key, number)
        return f"<gen{number - base:+d}>"

    def _webhook(self, url: str) -> str:
        match = _URL_ORIGIN.match(url)
        if match is None:
            return self.text(url)
        origin = self.register(IdKind.ORIGIN, match.group(2)) or match.group(2)
        path = url[match.end() :]
        return match.group(1) + origin + (self._ids.get(path) or self.text(path))

    def _field(self, key: str, value: Json, owner: IdKind | None) -> Json:
        kind = owner if key == "id" else ID_FIELDS.get(key)
        if kind is not None:
            if isinstance(value, list):
                return [self._id(kind, item) for item in value]
            return self._id(kind, value)
        if isinstance(value, str) and value:
            if key in TIMESTAMP_FIELDS:
                return TIMESTAMP
            if key in OPAQUE_FIELDS:
                return OPAQUE_FIELDS[key]
            if key == "url" and _HOST_PORT.match(value):
                return self._id(IdKind.ORIGIN, value)
            if key in RESOURCE_NAME_FIELDS and value.startswith("tasks/"):
                return self.text(self._path_ids("/" + value)[1:])
        return self.json(value)

    def _path_ids(self, path: str) -> str:
        """Replace ids at their places in a path, whatever their length."""
        for pattern, kind in PATH_IDS:
            path = pattern.sub(functools.partial(self._path_id, kind=kind), path)
        return path

    def _path_id(self, match: re.Match[str], kind: IdKind) -> str:
        placeholder = self.register(kind, match.group(1)) or match.group(1)
        start, end = match.span(1)
        text = match.group(0)
        return text[: start - match.start()] + placeholder + text[end - match.start() :]

    def _id(self, kind: IdKind, value: Json) -> Json:
        if isinstance(value, str | int) and not isinstance(value, bool):
            return self.register(kind, value) or value
        return self.json(value)

    def text(self, value: str) -> str:
        """Free text (paths, error messages, header values) with known volatile values replaced."""
        exact = self._ids.get(value)
        if exact is not None:
            return exact
        if _RFC3339_FULL.match(value):
            return TIMESTAMP
        if "<redacted:" in value:
            value = _REDACTED_RE.sub(REDACTED, value)
        if "://" in value:
            value = _URL_ORIGIN.sub(self._origin_sub, value)
        if self._text_ids and len(value) >= _MIN_TEXT_ID:
            value = _TOKEN.sub(self._token_sub, value)
        if "T" in value and "-" in value:
            value = _RFC3339_ANY.sub(TIMESTAMP, value)
        return value

    def _origin_sub(self, match: re.Match[str]) -> str:
        return match.group(1) + (self.register(IdKind.ORIGIN, match.group(2)) or "")

    def _token_sub(self, match: re.Match[str]) -> str:
        token = match.group(0)
        return self._text_ids.get(token, token)

    def target(self, target: str) -> str:
        """A request target with ids in the path and volatile query values replaced."""
        path, sep, query = target.partition("?")
        self._register_origin(path)  # absolute-form targets (forward proxy, push deliveries)
        pairs = [self._query_pair(name, value) for name, value in _query_pairs(query)]
        return self.text(self._path_ids(path)) + sep + "&".join(pairs)

    def _query_pair(self, name: str, value: str) -> str:
        if name in TIMESTAMP_FIELDS:
            return f"{name}={TIMESTAMP}"
        if name in OPAQUE_FIELDS and value:
            return f"{name}={OPAQUE_FIELDS[name]}"
        if name in QUERY_IDS:
            return f"{name}={self.register(QUERY_IDS[name], value) or value}"
        return f"{name}={self.text(value)}"

    def headers(self, headers: Headers) -> Headers:
        """Lower-cased names, volatile headers dropped, secrets and ids in values replaced."""
        out: list[tuple[str, str]] = []
        for name, value in headers:
            lower = name.lower()
            if lower in VOLATILE_HEADERS:
                continue
            if lower == STATUS_DETAILS_BIN:
                decoded = decode_status_details(value)
                if decoded is not None:
                    out.append((STATUS_DETAILS, _compact(self.json(decoded))))
                continue
            out.append((lower, self._header_value(lower, value)))
        return tuple(out)

    def _header_value(self, name: str, value: str) -> str:
        if name in SCHEMED_HEADERS:
            scheme = value.split(" ", 1)[0] if " " in value else ""
            return f"{scheme} <credentials>".strip()
        if name in SECRET_HEADERS:
            return SECRET_HEADERS[name]
        if name in PERCENT_ENCODED_HEADERS:
            value = urllib.parse.unquote(value)
        return self.text(value)


def _query_pairs(query: str) -> list[tuple[str, str]]:
    # Keep the raw (still percent-encoded) text: the diff shows what was on the wire.
    pairs = []
    for item in query.split("&"):
        if item:
            name, _, value = item.partition("=")
            pairs.append((name, value))
    return pairs


def _compact(value: Json) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
