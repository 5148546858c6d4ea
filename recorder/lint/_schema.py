"""The proto descriptors read as a JSON schema: required fields, oneofs, enums, field names.

Nothing is written by hand: the shipped descriptors carry `google.api.field_behavior` for
REQUIRED fields (spec §5.7).  Well-known types (`Struct`, `Value`, `Timestamp`) are leaves.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from google.api import field_behavior_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from recorder.protocol import (
    V03_DISCRIMINATOR,
    V03_KIND_TYPES,
    V03_SERVICE,
    V1_SERVICE,
    message_class,
)

V1_PACKAGE = V1_SERVICE.rsplit(".", 1)[0]  # lf.a2a.v1
V03_PACKAGE = V03_SERVICE.rsplit(".", 1)[0]  # a2a.v1
_WELL_KNOWN = "google.protobuf."


@dataclass(frozen=True, slots=True)
class Node:
    """One JSON object met by `walk`: where it is, its message type, and its value."""

    path: str
    message: Descriptor
    value: Mapping[str, Any]
    in_scope: bool  # this object or one around it has a type in the walk's scope


def descriptor(type_name: str) -> Descriptor | None:
    """The descriptor of a full message name (`lf.a2a.v1.Task`), or None."""
    cls = message_class(type_name)
    return cls.DESCRIPTOR if cls is not None else None


def walk(
    document: Any, type_name: str, path: str, scope: frozenset[str] = frozenset()
) -> Iterator[Node]:
    """Every object in `document` read as `type_name`, outermost first; `scope` names types
    that switch `in_scope` on for their objects and everything inside them."""
    found = descriptor(type_name)
    if found is not None:
        yield from _walk(document, found, path, scope, False)


def _walk(
    value: Any, message: Descriptor, path: str, scope: frozenset[str], in_scope: bool
) -> Iterator[Node]:
    if not isinstance(value, Mapping):
        return
    in_scope = in_scope or message.name in scope
    yield Node(path, message, value, in_scope)
    keys = fields_by_key(message)
    for key, item in value.items():
        field = keys.get(key)
        if field is None or field.message_type is None:
            continue
        if field.message_type.full_name.startswith(_WELL_KNOWN):
            continue
        yield from _children(item, field, f"{path}.{key}", scope, in_scope)


def _children(
    value: Any, field: FieldDescriptor, path: str, scope: frozenset[str], in_scope: bool
) -> Iterator[Node]:
    message = field.message_type
    if message.GetOptions().map_entry:
        inner = message.fields_by_name["value"].message_type
        if inner is not None and isinstance(value, Mapping):
            for key, item in value.items():
                yield from _walk(item, inner, f"{path}.{key}", scope, in_scope)
    elif is_repeated(field):
        for index, item in enumerate(value if isinstance(value, list) else ()):
            yield from _walk(item, message, f"{path}[{index}]", scope, in_scope)
    else:
        yield from _walk(value, message, path, scope, in_scope)


def is_repeated(field: FieldDescriptor) -> bool:
    flag = getattr(field, "is_repeated", None)  # protobuf >= 6.31; `label` before
    if flag is not None:
        return bool(flag)
    return bool(field.label == FieldDescriptor.LABEL_REPEATED)


@cache
def fields_by_key(message: Descriptor) -> Mapping[str, FieldDescriptor]:
    """A message's fields under every key proto-JSON accepts: JSON name and proto name."""
    keys = {field.name: field for field in message.fields}
    keys.update({field.json_name: field for field in message.fields})
    return keys


@cache
def required_fields(message: Descriptor) -> tuple[FieldDescriptor, ...]:
    """The fields marked `(google.api.field_behavior) = REQUIRED` (spec §5.7)."""
    return tuple(
        field
        for field in message.fields
        if field_behavior_pb2.REQUIRED
        in field.GetOptions().Extensions[field_behavior_pb2.field_behavior]
    )


@cache
def oneofs(message: Descriptor) -> tuple[tuple[str, tuple[FieldDescriptor, ...]], ...]:
    """Each real oneof (not the synthetic one of a proto3 `optional`) and its members."""
    return tuple(
        (oneof.name, tuple(oneof.fields))
        for oneof in message.oneofs
        if not (len(oneof.fields) == 1 and oneof.name.startswith("_"))
    )


def field_value(value: Mapping[str, Any], field: FieldDescriptor) -> Any:
    """The value of `field` in a JSON object (under either key), or None (absent or null)."""
    found = value.get(field.json_name)
    return found if found is not None else value.get(field.name)


def present(value: Mapping[str, Any], field: FieldDescriptor) -> bool:
    """Whether a JSON object holds `field` (under either key) with a non-null value."""
    return field_value(value, field) is not None


@cache
def enum_names(field: FieldDescriptor) -> frozenset[str]:
    """The value names of an enum field (proto-JSON writes enums as names, spec §5.5)."""
    if field.enum_type is None:
        return frozenset()
    return frozenset(value.name for value in field.enum_type.values)


@cache
def legacy_keys(message: Descriptor) -> frozenset[str]:
    """v0.3 names a v1.0 message no longer has: its v0.3 descriptor's fields, plus `kind`
    on the types that carried it (spec Appendix A)."""
    old = descriptor(f"{V03_PACKAGE}.{message.name}")
    names = {field.json_name for field in old.fields} if old is not None else set()
    names -= set(fields_by_key(message))
    if message.name in V03_KIND_TYPES:
        names.add(V03_DISCRIMINATOR)
    return frozenset(names)
