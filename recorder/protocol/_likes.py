"""What the protocol code reads of an exchange: structural types that recorder.capture's
`Request`, `Response`, `SseEvent` and `GrpcMessage` fit (and so can tests' own values)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class GrpcMessageLike(Protocol):
    @property
    def json(self) -> str | None: ...


class SseEventLike(Protocol):
    @property
    def lines(self) -> Sequence[str]: ...


class RequestLike(Protocol):
    @property
    def method(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def headers(self) -> Sequence[tuple[str, str]]: ...
    @property
    def body(self) -> bytes: ...
    @property
    def messages(self) -> Sequence[GrpcMessageLike]: ...


class ResponseLike(Protocol):
    @property
    def status(self) -> int: ...
    @property
    def headers(self) -> Sequence[tuple[str, str]]: ...
    @property
    def body(self) -> bytes: ...
    @property
    def events(self) -> Sequence[SseEventLike]: ...
    @property
    def messages(self) -> Sequence[GrpcMessageLike]: ...
    @property
    def trailers(self) -> Sequence[tuple[str, str]]: ...
