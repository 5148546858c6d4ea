"""What the protocol code reads of an exchange: structural types recorder.capture's fit."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol
from urllib.parse import parse_qsl, urlsplit


class GrpcMessageLike(Protocol):
    @property
    def json(self) -> str | None: ...


class SseEventLike(Protocol):
    @property
    def lines(self) -> Sequence[str]: ...


class _MessageLike(Protocol):
    """What a request and a response both carry."""

    @property
    def headers(self) -> Sequence[tuple[str, str]]: ...
    @property
    def body(self) -> bytes: ...
    @property
    def messages(self) -> Sequence[GrpcMessageLike]: ...


class RequestLike(_MessageLike, Protocol):
    @property
    def method(self) -> str: ...
    @property
    def target(self) -> str: ...


class ResponseLike(_MessageLike, Protocol):
    @property
    def status(self) -> int: ...
    @property
    def events(self) -> Sequence[SseEventLike]: ...
    @property
    def trailers(self) -> Sequence[tuple[str, str]]: ...


def lower_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Header names lower-cased, each with its first value."""
    found: dict[str, str] = {}
    for name, value in headers:
        found.setdefault(str(name).lower(), str(value))
    return found


def split_target(target: str) -> tuple[str, dict[str, str]]:
    """(path, query parameters) of a request target, origin-form or absolute-form."""
    if not target.startswith("/"):
        parts = urlsplit(target)  # absolute-form, as a forward proxy sees it
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    path, _, query = target.partition("?")
    return path, dict(parse_qsl(query, keep_blank_values=True)) if query else {}
