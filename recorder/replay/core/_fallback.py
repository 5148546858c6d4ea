"""The agent's own refusal of a request it could not serve, served for another like it (pure).

Agents refuse an unknown method, a body that is not JSON, a batch or an unknown route each in
their own words (the JS SDK says `-32601 "Invalid method."`, a2a-sdk `"Method not found"`).
When no recorded exchange matches exactly, the recorded refusal of the nearest request with the
same *trouble* (`WORDS`, read from the request alone; same path preferred) is served,
`adapted`.  Only refusals are served so: a success, or an unknown route's refusal (a 404, 405
or 307 depends on the route), answers only a request that matches it whole.
"""

from __future__ import annotations

from collections.abc import Iterable

from recorder.capture import Exchange, Request
from recorder.protocol import NOT_JSON, Binding, Classification, parse_json
from recorder.script import Json, Step, answer_documents, answer_succeeded

Trouble = tuple[str, str]  # (trouble, path)
ROUTE_TROUBLE = "http:unknown-route"  # answered by its route: never from another's answer
WORDS = {
    "jsonrpc:not-json": "a body that is not JSON, at a JSON-RPC endpoint",
    "jsonrpc:batch": "a JSON-RPC batch",
    "jsonrpc:invalid": "JSON that is no JSON-RPC request",
    "jsonrpc:unknown-method": "an unknown JSON-RPC method",
    "http:not-json": "a body that is not JSON, on an HTTP+JSON route",
    "http:unknown-route": "a request no A2A route takes",
}


def trouble(request: Request, c: Classification, jsonrpc_paths: frozenset[str]) -> str | None:
    """What kind of request no agent route serves this is; None for an A2A request."""
    if request.messages:
        return None
    path = request.target.partition("?")[0]
    if c.binding is Binding.JSONRPC or path in jsonrpc_paths:
        kind = _jsonrpc_trouble(request)
        return None if c.is_known and kind == "jsonrpc:unknown-method" else kind
    if c.is_known:
        return None
    if c.binding is Binding.HTTP_JSON and request.body and parse_json(request.body) is NOT_JSON:
        return "http:not-json"
    return "http:unknown-route"


def _jsonrpc_trouble(request: Request) -> str:
    body: Json = parse_json(request.body) if request.body else NOT_JSON
    if body is NOT_JSON:
        return "jsonrpc:not-json"
    if isinstance(body, list):
        return "jsonrpc:batch"
    if not isinstance(body, dict) or body.get("jsonrpc") != "2.0":
        return "jsonrpc:invalid"
    if not isinstance(body.get("method"), str) or not id_fits(body.get("id")):
        return "jsonrpc:invalid"
    return "jsonrpc:unknown-method"


def id_fits(value: Json) -> bool:
    """Whether a JSON-RPC id is one: a string, an integer or null (JSON-RPC 2.0 §4; a2a-sdk
    and @a2a-js/sdk refuse anything else with -32600, JS taking 1.0 for 1)."""
    if isinstance(value, float):
        return value.is_integer()
    return value is None or (isinstance(value, str | int) and not isinstance(value, bool))


class Troubles:
    """The recorded answers to unservable requests, by trouble and path (built on first use)."""

    def __init__(self, steps: Iterable[Step], jsonrpc_paths: frozenset[str]) -> None:
        self._steps = steps
        self._paths = jsonrpc_paths
        self._index: dict[Trouble, Step] | None = None
        self._any: dict[str, Step] = {}

    def answer(self, kind: str, request: Request) -> Step | None:
        if self._index is None:
            self._index = {}
            for step in self._steps:
                x = step.exchange
                found = trouble(x.request, x.classification, self._paths)
                if found in (None, ROUTE_TROUBLE) or x.response is None or _succeeded(x):
                    continue
                self._index.setdefault((found, x.request.target.partition("?")[0]), step)
                self._any.setdefault(found, step)
        path = request.target.partition("?")[0]
        return self._index.get((kind, path)) or self._any.get(kind)


def _succeeded(exchange: Exchange) -> bool:
    documents = answer_documents(exchange.response)
    return answer_succeeded(exchange.classification.binding, exchange.response, documents)


def describe(step: Step) -> str:
    """Words for the recorded request whose answer was served instead."""
    c = step.exchange.classification
    what = c.reason or c.method or f"{step.exchange.request.method} {step.exchange.request.target}"
    return f"#{step.number} ({what})"
