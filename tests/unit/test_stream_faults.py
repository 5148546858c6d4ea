"""What the fault profiles rest on, as properties: other framings carry the same events, and a
subscription's snapshot plus the rest of a stream leave the task the whole stream leaves.

Random seeds (hypothesis' default); the corpus streams are every SDK's, on every binding.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recorder.capture import read_capture
from recorder.protocol import (
    FRAMINGS,
    SseFramer,
    event_data,
    fold_task,
    parse_json,
    reframe,
    render_events,
    stream_payload,
    with_task,
)

CAPTURES = Path(__file__).resolve().parents[2] / "captures"
STREAMS = sorted(CAPTURES.glob("*/**/05-streaming.http")) + sorted(
    CAPTURES.glob("*/05-streaming.http")
)

json_text = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def streams(draw: st.DrawFn) -> tuple[list[Any], list[bytes]]:
    """Events as documents, and as the wire bytes of one block each, in a random framing."""
    documents = draw(
        st.lists(
            st.dictionaries(st.text(max_size=6), json_text, max_size=4), min_size=1, max_size=5
        )
    )
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    spaced = draw(st.booleans())
    events = []
    for n, document in enumerate(documents):
        text = json.dumps(
            document,
            ensure_ascii=draw(st.booleans()),
            separators=(", ", ": ") if spaced else (",", ":"),
        )
        lines = [f"data: {text}"]
        if draw(st.booleans()):
            lines.insert(0, f"id: {n}")
        if draw(st.booleans()):
            lines.append(": keep-alive")
        events.append(render_events([lines], newline))
    return documents, events


def read_stream(data: bytes, cuts: list[int]) -> list[Any]:
    """The events' data, as a reader gets them from `data` arriving in pieces."""
    framer = SseFramer()
    blocks = []
    for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True):
        blocks.extend(framer.feed(data[a:b]))
    return [json.loads(event_data(block)) for block in blocks if event_data(block)]


@given(
    streams(),
    st.lists(st.sampled_from(sorted(FRAMINGS)), max_size=4),
    st.lists(st.integers(0, 4000), max_size=8),
)
def test_every_framing_carries_the_same_events(
    stream: tuple[list[Any], list[bytes]], variants: list[str], cuts: list[int]
) -> None:
    documents, events = stream
    writes = reframe(events, variants)
    assert len(writes) == len(events)
    data = b"".join(b"".join(pieces) for pieces in writes)
    assert read_stream(data, sorted(c for c in cuts if c < len(data))) == documents
    if "split" in variants:
        assert all(len(pieces) >= 2 for pieces in writes if len(b"".join(pieces)) > 4)


# -- the task a stream leaves -----------------------------------------------------------------


def corpus_events(path: Path) -> list[list[Any]]:
    found = []
    for exchange in read_capture(path).exchanges:
        response = exchange.response
        if response is None or exchange.classification.operation != "SendStreamingMessage":
            continue
        texts = [event_data(e.lines) for e in response.events] + [
            m.json for m in response.messages if m.json is not None
        ]
        if len(texts) == len(response.events) + len(response.messages):
            found.append([parse_json(t) for t in texts])
    return found


def resumed(events: list[Any], cut: int) -> list[Any]:
    """What a subscription after a cut at `cut` sends: the snapshot, then the rest."""
    return [with_task(events[0], fold_task(events[:cut]) or {}), *events[cut:]]


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: str(p.relative_to(CAPTURES)))
def test_a_snapshot_and_the_rest_leave_the_task_the_whole_stream_leaves(path: Path) -> None:
    streams_found = corpus_events(path)
    if not streams_found:
        pytest.skip("its stream holds messages recorded undecoded (raw bytes)")
    for events in streams_found:
        final = fold_task(events)
        assert final is not None and "COMPLETED" in json.dumps(final["status"]).upper()
        assert len(final.get("artifacts", [])) == 3
        for cut in range(1, len(events) + 1):
            again = resumed(events, cut)
            assert stream_payload(again[0])[0] == "task"  # type: ignore[index]
            assert fold_task(again) == final


TASK = {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_SUBMITTED"}, "history": []}
status_updates = st.builds(
    lambda state, message: {
        "statusUpdate": {
            "taskId": "t",
            "status": {"state": state, **({"message": {"messageId": message}} if message else {})},
            "metadata": {"k": state},
        }
    },
    st.sampled_from(["TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_COMPLETED"]),
    st.none() | st.text(min_size=1, max_size=4),
)
artifact_updates = st.builds(
    lambda artifact, part, append: {
        "artifactUpdate": {
            "taskId": "t",
            "append": append,
            "artifact": {"artifactId": artifact, "parts": [{"text": part}]},
        }
    },
    st.sampled_from(["a", "b", "c"]),
    st.text(max_size=4),
    st.booleans(),
)


@given(st.lists(status_updates | artifact_updates, max_size=12), st.data())
def test_any_cut_of_any_task_stream_resumes_to_the_same_task(
    updates: list[Any], data: st.DataObject
) -> None:
    events = [{"task": TASK}, *updates]
    cut = data.draw(st.integers(1, len(events)))
    envelope = data.draw(st.booleans())
    wire = [{"jsonrpc": "2.0", "id": 1, "result": e} for e in events] if envelope else events
    assert fold_task(resumed(wire, cut)) == fold_task(wire)


def test_folding_follows_the_agents_store() -> None:
    events = [
        {"task": TASK},
        {"statusUpdate": {"status": {"state": "W", "message": {"messageId": "m1"}}}},
        {"artifactUpdate": {"artifact": {"artifactId": "a", "parts": [{"text": "1"}]}}},
        {
            "artifactUpdate": {
                "append": True,
                "artifact": {"artifactId": "a", "parts": [{"text": "2"}]},
            }
        },
        {"statusUpdate": {"status": {"state": "D"}, "metadata": {"x": 1}}},
        {"artifactUpdate": {"artifact": {"artifactId": "a", "parts": [{"text": "3"}]}}},
        {"message": {"messageId": "ignored"}},
    ]
    task = fold_task(events)
    assert task == {
        **TASK,
        "status": {"state": "D"},
        "history": [{"messageId": "m1"}],
        "metadata": {"x": 1},
        "artifacts": [{"artifactId": "a", "parts": [{"text": "3"}]}],
    }
    assert fold_task(events[:4])["artifacts"][0]["parts"] == [{"text": "1"}, {"text": "2"}]  # type: ignore[index]
    v03 = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"kind": "task", "id": "t", "status": {"state": "submitted"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"kind": "status-update", "status": {"state": "working"}, "final": False},
        },
    ]
    assert fold_task(v03) == {"kind": "task", "id": "t", "status": {"state": "working"}}
    assert with_task(v03[0], {"kind": "task", "id": "t"})["result"] == {"kind": "task", "id": "t"}
    assert fold_task([{"message": {"messageId": "m"}}]) is None
