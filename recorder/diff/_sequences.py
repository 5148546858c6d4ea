"""Event sequences aligned as sequences: SSE events, gRPC messages, push deliveries.

Keys per item, finest first (`_align.align_levels`): *content* (the whole normalised item,
placeholder numbers left out: one extra id earlier renumbers the rest), *signature* (what it
carries, plus the SSE event type) and *state* (the task state alone: a v0.3 agent pushes a task
where v1.0 pushes a status update).  So one inserted event is one insertion, a changed one a
change, and what is left pairs from the stretch's end (a stream's end is its outcome).  Push
deliveries get the same keys among exchanges; other exchanges are keyed by their operation.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Sequence

from recorder.diff._align import Alignment, Step, StepKind, align_levels
from recorder.diff._correspondence import erase_numbers
from recorder.diff._normal import Body, NormalEvent, NormalExchange, NormalGrpc
from recorder.protocol import PUSH_DELIVERY, carried


def _content(body: Body) -> str:
    text = json.dumps(body.value, sort_keys=True, ensure_ascii=False, default=str)
    return body.kind + ":" + erase_numbers(text)


def _signature(body: Body) -> tuple[str, str | None] | None:
    found = carried(body.value) if body.kind == "json" else None
    return (found.kind, found.state) if found is not None else None


def _state(body: Body) -> str | None:
    found = carried(body.value) if body.kind == "json" else None
    return found.state if found is not None else None


def _event_signatures(events: Sequence[NormalEvent]) -> list[Hashable]:
    return [(e.event, _signature(e.data)) for e in events]


def event_levels(events: Sequence[NormalEvent]) -> list[list[Hashable]]:
    """The content, signature and state keys of SSE events."""
    return [
        [(e.event, erase_numbers(e.id or ""), _content(e.data)) for e in events],
        _event_signatures(events),
        [(e.event, _state(e.data)) for e in events],
    ]


def message_levels(messages: Sequence[NormalGrpc]) -> list[list[Hashable]]:
    """The content, signature and state keys of gRPC messages."""
    return [
        [_content(m.body) for m in messages],
        [_signature(m.body) for m in messages],
        [_state(m.body) for m in messages],
    ]


# When both sides carry the same things in the same order (the common case, two runs of one
# scenario), they pair position by position, and the costly content keys are not needed.


def align_events(a: Sequence[NormalEvent], b: Sequence[NormalEvent]) -> Alignment:
    if _event_signatures(a) == _event_signatures(b):
        return _positional(len(a))
    return align_levels(event_levels(a), event_levels(b), pair_rest=True)


def align_messages(a: Sequence[NormalGrpc], b: Sequence[NormalGrpc]) -> Alignment:
    if [_signature(m.body) for m in a] == [_signature(m.body) for m in b]:
        return _positional(len(a))
    return align_levels(message_levels(a), message_levels(b), pair_rest=True)


def _positional(n: int) -> Alignment:
    return Alignment(tuple(Step(StepKind.PAIR, i, i) for i in range(n)))


def exchange_levels(exchanges: Sequence[NormalExchange]) -> list[list[Hashable]]:
    """Keys for aligning exchanges: push deliveries keyed as events are, others by operation."""
    keys = (_content, _signature, _state)
    levels: list[list[Hashable]] = [[] for _ in range(len(keys) + 1)]
    for x in exchanges:
        for level, key in zip(levels, keys, strict=False):
            level.append((x.key, key(x.request.body)) if x.key == PUSH_DELIVERY else x.key)
        levels[-1].append(x.key)
    return levels


def align_exchanges(a: Sequence[NormalExchange], b: Sequence[NormalExchange]) -> Alignment:
    """Exchanges aligned on their operations; only operations that match ever pair."""
    return align_levels(exchange_levels(a), exchange_levels(b))
