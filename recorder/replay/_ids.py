"""What a request is matched on: its value, the ids in it, and its key (pure).

A request is compared as its *value*, `{"tenant", "path", "query", "body"}`: the HTTP+JSON path
ids and query, and the body (JSON-RPC params, an HTTP+JSON body, the decoded gRPC message).
The operation's `IdPosition`s (`recorder.protocol`, one table for v1.0 and v0.3) say where a
value holds ids; each id found there is a `Slot`.  The *key* of a request is its value's
*shape*: timestamps and defaults dropped, and every slot replaced by a token for its
provenance (`Provenance`):

    ISSUED   "~issued"          an id handed out earlier (or the client's own, named again)
    OWN      "~own"             the client's own new id, named here first
    FRESH    "~fresh"           new on every request (messageId, webhook, secrets)
    UNKNOWN  "~unknown"         a reference to an id never issued: a probe
    FIXED    ["~fixed", <id>]   an id that existed before the capture began

Equal keys mean: the same request, with ids whose provenances agree position by position.
Which recorded id an issued id stands for is not in the key: a live id may stand for several
recorded ids until later requests tell them apart, so the recorded steps of one key are told
apart by the ids they name (`Step.named`), against what a live id may stand for (`_state`).
Everything else in the value is compared as it is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from recorder.capture import Request
from recorder.protocol import (
    NOT_JSON,
    PATH_POSITIONS,
    TIMESTAMP_FIELDS,
    Binding,
    Classification,
    IdKind,
    IdPosition,
    IdRole,
    Version,
    operation,
    parse_json,
    resource_ids,
)

Json = Any
Location = tuple[str | int, ...]
Key = tuple[str, str, str]

# Keys whose values vary on every run and say nothing about the request.
IGNORED_KEYS = TIMESTAMP_FIELDS
# Members a sender may spell out or leave out with the same meaning.  Empty values are proto3
# JSON defaults (the JS SDK sends `"metadata": {}`, py leaves it out); a text part's media type
# is text/plain whether said or not (the JS SDK says it).  key -> (value, sibling it needs).
DEFAULT_MEMBERS: dict[str, tuple[Json, str]] = {"mediaType": ("text/plain", "text")}
EMPTY_VALUES: tuple[Json, ...] = ({}, [], None, "")
_REDACTED = re.compile(r"<redacted:\d+>")
_SNAKE = re.compile(r"(?<!^)([A-Z])")


class Provenance(StrEnum):
    """Where an id in a request comes from (see the module docstring)."""

    ISSUED = "issued"
    OWN = "own"
    FRESH = "fresh"
    UNKNOWN = "unknown"
    FIXED = "fixed"


@dataclass(frozen=True, slots=True)
class Slot:
    """One id in a request value: where it is, what it is, and the position that put it there.

    For a v0.3 resource name (`tasks/{t}/pushNotificationConfigs/{c}`) there is one slot per id
    segment, `segment` being its index in the name split at `/`.
    """

    location: Location
    value: str
    role: IdRole
    kind: IdKind | None
    segment: int | None = None


# ---- the value ----------------------------------------------------------------------------


def request_value(
    request: Request,
    classification: Classification,
    secret_params: frozenset[str] = frozenset(),
    document: Json = None,
) -> Json:
    """What is compared of a request: its A2A content, not its framing.

    `secret_params` are query parameters the recording redacted (API keys): left out, since a
    live client sends its own key where the capture has a placeholder.  `document` is the
    body already parsed, if it was.
    """
    value: dict[str, Json] = {"tenant": classification.tenant}
    if classification.binding is Binding.HTTP_JSON:
        value["path"] = _path_ids(request.target, classification)
        query = query_of(request.target)
        value["query"] = {k: v for k, v in query.items() if k not in secret_params}
    if not classification.is_known:
        # No operation the tables know: two unknown methods, or two routes, are two requests.
        value["route"] = f"{request.method} {request.target.partition('?')[0]}"
        if classification.method:
            value["method"] = classification.method
    body = body_value(request, classification, document)
    if classification.binding is Binding.HTTP_JSON and isinstance(body, dict) and value["path"]:
        body = _without_path_restated(body, value["path"], classification)
    value["body"] = body
    return value


_PATH_KEYS = {IdKind.TASK: "taskId", IdKind.CONFIG: "configId"}


def _without_path_restated(
    body: dict[str, Json], path: Mapping[str, str], classification: Classification
) -> dict[str, Json]:
    """The body without the members that restate an id the path names.

    An HTTP+JSON request message is its path fields plus its body (the proto's `body: "*"`),
    so a field sent in both is one field: a2a-sdk's REST client repeats the task id in the body
    of `POST /tasks/{id}:cancel` (`{"id": ...}`), a2a-go and @a2a-js/sdk send no body, and an
    agent reads the two alike.
    """
    restated = {
        position.path[0]
        for position in positions_of(classification)
        if len(position.path) == 1
        and position.kind in _PATH_KEYS
        and body.get(position.path[0]) == path.get(_PATH_KEYS[position.kind])
    }
    return {k: v for k, v in body.items() if k not in restated} if restated else body


def _path_ids(target: str, classification: Classification) -> dict[str, str]:
    """The ids the URL path names (the classification also takes them from the body)."""
    segments = {unquote(part).partition(":")[0] for part in urlsplit(target).path.split("/")}
    found = {"taskId": classification.task_id, "configId": classification.config_id}
    return {k: v for k, v in found.items() if v and v.partition(":")[0] in segments}


def query_of(target: str) -> dict[str, list[str]]:
    if "?" not in target:  # no query (most requests): no URL parse
        return {}
    return {k: sorted(v) for k, v in sorted(parse_qs(urlsplit(target).query).items())}


def redacted_params(requests: Iterable[Request]) -> frozenset[str]:
    """The query parameters that hold a redaction placeholder in any of these requests."""
    return frozenset(
        name
        for request in requests
        for name, values in query_of(request.target).items()
        if any(_REDACTED.fullmatch(v) for v in values)
    )


def body_value(request: Request, classification: Classification, document: Json = None) -> Json:
    if request.messages:
        values = [
            parse_json(m.json) if m.json else {"raw": (m.raw or b"").hex()}
            for m in request.messages
        ]
        return values[0] if len(values) == 1 else values
    if not request.body:
        return None
    parsed = parse_json(request.body) if document is None else document
    if parsed is NOT_JSON:
        return {"raw": request.body.hex()}
    if classification.binding is Binding.JSONRPC and isinstance(parsed, dict):
        return parsed.get("params")
    return parsed


# ---- slots ------------------------------------------------------------------------------


def positions_of(classification: Classification) -> tuple[IdPosition, ...]:
    if classification.operation is None:
        return ()
    row = operation(classification.operation, classification.version or Version.V1_0)
    return row.positions if row is not None else ()


def find_slots(value: Json, positions: Sequence[IdPosition]) -> list[Slot]:
    """Every id the value holds at one of `positions` (body and query) or in its path."""
    found: list[Slot] = []
    if not isinstance(value, dict):
        return found
    for section, table in (("body", positions), ("query", positions), ("path", PATH_POSITIONS)):
        document = value.get(section)
        if document is not None:
            for position in table:
                _walk(document, position.path, (section,), position, found)
    return found


def _walk(
    node: Json, path: tuple[str, ...], where: Location, position: IdPosition, found: list[Slot]
) -> None:
    if not path:
        items = enumerate(node) if isinstance(node, list) else ((None, node),)
        for index, item in items:
            if isinstance(item, str) and item:
                here = where if index is None else (*where, index)
                found.extend(_slots_at(here, item, position))
        return
    head, rest = path[0], path[1:]
    if head == "*":
        if isinstance(node, list):
            for index, item in enumerate(node):
                _walk(item, rest, (*where, index), position, found)
        return
    if isinstance(node, dict):
        name = head if head in node else snake_case(head)
        if name in node:
            _walk(node[name], rest, (*where, name), position, found)


_SNAKE_NAMES: dict[str, str] = {}


def snake_case(key: str) -> str:
    """The snake_case spelling proto-JSON readers also accept (`taskId` -> `task_id`)."""
    name = _SNAKE_NAMES.get(key)
    if name is None:
        name = _SNAKE_NAMES[key] = _SNAKE.sub(r"_\1", key).lower()
    return name


def _slots_at(where: Location, value: str, position: IdPosition) -> Iterator[Slot]:
    if not position.resource:
        yield Slot(where, value, position.role, position.kind)
        return
    found = resource_ids(value)
    if found is None:
        return  # not a resource name: compared as it is
    task, config = found
    yield Slot(where, task, IdRole.REFERENCE, IdKind.TASK, 1)
    if config:
        yield Slot(where, config, position.role, IdKind.CONFIG, 3)


# ---- shape and key ------------------------------------------------------------------------


def token(provenance: Provenance, recorded: str | None = None) -> Json:
    """The placeholder a slot becomes in a shape (a fixed id keeps its value: it is the same
    id in the recording and live)."""
    if provenance is Provenance.FIXED:
        return [f"~{provenance.value}", recorded]
    return f"~{provenance.value}"


def shape(value: Json, slots: Sequence[Slot], tokens: Sequence[Json]) -> Json:
    """The value with ignored keys and defaults dropped and each slot replaced by its token."""
    shaped = _shape(value)
    resources: dict[Location, list[Json]] = {}
    for slot, placeholder in zip(slots, tokens, strict=True):
        if slot.segment is None:
            _put(shaped, slot.location, placeholder)
            continue
        parts = resources.get(slot.location)
        if parts is None:
            name = _get(shaped, slot.location)
            parts = resources[slot.location] = ["~resource", *name.split("/")]
        parts[slot.segment + 1] = placeholder
    for location, parts in resources.items():
        _put(shaped, location, parts)
    return shaped


def shape_key(shaped: Json) -> str:
    """A canonical string of a shape: equal strings, equal requests up to their ids."""
    return _CANONICAL.encode(shaped)


# `json.dumps` with these options, its encoder made once (loading makes a key per exchange).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def make_key(classification: Classification, shaped: Json) -> Key:
    binding = classification.binding.value if classification.binding else "-"
    return binding, classification.operation or "-", shape_key(shaped)


def _shape(value: Json) -> Json:
    kind = type(value)
    if kind is dict:
        shaped = {
            k: _shape(v) if type(v) in _CONTAINERS else v
            for k, v in value.items()
            if k not in IGNORED_KEYS
        }
        # Emptiness is judged after shaping (`{"taskId": null}` is empty) and before.
        return {
            k: v
            for k, v in shaped.items()
            if not (_is_empty(value[k]) or _is_empty(v) or _implied(k, v, shaped))
        }
    if kind is list:
        return [_shape(v) if type(v) in _CONTAINERS else v for v in value]
    return value


_CONTAINERS = (dict, list)


def _is_empty(value: Json) -> bool:
    """One of EMPTY_VALUES (`{}`, `[]`, null, `""`), but not `0` or `false`."""
    kind = type(value)
    return value is None or (kind is dict or kind is list or kind is str) and not value


def _implied(key: str, value: Json, siblings: Mapping[str, Json]) -> bool:
    implied = DEFAULT_MEMBERS.get(key)
    return implied is not None and value == implied[0] and implied[1] in siblings


def _get(document: Json, location: Location) -> Json:
    for step in location:
        document = document[step]
    return document


def _put(document: Json, location: Location, value: Json) -> None:
    _get(document, location[:-1])[location[-1]] = value


# ---- differences, for a miss ---------------------------------------------------------------


def differences(live: Json, recorded: Json, path: str = "$") -> list[str]:
    """Where two shapes differ: `path: recorded X != live Y`, ids told by their provenance."""
    return list(_differences(live, recorded, path))


def _differences(a: Json, b: Json, path: str) -> Iterator[str]:
    if _is_token(a) or _is_token(b):
        if a != b:
            yield f"{path}: recorded {describe_token(b)}, live {describe_token(a)}"
    elif isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                yield f"{path}.{k}: recorded {describe_token(b[k])}, live has none"
            elif k not in b:
                yield f"{path}.{k}: live {describe_token(a[k])}, recorded has none"
            else:
                yield from _differences(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _differences(x, y, f"{path}[{i}]")
    elif a != b:
        yield f"{path}: recorded {describe_token(b)} != live {describe_token(a)}"


_TOKEN_WORDS = {
    "~issued": "an id handed out earlier",
    "~fixed": "the id {} that existed before the capture",
    "~own": "a new id of the client's own",
    "~fresh": "a fresh value",
    "~unknown": "an id never issued",
}


def _is_token(value: Json) -> bool:
    if isinstance(value, str):
        return value in _TOKEN_WORDS
    return isinstance(value, list) and bool(value) and value[0] in (*_TOKEN_WORDS, "~resource")


def describe_token(value: Json) -> str:
    """Words for a token (or any value) in a miss description."""
    if isinstance(value, str) and value in _TOKEN_WORDS:
        return _TOKEN_WORDS[value]
    if isinstance(value, list) and value and value[0] == "~resource":
        return "/".join(
            v if isinstance(v, str) and not _is_token(v) else describe_token(v) for v in value[1:]
        )
    if isinstance(value, list) and len(value) == 2 and value[0] in _TOKEN_WORDS:
        return _TOKEN_WORDS[value[0]].format(value[1])
    return _short(value)


_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')


def _short(value: Json) -> str:
    """`value` as JSON, cut short after 57 characters, never inside a string: a secret cut
    in part would escape the redactor (`recorder.redaction`), which knows secrets whole."""
    text = json.dumps(value, ensure_ascii=False)
    if len(text) <= 60:
        return text
    if isinstance(value, str):
        return f"a string of {len(value)} characters"
    cut = next((m.start() for m in _QUOTED.finditer(text) if m.end() > 57), 57)
    return text[: min(cut, 57)] + "..."
