"""What one A2A answer says: the kind of object it carries and the task state it reports.

An answer is a response body, one stream event's data, one gRPC message or one push delivery.
It is unwrapped in a fixed order, and the first rule that applies names it:

1. a JSON-RPC envelope: its `error` makes the answer an error, its `result` is the answer
   (spec §9.4: every streamed `data:` line is a whole envelope);
2. a v1.0 `StreamResponse` / `SendMessageResponse` member (`task`, `message`, `statusUpdate`,
   `artifactUpdate`; the member name decides, spec §3.2 and the proto's oneof `payload`);
3. a v0.3 `kind` (`task`, `message`, `status-update`, `artifact-update`);
4. an HTTP+JSON `{"error": google.rpc.Status}` (spec §11.6);
5. a bare Task (`id` and `status`): GetTask and CancelTask answers outside JSON-RPC.

The state is the object's `status.state`, written the v1.0 way without its prefix: v1.0
`TASK_STATE_INPUT_REQUIRED` and v0.3 `input-required` both read `INPUT_REQUIRED`.  These names
are for people (the report, `show`, the recorder's console); matching and diffing keep the
wire's spelling.

`answered_state` reads a whole response (a body, every SSE event, every gRPC message): the
task and context it names first and the last state it reports, as a stream leaves it.
`carried` says what one answer carries in the names of `_states`' table (v1.0 member names
and state names).
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
    """`kind` is a v1.0 member name, `error`, or None for JSON that is no A2A object.

    `state` is the task state the object reports, as a person reads it (`COMPLETED`);
    `raw_state` is the state as the wire wrote it (`TASK_STATE_COMPLETED`, `completed`).
    `task_id` and `context_id` are the task and context it names, and `detail` a few words on
    what it holds (an artifact's name, an error's code).
    """

    kind: str | None = None
    state: str | None = None
    task_id: str | None = None
    detail: str | None = None
    raw_state: str | None = None
    context_id: str | None = None


NOTHING = Answer()


def read_answer(text: str | bytes | None) -> Answer:
    """Name the A2A object in a JSON text; NOTHING for text that is not JSON or not A2A."""
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
    """`TASK_STATE_INPUT_REQUIRED` and `input-required` -> `INPUT_REQUIRED` (the table's
    short name; a state the table does not know is shown the same way)."""
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
    """What a whole response says of its task (a capture `Response`: body, events, messages):
    the first task id named and the last state reported; None when it names neither."""
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
    """What one answer carries: a StreamResponse member name, and the task state in it.

    `state` is the v1.0 name of a Task's or a status update's state (None for a Message, an
    artifact update, or a state that is no TaskState); `raw_state` is the state as written.
    """

    kind: str
    state: str | None = None
    raw_state: str | None = None


def carried(document: Any) -> Carried | None:
    """What a JSON answer carries, or None when it is none of the four (an error, say).

    Accepts a JSON-RPC envelope (its `result`), a v1.0 wrapper (`{"statusUpdate": {...}}`),
    a v0.3 object with `kind`, or a bare Task (GetTask, CancelTask); it reads them with
    `answer_of`, the one reader of answers.
    """
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
