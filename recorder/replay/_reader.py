"""Reading a live request once: its classification (cached), value, id slots, JSON-RPC id.

`classify` is the one classifier of the project; calling it on every request would cost more
than the rest of the replay.  Two caches avoid that without changing what it says:

- bodiless requests that are byte-for-byte the same (a poll over HTTP+JSON or gRPC, a card
  fetch) reuse the whole reading;
- JSON-RPC requests whose bodies differ only in their `id` (a poll) share one `Parsed`;
- other JSON-RPC requests (a fresh `messageId` on every send) reuse the classification of
  the first request with the same target, headers that matter, method and tenant, with the
  task, context and config ids read again from this request through the operation table's
  own id paths, as `classify` reads them.

The body is parsed once, here.  Only small requests are remembered (`SMALL_BYTES`): a poll
is small, and 4,096 remembered readings of a 1 MiB body are gigabytes.  `Parsed.small` tells
the replay's other caches the same.
"""

from __future__ import annotations

import functools
import json
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from recorder.capture import Request
from recorder.protocol import (
    NOT_JSON,
    Classification,
    IdRole,
    Interface,
    Version,
    classify,
    operation,
    operation_by_jsonrpc_method,
    parse_json,
)
from recorder.redaction import Masker
from recorder.replay._ids import Json, Slot, find_slots, positions_of, request_value, snake_case

CACHE_SIZE = 4096
SMALL_BYTES = 64 * 1024  # larger requests are read afresh every time, and never remembered
_ID_KINDS = ("task_id", "context_id", "config_id")


@dataclass(frozen=True, slots=True, eq=False)  # hashed by identity: readings are shared
class Parsed:
    """What a request says, whoever sends it: shared by requests that say the same."""

    classification: Classification
    value: Json
    slots: tuple[Slot, ...]
    small: bool = True  # whether caches may keep it (see SMALL_BYTES)


@dataclass(frozen=True, slots=True)
class Reading:
    parsed: Parsed
    jsonrpc_id: Json
    headers: Mapping[str, str]  # lower-cased names, the first value of each


class RequestReader:
    def __init__(
        self,
        interfaces: Sequence[Interface],
        secret_params: frozenset[str],
        masker: Masker | None = None,
    ) -> None:
        self.interfaces = tuple(interfaces)
        self.secret_params = secret_params
        self.masker = masker  # see `Script.masker`
        self._same = functools.lru_cache(maxsize=CACHE_SIZE)(self._read)
        self._jsonrpc: OrderedDict[tuple[object, ...], Classification] = OrderedDict()
        self._said: OrderedDict[tuple[object, ...], Parsed] = OrderedDict()

    def read(self, request: Request) -> Reading:
        if self.masker is not None:
            self.masker.learn(request)
        # Only bodiless requests (REST reads, gRPC calls) repeat byte for byte; a JSON body
        # has a fresh id every time, and remembering it would only cost.
        if request.body or not _small(request):
            return self._read(request)
        return self._same(request)

    def _read(self, request: Request) -> Reading:
        headers: dict[str, str] = {}
        for name, value in request.headers:
            headers.setdefault(name.lower(), value)
        document = parse_json(request.body) if request.body else NOT_JSON
        jsonrpc = _is_jsonrpc(request, document)
        said = (
            (
                request.method,
                request.target,
                headers.get("content-type"),
                headers.get("a2a-version"),
                document["method"],
                json.dumps(document.get("params"), sort_keys=True),
            )
            if jsonrpc and _may_repeat(document["method"]) and len(request.body) <= SMALL_BYTES
            else None
        )
        parsed = self._said.get(said) if said is not None else None
        if parsed is None:
            parsed = self._parse(request, headers, document, jsonrpc)
            if said is not None:
                _remember(self._said, said, parsed)
        jsonrpc_id = document.get("id") if isinstance(document, dict) else None
        return Reading(parsed, jsonrpc_id, headers)

    def _parse(
        self, request: Request, headers: Mapping[str, str], document: Json, jsonrpc: bool
    ) -> Parsed:
        c = self._jsonrpc_classification(request, headers, document) if jsonrpc else None
        if c is None:
            c = classify(request, interfaces=self.interfaces)
        value = request_value(request, c, self.secret_params, document)
        slots = tuple(find_slots(value, positions_of(c)))
        if self.masker is not None:  # after the slots: they keep the live values
            value = self.masker.value(value)
        return Parsed(c, value, slots, _small(request))

    def _jsonrpc_classification(
        self, request: Request, headers: Mapping[str, str], document: Json
    ) -> Classification:
        params = document.get("params")
        params = params if isinstance(params, Mapping) else {}
        tenant = params.get("tenant")
        key = (
            request.method,
            request.target,
            headers.get("content-type"),
            headers.get("a2a-version"),
            document["method"],
            tenant if isinstance(tenant, str) else None,
        )
        found = self._jsonrpc.get(key)
        if found is None:
            found = classify(request, interfaces=self.interfaces)
            _remember(self._jsonrpc, key, found)
        return _with_ids(found, params)


@functools.lru_cache(maxsize=256)
def _may_repeat(method: str) -> bool:
    """Whether two requests of this JSON-RPC method can say the same thing: not when the
    operation has a fresh value in every request (a send's messageId)."""
    row = operation_by_jsonrpc_method(method)
    return row is None or all(p.role is not IdRole.FRESH for p in row.positions)


def _small(request: Request) -> bool:
    size = len(request.body) + len(request.target)
    for message in request.messages:
        size += len(message.raw or b"") + len(message.json or "")
    return size <= SMALL_BYTES


def _is_jsonrpc(request: Request, document: Json) -> bool:
    return (
        isinstance(document, dict)
        and document.get("jsonrpc") == "2.0"
        and isinstance(document.get("method"), str)
        and not request.messages
    )


def _remember[K, V](cache: OrderedDict[K, V], key: K, value: V) -> None:
    cache[key] = value
    if len(cache) > CACHE_SIZE:
        cache.popitem(last=False)


def _with_ids(c: Classification, params: Mapping[str, Json]) -> Classification:
    """`c` with the ids this request's params name (the classifier's own rule: the first of the
    operation's id paths that holds a non-empty string or number)."""
    row = operation(c.operation, c.version or Version.V1_0) if c.operation else None
    if row is None:
        return c
    ids: dict[str, str | None] = {}
    for kind in _ID_KINDS:
        ids[kind] = next(
            (
                found
                for path in row.id_paths(kind)
                if (found := _text(_at(params, path))) is not None
            ),
            None,
        )
    if ids == {"task_id": c.task_id, "context_id": c.context_id, "config_id": c.config_id}:
        return c
    return replace(c, **ids)  # type: ignore[arg-type]


def _at(document: Json, path: Sequence[str]) -> Json:
    """`value_at(document, path, snake_case=True)`, with the snake_case names cached."""
    for key in path:
        if not isinstance(document, Mapping):
            return None
        found = document.get(key)
        document = found if found is not None else document.get(snake_case(key))
    return document


def _text(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return str(value) or None
