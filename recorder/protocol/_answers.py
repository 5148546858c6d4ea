"""What an answer says of its task: the task it names and the state it leaves it in (pure).

An A2A answer carries a Task, a Message or a stream of StreamResponses (A2A spec §3.1, §4.1).
`answered_state` reads them in every shape the wire uses: v1.0 wrappers (`{"task": ...}`,
`{"statusUpdate": ...}`, the oneof members of `SendMessageResponse` and `StreamResponse`), a
bare Task (GetTask, CancelTask), v0.3 objects with a `kind`, inside a JSON-RPC `result` or not,
as a body, as SSE events or as gRPC messages.  For a stream the last state wins.  A Message
answer is reported as the kind `message`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from recorder.protocol._paths import NOT_JSON, parse_json
from recorder.protocol._sse import event_data

MESSAGE_KIND = "message"
# v0.3 `kind` values and the v1.0 member names they correspond to.
_V03_KINDS: Mapping[str, str] = {"task": "task", "message": "message",
                                 "status-update": "statusUpdate",
                                 "artifact-update": "artifactUpdate"}


def answered_state(response: Any) -> tuple[str | None, str | None] | None:
    """(task id, last task state or `message`) an answer carries, or None if it names none.

    `response` is a capture `Response` (anything with `body`, `events`, `messages`).
    """
    if response is None:
        return None
    task_id: str | None = None
    state: str | None = None
    for document in _documents(response):
        found = _read(document)
        if found is None:
            continue
        task_id = task_id or found[0]
        state = found[1] or state
    return (task_id, state) if task_id or state else None


def _documents(response: Any) -> Iterator[Any]:
    if response.body:
        yield parse_json(response.body)
    for event in response.events:
        yield parse_json(event_data(event.lines))
    for message in response.messages:
        if message.json:
            yield parse_json(message.json)


def _read(document: Any) -> tuple[str | None, str | None] | None:
    if document is NOT_JSON or not isinstance(document, dict):
        return None
    if "jsonrpc" in document:
        document = document.get("result")
        if not isinstance(document, dict):
            return None
    member, value = _member(document)
    if member == "message":
        return _str(value.get("taskId")), MESSAGE_KIND
    if member == "task":
        return _str(value.get("id")), _state(value)
    if member == "statusUpdate":
        return _str(value.get("taskId")), _state(value)
    if member == "artifactUpdate":
        return _str(value.get("taskId")), None
    return None


def _member(document: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """Which StreamResponse member a document is, and its object."""
    kind = document.get("kind")
    if isinstance(kind, str) and kind in _V03_KINDS:  # v0.3: the object itself, with `kind`
        return _V03_KINDS[kind], document
    for member in ("task", "message", "statusUpdate", "artifactUpdate"):
        value = document.get(member)
        if isinstance(value, dict):
            return member, value
    if isinstance(document.get("status"), dict) and "id" in document:
        return "task", document  # a bare Task: GetTask, CancelTask
    return None, document


def _state(holder: dict[str, Any]) -> str | None:
    status = holder.get("status")
    return _str(status.get("state")) if isinstance(status, dict) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
