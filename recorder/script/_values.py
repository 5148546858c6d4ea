"""What a request is compared as: its value, its shape, its key (pure).

Its *value* is a JSON object of what it says, not its framing: tenant, the ids its path names,
query, an unknown operation's route or method, the credentials it carries (by name and scheme,
never their values), and body.  Its *shape* is the value with timestamps and defaults dropped
and every id replaced by a token of its `Provenance` (see `_script`): "~issued", "~own",
"~fresh", "~unknown", or ["~fixed", <id>].  Its *key* is (binding, operation, the shape as
canonical JSON): equal keys, the same request up to its ids.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from enum import StrEnum
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from recorder.capture import Request
from recorder.protocol import (
    NOT_JSON,
    TIMESTAMP_FIELDS,
    Binding,
    Classification,
    parse_json,
)

Json = Any
Location = tuple[str | int, ...]
Key = tuple[str, str, str]

# Members a sender may spell out or leave out alike: proto3 JSON's empty defaults (the JS SDK
# sends `"metadata": {}`), a text part's text/plain, a flag false by default.  key -> (value,
# sibling it needs, or None).
DEFAULT_MEMBERS: dict[str, tuple[Json, str | None]] = {
    "mediaType": ("text/plain", "text"),
    "returnImmediately": (False, None),
    "blocking": (False, None),
    "includeArtifacts": (False, None),
}
_REDACTED = re.compile(r"<redacted:\d+>")


class Provenance(StrEnum):
    """Where an id in a request comes from (the table is `_script`'s)."""

    ISSUED = "issued"
    OWN = "own"
    FRESH = "fresh"
    UNKNOWN = "unknown"
    FIXED = "fixed"


# ---- the value ----------------------------------------------------------------------------


def request_value(
    request: Request,
    classification: Classification,
    secret_params: frozenset[str] = frozenset(),
    document: Json = None,
    credentials: Sequence[str] | None = None,
) -> Json:
    """What is compared of a request: its A2A content, not its framing.  `secret_params` (redacted
    when recorded) are left out of the query; `credentials` names those the request carries."""
    value: dict[str, Json] = {"tenant": classification.tenant}
    known = classification.is_known
    if classification.binding is Binding.HTTP_JSON and known:  # the ids the URL path names
        path = path_of(request.target).split("/")
        segments = {_unquoted(part).partition(":")[0] for part in path}
        ids = {"taskId": classification.task_id, "configId": classification.config_id}
        value["path"] = {k: v for k, v in ids.items() if v and v.partition(":")[0] in segments}
    if classification.binding is Binding.HTTP_JSON or not known:
        query = query_of(request.target)
        value["query"] = {k: v for k, v in query.items() if k not in secret_params}
    if not known:
        # No operation the tables know: the whole request is compared, segment by segment.
        value["route"] = route_of(request)
        if classification.method:
            value["method"] = classification.method
    if credentials:
        value["credentials"] = list(credentials)
    body = body_value(request, classification, document)
    if known and classification.binding is Binding.HTTP_JSON and isinstance(body, dict):
        body = _without_path_restated(body, value["path"])
    value["body"] = body
    return value


def route_of(request: Request) -> list[str]:
    """The verb and the path segments of a request, a custom verb (`:get`) on its own."""
    found = [request.method]
    for segment in path_of(request.target).split("/"):
        if not segment:
            continue
        name, colon, verb = unquote(segment).partition(":")
        found += [name, f":{verb}"] if colon and name else [unquote(segment)]
    return found


def path_of(target: str) -> str:
    """`urlsplit(target).path`, read without a URL parse for a plain origin form (most)."""
    if target[:1] == "/" and target[1:2] != "/" and not _URL_UNSAFE.search(target):
        return target.partition("?")[0].partition("#")[0]
    return urlsplit(target).path


_URL_UNSAFE = re.compile("[\t\r\n]")  # what `urlsplit` removes first


def _unquoted(part: str) -> str:
    return unquote(part) if "%" in part else part


_PATH_KEYS = {"taskId": ("taskId", "id", "task_id"), "configId": ("id", "configId", "config_id")}


def _without_path_restated(body: dict[str, Json], path: Mapping[str, str]) -> dict[str, Json]:
    """The body without members restating an id the path names, one field of the request message
    (a2a-sdk's REST client repeats a cancel's task id in its body; a2a-go sends no body)."""
    restated = {
        member
        for name, members in _PATH_KEYS.items()
        if name in path
        for member in members
        if body.get(member) == path[name]
    }
    return {k: v for k, v in body.items() if k not in restated} if restated else body


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
    enveloped = classification.binding is Binding.JSONRPC and classification.is_known
    if isinstance(parsed, dict) and (enveloped or "params" in parsed and "jsonrpc" in parsed):
        return parsed.get("params")
    if isinstance(parsed, dict) and "jsonrpc" in parsed:  # the envelope's id is no content
        return {k: v for k, v in parsed.items() if k != "id"}
    return parsed


# ---- credentials --------------------------------------------------------------------------


def credential_names(
    request: Request, header_keys: frozenset[str], query_keys: frozenset[str]
) -> list[str]:
    """A request's credentials: `authorization:<scheme>`, `header:<name>`, `query:<name>`."""
    found: list[str] = []
    for name, value in request.headers:
        lowered = name.lower()
        if lowered == "authorization":
            found.append(f"authorization:{value.strip().partition(' ')[0].lower()}")
        elif lowered in header_keys:
            found.append(f"header:{lowered}")
    if query_keys and "?" in request.target:
        found += [f"query:{k}" for k in query_of(request.target) if k in query_keys]
    return sorted(set(found))


# ---- shape and key ------------------------------------------------------------------------


def token(provenance: Provenance, recorded: str | None = None) -> Json:
    """The placeholder a slot becomes in a shape (a fixed id keeps its value)."""
    if provenance is Provenance.FIXED:
        return [_TOKENS[provenance], recorded]
    return _TOKENS[provenance]


# Read from tables, not through the enums' `value` (a Python-level descriptor, per request).
_TOKENS = {p: f"~{p.value}" for p in Provenance}
_BINDINGS: dict[Binding | None, str] = {None: "-", **{b: b.value for b in Binding}}


def shape(
    value: Json, locations: Sequence[tuple[Location, int | None]], tokens: Sequence[Json]
) -> Json:
    """The value, ignored keys and defaults dropped, each slot (at `locations`) as its token."""
    shaped = _shape(value)
    resources: dict[Location, tuple[Json, list[Json]]] = {}
    for (location, segment), placeholder in zip(locations, tokens, strict=True):
        parent = _parent(shaped, location)
        if parent is None:
            continue  # under a key the shape ignores (a timestamp filter): not compared
        if segment is None:
            parent[location[-1]] = placeholder
            continue
        held = resources.get(location)
        if held is None:
            held = resources[location] = parent, ["~resource", *parent[location[-1]].split("/")]
        held[1][segment + 1] = placeholder
    for location, (parent, parts) in resources.items():
        parent[location[-1]] = parts
    return shaped


# `json.dumps` with these options, its encoder made once (loading makes a key per exchange).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def make_key(classification: Classification, shaped: Json) -> Key:
    # A canonical string of the shape: equal strings, equal requests up to their ids.
    binding = _BINDINGS[classification.binding]
    return binding, classification.operation or "-", _CANONICAL.encode(shaped)


def _shape(value: Json) -> Json:
    kind = type(value)
    if kind is dict:
        shaped = {
            k: _shape(v) if type(v) in _CONTAINERS else v
            for k, v in value.items()
            if k not in TIMESTAMP_FIELDS
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
    """`{}`, `[]`, null or `""`, but not `0` or `false` (see DEFAULT_MEMBERS for those)."""
    kind = type(value)
    return value is None or (kind is dict or kind is list or kind is str) and not value


def _implied(key: str, value: Json, siblings: Mapping[str, Json]) -> bool:
    implied = DEFAULT_MEMBERS.get(key)
    if implied is None or value != implied[0] or type(value) is not type(implied[0]):
        return False
    return implied[1] is None or implied[1] in siblings


def _parent(document: Json, location: Location) -> Json:
    """The object or array holding `location` in `document`, None if shaping dropped it."""
    parent = None
    for step in location:
        kind = type(document)
        in_dict = kind is dict and type(step) is str and step in document
        if not (in_dict or kind is list and type(step) is int and step < len(document)):
            return None
        parent, document = document, document[step]
    return parent


# ---- differences, for a miss ---------------------------------------------------------------


def differences(a: Json, b: Json, path: str = "$") -> Iterator[str]:
    """Where a live shape `a` and a recorded `b` differ: `path: recorded X != live Y`, ids told
    by their provenance."""
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
                yield from differences(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from differences(x, y, f"{path}[{i}]")
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
