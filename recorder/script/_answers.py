"""Reading answers, recorded or live: their documents, success, and the ids they hand out (pure).

An answer is read as its JSON *documents*: the body, each SSE event's data, each gRPC message.
The ids it hands out are the strings under `RESPONSE_ID_KEYS` and a v0.3 resource name's ids,
never the JSON-RPC `id`, anything under user data, or a card's skill ids.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from recorder.capture import Exchange, Response
from recorder.protocol import (
    AGENT_CARD,
    NOT_JSON,
    RESPONSE_ID_KEYS,
    TIMESTAMP_FIELDS,
    USER_CONTENT_KEYS,
    Binding,
    event_data,
    find_card,
    parse_json,
    resource_ids,
)
from recorder.script._values import Json, Location

# Operations whose answers hold no session ids (a card's `id`s and `name`s are skills').
CARD_OPERATIONS = frozenset({AGENT_CARD, "GetExtendedAgentCard"})


def recorded_cards(exchanges: Iterable[Exchange]) -> Iterator[dict[str, Any]]:
    """The agent cards the card fetches among `exchanges` answered with, in order."""
    for exchange in exchanges:
        c = exchange.classification
        if c.operation == AGENT_CARD and exchange.response is not None:
            card = find_card(exchange.response.body, c)
            if card is not None:
                yield card


def answer_documents(response: Response | None) -> list[Json]:
    """The JSON documents of an answer, in order: body, SSE event data, gRPC messages."""
    if response is None:
        return []
    texts: list[str | bytes] = [response.body] if response.body else []
    texts += [event_data(e.lines) for e in response.events]
    texts += [m.json for m in response.messages if m.json]
    return [d for d in (parse_json(t) for t in texts) if d is not NOT_JSON]


def answer_succeeded(
    binding: Binding | None, response: Response | None, documents: Sequence[Json]
) -> bool:
    """Whether a response is a success: gRPC status 0, else HTTP below 400 and no error document."""
    if response is None:
        return False
    if binding is Binding.GRPC:
        fields = {k.lower(): v for k, v in (*response.headers, *response.trailers)}
        return fields.get("grpc-status", "0").strip() == "0"
    return response.status < 400 and not any(is_error(d) for d in documents)


def exchange_succeeded(exchange: Exchange, documents: Sequence[Json]) -> bool:
    if exchange.classification.error is not None:
        return False
    return answer_succeeded(exchange.classification.binding, exchange.response, documents)


def is_error(document: Json) -> bool:
    """A JSON-RPC or HTTP+JSON error document (a gRPC error lives in trailers, not messages)."""
    return isinstance(document, dict) and isinstance(document.get("error"), dict)


def handed_out(exchange: Exchange, documents: Sequence[Json]) -> list[tuple[str, str]]:
    """(key, id) for every id a successful answer's documents name, in order."""
    found: list[tuple[str, str]] = []
    if exchange.classification.operation not in CARD_OPERATIONS:
        for document in documents:
            if not is_error(document):
                _ids_in(document, None, found)
    return found


def located_ids(document: Json) -> list[tuple[Location, str, str]]:
    """(where, key, id) for every id an answer document hands out (`handed_out`'s rules), for tools
    that pair a live answer's ids with a recorded one's (verify)."""
    found: list[tuple[Location, str, str]] = []
    if not is_error(document):
        _located(document, None, (), found)
    return found


def _skipped(key: str, envelope: bool) -> bool:
    return key in USER_CONTENT_KEYS or key == "jsonrpc" or (envelope and key == "id")


def _located(
    value: Json, key: str | None, where: Location, out: list[tuple[Location, str, str]]
) -> None:
    if isinstance(value, dict):
        envelope = "jsonrpc" in value
        for k, v in value.items():
            if not _skipped(k, envelope):
                _located(v, k, (*where, k), out)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _located(item, key, (*where, index), out)
    elif isinstance(value, str):
        found: list[tuple[str, str]] = []
        _id_at(key, value, found)
        out.extend((where, k, v) for k, v in found)


def _ids_in(value: Json, key: str | None, out: list[tuple[str, str]]) -> None:
    """Append (key, id) for each id in `value` (a list, not a generator: loading is hot)."""
    kind = type(value)
    if kind is dict:
        envelope = "jsonrpc" in value
        for k, v in value.items():
            if _skipped(k, envelope):
                continue
            if type(v) is str:
                if k in RESPONSE_ID_KEYS:  # checked here: most strings are not ids
                    _id_at(k, v, out)
            elif type(v) in (dict, list):
                _ids_in(v, k, out)
    elif kind is list:
        holds_ids = key in RESPONSE_ID_KEYS
        for item in value:
            if type(item) is str:
                if holds_ids:
                    _id_at(key, item, out)
            elif type(item) in (dict, list):
                _ids_in(item, key, out)


def _id_at(key: str | None, value: str, out: list[tuple[str, str]]) -> None:
    if value and key in RESPONSE_ID_KEYS:
        if key == "name":
            out.extend(_resource_ids(value))
        else:
            assert key is not None
            out.append((key, value))


def _resource_ids(name: str) -> Iterator[tuple[str, str]]:
    found = resource_ids(name)
    if found is not None:
        yield "taskId", found[0]
        if found[1]:
            yield "configId", found[1]


def answer_shape(response: Response | None, binding: Binding | None, ids: dict[str, str]) -> str:
    """What a client sees of an answer, ids aside: equal shapes cannot be told apart by a client
    that does not know the ids."""
    if response is None:
        return ""
    documents = [_shaped(d, ids) for d in answer_documents(response)]
    status = answer_succeeded(binding, response, ())
    head = [response.status, status, len(response.events), len(response.messages)]
    return json.dumps([head, documents], sort_keys=True, default=str)


def _shaped(value: Json, ids: dict[str, str]) -> Json:
    if isinstance(value, dict):
        envelope = "jsonrpc" in value
        return {
            k: "<ts>" if k in TIMESTAMP_FIELDS else _shaped(v, ids)
            for k, v in value.items()
            if not (envelope and k == "id")
        }
    if isinstance(value, list):
        return [_shaped(v, ids) for v in value]
    if isinstance(value, str):
        return ids.get(value, value)
    return value
