"""Lint checks on what the messages hold: field names, enum forms, required fields, streams.

`typed_documents` names the proto message of each JSON document and `_schema.walk` follows it,
so every check asks the descriptors, never a hand list.  v0.3 JSON-RPC bodies follow the v0.3
JSON schema, not a proto, so only their enum forms are checked.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from google.protobuf.descriptor import FieldDescriptor

from recorder.lint._schema import (
    V1_PACKAGE,
    Node,
    enum_names,
    field_value,
    fields_by_key,
    is_repeated,
    legacy_keys,
    oneofs,
    present,
    required_fields,
    walk,
)
from recorder.lint._view import ExchangeView, Payload, Session, Violation
from recorder.protocol import (
    EXACTLY_ONE,
    INTERRUPTED_STATES,
    REQUIRED_FIELD_SCOPE,
    STREAM_MEMBERS,
    TERMINAL_STATES,
    USER_CONTENT_KEYS,
    V03_JSONRPC_ROLES,
    V03_JSONRPC_TASK_STATES,
    Binding,
    SpecVersion,
    Version,
    is_cut_short,
)


def typed_documents(view: ExchangeView) -> list[tuple[Payload, str]]:
    """Each JSON document of the exchange with the full name of its proto message type."""
    if view.is_card:
        ok = view.status == 200 and view.speaks is Version.V1_0
        return [(Payload("card", view.response_json), f"{V1_PACKAGE}.AgentCard")] if ok else []
    if view.is_delivery:
        return [(Payload("request", view.request_json), f"{V1_PACKAGE}.StreamResponse")]
    op = view.operation
    if op is None:
        return []
    found = [(Payload("request", _request_document(view)), op.request_type)]
    if view.stream:
        found += [(p, op.response_type) for p in view.stream_payloads()]
    elif view.has_response and view.status < 400:
        found.append((Payload("response", view.response_payload()), op.response_type))
    return [(p, t) for p, t in found if isinstance(p.value, Mapping)]


def _request_document(view: ExchangeView) -> Any:
    if view.binding is Binding.HTTP_JSON and not view.request_body:
        return dict(view.query)  # GET and DELETE carry their fields in the query (§11.5)
    return view.request_payload()


def _nodes(view: ExchangeView, scope: frozenset[str] = frozenset()) -> Iterator[Node]:
    for payload, type_name in typed_documents(view):
        yield from walk(payload.value, type_name, payload.where, scope)


# ---- required fields and oneofs (§5.7, §3.2.3, §4.3.3) ----


def required(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    for node in _nodes(view, REQUIRED_FIELD_SCOPE):
        if node.in_scope:
            yield from _missing(node, grpc=view.binding is Binding.GRPC)


def _missing(node: Node, *, grpc: bool) -> Iterator[Violation]:
    note = " (gRPC leaves empty values out, so it was empty or unset)" if grpc else ""
    name = node.message.name
    for field in required_fields(node.message):
        value = field_value(node.value, field)
        if value is None:
            yield Violation(
                f"{name} has no {field.json_name}{note}",
                f"{field.json_name} set",
                "(absent)",
                node.path,
            )
        elif is_repeated(field) and value == []:
            yield Violation(
                f"{name}.{field.json_name} is empty", "at least one element", "[]", node.path
            )


def oneof(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    for node in _nodes(view):
        for name, members in oneofs(node.message):
            set_ = [f.json_name for f in members if present(node.value, f)]
            names = "/".join(f.json_name for f in members)
            if len(set_) > 1:
                yield Violation(
                    f"{node.message.name} sets more than one {name} member",
                    f"one of {names}",
                    ", ".join(set_),
                    node.path,
                )
            elif not set_ and node.message.name in EXACTLY_ONE:
                yield Violation(
                    f"{node.message.name} holds no {name}",
                    f"one of {names}",
                    "none of them",
                    node.path,
                )


# ---- names and enum forms (§5.5, §11.5, Appendix A.2) ----


def enums(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    if view.speaks is Version.V0_3 and (view.binding is Binding.JSONRPC or view.is_delivery):
        yield from _v03_jsonrpc_enums(view)
        return
    for node in _nodes(view):
        keys = fields_by_key(node.message)
        for key, value in node.value.items():
            field = keys.get(key)
            if field is None or field.enum_type is None:
                continue
            values = value if is_repeated(field) and isinstance(value, list) else [value]
            for item in values:
                if not (isinstance(item, str) and item in enum_names(field)):
                    yield _bad_enum(node, key, field, item, view.speaks)


def _bad_enum(
    node: Node, key: str, field: FieldDescriptor, value: Any, speaks: Version | None
) -> Violation:
    names = enum_names(field)
    prefix = os.path.commonprefix(sorted(names))
    guess = prefix + str(value).upper().replace("-", "_")
    kind = "a number" if isinstance(value, int) else repr(value)
    version = f"v{speaks.value} " if speaks else ""
    return Violation(
        f"{node.message.name}.{key} is {kind}, not a {version}{field.enum_type.name} name",
        guess if guess in names else f"a {field.enum_type.name} name ({prefix}...)",
        repr(value),
        f"{node.path}.{key}",
        citation=_V03_PROTO_CITATION if speaks is Version.V0_3 else None,
    )


_V03_FORMS = {"state": V03_JSONRPC_TASK_STATES, "role": V03_JSONRPC_ROLES}
_V03_CITATION = "A2A 0.3.0 §6.3, §6.4 (schema TaskState, Message.role)"
_V03_PROTO_CITATION = "A2A 0.3.0 §3.2.2, §3.2.3 (REST and gRPC use the v0.3 proto's names)"


def _v03_jsonrpc_enums(view: ExchangeView) -> Iterator[Violation]:
    documents = [Payload("request", view.request_payload())]
    documents += (
        view.stream_payloads() if view.stream else [Payload("response", view.response_payload())]
    )
    if view.is_delivery:
        documents = [Payload("request", view.request_json)]
    for payload in documents:
        for path, key, value in _keyed(payload.value, payload.where):
            if not (isinstance(value, str) and value in _V03_FORMS[key]):
                yield Violation(
                    f"{key} {value!r} is not a v0.3 JSON-RPC form",
                    "one of " + ", ".join(sorted(_V03_FORMS[key])),
                    repr(value),
                    path,
                    citation=_V03_CITATION,
                )


def _keyed(value: Any, path: str) -> Iterator[tuple[str, str, Any]]:
    """(path, key, value) of each `role` and each `status.state`, skipping user data."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            yield from _keyed(item, f"{path}[{index}]")
    if not isinstance(value, Mapping):
        return
    for key, item in value.items():
        if key in USER_CONTENT_KEYS:
            continue
        if key == "role":
            yield f"{path}.role", "role", item
        elif key == "status" and isinstance(item, Mapping) and "state" in item:
            yield f"{path}.status.state", "state", item["state"]
        yield from _keyed(item, f"{path}.{key}")


def camel_case(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    for node in _nodes(view):
        keys = fields_by_key(node.message)
        for key in node.value:
            field = keys.get(key)
            if field is not None and key == field.name != field.json_name:
                yield Violation(
                    f"{node.message.name} field {key} is snake_case",
                    field.json_name,
                    key,
                    node.path,
                )


def legacy_names(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    if view.is_card and view.asked_version is None:
        return  # a card for clients that did not say their version may serve v0.3 too
    for node in _nodes(view):
        old = legacy_keys(node.message)
        for key in node.value:
            if key in old:
                yield Violation(
                    f"{node.message.name} carries the v0.3 field {key}",
                    f"only v1.0 fields of {node.message.name}",
                    key,
                    node.path,
                )


# ---- streams (§3.1.2, §3.1.6, §11.7) ----


def _kinds(view: ExchangeView) -> list[tuple[str, str | None, str | None]]:
    """(where, member, task state or None) of each streamed StreamResponse."""
    found = []
    for payload in view.stream_payloads():
        value = payload.value if isinstance(payload.value, Mapping) else {}
        member = next((m for m in STREAM_MEMBERS if isinstance(value.get(m), Mapping)), None)
        state = None
        if member in ("task", "statusUpdate"):
            status = value[member].get("status")
            state = status.get("state") if isinstance(status, Mapping) else None
        found.append((payload.where, member, state))
    return found


def _complete_stream(view: ExchangeView) -> bool:
    """A streaming answer that arrived whole: a 200 stream, not cut short, no error in it."""
    ok = view.has_response and view.status == 200 and view.grpc_status in (None, "0")
    errors = any(e.type == "error" for e in view.events)
    cut = is_cut_short(view.notes)  # not ended by the agent: see _notes
    return ok and view.stream and not errors and not cut and not view.response_body


def first_event(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    if not _complete_stream(view):
        return
    kinds = _kinds(view)
    allowed = ("task",) if view.name == "SubscribeToTask" else ("task", "message")
    first = kinds[0][1] if kinds else None
    if first not in allowed:
        yield Violation(
            f"the {view.name} stream does not begin with a {' or '.join(allowed)}",
            " or ".join(allowed),
            first or ("no event" if not kinds else "no StreamResponse"),
            kinds[0][0] if kinds else "response",
        )


def message_only(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    kinds = _kinds(view)
    if kinds and kinds[0][1] == "message" and len(kinds) > 1:
        yield Violation(
            "a message stream goes on after its Message",
            "one Message, then close",
            f"{len(kinds)} events",
            kinds[1][0],
        )


def after_terminal(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    kinds = _kinds(view)
    end = next((i for i, (_, _, state) in enumerate(kinds) if state in TERMINAL_STATES), None)
    if end is None:
        return
    rest = kinds[end + 1 :]
    snapshot_only = len(rest) == 1 and rest[0][1] == "task"  # §11.7: MAY resend the Task
    if rest and not snapshot_only:
        yield Violation(
            f"the stream goes on after {kinds[end][2]}",
            "close (or one final Task snapshot)",
            f"{len(rest)} more event(s): {', '.join(str(k[1]) for k in rest)}",
            rest[0][0],
        )


def early_close(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    if not _complete_stream(view):
        return
    kinds = _kinds(view)
    if not kinds or kinds[0][1] == "message":
        return
    states = [state for _, _, state in kinds if state]
    last = states[-1] if states else None
    if last not in TERMINAL_STATES | INTERRUPTED_STATES:
        yield Violation(
            "the task stream closed before a terminal or interrupted state",
            "close at a terminal or interrupted state",
            f"closed at {last or 'no state'}",
            kinds[-1][0],
        )
