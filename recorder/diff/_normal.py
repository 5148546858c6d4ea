"""The normalised data model: exchanges, requests, responses, events and bodies.

Plain frozen values, built by `_exchanges` and read by `_compare`, `_renames` and `_polls`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from recorder.capture import Headers

Json = Any


@dataclass(frozen=True, slots=True)
class Body:
    """A body (or event data, or gRPC message) after normalisation.

    `kind` is "json" (value: the parsed, normalised JSON), "text" (value: normalised text),
    "bytes" (value: a short `<N bytes sha256:…>` summary) or "empty" (value: None).
    """

    kind: str
    value: Json = None


EMPTY = Body("empty")


@dataclass(frozen=True, slots=True)
class NormalEvent:
    """One SSE event: `event` type ("message" when absent), data, `id:` field, comment lines."""

    event: str
    data: Body
    id: str | None = None
    comments: tuple[str, ...] = ()
    offset_us: int = 0


@dataclass(frozen=True, slots=True)
class NormalGrpc:
    body: Body
    type_name: str | None = None
    compressed: bool = False
    offset_us: int = 0


@dataclass(frozen=True, slots=True)
class NormalRequest:
    method: str
    target: str
    headers: Headers  # lower-case names, volatile ones removed, values normalised
    body: Body = EMPTY
    messages: tuple[NormalGrpc, ...] = ()


@dataclass(frozen=True, slots=True)
class NormalResponse:
    status: int
    headers: Headers
    body: Body = EMPTY
    events: tuple[NormalEvent, ...] = ()  # comment-only blocks (`: ping`) are counted apart
    comment_blocks: int = 0
    newline: str = "\n"
    messages: tuple[NormalGrpc, ...] = ()
    trailers: Headers = ()


@dataclass(frozen=True, slots=True)
class NormalExchange:
    """An exchange with its volatile values replaced; `key` is what alignment compares."""

    number: int
    key: str
    binding: str | None
    version: str | None
    request: NormalRequest
    response: NormalResponse | None
    error: str | None = None
    started_us: int = 0
    duration_us: int = 0
