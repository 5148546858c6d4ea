"""What a foreign recording says about one exchange, and how a list of them becomes a capture.

Strategy: each input format (mitmproxy flows, HAR) is read into `Observed` values, one per
request, in the order the file holds them; `convert` then does what the recorder does live, in
the same order: classify (using an agent card's interfaces for its origin once a card exchange
has been seen), leave out what is not A2A unless asked, redact secrets, number the exchanges.
Pure: values in, values out.  Reading files is the command's business.

Invariants:
- Every exchange `convert` returns renders: one the `.http` format cannot hold exactly is left
  out and named in `Conversion.problems`, never silently dropped.
- Redaction learns the API-key headers of every card in the input, and every secret of every
  exchange, before redacting anything, so a key sent before the card was fetched, or a token
  echoed before it was seen in a header, is not kept by accident.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import recorder
from recorder.capture import (
    Capture,
    Exchange,
    Request,
    Response,
    SseEvent,
    render_exchange,
    started_at,
)
from recorder.protocol import (
    AGENT_CARD,
    Classification,
    Interface,
    SseFramer,
    classify,
    find_card,
    interfaces_from_card,
)
from recorder.record._scan import scan_exchange
from recorder.redaction import Redactor

EXTENDED_CARD = "GetExtendedAgentCard"
# Where the card sits in a card exchange's response body, per binding (JSON-RPC wraps it).
UNKNOWN_EVENT_TIMES = "SSE event times unknown (offsets 0)"


@dataclass(frozen=True, slots=True)
class Observed:
    """One exchange as a foreign recording holds it, before classification.

    `origin` is the upstream's `scheme://host:port` (card interfaces are per origin);
    `started` is the request's start in seconds since the epoch.
    """

    origin: str
    request: Request
    response: Response | None
    started: float = 0.0
    duration_us: int = 0
    notes: tuple[str, ...] = ()
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Conversion:
    """A converted capture, and what was left out: `skipped` non-A2A exchanges, `problems`."""

    capture: Capture
    skipped: int = 0
    problems: tuple[str, ...] = ()

    @property
    def converted(self) -> int:
        return len(self.capture.exchanges)


@dataclass
class _State:
    interfaces: dict[str, tuple[Interface, ...]] = field(default_factory=dict)
    cards: list[Mapping[str, Any]] = field(default_factory=list)


def convert(
    observed: Sequence[Observed], *, keep_secrets: bool = False, include_all: bool = False
) -> Conversion:
    """Classify, filter, redact and number `observed` exchanges into a `Capture`.

    Non-A2A exchanges are counted in `skipped` unless `include_all`.  Example::

        conversion = convert(observed_from_har(json.loads(text)))
        write_capture("session.http", conversion.capture)
    """
    state = _State()
    classified = [(o, _classify(o, state)) for o in observed]
    kept = [(o, c) for o, c in classified if c.is_a2a or include_all]
    redactor = None if keep_secrets else Redactor()
    if redactor is not None:
        for card in state.cards:
            redactor.learn_card(card)
        for item, _ in kept:  # learn every secret first, so each is swept from every exchange
            redactor.exchange(item.request, item.response)
    t0 = min((o.started for o in observed), default=0.0)
    exchanges: list[Exchange] = []
    problems: list[str] = []
    for index, (item, classification) in enumerate(kept, 1):
        exchange = _exchange(len(exchanges) + 1, item, classification, t0, redactor)
        try:
            render_exchange(exchange)
        except ValueError as exc:
            problems.append(
                f"exchange {index} ({item.request.method} {item.request.target}): {exc}"
            )
            continue
        exchanges.append(exchange)
    capture = Capture(
        started=started_at(t0),
        recorder_version=recorder.__version__,
        exchanges=tuple(exchanges),
        upstreams=tuple(dict.fromkeys(o.origin for o, _ in kept)),
        redacted=redactor.redacted if redactor is not None else (),
    )
    return Conversion(capture, len(classified) - len(kept), tuple(problems))


def _classify(item: Observed, state: _State) -> Classification:
    interfaces = state.interfaces.get(item.origin, ())
    found = classify(item.request, item.response, interfaces=interfaces)
    if found.operation in (AGENT_CARD, EXTENDED_CARD) and item.response is not None:
        card = find_card(item.response.body, found)
        if card is not None:
            state.cards.append(card)
            state.interfaces[item.origin] = interfaces_from_card(card)
    return found


def _exchange(
    number: int,
    item: Observed,
    classification: Classification,
    t0: float,
    redactor: Redactor | None,
) -> Exchange:
    request, response, notes = item.request, item.response, item.notes
    if redactor is not None:
        request, response, redacted = redactor.exchange(request, response)
        notes = (*notes, *redacted, *scan_exchange(request, response))
    return Exchange(
        number=number,
        classification=classification,
        request=request,
        response=response,
        started_us=max(0, round((item.started - t0) * 1_000_000)),
        duration_us=max(0, item.duration_us),
        notes=notes,
        error=item.error,
    )


# -- helpers shared by the formats -------------------------------------------------------------


def framed(response: Response, offsets_us: Sequence[int] = ()) -> tuple[Response, tuple[str, ...]]:
    """`response` with its buffered event-stream body framed into events, and notes.

    Event `i` gets `offsets_us[i]` when given, else 0 (a buffered body has no arrival times).
    """
    framer = SseFramer()
    blocks = framer.feed(response.body)
    partial = framer.close()
    notes = [] if offsets_us else [UNKNOWN_EVENT_TIMES]
    if partial is not None:
        blocks.append(partial)
        notes.append("stream truncated")
    events = tuple(
        SseEvent(offsets_us[i] if i < len(offsets_us) else 0, block)
        for i, block in enumerate(blocks)
    )
    value = replace(response, body=b"", events=events, newline=framer.newline)
    return value, tuple(notes)
