"""The request journal: what the fake agent received and what it did (pure data).

`Journal.requests` holds each live request with its classification, its ids' provenance and
what answered it; `Journal.deliveries` each push delivery made.  Both are read as tuples, so a
test thread can read them while the server appends.  Invariants: at most `limit` entries of
each kind and `max_bytes` of their bytes (the oldest bodies are cut to `KEPT_BODY` before any
entry is dropped); and what leaves the process (`as_json`, `shown`, `said`) is redacted when
read, so a secret learnt late is swept from what came before (`keep_secrets` turns that off).
"""

from __future__ import annotations

import base64
import copy
import itertools
import json
import threading
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol, Self

from recorder.capture import Capture, Headers, Request
from recorder.options import REPLAY
from recorder.protocol import Classification
from recorder.redaction import NO_RULES, REDACTED_NOTE, Redactor, Rules
from recorder.script import Provenance, Slot, recorded_cards

MAX_ENTRIES = 10_000
MAX_BYTES: int = REPLAY.by_name["journal_bytes"].default
KEPT_BODY = 1024  # bytes of a truncated body that stay
Outcome = Literal["served", "miss", "refused", "forwarded"]
# What the answer is: the agent's as recorded, or changed (`changes` says how), the replayer's
# own (nothing recorded fits), or a live agent's (`--on-miss forward`).
AnswerKind = Literal["recorded", "adapted", "synthesized", "forwarded"]


@dataclass(frozen=True, slots=True)
class SeenId:
    """One id in a live request: where, what, its provenance, and the recorded id it stood for."""

    where: tuple[str | int, ...]  # ("body", "message", "taskId")
    value: str
    provenance: Provenance
    recorded: str | None = None
    segment: int | None = None  # of a resource name `tasks/{id}/...`
    learnt: bool = False  # fresh because the capture shows its field fresh in every request

    @property
    def location(self) -> str:
        """`body.message.taskId`, `path.taskId`, `body.name[1]` (a resource name's segment)."""
        text = ".".join(str(part) for part in self.where)
        return text if self.segment is None else f"{text}[{self.segment}]"


@dataclass(slots=True)  # made per request: not frozen, which costs
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
    notes: tuple[str, ...] = ()  # what the journal did to it: truncated, redacted
    faults: tuple[str, ...] = ()  # the fault specs (as written) that made the answer

    @property
    def ids(self) -> tuple[SeenId, ...]:
        """Each id in the request: where, its provenance, the recorded id it stood for."""
        return tuple(
            SeenId(s.location, s.value, p, r, s.segment, s.learnt) for s, p, r in self.seen
        )

    def sizes(self) -> tuple[int, int]:
        """(head, body) bytes as the journal counts them: the ids read count as head."""
        r, c = self.request, self.classification
        head = len(r.target) + _headers_size(r.headers) + len(self.detail or "")
        for slot, _, recorded in self.seen:
            head += len(slot.value) + len(recorded or "")
        head += len(c.task_id or "") + len(c.context_id or "") + len(c.config_id or "")
        body = len(r.body)
        for m in r.messages:
            body += len(m.json or "") + len(m.raw or b"")
        return head, body

    def truncated(self, why: str) -> Self:
        _, body = self.sizes()
        request = replace(self.request, body=self.request.body[:KEPT_BODY], messages=())
        kept = len(request.body)
        return replace(self, request=request, notes=(*self.notes, _cut_note(kept, body, why)))


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
    notes: tuple[str, ...] = ()

    @property
    def sent(self) -> Request:
        """The delivery as the request it was (what its secrets are learnt from)."""
        return Request("POST", self.url or "", self.headers, self.body)

    def sizes(self) -> tuple[int, int]:
        head = len(self.url or "") + _headers_size(self.headers) + len(self.error or "")
        return head, len(self.body) + len(self.response)

    def truncated(self, why: str) -> Self:
        _, size = self.sizes()
        body, response = self.body[:KEPT_BODY], self.response[:KEPT_BODY]
        note = _cut_note(len(body) + len(response), size, why)
        return replace(self, body=body, response=response, notes=(*self.notes, note))


Entry = JournalRequest | JournalDelivery


class _Weighed(Protocol):
    def sizes(self) -> tuple[int, int]: ...

    def truncated(self, why: str) -> Self: ...


class _Log[E: _Weighed]:
    """One kind of entry, oldest first, with their bytes and how many have their bodies `cut`."""

    def __init__(self) -> None:
        self.entries: deque[E] = deque()
        self.sizes: deque[tuple[int, int]] = deque()  # each entry's (head, body) bytes
        self.heads = 0
        self.bodies = 0
        self.cut = 0

    def append(self, entry: E) -> None:
        head, body = entry.sizes()
        self.entries.append(entry)
        self.sizes.append((head, body))
        self.heads += head
        self.bodies += body

    def drop_oldest(self) -> None:
        self.entries.popleft()
        head, body = self.sizes.popleft()
        self.heads -= head
        self.bodies -= body
        self.cut = max(0, self.cut - 1)

    def cut_oldest_body(self, why: str) -> None:
        """Truncate the body of the oldest entry whose body is whole."""
        head, before = self.sizes[self.cut]
        if before > KEPT_BODY:
            shorter = self.entries[self.cut].truncated(why)
            after = shorter.sizes()[1]
            self.entries[self.cut] = shorter
            self.sizes[self.cut] = (head, after)
            self.bodies += after - before
        self.cut += 1

    def replace(self, number: int, fields: dict[str, Any]) -> None:
        """The entry numbered `number` with `fields` changed, its bytes counted again."""
        for n in range(len(self.entries) - 1, -1, -1):
            entry = self.entries[n]
            if getattr(entry, "number", None) == number:
                changed = replace(entry, **fields)  # type: ignore[type-var]
                (head, body), (new_head, new_body) = self.sizes[n], changed.sizes()
                self.entries[n], self.sizes[n] = changed, (new_head, new_body)
                self.heads += new_head - head
                self.bodies += new_body - body
                return

    def whole_bodies(self) -> int:
        """Body bytes that cutting could still free (roughly: a cut keeps KEPT_BODY)."""
        return self.bodies if self.cut < len(self.entries) else 0


class Journal:
    """Bounded logs of requests and deliveries (appended from the server's loop)."""

    def __init__(
        self, limit: int = MAX_ENTRIES, *, max_bytes: int = MAX_BYTES, rules: Rules = NO_RULES
    ) -> None:
        self.limit = limit
        self.max_bytes = max_bytes
        self.rules = rules
        self._requests: _Log[JournalRequest] = _Log()
        self._deliveries: _Log[JournalDelivery] = _Log()
        self._numbers = itertools.count(1)
        self._delivery_numbers = itertools.count(1)
        self._lock = threading.Lock()
        self._live = Redactor(rules, max_secrets=limit)  # for report lines: learns from each

    @property
    def requests(self) -> tuple[JournalRequest, ...]:
        with self._lock:
            return tuple(self._requests.entries)

    @property
    def deliveries(self) -> tuple[JournalDelivery, ...]:
        with self._lock:
            return tuple(self._deliveries.entries)

    @property
    def size(self) -> int:
        """The bytes the journal counts against `max_bytes`."""
        with self._lock:
            return self._bytes()

    def _bytes(self) -> int:
        requests, deliveries = self._requests, self._deliveries
        return requests.heads + requests.bodies + deliveries.heads + deliveries.bodies

    def next_number(self) -> int:
        return next(self._numbers)

    def add_request(self, entry: JournalRequest) -> None:
        with self._lock:
            self._add(self._requests, entry)

    def update(self, number: int, **fields: Any) -> None:
        """Change fields of request `number`, if still kept (a miss forwarded later)."""
        with self._lock:
            self._requests.replace(number, fields)

    def add_delivery(self, **fields: Any) -> JournalDelivery:
        entry = JournalDelivery(number=next(self._delivery_numbers), **fields)
        with self._lock:
            self._add(self._deliveries, entry)
        return entry

    def _add[E: _Weighed](self, log: _Log[E], entry: E) -> None:
        if len(log.entries) >= self.limit:
            log.drop_oldest()
        log.append(entry)
        self._bound()

    def _bound(self) -> None:
        """Cut the oldest bodies, then drop the oldest entries, until within `max_bytes`."""
        logs: tuple[_Log[Any], ...] = (self._requests, self._deliveries)
        while self._bytes() > self.max_bytes:
            fullest = max(logs, key=_Log.whole_bodies)
            if fullest.whole_bodies() > 0:
                fullest.cut_oldest_body(f"the journal keeps {self.max_bytes:,} bytes")
                continue
            longest = max(logs, key=lambda log: log.heads + log.bodies)
            if len(longest.entries) <= 1:
                return  # one head larger than the bound: kept, it is what was received
            longest.drop_oldest()

    # -- what leaves the process -----------------------------------------------------------

    def line(self, request: Request, text: str) -> str:
        """A report line `METHOD target: text`, redacted whenever `shown` reads it."""
        with self._lock:
            if self.rules.keep_secrets:
                return f"{request.method} {request.target}: {text}"
            self._live.learn(request)
            return f"{request.method} {self._live.target(request.target)}: {text}"

    def shown(self, lines: Iterable[str]) -> list[str]:
        """Report lines as they leave the process: redacted with all that is known now."""
        redactor = self._redactor()[0]
        return [_text(redactor.quoted(line) if redactor else line) for line in lines]

    def said(self, request: Request, text: str) -> str:
        """A console line about `request`, as `line`, redacted with all that is known now."""
        said = self.line(request, text)
        with self._lock:
            return _text(said if self.rules.keep_secrets else self._live.quoted(said))

    def as_json(self) -> dict[str, Any]:
        """The journal as `GET /__a2a_recorder/requests` serves it (redacted)."""
        return json.loads(b"".join(self.json_chunks()))  # type: ignore[no-any-return]

    def json_chunks(self) -> Iterator[bytes]:
        """`as_json()` rendered, an entry per chunk (so a large journal is never held twice)."""
        redactor, requests, deliveries = self._redactor()
        yield b'{"requests":['
        yield from _joined(_request_json(_shown(e, redactor)) for e in requests)
        yield b'],"deliveries":['
        yield from _joined(_delivery_json(_shown_delivery(d, redactor)) for d in deliveries)
        yield b"]}"

    def _redactor(
        self,
    ) -> tuple[Redactor | None, Sequence[JournalRequest], Sequence[JournalDelivery]]:
        """What redacts the entries kept now (None: `keep_secrets`), and those entries."""
        with self._lock:
            requests, deliveries = tuple(self._requests.entries), tuple(self._deliveries.entries)
            if self.rules.keep_secrets:
                return None, requests, deliveries
            redactor = copy.deepcopy(self._live)
        redactor.max_secrets = None  # for this reading: it forgets nothing kept
        for request in (*(e.request for e in requests), *(d.sent for d in deliveries)):
            redactor.learn(request)
        redactor.take_hits()
        return redactor, requests, deliveries


def replay_rules(captures: Sequence[Capture], rules: Rules = NO_RULES) -> Rules:
    """`rules` plus the names the captures redacted when recorded, and their cards' API keys."""
    headers, params = list(rules.headers), list(rules.params)
    for capture in captures:
        for name in capture.redacted:
            if name.startswith("query:"):
                params.append(name.removeprefix("query:"))
            elif "." not in name and name != "token":
                headers.append(name)
    found = Rules(tuple(headers), tuple(params), rules.cards, rules.keep_secrets)
    for card in recorded_cards(e for capture in captures for e in capture.exchanges):
        found = found.with_card(card)
    return found


# -- rendering ---------------------------------------------------------------------------------


def _shown(entry: JournalRequest, redactor: Redactor | None) -> JournalRequest:
    if redactor is None:
        return entry
    request = redactor.request(entry.request)
    detail = redactor.quoted(entry.detail) if entry.detail else entry.detail
    seen = tuple(
        (replace(slot, value=redactor.value(slot.value)), provenance, recorded)
        for slot, provenance, recorded in entry.seen
    )
    changes = tuple(redactor.quoted(change) for change in entry.changes)
    notes = _hit_notes(entry, redactor)
    return replace(entry, request=request, detail=detail, seen=seen, changes=changes, notes=notes)


def _shown_delivery(entry: JournalDelivery, redactor: Redactor | None) -> JournalDelivery:
    if redactor is None:
        return entry
    return replace(
        entry,
        url=redactor.target(entry.url) if entry.url else entry.url,
        headers=redactor.headers(entry.headers),
        body=redactor.body(entry.body),
        response=redactor.body(entry.response),
        error=redactor.text(entry.error) if entry.error else entry.error,
        notes=_hit_notes(entry, redactor),
    )


def _hit_notes(entry: Entry, redactor: Redactor) -> tuple[str, ...]:
    hits = redactor.take_hits()
    return (*entry.notes, f"{REDACTED_NOTE}{', '.join(hits)}") if hits else entry.notes


def _joined(documents: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    for n, document in enumerate(documents):
        yield (b"," if n else b"") + json.dumps(document, ensure_ascii=False).encode()


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
        "messages": [_text(m.json) if m.json is not None else None for m in request.messages],
        "binding": c.binding_name,
        "operation": c.operation,
        "ids": [
            {
                "location": i.location,
                "value": _text(i.value),
                "provenance": i.provenance.value,
                "recorded": _text(i.recorded) if i.recorded else None,
                **({"learnt": True} if i.learnt else {}),
            }
            for i in entry.ids
        ],
        "outcome": entry.outcome,
        "answer": entry.answer,
        "changes": [_text(change) for change in entry.changes],
        "faults": list(entry.faults),
        "exchange": entry.exchange,
        "session": entry.session,
        "detail": _text(entry.detail) if entry.detail else entry.detail,
        "status": entry.status,
        "notes": list(entry.notes),
    }


def _delivery_json(entry: JournalDelivery) -> dict[str, Any]:
    return {
        "number": entry.number,
        "request": entry.request,
        "exchange": entry.exchange,
        "url": _text(entry.url) if entry.url else entry.url,
        "headers": _headers(entry.headers),
        **_body(entry.body),
        "status": entry.status,
        "response": _body(entry.response),
        "error": _text(entry.error) if entry.error else entry.error,
        "notes": list(entry.notes),
    }


def _text(value: str) -> str:
    """A string JSON can carry: lone surrogates become their escapes' text."""
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _headers(headers: Iterable[tuple[str, str]]) -> list[list[str]]:
    return [[_text(k), _text(v)] for k, v in headers]


def _headers_size(headers: Headers) -> int:
    return sum(len(k) + len(v) for k, v in headers)


def _body(body: bytes) -> dict[str, str]:
    try:
        return {"body": body.decode("utf-8")}
    except UnicodeDecodeError:
        return {"body_base64": base64.b64encode(body).decode()}


def _cut_note(kept: int, size: int, why: str) -> str:
    return f"body truncated: {kept:,} of {size:,} bytes kept ({why})"
