"""The request journal: what the fake agent received and what it did (pure data).

Users of WireMock and mockttp verify their client by asking the fake server what it got.
`Journal.requests` holds each live request as received, with its classification, the
provenance of every id in it, the recorded exchange that answered it (or the miss), and what
the answer was: `recorded` (the agent's), `adapted` (the agent's, with `changes` saying what
was changed and why) or `synthesized` (the replayer's own: nothing recorded fits);
`Journal.deliveries` holds each push delivery made to a client's webhook with the webhook's
answer.  Both are bounded (the oldest entries go first) and are read as tuples of frozen
values, so a test thread can read them while the server appends.  `as_json()` is what
`GET /__a2a_recorder/requests` serves, for tests in other languages.

    entry = replayer.journal.requests[-1]
    assert entry.request.header("a2a-version") == "1.0"
    assert entry.outcome == "served" and entry.exchange == 4
    assert replayer.journal.deliveries[0].status == 200
"""

from __future__ import annotations

import base64
import itertools
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Literal

from recorder.capture import Headers, Request
from recorder.protocol import Classification
from recorder.replay._ids import Provenance, Slot

MAX_ENTRIES = 10_000
Outcome = Literal["served", "miss", "refused", "forwarded"]
# What the answer is: the agent's, as recorded; the agent's, changed where it had to be (and
# `changes` says how and why); written by the replayer (nothing recorded fits); or a live
# agent's (`--on-miss forward`).
AnswerKind = Literal["recorded", "adapted", "synthesized", "forwarded"]


@dataclass(frozen=True, slots=True)
class SeenId:
    """One id in a live request: where, what, its provenance, and the recorded id it stood for."""

    where: tuple[str | int, ...]  # ("body", "message", "taskId")
    value: str
    provenance: Provenance
    recorded: str | None = None
    segment: int | None = None  # of a resource name `tasks/{id}/...`

    @property
    def location(self) -> str:
        """`body.message.taskId`, `path.taskId`, `body.name[1]` (a resource name's segment)."""
        text = ".".join(str(part) for part in self.where)
        return text if self.segment is None else f"{text}[{self.segment}]"


@dataclass(frozen=True, slots=True)
class JournalRequest:
    number: int  # 1, 2, ... in arrival order
    received: float  # Unix time
    client: str | None  # the connection (`host:port`, a gRPC peer)
    request: Request
    classification: Classification
    outcome: Outcome
    exchange: int | None  # the recorded exchange that answered
    session: int | None
    detail: str | None = None  # the miss or refusal, in words
    status: int | None = None  # the HTTP status or gRPC code answered
    seen: tuple[tuple[Slot, Provenance, str | None], ...] = ()  # what `ids` is made of
    answer: AnswerKind = "recorded"
    changes: tuple[str, ...] = ()  # for an adapted answer: what changed and why

    @property
    def ids(self) -> tuple[SeenId, ...]:
        """Each id in the request: where, its provenance, the recorded id it stood for."""
        return tuple(SeenId(s.location, s.value, p, r, s.segment) for s, p, r in self.seen)


@dataclass(frozen=True, slots=True)
class JournalDelivery:
    number: int
    request: int | None  # the journal number of the request that set it off
    exchange: int  # the recorded delivery
    url: str | None  # None: the client registered no webhook for it
    headers: Headers
    body: bytes
    status: int | None = None  # the webhook's answer, None when it gave none
    response: bytes = b""
    error: str | None = None


class Journal:
    """Bounded logs of requests and deliveries (appended from the server's loop)."""

    def __init__(self, limit: int = MAX_ENTRIES) -> None:
        self._requests: deque[JournalRequest] = deque(maxlen=limit)
        self._deliveries: deque[JournalDelivery] = deque(maxlen=limit)
        self._numbers = itertools.count(1)
        self._delivery_numbers = itertools.count(1)
        self._lock = threading.Lock()

    @property
    def requests(self) -> tuple[JournalRequest, ...]:
        with self._lock:
            return tuple(self._requests)

    @property
    def deliveries(self) -> tuple[JournalDelivery, ...]:
        with self._lock:
            return tuple(self._deliveries)

    def next_number(self) -> int:
        return next(self._numbers)

    def add_request(self, entry: JournalRequest) -> None:
        with self._lock:
            self._requests.append(entry)

    def update(self, number: int, **fields: Any) -> None:
        """Change fields of request `number` (if still kept): what happened after it was
        logged (a miss forwarded)."""
        with self._lock:
            for n in range(len(self._requests) - 1, -1, -1):
                if self._requests[n].number == number:
                    self._requests[n] = replace(self._requests[n], **fields)
                    return

    def add_delivery(self, **fields: Any) -> JournalDelivery:
        entry = JournalDelivery(number=next(self._delivery_numbers), **fields)
        with self._lock:
            self._deliveries.append(entry)
        return entry

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()
            self._deliveries.clear()

    def as_json(self) -> dict[str, Any]:
        return {
            "requests": [_request_json(r) for r in self.requests],
            "deliveries": [_delivery_json(d) for d in self.deliveries],
        }


def now() -> float:
    return time.time()


def _request_json(entry: JournalRequest) -> dict[str, Any]:
    c = entry.classification
    request = entry.request
    return {
        "number": entry.number,
        "received": entry.received,
        "client": entry.client,
        "method": request.method,
        "target": _text(request.target),
        "headers": _headers(request.headers),
        **_body(request.body),
        "messages": [m.json if m.json is not None else None for m in request.messages],
        "binding": c.binding.value if c.binding else None,
        "operation": c.operation,
        "ids": [
            {
                "location": i.location,
                "value": _text(i.value),
                "provenance": i.provenance.value,
                "recorded": _text(i.recorded) if i.recorded else None,
            }
            for i in entry.ids
        ],
        "outcome": entry.outcome,
        "answer": entry.answer,
        "changes": list(entry.changes),
        "exchange": entry.exchange,
        "session": entry.session,
        "detail": entry.detail,
        "status": entry.status,
    }


def _delivery_json(entry: JournalDelivery) -> dict[str, Any]:
    return {
        "number": entry.number,
        "request": entry.request,
        "exchange": entry.exchange,
        "url": entry.url,
        "headers": _headers(entry.headers),
        **_body(entry.body),
        "status": entry.status,
        "response": _body(entry.response),
        "error": entry.error,
    }


def _text(value: str) -> str:
    """A string JSON can carry: lone surrogates become their escapes' text."""
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _headers(headers: Iterable[tuple[str, str]]) -> list[list[str]]:
    return [[_text(k), _text(v)] for k, v in headers]


def _body(body: bytes) -> dict[str, str]:
    try:
        return {"body": body.decode("utf-8")}
    except UnicodeDecodeError:
        return {"body_base64": base64.b64encode(body).decode()}
