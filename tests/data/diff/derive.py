"""How the golden diff inputs here were made (kept for the record; the tests do not run it).

Every case compares a capture of the corpus (`captures/a2a-python-1.3.0/`, side A) with a
second, fresh recording of the same scenario by `scripts/record-corpus` (side B: other ids,
timestamps and ports), in which one thing was edited:

    stream-inserted-event  05-streaming: a WORKING status update saying "checking sources"
                           inserted after the first one
    stream-removed-event   05-streaming: the chunk-2 artifact update removed
    stream-changed-event   05-streaming: chunk-2's text "chunk 2" -> "chunk two"
    stream-edits           05-streaming: all three of the above in one stream
    long-text              03-blocking-task: a 550-character message, echoed; B's echo has
                           "checking sources, " inserted in its third paragraph
    key-order              03-blocking-task: B's response envelope and task with their keys in
                           another order (as @a2a-js/sdk orders them), nothing else

Run: .venv/bin/python tests/data/diff/derive.py FRESH_DIR
where FRESH_DIR holds a2a-python-1.3.0/{03-blocking-task,05-streaming}.http from
`scripts/record-corpus --sdk a2a-python-1.3.0 --binding JSONRPC --scenario ... --out FRESH_DIR`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from recorder.capture import Capture, Exchange, SseEvent, read_capture, write_capture

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parents[2] / "captures" / "a2a-python-1.3.0"
SPACED = (", ", ": ")  # the py SDK's SSE data form
LONG = " ".join(
    f"Paragraph {n}: the agent reads the request, plans its steps, calls its tools, and writes"
    " down what each of them returned before it answers."
    for n in range(1, 5)
)


def _event_json(event: SseEvent) -> dict[str, Any]:
    return dict(json.loads(event.lines[0].removeprefix("data: ")))


def _event(offset: int, document: dict[str, Any]) -> SseEvent:
    return SseEvent(offset, ("data: " + json.dumps(document, separators=SPACED),))


def _edit_stream(capture: Capture, edit: Callable[[list[SseEvent]], None]) -> Capture:
    def change(x: Exchange) -> Exchange:
        if x.classification.operation != "SendStreamingMessage" or x.response is None:
            return x
        events = list(x.response.events)
        edit(events)
        return replace(x, response=replace(x.response, events=tuple(events)))

    return replace(capture, exchanges=tuple(change(x) for x in capture.exchanges))


def _insert(events: list[SseEvent]) -> None:
    at = next(i for i, e in enumerate(events) if "statusUpdate" in e.lines[0])
    document = _event_json(events[at])
    status = document["result"]["statusUpdate"]["status"]
    status["message"] = {
        "messageId": "a6f1c0de-5b1e-4c5e-9d7a-0c0ffee00001",
        "role": "ROLE_AGENT",
        "parts": [{"text": "checking sources"}],
    }
    events.insert(at + 1, _event(events[at].offset_us + 900, document))


def _chunk(events: list[SseEvent], name: str) -> int:
    return next(i for i, e in enumerate(events) if f'"name": "{name}"' in e.lines[0])


def _remove(events: list[SseEvent]) -> None:
    del events[_chunk(events, "chunk-2")]


def _change(events: list[SseEvent]) -> None:
    at = _chunk(events, "chunk-2")
    document = _event_json(events[at])
    document["result"]["artifactUpdate"]["artifact"]["parts"][0]["text"] = "chunk two"
    events[at] = _event(events[at].offset_us, document)


def _all(events: list[SseEvent]) -> None:
    _change(events)
    _insert(events)
    del events[_chunk(events, "chunk-3")]


def _edit_send(capture: Capture, edit: Callable[[Exchange], Exchange]) -> Capture:
    return replace(
        capture,
        exchanges=tuple(
            edit(x) if x.classification.operation == "SendMessage" else x for x in capture.exchanges
        ),
    )


def _with_text(x: Exchange, asked: str, echoed: str) -> Exchange:
    assert x.response is not None
    request, response = json.loads(x.request.body), json.loads(x.response.body)
    request["params"]["message"]["parts"][0]["text"] = asked
    task = response["result"]["task"]
    task["artifacts"][0]["parts"][0]["text"] = echoed
    task["history"][0]["parts"][0]["text"] = asked
    compact = (",", ":")
    return replace(
        x,
        request=replace(x.request, body=json.dumps(request, separators=compact).encode()),
        response=replace(x.response, body=json.dumps(response, separators=compact).encode()),
    )


def _long(capture: Capture, inserted: bool) -> Capture:
    at = LONG.index("calls its tools, ", len(LONG) // 2) + len("calls its tools, ")
    echoed = LONG[:at] + "checking sources, " + LONG[at:] if inserted else LONG
    return _edit_send(capture, lambda x: _with_text(x, LONG, echoed))


def _reordered(x: Exchange) -> Exchange:
    assert x.response is not None
    envelope = json.loads(x.response.body)
    task = envelope["result"]["task"]
    envelope["result"]["task"] = dict(reversed(list(task.items())))
    flipped = {"jsonrpc": envelope["jsonrpc"], "id": envelope["id"], "result": envelope["result"]}
    return replace(
        x, response=replace(x.response, body=json.dumps(flipped, separators=(",", ":")).encode())
    )


def main(fresh: Path) -> None:
    stream_a = CORPUS / "05-streaming.http"
    stream_b = read_capture(fresh / "a2a-python-1.3.0" / "05-streaming.http")
    send_a = CORPUS / "03-blocking-task.http"
    send_b = read_capture(fresh / "a2a-python-1.3.0" / "03-blocking-task.http")
    cases: dict[str, tuple[Capture, Capture]] = {
        "stream-inserted-event": (read_capture(stream_a), _edit_stream(stream_b, _insert)),
        "stream-removed-event": (read_capture(stream_a), _edit_stream(stream_b, _remove)),
        "stream-changed-event": (read_capture(stream_a), _edit_stream(stream_b, _change)),
        "stream-edits": (read_capture(stream_a), _edit_stream(stream_b, _all)),
        "long-text": (_long(read_capture(send_a), False), _long(send_b, True)),
        "key-order": (read_capture(send_a), _edit_send(send_b, _reordered)),
    }
    for name, (a, b) in cases.items():
        write_capture(HERE / f"{name}.a.http", a)
        write_capture(HERE / f"{name}.b.http", b)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
