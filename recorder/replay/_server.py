"""The replayer: an HTTP server with no upstream that answers from captures (the I/O shell).

Everything it decides comes from the pure parts: `classify` names the live request, the
`Engine` picks the recorded exchange, `answer` builds the response.  This module only reads
requests, writes responses, paces SSE events, and POSTs push deliveries to live webhooks.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Self

import httpx

from recorder._background import BackgroundLoop, bind_socket, host_port, serve_asgi
from recorder.capture import Capture, Exchange, Request
from recorder.protocol import (
    AGENT_CARD,
    Binding,
    Classification,
    Interface,
    card_location,
    classify,
    find_card,
    interfaces_from_card,
    parse_json,
    rewrite_card,
    rewrite_grpc_interfaces,
)
from recorder.replay._engine import Engine, Match, Miss
from recorder.replay._grpcserver import start_grpc_server
from recorder.replay._respond import Answer, answer, substitute_body, substitute_headers
from recorder.replay._timing import Pacer, Timing

log = logging.getLogger("a2a_recorder.replay")

ADMIN_PREFIX = "/__a2a_recorder"
ANSWER_CACHE_SIZE = 4096
MISS_REASON = "REPLAY_NO_MATCH"
MISS_DOMAIN = "a2a-recorder"
DELIVERY_HEADERS_DROPPED = frozenset({"host", "content-length", "transfer-encoding", "connection"})

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


@dataclass
class Report:
    """What `--strict` checks: exchanges never served and requests never matched."""

    recorded: list[Exchange]
    served: set[int]
    misses: list[str] = field(default_factory=list)

    @property
    def unserved(self) -> list[Exchange]:
        return [e for e in self.recorded if e.number not in self.served]

    @property
    def clean(self) -> bool:
        return not self.unserved and not self.misses

    def as_json(self) -> dict[str, Any]:
        return {
            "unserved": [f"#{e.number} {e.classification.operation}" for e in self.unserved],
            "unmatched": list(self.misses),
            "clean": self.clean,
        }


class ReplayApp:
    """ASGI application answering A2A requests from recorded exchanges."""

    def __init__(self, captures: list[Capture], *, timing: Timing, on_miss: str | None = None,
                 deliver: bool = True) -> None:
        exchanges = [e for capture in captures for e in capture.exchanges]
        self.engine = Engine(exchanges)
        self.timing = timing
        self.on_miss = on_miss
        self.deliver = deliver
        self.base_url = ""
        self.grpc_target: str | None = None  # `host:port` of the gRPC face, when it runs
        self.upstreams = _upstreams(captures)
        self.interfaces = _interfaces(exchanges)
        self.report = Report([e for e in exchanges if e.response is not None], self.engine.served)
        self._tasks: set[asyncio.Task[None]] = set()
        # Requests are frozen values: the same bytes always classify the same.
        self._classify = functools.lru_cache(maxsize=ANSWER_CACHE_SIZE)(self._classify_uncached)
        self._answers: dict[tuple[int, int, int, str], Answer] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        request = await _read_request(scope, receive)
        if request.target.startswith(ADMIN_PREFIX):
            await _send_json(send, 200, self.report.as_json())
            return
        classification = self._classify(request)
        found = self.engine.match(request, classification, client=_client(scope))
        if isinstance(found, Miss):
            await self._miss(send, request, found)
            return
        self.engine.mint_ids(found)
        reply = self._cached_answer(found, request)
        before, after = _split_deliveries(found) if self.deliver else ((), ())
        if before:
            await self._deliver(found, before)
        await self._send(send, reply)
        if after:
            self._spawn(self._deliver(found, after))

    def _classify_uncached(self, request: Request) -> Classification:
        return classify(request, interfaces=self.interfaces)

    def _cached_answer(self, found: Match, request: Request) -> Answer:
        # A poll asks the same thing again and again; while its conversation has learnt nothing
        # new (its mapping only grows), the answer is the same bytes.
        key = (found.recorded.exchange.number, found.conversation.number,
               len(found.conversation.to_live), json.dumps(_jsonrpc_id(request)))
        reply = self._answers.get(key)
        if reply is None:
            if len(self._answers) >= ANSWER_CACHE_SIZE:
                self._answers.clear()
            reply = self._answers[key] = self._answer(found, request)
        return reply

    def _answer(self, found: Match, request: Request) -> Answer:
        exchange = found.recorded.exchange
        assert exchange.response is not None
        c = exchange.classification
        mapping = found.conversation.to_live
        reply = answer(exchange.response, mapping, binding=c.binding,
                       jsonrpc_id=_jsonrpc_id(request))
        location = card_location(c)
        if location is None:
            return reply
        body = reply.body
        for upstream in self.upstreams or _host_origin(exchange.request):
            body = rewrite_card(body, upstream, self.base_url, at=location).body
        if self.grpc_target:
            body = rewrite_grpc_interfaces(body, self.grpc_target, at=location).body
        return Answer(reply.status, reply.reason, reply.headers, body, reply.events)

    async def _send(self, send: Send, reply: Answer) -> None:
        headers = [(k.lower().encode("latin-1"), v.encode("latin-1", "replace"))
                   for k, v in reply.headers]
        if not reply.events:
            headers.append((b"content-length", str(len(reply.body)).encode()))
        await send({"type": "http.response.start", "status": reply.status, "headers": headers})
        if not reply.events:
            await send({"type": "http.response.body", "body": reply.body})
            return
        pacer = Pacer(self.timing)
        for offset, data in reply.events:
            await pacer.until(offset)
            await send({"type": "http.response.body", "body": data, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    async def _miss(self, send: Send, request: Request, miss: Miss) -> None:
        text = miss.describe()
        self.report.misses.append(f"{request.method} {request.target}: {text}")
        log.warning("replay miss: %s %s: %s", request.method, request.target, text)
        if self.on_miss:
            await self._forward(send, request)
            return
        info = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": MISS_REASON,
                "domain": MISS_DOMAIN,
                "metadata": {"nearest": f"#{miss.nearest.number}" if miss.nearest else ""}}
        if miss.classification.binding is Binding.JSONRPC:
            body = {"jsonrpc": "2.0", "id": _jsonrpc_id(request),
                    "error": {"code": -32603, "message": text, "data": [info]}}
            await _send_json(send, 200, body)
            return
        body = {"error": {"code": 500, "status": "INTERNAL", "message": text, "details": [info]}}
        await _send_json(send, 500, body)

    async def _forward(self, send: Send, request: Request) -> None:
        assert self.on_miss is not None
        url = self.on_miss.rstrip("/") + request.target
        headers = [(k, v) for k, v in request.headers
                   if k.lower() not in ("host", "content-length")]
        async with httpx.AsyncClient(timeout=30) as client:
            upstream = await client.request(request.method, url, headers=headers,
                                            content=request.body)
        reply = Answer(upstream.status_code, upstream.reason_phrase,
                       tuple((k, v) for k, v in upstream.headers.items()
                             if k.lower() not in ("content-length", "transfer-encoding",
                                                  "content-encoding", "connection")),
                       upstream.content)
        await self._send(send, reply)

    async def _deliver(self, found: Match, deliveries: tuple[Exchange, ...]) -> None:
        mapping = found.conversation.to_live
        started = found.recorded.exchange.started_us
        pacer = Pacer(self.timing)
        async with httpx.AsyncClient(timeout=10) as client:
            for delivery in deliveries:
                await pacer.until(delivery.started_us - started)
                await self._post_delivery(client, delivery, mapping)

    async def _post_delivery(self, client: httpx.AsyncClient, delivery: Exchange,
                             mapping: dict[str, str]) -> None:
        recorded_url = _delivery_url(delivery.request)
        live_url = mapping.get(recorded_url)
        if live_url is None:
            log.warning("push delivery #%d: no live webhook registered for %s", delivery.number,
                        recorded_url)
            return
        headers = substitute_headers(
            ((k, v) for k, v in delivery.request.headers
             if k.lower() not in DELIVERY_HEADERS_DROPPED), mapping)
        body = substitute_body(delivery.request.body, mapping)
        try:
            await client.post(live_url, headers=headers, content=body)
            self.engine.served.add(delivery.number)
        except httpx.HTTPError as exc:
            log.warning("push delivery #%d to %s failed: %s", delivery.number, live_url, exc)

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _split_deliveries(found: Match) -> tuple[tuple[Exchange, ...], tuple[Exchange, ...]]:
    """Deliveries that completed before the trigger's response did, and those after.

    A blocking send whose agent delivered every event before answering is replayed the same
    way: a client that checks its webhook as soon as the send returns sees them all.
    """
    trigger = found.recorded.exchange
    end = trigger.started_us + trigger.duration_us
    deliveries = found.recorded.deliveries
    before = tuple(d for d in deliveries if d.started_us + d.duration_us <= end)
    return before, tuple(d for d in deliveries if d not in before)


async def _read_request(scope: Scope, receive: Receive) -> Request:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    target = scope.get("raw_path", scope["path"].encode()).decode("latin-1")
    if scope.get("query_string"):
        target += "?" + scope["query_string"].decode("latin-1")
    headers = tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"])
    version = "HTTP/" + scope.get("http_version", "1.1")
    return Request(scope["method"], target, headers, b"".join(chunks), version)


async def _send_json(send: Send, status: int, body: Any) -> None:
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})


def _client(scope: Scope) -> str | None:
    """The connection a request came on (`host:port`), so an id-less request finds its client."""
    client = scope.get("client")
    return f"{client[0]}:{client[1]}" if client else None


def _jsonrpc_id(request: Request) -> Any:
    document = parse_json(request.body)
    return document.get("id") if isinstance(document, dict) else None


def _delivery_url(request: Request) -> str:
    host = request.header("host") or ""
    return f"http://{host}{request.target}"


def _host_origin(request: Request) -> list[str]:
    host = request.header("host")
    return [f"http://{host}"] if host else []


def _upstreams(captures: list[Capture]) -> list[str]:
    return list(dict.fromkeys(u for capture in captures for u in capture.upstreams))


def _interfaces(exchanges: list[Exchange]) -> tuple[Interface, ...]:
    found: list[Interface] = []
    for exchange in exchanges:
        if exchange.classification.operation != AGENT_CARD or exchange.response is None:
            continue
        card = find_card(exchange.response.body, exchange.classification)
        found.extend(interfaces_from_card(card) if card is not None else ())
    return tuple(dict.fromkeys(found))


class Replayer:
    """A replay server on its own thread: `with Replayer([capture]) as r: use(r.url)`.

    gRPC: a grpc.aio server on `grpc_port` (0 = a free port) runs next to the HTTP one, in the
    same loop and on the same engine, when `grpc_port` is given or the captures hold any gRPC
    exchange; `.grpc_target` is its `host:port` (None when it does not run), and the served
    card's GRPC interfaces point at it.
    """

    def __init__(self, captures: list[Capture], *, host: str = "127.0.0.1", port: int = 0,
                 timing: Timing | str = "none", on_miss: str | None = None,
                 grpc_port: int | None = None) -> None:
        self.app = ReplayApp(captures, timing=Timing.parse(timing) if isinstance(timing, str)
                             else timing, on_miss=on_miss)
        self._sock: socket.socket = bind_socket(host, port)
        self.host = host
        self.port: int = self._sock.getsockname()[1]
        self.app.base_url = self.url
        has_grpc = any(e.classification.binding is Binding.GRPC
                       for capture in captures for e in capture.exchanges)
        self._grpc_port = grpc_port if grpc_port is not None else (0 if has_grpc else None)
        self._runner = BackgroundLoop(self._main, name="a2a-replay")

    @property
    def grpc_target(self) -> str | None:
        return self.app.grpc_target

    @property
    def url(self) -> str:
        return f"http://{host_port(self.host, self.port)}"

    @property
    def report(self) -> Report:
        return self.app.report

    async def _main(self, ready: Callable[[], None], stop: asyncio.Event) -> None:
        if self._grpc_port is None:
            await serve_asgi(self.app, self._sock, ready, stop)
            return
        server, port = await start_grpc_server(self.app, self.host, self._grpc_port)
        self.app.grpc_target = host_port(self.host, port)
        try:
            await serve_asgi(self.app, self._sock, ready, stop)
        finally:
            await server.stop(grace=0.5)
            self.app.grpc_target = None

    def start(self) -> Self:
        self._runner.start()
        return self

    def stop(self) -> None:
        self._runner.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
