"""Following a key path into parsed JSON, shared by the classifier and the card and push code."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any


def value_at(document: Any, path: Sequence[str], *, snake_case: bool = False) -> Any:
    """The value at `path` (keys through nested objects), or None where the path breaks off.

    With `snake_case`, a key missing in camelCase is looked up in snake_case too: proto-JSON
    readers accept both, so clients and SDKs send either.
    """
    for key in path:
        if not isinstance(document, Mapping):
            return None
        found = document.get(key)
        if found is None and snake_case:
            found = document.get(_snake(key))
        document = found
    return document


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower()
