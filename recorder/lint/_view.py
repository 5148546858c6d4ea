"""What the lint rules read: one exchange parsed once, and what the session has shown so far.

A `Session` is the state the rules need across exchanges, a value.  Nothing here raises on
junk.  Invariant: the bytes the rules see are the recorded ones (the agent's original card,
even when the client was served a rewrite).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from recorder.protocol import (
    AGENT_CARD,
    NOT_JSON,
    PUSH_DELIVERY,
    Binding,
    Classification,
    Interface,
    Operation,
    RequestLike,
    ResponseLike,
    Version,
    event_data,
    event_type,
    interfaces_from_card,
    lower_headers,
    operation,
    parse_json,
    parse_version,
    split_target,
    value_at,
)

VERSION_HEADER = "a2a-version"  # §3.2.6; gRPC metadata keys are lower case (§10.2)
CHALLENGES = {401: "www-authenticate", 407: "proxy-authenticate"}  # status -> its challenge
_MAJOR_MINOR = re.compile(r"\s*([0-9]+)\.([0-9]+)(?:\.[0-9]+)?\s*")


def major_minor(value: object) -> str | None:
    """`1.0`, `1.0.0` -> `1.0` (negotiation ignores patch numbers, §3.6); else None."""
    found = _MAJOR_MINOR.fullmatch(value) if isinstance(value, str) else None
    return f"{int(found.group(1))}.{int(found.group(2))}" if found else None


class ExchangeLike(Protocol):
    @property
    def number(self) -> int: ...
    @property
    def classification(self) -> Classification: ...
    @property
    def request(self) -> RequestLike: ...
    @property
    def response(self) -> ResponseLike | None: ...
    @property
    def notes(self) -> Sequence[str]: ...


@dataclass(frozen=True, slots=True)
class Event:
    """One SSE event block that carries data (comment-only blocks are left out)."""

    index: int  # 1-based position among the response's event blocks
    type: str  # "message" unless an `event:` line says otherwise
    data: str
    json: Any  # parsed data, or NOT_JSON


@dataclass(frozen=True, slots=True)
class Payload:
    where: str
    value: Any


@dataclass(frozen=True, slots=True)
class ExchangeView:
    """One exchange, parsed once.  Headers are lower-cased (first value wins)."""

    number: int
    classification: Classification
    notes: tuple[str, ...]
    verb: str
    path: str
    query: Mapping[str, str]
    request_headers: Mapping[str, str]
    request_body: bytes
    request_json: Any
    request_messages: tuple[Any, ...]
    has_response: bool = False
    status: int = 0
    response_headers: Mapping[str, str] = field(default_factory=dict)
    response_body: bytes = b""
    response_json: Any = NOT_JSON
    events: tuple[Event, ...] = ()
    response_messages: tuple[Any, ...] = ()
    trailers: Mapping[str, str] = field(default_factory=dict)

    @property
    def binding(self) -> Binding | None:
        return self.classification.binding

    @property
    def name(self) -> str | None:
        return self.classification.operation

    @property
    def operation(self) -> Operation | None:
        version = self.classification.version
        return operation(self.name, version) if self.name and version else None

    @property
    def is_card(self) -> bool:
        return self.name == AGENT_CARD

    @property
    def is_delivery(self) -> bool:
        return self.name == PUSH_DELIVERY

    @property
    def asked_version(self) -> str | None:
        """The `A2A-Version` the request sent (header, or query parameter, §3.6.1), or None."""
        value = self.request_headers.get(VERSION_HEADER)
        if value is None:
            value = next((v for k, v in self.query.items() if k.lower() == VERSION_HEADER), None)
        return value.strip() if value is not None else None

    @property
    def auth_challenge(self) -> bool:
        """An HTTP auth challenge (RFC 9110 §11.6): a gateway's answer, before any A2A binding's."""
        asks = CHALLENGES.get(self.status)
        return asks is not None and asks in self.response_headers

    @property
    def speaks(self) -> Version | None:
        """A card fetch speaks the version asked, else 1.0 with `supportedInterfaces`, else 0.3."""
        if not self.is_card:
            return self.classification.version
        asked = parse_version(self.asked_version)
        if asked is not None:
            return asked
        card = self.response_json
        return (
            Version.V1_0
            if isinstance(card, Mapping) and "supportedInterfaces" in card
            else (Version.V0_3)
        )

    @property
    def stream(self) -> bool:
        return self.classification.streaming or bool(self.events)

    @property
    def grpc_status(self) -> str | None:
        return self.trailers.get("grpc-status")

    def request_payload(self) -> Any:
        """The request message: JSON-RPC `params`, the HTTP body, or the first gRPC message."""
        return self._payload(self.request_json, "params", self.request_messages)

    def response_payload(self) -> Any:
        """The non-streamed response message: JSON-RPC `result`, the body, or gRPC message 1."""
        return self._payload(self.response_json, "result", self.response_messages)

    def _payload(self, document: Any, member: str, messages: tuple[Any, ...]) -> Any:
        if self.binding is Binding.GRPC:
            return messages[0] if messages else NOT_JSON
        if self.binding is Binding.JSONRPC:
            return value_at(document, (member,))
        return document

    def stream_payloads(self) -> list[Payload]:
        """Each streamed StreamResponse, unwrapped from its JSON-RPC envelope."""
        if self.binding is Binding.GRPC:
            return [
                Payload(f"response message {i}", m) for i, m in enumerate(self.response_messages, 1)
            ]
        found = []
        for event in self.events:
            if event.type != "message":
                continue
            value = event.json
            if self.binding is Binding.JSONRPC:
                value = value_at(value, ("result",))
            found.append(Payload(f"response event {event.index}", value))
        return found

    def wire_tenant(self) -> str | None:
        """The tenant the request itself carried (not one the classifier took from the card)."""
        if self.binding is Binding.HTTP_JSON and "{tenant}" in (self.classification.method or ""):
            return self.classification.tenant
        value = value_at(self.request_payload(), ("tenant",))
        return value if isinstance(value, str) and value else None


def view_exchange(exchange: ExchangeLike) -> ExchangeView:
    """Parse one exchange for the rules, once; never raises on what the wire held."""
    request = exchange.request
    path, query = split_target(str(request.target))
    view = ExchangeView(
        number=exchange.number,
        classification=exchange.classification,
        notes=tuple(exchange.notes),
        verb=str(request.method).upper(),
        path=path,
        query=query,
        request_headers=lower_headers(request.headers),
        request_body=bytes(request.body),
        request_json=parse_json(request.body),
        request_messages=tuple(parse_json(m.json) for m in request.messages),
    )
    response = exchange.response
    return view if response is None else _with_response(view, response)


def _with_response(view: ExchangeView, response: ResponseLike) -> ExchangeView:
    headers = lower_headers(response.headers)
    trailers = lower_headers(response.trailers)
    if "grpc-status" not in trailers and "grpc-status" in headers:
        trailers = headers  # a trailers-only gRPC answer
    return replace(
        view,
        has_response=True,
        status=response.status,
        response_headers=headers,
        response_body=bytes(response.body),
        response_json=parse_json(response.body),
        events=_events(response),
        response_messages=tuple(parse_json(m.json) for m in response.messages),
        trailers=trailers,
    )


def _events(response: ResponseLike) -> tuple[Event, ...]:
    found = []
    for index, event in enumerate(response.events, 1):
        lines = tuple(event.lines)
        if all(line.startswith(":") for line in lines):
            continue
        data = event_data(lines)
        found.append(Event(index, event_type(lines), data, parse_json(data)))
    return tuple(found)


# ---- the session: what earlier exchanges taught ----


@dataclass(frozen=True, slots=True)
class PushConfig:
    """A push config a client asked for; `schemes` holds v1.0's one scheme or v0.3's list."""

    url: str
    task_id: str | None = None
    schemes: tuple[str, ...] = ()
    credentials: str | None = None


@dataclass(frozen=True, slots=True)
class Session:
    """What a lint of one exchange may know from the others."""

    card: Mapping[str, Any] | None = None
    interfaces: tuple[Interface, ...] = ()
    push_configs: tuple[PushConfig, ...] = ()
    keys: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def declared_versions(self, binding: Binding) -> frozenset[str]:
        """Major.Minor versions the card declares for a binding."""
        card = self.card or {}
        found = set()
        entries = card.get("supportedInterfaces")
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, Mapping) and entry.get("protocolBinding") == binding.value:
                found.add(major_minor(entry.get("protocolVersion")))
        legacy = major_minor(card.get("protocolVersion"))
        if legacy is not None and binding in _v03_bindings(card):
            found.add(legacy)
        return frozenset(v for v in found if v is not None)

    def learn_request(self, view: ExchangeView) -> Session:
        found = tuple(_push_configs(view))
        return replace(self, push_configs=self.push_configs + found) if found else self

    def learn_response(self, view: ExchangeView) -> Session:
        learned = self
        body = view.response_json
        if view.is_card and isinstance(body, Mapping):
            learned = replace(learned, card=body, interfaces=interfaces_from_card(body))
        keys = jwks_keys(body)
        if keys:
            learned = replace(learned, keys={**learned.keys, **keys})
        return learned


def _v03_bindings(card: Mapping[str, Any]) -> set[Binding]:
    names = [card.get("preferredTransport") or "JSONRPC"] if card.get("url") else []
    extra = card.get("additionalInterfaces")
    names += (
        [e.get("transport") for e in extra if isinstance(e, Mapping)]
        if isinstance(extra, list)
        else []
    )
    return {Binding(n) for n in names if n in {"JSONRPC", "HTTP+JSON", "GRPC"}}


def jwks_keys(document: Any) -> dict[str, Mapping[str, Any]]:
    """The keys of a JWK Set (`{"keys": [...]}`) or a single JWK, by `kid`."""
    if not isinstance(document, Mapping):
        return {}
    keys = document.get("keys") if "keys" in document else [document]
    if not isinstance(keys, list):
        return {}
    return {
        key["kid"]: key
        for key in keys
        if isinstance(key, Mapping) and isinstance(key.get("kid"), str) and "kty" in key
    }


def _push_configs(view: ExchangeView) -> list[PushConfig]:
    name, payload = view.name, view.request_payload()
    if not isinstance(payload, Mapping):
        return []
    if name == "CreateTaskPushNotificationConfig":
        # v1.0: the TaskPushNotificationConfig itself; v0.3: {taskId, pushNotificationConfig}.
        nested = payload.get("pushNotificationConfig") or value_at(
            payload, ("config", "pushNotificationConfig")
        )
        config = _push_config(nested if isinstance(nested, Mapping) else payload)
        task_id = payload.get("taskId") or view.classification.task_id
        return [replace(config, task_id=str(task_id))] if config and task_id else []
    if name in ("SendMessage", "SendStreamingMessage"):
        for key in ("taskPushNotificationConfig", "pushNotificationConfig"):
            config = _push_config(value_at(payload, ("configuration", key)))
            if config is not None:
                return [config]
    return []


def _push_config(value: Any) -> PushConfig | None:
    if not isinstance(value, Mapping) or not isinstance(value.get("url"), str):
        return None
    auth = value.get("authentication")
    auth = auth if isinstance(auth, Mapping) else {}
    schemes = auth.get("schemes") if "schemes" in auth else [auth.get("scheme")]
    names = tuple(s for s in schemes or () if isinstance(s, str) and s)
    credentials = auth.get("credentials")
    task_id = value.get("taskId")
    return PushConfig(
        url=value["url"],
        task_id=task_id if isinstance(task_id, str) and task_id else None,
        schemes=names,
        credentials=credentials if isinstance(credentials, str) and credentials else None,
    )


@dataclass(frozen=True, slots=True)
class Violation:
    """What a check found wrong in one exchange; `citation` overrides the rule's section."""

    message: str
    expected: str
    actual: str
    where: str = ""
    citation: str | None = None
