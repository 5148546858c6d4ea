"""What one A2A answer says: the kind of object it carries and the task state it reports.

An answer (a body, one stream event's data, one gRPC message, one push delivery) is named by
the first rule of `answer_of` that applies: a JSON-RPC envelope (spec §9.4), a v1.0
StreamResponse member, a v0.3 `kind`, an HTTP+JSON `{"error"}` (spec §11.6), a bare Task.
States are shown without the prefix (`INPUT_REQUIRED`), for people; matching keeps the wire's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from recorder.protocol._paths import NOT_JSON, parse_json, value_at
from recorder.protocol._sse import event_data
from recorder.protocol._states import STREAM_MEMBERS, V03_KINDS, task_state, task_state_row

_STATE_PREFIX = "TASK_STATE_"


@dataclass(frozen=True, slots=True)
class Answer:
    """`kind` is a v1.0 member name, `error`, or None; `state` is for people, `raw_state` as the
    wire wrote it; `detail` an artifact's name or an error's code."""

    kind: str | None = None
    state: str | None = None
    task_id: str | None = None
    detail: str | None = None
    raw_state: str | None = None
    context_id: str | None = None


NOTHING = Answer()


def read_answer(text: str | bytes | None) -> Answer:
    """The A2A object in a JSON text; NOTHING for text that is not JSON or not A2A."""
    document = parse_json(text)
    if document is NOT_JSON or not isinstance(document, Mapping):
        return NOTHING
    return answer_of(document)


def answer_of(document: Mapping[str, Any]) -> Answer:
    if "jsonrpc" in document:
        if isinstance(document.get("error"), Mapping):
            return _error(document["error"])
        result = document.get("result")
        return answer_of(result) if isinstance(result, Mapping) else NOTHING
    for member in STREAM_MEMBERS:
        if isinstance(document.get(member), Mapping):
            return _named(member, document[member])
    kind = document.get("kind")
    if isinstance(kind, str) and kind in V03_KINDS:
        return _named(V03_KINDS[kind], document)
    if isinstance(document.get("error"), Mapping):
        return _error(document["error"])
    if "id" in document and isinstance(document.get("status"), Mapping):
        return _named("task", document)
    return NOTHING


def state_name(state: object) -> str | None:
    """`TASK_STATE_INPUT_REQUIRED` and `input-required` -> `INPUT_REQUIRED`, known or not."""
    if not isinstance(state, str) or not state:
        return None
    row = task_state_row(state)
    if row is not None:
        return row.short
    return state.removeprefix(_STATE_PREFIX).replace("-", "_").upper()


def _named(kind: str, body: Mapping[str, Any]) -> Answer:
    task_id = body.get("id") if kind == "task" else body.get("taskId")
    raw = value_at(body, ("status", "state")) if kind in ("task", "statusUpdate") else None
    raw = raw if isinstance(raw, str) and raw else None
    context_id = body.get("contextId")
    return Answer(
        kind=kind,
        state=state_name(raw),
        task_id=task_id if isinstance(task_id, str) else None,
        context_id=context_id if isinstance(context_id, str) and context_id else None,
        detail=_detail(kind, body),
        raw_state=raw,
    )


def _detail(kind: str, body: Mapping[str, Any]) -> str | None:
    if kind == "artifactUpdate":
        name = value_at(body, ("artifact", "name"))
        return name if isinstance(name, str) else None
    return None


def _error(error: Mapping[str, Any]) -> Answer:
    code = error.get("status", error.get("code"))
    return Answer(kind="error", detail=None if code is None else str(code))


def answered_state(response: Any) -> Answer | None:
    """A capture `Response`'s first task id named and last state reported, or None."""
    if response is None:
        return None
    task_id = state = kind = context_id = None
    for text in _texts(response):
        found = read_answer(text)
        task_id = task_id or found.task_id
        context_id = context_id or found.context_id
        state = found.state or state
        kind = kind or found.kind
    if task_id is None and state is None and kind != "message":
        return None
    return Answer(kind=kind, state=state, task_id=task_id, context_id=context_id)


def _texts(response: Any) -> list[str | bytes]:
    texts: list[str | bytes] = [response.body] if response.body else []
    texts += [event_data(event.lines) for event in response.events]
    texts += [message.json for message in response.messages if message.json]
    return texts


@dataclass(frozen=True, slots=True)
class Carried:
    """A StreamResponse member name, and the v1.0 name of the task state in it (if any)."""

    kind: str
    state: str | None = None
    raw_state: str | None = None


def carried(document: Any) -> Carried | None:
    """What a JSON answer carries, read by `answer_of`; None for an error or no A2A object."""
    if not isinstance(document, Mapping):
        return None
    inner = document.get("result") if "jsonrpc" in document else document
    if (
        isinstance(inner, Mapping)
        and sum(isinstance(inner.get(m), Mapping) for m in STREAM_MEMBERS) > 1
    ):
        return None  # a oneof holding two members is none of them
    found = answer_of(document)
    if found.kind is None or found.kind == "error":
        return None
    return Carried(found.kind, task_state(found.raw_state), found.raw_state)
