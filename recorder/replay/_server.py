"""The replayer's HTTP face: an ASGI app that only translates bytes (I/O shell).

An HTTP request becomes a capture `Request` (path and header bytes read as UTF-8 with
surrogate escapes, as the recorder reads them), the `Runner` decides what to answer and does
what goes around it (misses, forwarding, push deliveries: `_runner`), and the answer's
status, headers, body or paced SSE events go back out.  Besides A2A it serves the admin
endpoints, redacted (see `_journal`):

    GET /__a2a_recorder/report     what `--strict` checks (JSON)
    GET /__a2a_recorder/requests   the request journal (JSON)

Only `GET` on those exact paths; any other request, under `/__a2a_recorder` or not, goes to
the runner like every request (and is a miss unless the capture holds it).

A turn's `shape` (what a fault profile asked, `_faults`) is carried out here as bytes and
pauses; a connection is dropped or reset with the `DROP` message, which the replayer's
uvicorn protocol understands (`_uvicorn`), also for an answer given up because the replayer
stops (`Runner.answering`).
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import Any

from recorder._errors import RecorderError
from recorder.capture import Headers, Request
from recorder.replay._answer import HttpAnswer, standard_reason
from recorder.replay._faults import NO_SHAPE, Shape
from recorder.replay._runner import Runner
from recorder.replay._service import Client
from recorder.replay._timing import Pacer, Timing
from recorder.replay._uvicorn import DROP
from recorder.script import wire_bytes

ADMIN_PREFIX = "/__a2a_recorder"
JOURNAL_PATH = f"{ADMIN_PREFIX}/requests"
REPORT_PATH = f"{ADMIN_PREFIX}/report"
# Only `GET` on these exact paths is the replayer's own: anything else, under the prefix or
# not, is a request like any other (answered from the capture, or a miss).
ADMIN_PATHS = frozenset({JOURNAL_PATH, REPORT_PATH})
JSON_HEADERS = [(b"content-type", b"application/json")]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class Disconnected(RecorderError):
    """The client went away (or was cut off) before its request was read."""


class ReplayApp:
    """ASGI application answering A2A requests through a `Runner`."""

    def __init__(self, runner: Runner, *, timing: Timing) -> None:
        self.runner = runner
        self.service = runner.service
        self.timing = timing

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        async with self.runner.answering(lambda: send({"type": DROP, "reset": False})):
            await self._answer(scope, receive, send)

    async def _answer(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            request = await read_request(scope, receive)
        except Disconnected:
            return
        if request.method == "GET" and request.target.partition("?")[0] in ADMIN_PATHS:
            await self._admin(send, request.target)
            return
        turn = await self.runner.begin(request, Client.at(scope.get("client")))
        await self._send(send, turn.http, turn.shape)
        self.runner.end(turn)

    async def _admin(self, send: Send, target: str) -> None:
        if target.partition("?")[0] == JOURNAL_PATH:
            chunks: Iterator[bytes] = self.service.journal.json_chunks()
        else:
            chunks = self._report_chunks()
        await send({"type": "http.response.start", "status": 200, "headers": JSON_HEADERS})
        # One journal entry at a time, so that a large journal is never held twice, each
        # redacted on a worker thread (the report too), so that replay goes on meanwhile.
        while (chunk := await asyncio.to_thread(next, chunks, b"")) != b"":
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    def _report_chunks(self) -> Iterator[bytes]:
        yield json.dumps(self.service.report.as_json(), ensure_ascii=False).encode()

    async def _send(self, send: Send, reply: HttpAnswer, shape: Shape = NO_SHAPE) -> None:
        if shape.delay:
            await asyncio.sleep(shape.delay)
        if shape.reset:
            await send({"type": DROP, "reset": True})
            return
        headers = list(_encoded(reply.headers))
        if not reply.events:
            headers.append((b"content-length", str(len(reply.body)).encode()))
        start: dict[str, Any] = {
            "type": "http.response.start",
            "status": reply.status,
            "headers": headers,
        }
        if reply.reason and reply.reason != standard_reason(reply.status):
            start["reason"] = reply.reason.encode("latin-1", "replace")  # see _uvicorn
        await send(start)
        if not reply.events:
            await send({"type": "http.response.body", "body": reply.body})
            return
        pacer = Pacer(self.timing)
        for n, (offset, data) in enumerate(reply.events):
            await pacer.until(offset)
            if n and shape.gap:
                await asyncio.sleep(shape.gap)
            for m, piece in enumerate(shape.writes(n, data)):
                if m:
                    await asyncio.sleep(shape.pause)
                await send({"type": "http.response.body", "body": piece, "more_body": True})
        if shape.drop:
            await send({"type": DROP, "reset": False})
            return
        await send({"type": "http.response.body", "body": b""})


async def read_request(scope: Scope, receive: Receive) -> Request:
    """The ASGI request as a capture `Request`; Disconnected if the client went away."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Disconnected
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    target = _text(scope.get("raw_path") or scope["path"].encode())
    if scope.get("query_string"):
        target += "?" + _text(scope["query_string"])
    headers = tuple((_text(k), _text(v)) for k, v in scope["headers"])
    version = "HTTP/" + scope.get("http_version", "1.1")
    return Request(scope["method"], target, headers, b"".join(chunks), version)


# What uvicorn refuses in a header (it would answer 500): control characters, and in names
# the separators too.
_HEADER_JUNK = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
_NAME_JUNK = re.compile(rb'[\x00-\x1f\x7f()<>@,;:\[\]={} \t\\"]')


@functools.lru_cache(maxsize=1024)  # an answer's headers are the same on every render
def _encoded(headers: Headers) -> tuple[tuple[bytes, bytes], ...]:
    return tuple((_header_name(k), _HEADER_JUNK.sub(b" ", wire_bytes(v))) for k, v in headers)


def _header_name(name: str) -> bytes:
    return _NAME_JUNK.sub(b"-", name.lower().encode("latin-1", "replace"))


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")
