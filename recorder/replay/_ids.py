"""Pairing the volatile values of a live request with those of a recorded one (pure).

Strategy.  A live client sends fresh values where the recording has others: message ids,
client-chosen context ids, the task ids the replayer handed out, webhook URLs and tokens.  Two
requests *match* when they are equal once every such value is treated as a variable; walking
them side by side then *pairs* each live value with the recorded value in the same place.  The
pairs feed a `Conversation`, which maps recorded values to live ones for the responses.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from recorder.protocol import ID_FIELDS, RESOURCE_NAME_FIELDS, TIMESTAMP_FIELDS

# Keys whose string values are volatile and pair live with recorded (both v1.0 and v0.3): the
# shared id fields, a bare `id`, resource names, and a push config's webhook and secrets.
PAIRED_KEYS = (
    frozenset(ID_FIELDS) | {"id", "url", "token", "credentials"} | RESOURCE_NAME_FIELDS
)
# Keys holding resource names (`tasks/<id>`), whose segments pair one by one.
RESOURCE_KEYS = RESOURCE_NAME_FIELDS
# Keys whose values vary on every run and say nothing about the request.
IGNORED_KEYS = TIMESTAMP_FIELDS
VARIABLE = "<var>"

Json = Any
Pair = tuple[str, str]

# Members a sender may spell out or leave out with the same meaning.  Empty values are proto3
# JSON defaults (the JS SDK sends `"metadata": {}`, py leaves it out); a text part's media type
# is text/plain whether said or not (the JS SDK says it).  key -> (value, sibling it needs).
DEFAULT_MEMBERS: dict[str, tuple[Json, str]] = {"mediaType": ("text/plain", "text")}
EMPTY_VALUES: tuple[Json, ...] = ({}, [], None, "")


def shape(value: Json, key: str | None = None) -> Json:
    """The value with every paired string a variable, ignored keys and defaults dropped."""
    if isinstance(value, dict):
        shaped = {k: shape(v, k) for k, v in value.items() if k not in IGNORED_KEYS}
        # Emptiness is judged after shaping (`{"taskId": null}` is empty) and before (`""` for
        # an id would otherwise have become a variable).
        return {k: v for k, v in shaped.items()
                if not (_default(k, v, shaped) or _is_empty(value[k]))}
    if isinstance(value, list):
        return [shape(v, key) for v in value]
    if isinstance(value, str) and key in PAIRED_KEYS:
        return VARIABLE
    return value


def _is_empty(value: Json) -> bool:
    return any(value == empty and type(value) is type(empty) for empty in EMPTY_VALUES)


def _default(key: str, value: Json, siblings: Mapping[str, Json]) -> bool:
    if _is_empty(value):
        return True
    implied = DEFAULT_MEMBERS.get(key)
    return implied is not None and value == implied[0] and implied[1] in siblings


def shape_key(value: Json) -> str:
    """A canonical string of `shape(value)`: equal keys, equal requests up to variables."""
    return json.dumps(shape(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def pairs(live: Json, recorded: Json, key: str | None = None) -> Iterator[Pair]:
    """(live, recorded) for each paired string in the same place; call on matching shapes."""
    if isinstance(live, dict) and isinstance(recorded, dict):
        for k, v in live.items():
            if k in recorded and k not in IGNORED_KEYS:
                yield from pairs(v, recorded[k], k)
    elif isinstance(live, list) and isinstance(recorded, list):
        for lv, rv in zip(live, recorded, strict=False):
            yield from pairs(lv, rv, key)
    elif isinstance(live, str) and isinstance(recorded, str) and key in PAIRED_KEYS:
        yield from _split_pairs(live, recorded, key in RESOURCE_KEYS)


def _split_pairs(live: str, recorded: str, resource: bool) -> Iterator[Pair]:
    # v0.3 resource names (`tasks/<id>/pushNotificationConfigs/<cid>`): pair segment by segment
    # so that the bare ids map too.
    live_parts, recorded_parts = live.split("/"), recorded.split("/")
    if resource and len(live_parts) > 1 and len(live_parts) == len(recorded_parts):
        for lp, rp in zip(live_parts, recorded_parts, strict=True):
            if lp != rp:
                yield lp, rp
        return
    if live != recorded:
        yield live, recorded


def differences(live: Json, recorded: Json, path: str = "$") -> list[str]:
    """Where two request values differ beyond their variables: `path: recorded != live`."""
    a, b = shape(live), shape(recorded)
    return list(_differences(a, b, path))


def _differences(a: Json, b: Json, path: str) -> Iterator[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                yield f"{path}.{k}: recorded {_short(b[k])}, live has none"
            elif k not in b:
                yield f"{path}.{k}: live {_short(a[k])}, recorded has none"
            else:
                yield from _differences(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _differences(x, y, f"{path}[{i}]")
    elif a != b:
        yield f"{path}: recorded {_short(b)} != live {_short(a)}"


def _short(value: Json) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
