"""Tiny ASGI agents for tests that need a wire no SDK here writes: they answer with exact bytes.

`TinyAgent(handler)` serves an ASGI handler with uvicorn on a free 127.0.0.1 port, on its own
thread, as a context manager.  A handler is `async (request, send) -> None`, where `request`
is the method, path (with query), headers and whole body, and `send` takes the status, the
headers and the body chunks, each written as given.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

from _asgi import serve_asgi

from recorder._background import BackgroundLoop, bind_socket

TIMEOUT = 10.0

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
AsgiSend = Callable[[MutableMapping[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class TinyRequest:
    method: str
    target: str  # path and query, as sent
    headers: dict[str, str]  # lower-case names
    body: bytes

    @property
    def path(self) -> str:
        return self.target.partition("?")[0]


Answer = Callable[[int, Iterable[tuple[str, str]], Iterable[bytes]], Awaitable[None]]
Handler = Callable[[TinyRequest, Answer], Awaitable[None]]


class TinyAgent:
    """`with TinyAgent(handler) as agent: use(agent.base_url)`."""

    def __init__(self, handler: Handler, name: str = "tiny-agent") -> None:
        self._handler = handler
        self._sock = bind_socket("127.0.0.1", 0)
        self.port = int(self._sock.getsockname()[1])
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.requests: list[TinyRequest] = []
        self._loop = BackgroundLoop(self._main, name=name)

    async def _main(self, ready: Callable[[], None], stop: asyncio.Event) -> None:
        await serve_asgi(_Asgi(self._app), self._sock, ready, stop)

    async def _app(self, scope: Scope, receive: Receive, send: AsgiSend) -> None:
        if scope["type"] != "http":
            return
        target = scope["raw_path"].decode("latin-1")
        if scope.get("query_string"):
            target += "?" + scope["query_string"].decode("latin-1")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        request = TinyRequest(scope["method"], target, headers, await _read_body(receive))
        self.requests.append(request)

        async def answer(
            status: int, head: Iterable[tuple[str, str]], chunks: Iterable[bytes]
        ) -> None:
            raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in head]
            await send({"type": "http.response.start", "status": status, "headers": raw})
            parts = list(chunks)
            for i, chunk in enumerate(parts):
                more = i + 1 < len(parts)
                await send({"type": "http.response.body", "body": chunk, "more_body": more})
            if not parts:
                await send({"type": "http.response.body", "body": b""})

        await self._handler(request, answer)

    def __enter__(self) -> Self:
        self._loop.start(timeout=TIMEOUT)
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._loop.stop(timeout=TIMEOUT)


class _Asgi:
    """An ASGI 3 app object around a handler (uvicorn takes a bound method for ASGI 2)."""

    def __init__(self, handler: Callable[[Scope, Receive, AsgiSend], Awaitable[None]]) -> None:
        self._handler = handler

    async def __call__(self, scope: Scope, receive: Receive, send: AsgiSend) -> None:
        await self._handler(scope, receive, send)


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def json_head(
    length: int | None = None, content_type: str = "application/json"
) -> list[tuple[str, str]]:
    head = [("content-type", content_type)]
    if length is not None:
        head.append(("content-length", str(length)))
    return head
