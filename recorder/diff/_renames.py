"""The v0.3 -> v1.0 wire renames, as data, and a translator that applies them.

Strategy: when two aligned exchanges differ, the diff translates both (already normalised) sides
into the v1.0 shape and compares again.  Whatever the translation of one side explains is a
*rename* ("method renamed: message/send -> SendMessage"); whatever still differs is a real
difference.  Translating a v1.0 exchange changes nothing, so two v1.0 captures never show
renames, and two v0.3 captures cancel out (each side produces the same notes).

Each applied rule leaves a `RenameNote` with the path it touched, in the coordinates of the
side it came from, so the raw differences it explains can be listed under it.

The tables are protocol's (`recorder.protocol`: `_v03` for the shapes, `_operations` for
methods, rpcs, services and routes, derived from its one operation table); this module only
applies them and says what it applied.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from recorder.diff._normal import (
    Body,
    NormalEvent,
    NormalExchange,
    NormalGrpc,
    NormalRequest,
    NormalResponse,
)
from recorder.protocol import (
    PUSH_DELIVERY,
    V03_CARD_EXTENDED_FLAG,
    V03_CARD_LEGACY_FIELDS,
    V03_ENUM_FIELDS,
    V03_FILE_FIELDS,
    V03_HEADER_RENAMES,
    V03_KIND_MEMBERS,
    V03_METHOD_RENAMES,
    V03_PART_KINDS,
    V03_PUSH_CONFIG_PARAMS,
    V03_RESOURCE_NAMES,
    V03_RPC_RENAMES,
    V03_SECURITY_SCHEME_FIELDS,
    V03_SECURITY_SCHEME_MEMBERS,
    V03_SEND_CONFIG_RENAMES,
    V03_SERVICE_RENAMES,
    Version,
    v1_route_path,
)
from recorder.protocol import USER_CONTENT_KEYS as USER_CONTENT

V0_3, V1_0 = "0.3", "1.0"

# Operations whose results (and stream events, and push deliveries) are a oneof wrapper in v1.0.
WRAPPED_OPERATIONS = frozenset(
    {"SendMessage", "SendStreamingMessage", "SubscribeToTask", PUSH_DELIVERY}
)
# Operations whose v0.3 params name the task `id` (V03_PUSH_CONFIG_PARAMS).
PUSH_CONFIG_PARAM_OPERATIONS = frozenset(
    {
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
    }
)
# User-defined content (metadata, data parts, error data): never translated (the protocol's
# id model's USER_CONTENT_KEYS).


class Rule(StrEnum):
    VERSION = "version"
    METHOD = "method"
    ROUTE = "route"
    GRPC_SERVICE = "grpc-service"
    GRPC_RPC = "grpc-rpc"
    ENUM = "enum"
    KIND_WRAPPER = "kind-wrapper"
    KIND_REMOVED = "kind-removed"
    PART_KIND = "part-kind"
    FINAL_REMOVED = "final-removed"
    CONTENT_PARTS = "content-parts"
    SEND_CONFIG = "send-config"
    PUSH_CONFIG = "push-config"
    CARD_FIELD = "card-field"
    HEADER = "header"
    RESOURCE_NAME = "resource-name"


# How each rule reads: (v0.3 -> v1.0, v1.0 -> v0.3); {old} and {new} are in v0.3 -> v1.0 terms.
RULE_TEXT: Mapping[Rule, tuple[str, str]] = {
    Rule.VERSION: ("protocol version: {old} → {new}", "protocol version: {new} → {old}"),
    Rule.METHOD: ("method renamed: {old} → {new}", "method renamed: {new} → {old}"),
    Rule.ROUTE: ("route renamed: {old} → {new}", "route renamed: {new} → {old}"),
    Rule.GRPC_SERVICE: (
        "gRPC service renamed: {old} → {new}",
        "gRPC service renamed: {new} → {old}",
    ),
    Rule.GRPC_RPC: ("gRPC rpc renamed: {old} → {new}", "gRPC rpc renamed: {new} → {old}"),
    Rule.ENUM: ("enum form: {old} → {new}", "enum form: {new} → {old}"),
    Rule.KIND_WRAPPER: (
        "kind discriminator replaced by wrapper member `{new}`",
        "wrapper member `{new}` replaced by kind discriminator `{old}`",
    ),
    Rule.KIND_REMOVED: (
        "kind discriminator `{old}` removed",
        "kind discriminator `{old}` added",
    ),
    Rule.PART_KIND: (
        "part kind discriminator `{old}` replaced by member `{new}`",
        "part member `{new}` replaced by kind discriminator `{old}`",
    ),
    Rule.FINAL_REMOVED: ("`final` removed from status updates", "`final` added to status updates"),
    Rule.CONTENT_PARTS: (
        "message field renamed: {old} → {new}",
        "message field renamed: {new} → {old}",
    ),
    Rule.SEND_CONFIG: ("send configuration: {old} → {new}", "send configuration: {new} → {old}"),
    Rule.PUSH_CONFIG: ("push config: {old} → {new}", "push config: {new} → {old}"),
    Rule.CARD_FIELD: ("card field: {old} → {new}", "card field: {new} → {old}"),
    Rule.HEADER: ("header renamed: {old} → {new}", "header renamed: {new} → {old}"),
    Rule.RESOURCE_NAME: (
        "resource name → ids: {old} → {new}",
        "ids → resource name: {new} → {old}",
    ),
}


@dataclass(frozen=True, slots=True)
class RenameNote:
    """One application of a rename rule: old and new in v0.3 -> v1.0 terms, and where."""

    rule: Rule
    old: str
    new: str
    path: str

    def describe(self, *, reverse: bool = False) -> str:
        forward, backward = RULE_TEXT[self.rule]
        text = (backward if reverse else forward).format(old=self.old, new=self.new)
        if self.rule is Rule.VERSION:  # already says which way
            return text
        return text + (" (v1.0 → v0.3)" if reverse else " (v0.3 → v1.0)")


def to_v1(exchange: NormalExchange) -> tuple[NormalExchange, tuple[RenameNote, ...]]:
    """Translate a normalised exchange to the v1.0 wire shape; return it and what was renamed.

    An exchange already in v1.0 shape comes back equal, with no notes.
    """
    t = _Translator(exchange.key)
    request = t.request(exchange.request, exchange.binding, exchange.version)
    response = t.response(exchange.response) if exchange.response is not None else None
    version = exchange.version
    if version == V0_3:
        t.note(Rule.VERSION, V0_3, V1_0, "version")
        version = V1_0
    out = replace(exchange, request=request, response=response, version=version)
    return out, tuple(t.notes)


Headers = tuple[tuple[str, str], ...]


class _Translator:
    def __init__(self, operation: str) -> None:
        self.operation = operation
        self.wrapped = operation in WRAPPED_OPERATIONS
        self.notes: list[RenameNote] = []

    def note(self, rule: Rule, old: str, new: str, path: str) -> None:
        self.notes.append(RenameNote(rule, old, new, path))

    # -- request and response ----------------------------------------------------------------

    def request(
        self, request: NormalRequest, binding: str | None, version: str | None
    ) -> NormalRequest:
        wrap_root = self.operation == PUSH_DELIVERY
        target = request.target
        if version == Version.V0_3:
            target = self.target(request.method, target, binding)
        return replace(
            request,
            target=target,
            headers=self.headers(request.headers, "request.header"),
            body=self.body(request.body, "request.body", wrap_root=wrap_root),
            messages=self.messages(request.messages, "request.messages"),
        )

    def response(self, response: NormalResponse) -> NormalResponse:
        return replace(
            response,
            headers=self.headers(response.headers, "response.header"),
            body=self.body(response.body, "body", wrap_root=self.wrapped),
            events=tuple(self.event(e, i) for i, e in enumerate(response.events)),
            messages=self.messages(response.messages, "messages"),
        )

    def event(self, event: NormalEvent, index: int) -> NormalEvent:
        data = self.body(event.data, f"events[{index}].data", wrap_root=self.wrapped)
        return replace(event, data=data)

    def messages(self, messages: tuple[NormalGrpc, ...], path: str) -> tuple[NormalGrpc, ...]:
        return tuple(
            replace(m, body=self.body(m.body, f"{path}[{i}]", wrap_root=False))
            for i, m in enumerate(messages)
        )

    def target(self, verb: str, target: str, binding: str | None) -> str:
        """A v0.3 gRPC path or HTTP+JSON request target in its v1.0 form."""
        for old, new in V03_SERVICE_RENAMES.items():
            prefix = f"/{old}/"
            if target.startswith(prefix):
                self.note(Rule.GRPC_SERVICE, old, new, "request.target")
                rpc = target[len(prefix) :]
                if rpc in V03_RPC_RENAMES:
                    self.note(Rule.GRPC_RPC, rpc, V03_RPC_RENAMES[rpc], "request.target")
                return f"/{new}/{V03_RPC_RENAMES.get(rpc, rpc)}"
        path, sep, query = target.partition("?")
        routed = v1_route_path(self.operation, verb, path) if binding == "HTTP+JSON" else None
        if routed is None:
            return target
        self.note(Rule.ROUTE, path, routed[0], "request.target")
        return routed[0] + sep + query

    def headers(self, headers: Headers, path: str) -> Headers:
        out = []
        for name, value in headers:
            if name in V03_HEADER_RENAMES:
                self.note(Rule.HEADER, name, V03_HEADER_RENAMES[name], f"{path}:{name}")
                name = V03_HEADER_RENAMES[name]
            out.append((name, value))
        return tuple(out)

    def body(self, body: Body, path: str, *, wrap_root: bool) -> Body:
        if body.kind != "json":
            return body
        return Body("json", self.document(body.value, path, wrap_root=wrap_root))

    # -- JSON documents ----------------------------------------------------------------------

    def document(self, value: Any, path: str, *, wrap_root: bool) -> Any:
        if isinstance(value, dict) and "jsonrpc" in value:
            return self.envelope(value, path, wrap_root=wrap_root)
        return self.value(value, path, wrap=wrap_root)

    def envelope(self, envelope: dict[str, Any], path: str, *, wrap_root: bool) -> dict[str, Any]:
        out = dict(envelope)
        method = out.get("method")
        if isinstance(method, str) and method in V03_METHOD_RENAMES:
            self.note(Rule.METHOD, method, V03_METHOD_RENAMES[method], f"{path}.method")
            out["method"] = V03_METHOD_RENAMES[method]
        params = out.get("params")
        if isinstance(params, dict) and self.operation in PUSH_CONFIG_PARAM_OPERATIONS:
            out["params"] = self.push_config_params(params, f"{path}.params")
        for key in ("params", "result", "error"):
            if key in out:
                out[key] = self.value(out[key], f"{path}.{key}", wrap=wrap_root and key == "result")
        return out

    def push_config_params(self, params: dict[str, Any], path: str) -> dict[str, Any]:
        if "taskId" in params or "id" not in params:
            return params  # already v1.0
        renamed = [key for key in params if key in V03_PUSH_CONFIG_PARAMS]
        old = "{" + ", ".join(renamed) + "}"
        new = "{" + ", ".join(V03_PUSH_CONFIG_PARAMS[key] for key in renamed) + "}"
        self.note(Rule.PUSH_CONFIG, old, new, path)
        return {V03_PUSH_CONFIG_PARAMS.get(key, key): value for key, value in params.items()}

    def value(self, value: Any, path: str, *, wrap: bool = False, part: bool = False) -> Any:
        if isinstance(value, list):
            return [self.value(v, f"{path}[{i}]", part=part) for i, v in enumerate(value)]
        if not isinstance(value, dict):
            return value
        obj = self.object_rules(dict(value), path, part=part)
        member = self.kind(obj, path, wrap=wrap, part=part)
        obj = {key: self.child(key, child, path) for key, child in obj.items()}
        return {member: obj} if member else obj

    def child(self, key: str, value: Any, path: str) -> Any:
        here = f"{path}.{key}"
        if key in USER_CONTENT:
            return value
        if key in V03_ENUM_FIELDS and isinstance(value, str) and value in V03_ENUM_FIELDS[key]:
            new = V03_ENUM_FIELDS[key][value]
            self.note(Rule.ENUM, value, new, here)
            return new
        if key == "configuration" and isinstance(value, dict):
            value = self.send_config(dict(value), here)
        return self.value(value, here, part=key == "parts")

    def kind(self, obj: dict[str, Any], path: str, *, wrap: bool, part: bool) -> str | None:
        """Drop a `kind` discriminator; return the wrapper member to put the object under."""
        kind = obj.get("kind")
        if not isinstance(kind, str):
            return None
        if part and kind in V03_PART_KINDS:
            del obj["kind"]
            self.part(obj, kind, path)
            return None
        if kind not in V03_KIND_MEMBERS:
            return None
        del obj["kind"]
        if wrap:
            self.note(Rule.KIND_WRAPPER, f'"kind":"{kind}"', V03_KIND_MEMBERS[kind], path)
            return V03_KIND_MEMBERS[kind]
        self.note(Rule.KIND_REMOVED, f'"kind":"{kind}"', "", path)
        return None

    def part(self, obj: dict[str, Any], kind: str, path: str) -> None:
        self.note(Rule.PART_KIND, f'"kind":"{kind}"', kind if kind != "file" else "raw|url", path)
        file = obj.pop("file", None) if kind == "file" else None
        if isinstance(file, dict):
            obj.update({V03_FILE_FIELDS.get(k, k): v for k, v in file.items()})

    def object_rules(self, obj: dict[str, Any], path: str, *, part: bool) -> dict[str, Any]:
        if "final" in obj and "taskId" in obj and "status" in obj:
            del obj["final"]
            self.note(Rule.FINAL_REMOVED, "final", "", f"{path}.final")
        if "content" in obj and "messageId" in obj and "parts" not in obj:
            obj["parts"] = obj.pop("content")
            self.note(Rule.CONTENT_PARTS, "content", "parts", f"{path}.content")
        if isinstance(obj.get("pushNotificationConfig"), dict) and "taskId" in obj:
            nested, flat = "{taskId, pushNotificationConfig:{…}}", "flat {taskId, id, url, …}"
            self.note(Rule.PUSH_CONFIG, nested, flat, path)
            obj.update(_push_config(obj.pop("pushNotificationConfig")))
        if "skills" in obj and "name" in obj:
            obj = self.card(obj, path)
        return self.resource_names(obj, path)

    def resource_names(self, obj: dict[str, Any], path: str) -> dict[str, Any]:
        for key, pattern, fields in V03_RESOURCE_NAMES:
            value = obj.get(key)
            match = pattern.match(value) if isinstance(value, str) else None
            if match is None or any(f in obj for f in fields):
                continue
            del obj[key]
            obj.update(zip(fields, match.groups(), strict=True))
            self.note(Rule.RESOURCE_NAME, key, ", ".join(fields), f"{path}.{key}")
        return obj

    def send_config(self, config: dict[str, Any], path: str) -> dict[str, Any]:
        if "blocking" in config:
            blocking = config.pop("blocking")
            inverted = "returnImmediately (inverted)"
            self.note(Rule.SEND_CONFIG, "blocking", inverted, f"{path}.blocking")
            if blocking is False:  # v1.0 omits the default `returnImmediately: false`
                config["returnImmediately"] = True
        for old, new in V03_SEND_CONFIG_RENAMES.items():
            if isinstance(config.get(old), dict):
                self.note(Rule.SEND_CONFIG, old, new, f"{path}.{old}")
                config[new] = _push_config(config.pop(old))
        return config

    def card(self, card: dict[str, Any], path: str) -> dict[str, Any]:
        legacy = {key: card.pop(key) for key in V03_CARD_LEGACY_FIELDS if key in card}
        if legacy:
            self.note(Rule.CARD_FIELD, "/".join(legacy), "supportedInterfaces", path)
            card.setdefault("supportedInterfaces", _interfaces(legacy))
        if "supportsAuthenticatedExtendedCard" in card:
            flag = card.pop("supportsAuthenticatedExtendedCard")
            self.note(Rule.CARD_FIELD, *V03_CARD_EXTENDED_FLAG, path)
            capabilities = dict(card.get("capabilities") or {})
            if flag:
                capabilities.setdefault("extendedAgentCard", flag)
            card["capabilities"] = capabilities
        schemes = card.get("securitySchemes")
        if isinstance(schemes, dict):
            card["securitySchemes"] = {
                name: self.security_scheme(scheme, f"{path}.securitySchemes.{name}")
                for name, scheme in schemes.items()
            }
        self.requirements(card, path)
        if isinstance(card.get("skills"), list):
            card["skills"] = [
                self.requirements(dict(skill), f"{path}.skills[{i}]")
                if isinstance(skill, dict)
                else skill
                for i, skill in enumerate(card["skills"])
            ]
        return card

    def security_scheme(self, scheme: Any, path: str) -> Any:
        kind = scheme.get("type") if isinstance(scheme, dict) else None
        if not isinstance(kind, str) or kind not in V03_SECURITY_SCHEME_MEMBERS:
            return scheme
        member = V03_SECURITY_SCHEME_MEMBERS[kind]
        self.note(Rule.CARD_FIELD, f'"type":"{kind}"', member, path)
        fields = {V03_SECURITY_SCHEME_FIELDS.get(k, k): v for k, v in scheme.items() if k != "type"}
        return {member: fields}

    def requirements(self, holder: dict[str, Any], path: str) -> dict[str, Any]:
        """v0.3 `security` on a card or skill -> v1.0 `securityRequirements`, in place."""
        legacy = holder.get("security")
        if not isinstance(legacy, list) or "securityRequirements" in holder:
            return holder
        del holder["security"]
        self.note(Rule.CARD_FIELD, "security", "securityRequirements", f"{path}.security")
        holder["securityRequirements"] = [
            {"schemes": {name: {"list": scopes} for name, scopes in entry.items()}}
            if isinstance(entry, dict)
            else entry
            for entry in legacy
        ]
        return holder


def _push_config(config: dict[str, Any]) -> dict[str, Any]:
    """v0.3 PushNotificationConfig -> the fields of a flat v1.0 TaskPushNotificationConfig."""
    out = dict(config)
    auth = out.get("authentication")
    if isinstance(auth, dict) and "schemes" in auth:
        auth = dict(auth)
        schemes = auth.pop("schemes")
        if isinstance(schemes, list) and schemes:
            auth["scheme"] = schemes[0]
        out["authentication"] = auth
    return out


def _interfaces(legacy: dict[str, Any]) -> list[dict[str, Any]]:
    version = legacy.get("protocolVersion")
    binding = legacy.get("preferredTransport", "JSONRPC")
    main = {"url": legacy.get("url"), "protocolBinding": binding}
    found = [main]
    for extra in legacy.get("additionalInterfaces") or []:
        if isinstance(extra, dict):
            entry = {"url": extra.get("url"), "protocolBinding": extra.get("transport")}
            if entry not in found:
                found.append(entry)
    return [{**entry, "protocolVersion": version} if version else entry for entry in found]
