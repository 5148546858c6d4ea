"""Sending one prepared request through the recorder and reading its answer to the end.

HTTP goes through one `httpx.AsyncClient` with no default headers, every answer read as a
stream (an event stream framed event by event); gRPC through `grpc.aio` generic calls with
raw bytes, each response message decoded back to proto-JSON.  Each document is handed to
`on_document(index, document)` as it arrives, so ids from a stream's first event are there for
a request that goes out while the stream still runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
import httpx

from recorder.capture import Response
from recorder.protocol import (
    NOT_JSON,
    Binding,
    Json,
    SseFramer,
    decode_message,
    event_data,
    is_event_stream,
    parse_json,
)
from recorder.script import answer_succeeded
from recorder.verify._outgoing import GrpcOutgoing, HttpOutgoing

OnDocument = Callable[[int, Json], None]


@dataclass
class LiveAnswer:
    documents: list[Json] = field(default_factory=list)
    success: bool = False
    error: str | None = None  # the request failed on the way (no answer, cut, timed out)


class _Documents:
    """Collects an answer's documents and reports each one as it comes."""

    def __init__(self, on_document: OnDocument) -> None:
        self.found: list[Json] = []
        self.on_document = on_document

    def add(self, text: str | bytes | None) -> None:
        document = parse_json(text) if text else NOT_JSON
        if document is not NOT_JSON:
            self.on_document(len(self.found), document)
            self.found.append(document)


class HttpSender:
    def __init__(self, base_url: str, timeout: float) -> None:
        self.client = httpx.AsyncClient(base_url=base_url, timeout=timeout, trust_env=False)
        self.client.headers.clear()  # only what the recorded client sent

    async def send(
        self, out: HttpOutgoing, binding: Binding | None, on_document: OnDocument
    ) -> LiveAnswer:
        documents = _Documents(on_document)
        request = self.client.build_request(
            out.method, out.target, headers=list(out.headers), content=out.body or None
        )
        try:
            response = await self.client.send(request, stream=True)
            try:
                body = await _read(response, documents)
            finally:
                await response.aclose()
        except httpx.HTTPError as exc:
            return LiveAnswer(documents.found, False, f"{type(exc).__name__}: {exc}")
        recorded = Response(response.status_code, body=body)
        return LiveAnswer(documents.found, answer_succeeded(binding, recorded, documents.found))

    async def close(self) -> None:
        await self.client.aclose()


async def _read(response: httpx.Response, documents: _Documents) -> bytes:
    if not is_event_stream(response.headers.get("content-type")):
        body = await response.aread()
        documents.add(body)
        return body
    framer = SseFramer()
    async for chunk in response.aiter_bytes():
        for block in framer.feed(chunk):
            documents.add(event_data(block))
    last = framer.close()
    if last:
        documents.add(event_data(last))
    return b""


class GrpcSender:
    def __init__(self, target: str) -> None:
        self.channel = grpc.aio.insecure_channel(target)

    async def send(self, out: GrpcOutgoing, timeout: float, on_document: OnDocument) -> LiveAnswer:
        documents = _Documents(on_document)
        call: Any
        if out.server_streaming:
            call = self.channel.unary_stream(out.path)(
                out.message, metadata=out.metadata, timeout=timeout
            )
        else:
            call = self.channel.unary_unary(out.path)(
                out.message, metadata=out.metadata, timeout=timeout
            )
        try:
            if out.server_streaming:
                async for data in call:
                    documents.add(_decoded(out.path, data))
            else:
                documents.add(_decoded(out.path, await call))
        except grpc.aio.AioRpcError:
            pass  # the status says it: read below
        except asyncio.CancelledError:
            call.cancel()
            raise
        code = await call.code()
        success = code is grpc.StatusCode.OK
        recorded = Response(200, trailers=(("grpc-status", str(code.value[0])),))
        return LiveAnswer(
            documents.found, success and answer_succeeded(Binding.GRPC, recorded, documents.found)
        )

    async def close(self) -> None:
        await self.channel.close()


def _decoded(path: str, data: bytes) -> str | None:
    found = decode_message(path, data, "response")
    return found[1] if found is not None else None
