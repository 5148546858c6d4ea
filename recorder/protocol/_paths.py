"""Reading JSON without raising: parsing a body, and following a key path into the result."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

Json = Any  # a parsed JSON value (a dict, list, str, number, bool or None)
NOT_JSON: Any = object()  # what parse_json answers for "not JSON" (None is JSON null)


def parse_json(data: bytes | str | None) -> Any:
    """The parsed document, or NOT_JSON for an empty body or anything not JSON."""
    if not data:
        return NOT_JSON
    try:
        return json.loads(data)
    except (ValueError, TypeError, RecursionError):  # ValueError covers UnicodeDecodeError
        return NOT_JSON


def json_problem(data: bytes | str | None) -> str | None:
    """Why `data` does not parse as JSON, in the parser's words cut short; None if it does."""
    if not data:
        return "empty"
    try:
        json.loads(data)
    except RecursionError:
        return "nested too deep to read"
    except (ValueError, TypeError) as exc:
        return str(exc).split("\n", 1)[0][:120]
    return None


def value_at(document: Any, path: Sequence[str], *, snake_case: bool = False) -> Any:
    """The value at key path `path`, or None where it breaks off; with `snake_case`, a key
    missing in camelCase is tried in snake_case (clients send either)."""
    for key in path:
        if not isinstance(document, Mapping):
            return None
        found = document.get(key)
        if found is None and snake_case:
            found = document.get(_snake(key))
        document = found
    return document


def _snake(key: str) -> str:
    found = _SNAKE_KEYS.get(key)
    if found is None:  # keys come from the tables: a few dozen
        found = _SNAKE_KEYS[key] = _UPPER.sub(r"_\1", key).lower()
    return found


_SNAKE_KEYS: dict[str, str] = {}
_UPPER = re.compile(r"(?<!^)([A-Z])")
