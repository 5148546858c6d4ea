"""The replayer's HTTP face: a request in, the runner's answer out as bytes (I/O shell).

Besides A2A it serves, redacted, `GET /__a2a_recorder/report` (what `--strict` checks) and
`GET /__a2a_recorder/requests` (the journal); every other request is the runner's.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Iterator

from recorder.capture import Headers, Request
from recorder.replay.core import NO_SHAPE, Client, HttpAnswer, Shape, standard_reason
from recorder.replay.faces._http import Output
from recorder.replay.faces._runner import Runner, Turn
from recorder.replay.faces._timing import Pacer, Timing
from recorder.script import wire_bytes

ADMIN_PREFIX = "/__a2a_recorder"
JOURNAL_PATH = f"{ADMIN_PREFIX}/requests"
REPORT_PATH = f"{ADMIN_PREFIX}/report"
# Only `GET` on these exact paths is the replayer's own: anything else is a request like any.
ADMIN_PATHS = frozenset({JOURNAL_PATH, REPORT_PATH})
JSON_HEADERS = [(b"content-type", b"application/json")]


class ReplayHttp:
    """Answers HTTP requests through a `Runner` (see the module docstring)."""

    def __init__(self, runner: Runner, *, timing: Timing) -> None:
        self.runner = runner
        self.service = runner.service
        self.timing = timing

    def answer(self, request: Request, client: Client, out: Output) -> Awaitable[None] | None:
        if request.method == "GET" and request.target.partition("?")[0] in ADMIN_PATHS:
            return self._admin(out, request.target)
        turn = self.runner.decide(request, client)
        reply, shape = turn.http, turn.shape
        if self.runner.waits(turn) or shape is not NO_SHAPE or (reply.events and self.timing.speed):
            return self._later(turn, request, out)
        _send_now(out, reply)
        self.runner.end(turn)
        return None

    async def _later(self, turn: Turn, request: Request, out: Output) -> None:
        async with self.runner.answering(lambda: _give_up(out)):
            turn = await self.runner.complete(turn, request)
            await self._send(out, turn.http, turn.shape)
        self.runner.end(turn)

    async def _admin(self, out: Output, target: str) -> None:
        if target.partition("?")[0] == JOURNAL_PATH:
            chunks: Iterator[bytes] = self.service.journal.json_chunks()
        else:
            chunks = self._report_chunks()
        async with self.runner.answering(lambda: _give_up(out)):
            out.head(200, "OK", JSON_HEADERS, None)
            # One journal entry at a time, so that a large journal is never held twice, each
            # redacted on a worker thread (the report too), so that replay goes on meanwhile.
            while (chunk := await asyncio.to_thread(next, chunks, b"")) != b"":
                out.body(chunk)
                await out.drain()
            out.end()

    def _report_chunks(self) -> Iterator[bytes]:
        yield json.dumps(self.service.report.as_json(), ensure_ascii=False).encode()

    async def _send(self, out: Output, reply: HttpAnswer, shape: Shape = NO_SHAPE) -> None:
        if shape.delay:
            await asyncio.sleep(shape.delay)
        if shape.reset:
            out.drop(reset=True)
            return
        if not reply.events:
            _send_now(out, reply)
            return
        out.head(reply.status, _reason(reply), encoded(reply.headers), None)
        pacer = Pacer(self.timing)
        for n, (offset, data) in enumerate(reply.events):
            await pacer.until(offset)
            if n and shape.gap:
                await asyncio.sleep(shape.gap)
            for m, piece in enumerate(shape.writes(n, data)):
                if m:
                    await asyncio.sleep(shape.pause)
                out.body(piece)
                await out.drain()
        if shape.drop:
            out.drop()
            return
        out.end()


def _send_now(out: Output, reply: HttpAnswer) -> None:
    headers = encoded(reply.headers)
    if not reply.events:
        out.whole(reply.status, _reason(reply), headers, reply.body)
        return
    out.head(reply.status, _reason(reply), headers, None)
    for _, data in reply.events:
        out.body(data)
    out.end()


async def _give_up(out: Output) -> None:
    out.drop()


def _reason(reply: HttpAnswer) -> str:
    return reply.reason or standard_reason(reply.status)


def _table(junk: bytes, instead: bytes) -> bytes:
    return bytes(instead[0] if n in junk else n for n in range(256))


# What a status line or header cannot carry: control characters (a space instead), and in
# names separators too (a dash instead).
_CONTROLS = bytes([*range(0x20), 0x7F])
_VALUE_BYTES = _table(_CONTROLS.replace(b"\t", b""), b" ")
_NAME_BYTES = _table(_CONTROLS + b'()<>@,;:[]={} \\"', b"-")


def encoded(headers: Headers) -> list[tuple[bytes, bytes]]:
    """Header names and values as bytes a header line can carry."""
    return [
        (
            k.lower().encode("latin-1", "replace").translate(_NAME_BYTES),
            wire_bytes(v).translate(_VALUE_BYTES),
        )
        for k, v in headers
    ]
