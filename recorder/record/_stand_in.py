"""A marked stand-in for an exchange the capture format refused (pure).

The format holds every byte sequence (docs/capture-format.md); it refuses only values no wire
produces (a header name that is not a token, a method with a space).  Should one reach the
recorder, the exchange is still written, so that its number is never a silent gap: with the
offending values replaced and a note saying so.
"""

from __future__ import annotations

import re
from dataclasses import replace

from recorder.capture import Exchange, GrpcMessage, Request, Response

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_VERSION = re.compile(r"HTTP/[0-9.]+")


def stand_in(exchange: Exchange, why: str) -> Exchange:
    """`exchange` with every refused value replaced, and a note naming why."""
    c = exchange.classification
    operation = c.operation if c.operation and _TOKEN.fullmatch(c.operation) else None
    classification = replace(c, operation=operation) if operation != c.operation else c
    note = f"not written as recorded: {why}"
    response = _response(exchange.response) if exchange.response is not None else None
    return replace(
        exchange,
        classification=classification,
        request=_request(exchange.request),
        response=response,
        notes=(*exchange.notes, note),
    )


def _request(request: Request) -> Request:
    method = request.method if _TOKEN.fullmatch(request.method) else "UNKNOWN"
    version = request.http_version if _VERSION.fullmatch(request.http_version) else "HTTP/1.1"
    return replace(
        request,
        method=method,
        http_version=version,
        headers=_headers(request.headers),
        messages=_messages(request.messages),
    )


def _response(response: Response) -> Response:
    version = response.http_version if _VERSION.fullmatch(response.http_version) else "HTTP/1.1"
    status = response.status if 100 <= response.status <= 999 else 999
    newline = response.newline if response.newline in ("\n", "\r\n", "\r") else "\n"
    parts = [bool(response.body), bool(response.events), bool(response.messages)]
    events = response.events if not (parts[0] and parts[1]) else ()
    return replace(
        response,
        http_version=version,
        status=status,
        newline=newline,
        headers=_headers(response.headers),
        events=events,
        messages=_messages(response.messages) if sum(parts) <= 1 else (),
        trailers=_headers(response.trailers),
    )


def _headers(headers: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    return tuple(
        (name if _TOKEN.fullmatch(name.lstrip(":")) else "X-Invalid-Name", value)
        for name, value in headers
    )


def _messages(messages: tuple[GrpcMessage, ...]) -> tuple[GrpcMessage, ...]:
    return tuple(
        m if m.type_name is None or _TOKEN.fullmatch(m.type_name) else replace(m, type_name=None)
        for m in messages
    )
