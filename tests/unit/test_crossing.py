"""The one translator between A2A v0.3 and v1.0 (recorder.protocol._cross*), checked against
a2a-sdk 1.3.0's own v0.3 compatibility layer and parsers, and against the corpus.

- Random v1.0 tasks written as v0.3 JSON-RPC are what a2a-sdk's `to_compat_task` makes of
  them, parse as a2a-sdk's v0.3 pydantic models, and read back to the task less exactly the
  values listed as lost (and proto3's empty defaults, which say nothing); written as v0.3
  proto-JSON they parse strictly as `a2a.v1.Task`.
- Every JSON document of the a2a-sdk 1.3.0 and 0.3.26 corpora goes to the other version and
  back unchanged, less what it lists as lost (and proto3's empty defaults; an HTTP
  error body is `rest_error`'s).
- Cards, errors, names and headers, each a table row.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2 as v03_pb2
from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as v03_types
from a2a.types import a2a_pb2 as v10
from google.protobuf import json_format
from google.protobuf.timestamp_pb2 import Timestamp
from hypothesis import given, settings
from hypothesis import strategies as st

from recorder.capture import read_capture
from recorder.protocol import TASK_STATES, Version, event_data, parse_json
from recorder.protocol._grpc import a2a_pool
from recorder.versions._served import served_card
from recorder.versions._tables import TASK, Dialect, Lost, dialect_of
from recorder.versions._walk import read, write
from recorder.versions._wire import (
    body,
    grpc_error,
    headers,
    rest_error,
    stream,
    target,
    wire_name,
)

ROOT = Path(__file__).resolve().parents[2]
V03, PROTO, V1 = Dialect.V03, Dialect.V03_PROTO, Dialect.V1

# ---- random v1.0 documents ---------------------------------------------------------------------

_ids = st.uuids().map(str)
_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_timestamps = st.datetimes(datetime(1971, 1, 1), datetime(2100, 1, 1)).map(
    lambda t: _timestamp(t.replace(microsecond=t.microsecond // 1000 * 1000))
)


def _timestamp(when: datetime) -> str:
    """As protobuf writes a Timestamp (a2a-sdk's converters write it again so)."""
    stamp = Timestamp()
    stamp.FromDatetime(when)
    return stamp.ToJsonString()


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-9, 9).map(float), _text)
_data = st.dictionaries(_text, _scalars, max_size=3)


def _with(required: dict[str, Any], optional: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {k: st.just(v) if not isinstance(v, st.SearchStrategy) else v for k, v in required.items()},
        optional=optional,
    )


_media = st.sampled_from(["text/plain", "image/png", "application/json"])
_parts = st.one_of(
    _with({"text": _text}, {"mediaType": _media, "metadata": _data}),
    _with({"url": _text.map(lambda t: "https://x/" + t)}, {"mediaType": _media, "filename": _text}),
    _with({"raw": st.binary(max_size=6).map(lambda b: base64.b64encode(b).decode())},
          {"mediaType": _media, "filename": _text}),
    _with({"data": st.one_of(_data, st.lists(_scalars, max_size=2), _text)},
          {"mediaType": _media, "metadata": _data}),
)  # fmt: skip
_messages = _with(
    {
        "messageId": _ids,
        "role": st.sampled_from(["ROLE_USER", "ROLE_AGENT"]),
        "parts": st.lists(_parts, min_size=1, max_size=3),
    },
    {"contextId": _ids, "taskId": _ids, "referenceTaskIds": st.lists(_ids, min_size=1, max_size=2)},
)
_states = st.sampled_from([r.name for r in TASK_STATES if r.name != "TASK_STATE_UNSPECIFIED"])
_statuses = _with({"state": _states}, {"timestamp": _timestamps})
_tasks = _with(
    {"id": _ids, "contextId": _ids, "status": _statuses},
    {
        "history": st.lists(_messages, min_size=1, max_size=2),
        "artifacts": st.lists(
            _with({"artifactId": _ids, "parts": st.lists(_parts, min_size=1, max_size=2)},
                  {"name": _text}),
            min_size=1, max_size=2,
        ),
        "metadata": _data,
    },
)  # fmt: skip


def _without(document: Any, lost: tuple[Lost, ...]) -> Any:
    """`document` less the values at the listed paths (`$.a.b[0].c`)."""
    out = json.loads(json.dumps(document))
    for item in lost:
        *steps, last = _steps(item.path)
        holder = out
        for step in steps:
            holder = holder[step]
        del holder[last]
    return out


def _steps(path: str) -> list[str | int]:
    found: list[str | int] = []
    for piece in path.removeprefix("$").replace("[", ".[").split("."):
        if piece:
            found.append(int(piece[1:-1]) if piece.startswith("[") else piece)
    return found


def _sans_defaults(document: Any) -> Any:
    """Less proto3's empty defaults, which a2a-sdk's converters leave out and the translator
    keeps as the wire said them."""
    if isinstance(document, dict):
        kept = {k: _sans_defaults(v) for k, v in document.items()}
        return {k: v for k, v in kept.items() if v not in ("", [], {})}
    if isinstance(document, list):
        return [_sans_defaults(v) for v in document]
    return document


def _implied(document: Any) -> Any:
    """A text part's `mediaType: text/plain` is what it says without it (not a loss)."""
    if isinstance(document, dict):
        drop = "text" in document and document.get("mediaType") == "text/plain"
        return {k: _implied(v) for k, v in document.items() if not (drop and k == "mediaType")}
    if isinstance(document, list):
        return [_implied(v) for v in document]
    return document


@settings(max_examples=200, deadline=None)
@given(_tasks)
def test_a_task_written_as_v03_is_a2a_sdks_own_compat_task(task: dict[str, Any]) -> None:
    written = write(task, TASK, V03)
    core = json_format.ParseDict(task, v10.Task())
    sdk = conversions.to_compat_task(core).model_dump(mode="json", by_alias=True, exclude_none=True)
    assert _sans_defaults(written.value) == _sans_defaults(sdk)
    v03_types.Task.model_validate(written.value)  # a v0.3 client's parser takes it


@settings(max_examples=200, deadline=None)
@given(_tasks, st.sampled_from([V03, PROTO]))
def test_a_task_goes_to_v03_and_back_less_exactly_what_it_lists_as_lost(
    task: dict[str, Any], dialect: Dialect
) -> None:
    there = body(task, "GetTask", "response", V1, dialect)
    back = body(there.value, "GetTask", "response", dialect, V1)
    assert back.lost == ()
    # proto3's empty defaults (`metadata: {}`) say nothing: a2a-sdk's own converters drop them
    assert _sans_defaults(back.value) == _sans_defaults(_implied(_without(task, there.lost)))
    if dialect is PROTO:  # a v0.3 protobuf parser takes it, refusing unknown members
        json_format.ParseDict(there.value, v03_pb2.Task())
    for lost in there.lost:
        assert lost.path.startswith("$") and lost.why


@settings(max_examples=100, deadline=None)
@given(st.lists(_tasks, min_size=1, max_size=3))
def test_a_stream_ends_final_in_v03_and_loses_nothing_coming_back(tasks: list[Any]) -> None:
    events: list[Any] = [{"task": tasks[0]}]
    events += [{"statusUpdate": {"taskId": t["id"], "contextId": t["contextId"],
                                 "status": t["status"]}} for t in tasks]  # fmt: skip
    there, _, _ = stream(events, "SendStreamingMessage", V1, V03)
    assert [e.get("kind") for e in there] == ["task", *["status-update"] * len(tasks)]
    assert there[-1]["final"] is True
    finals = [e["final"] for e in there[1:-1]]
    assert finals == [
        next(r.terminal for r in TASK_STATES if r.name == t["status"]["state"]) for t in tasks[:-1]
    ]
    back, _, lost = stream(there, "SendStreamingMessage", V03, V1)
    assert lost == ()
    # a data part's empty `metadata: {}` says nothing, and a wrapped one comes back without it
    want = [_implied(_without(e, write(e, "StreamResponse", V03).lost)) for e in events]
    assert _sans_defaults(back) == _sans_defaults(want)


# ---- the corpus, both ways ----------------------------------------------------------------------


def _documents(folder: str) -> Iterator[tuple[str, str, str, Any]]:
    """(where, operation, side, document) for every JSON document of a corpus folder."""
    for path in sorted((ROOT / "captures" / folder).rglob("*.http")):
        for exchange in read_capture(path).exchanges:
            c = exchange.classification
            if c.operation is None or exchange.response is None:
                continue
            where = f"{path.relative_to(ROOT)}#{exchange.number}"
            texts = [("request", exchange.request.body)]
            texts += [("request", m.json) for m in exchange.request.messages if m.json]
            if exchange.response.status < 400:  # an HTTP error is rest_error's (below)
                texts += [("response", exchange.response.body)]
            texts += [("response", event_data(e.lines)) for e in exchange.response.events]
            texts += [("response", m.json) for m in exchange.response.messages if m.json]
            for side, text in texts:
                document = parse_json(text) if text else None
                if isinstance(document, dict | list):
                    yield where, c.operation, side, (c.binding, document)


@pytest.mark.parametrize(
    ("folder", "version"),
    [("a2a-python-1.3.0", Version.V1_0), ("a2a-python-0.3.26", Version.V0_3)],
)
def test_every_corpus_document_goes_to_the_other_version_and_back(
    folder: str, version: Version
) -> None:
    other = Version.V0_3 if version is Version.V1_0 else Version.V1_0
    failures, seen = [], 0
    for where, name, side, (binding, document) in _documents(folder):
        here, there = dialect_of(version, binding), dialect_of(other, binding)
        out = body(document, name, side, here, there)
        back = body(out.value, name, side, there, here)
        seen += 1
        want = _implied(_without(document, out.lost))
        if _sans_defaults(back.value) != _sans_defaults(want) and not _benign(document):
            failures.append(f"{where} {side}: {json.dumps(document)[:200]}")
    assert seen > 100
    assert failures == []


def _benign(document: Any) -> bool:
    """Documents the round trip may legitimately restate: a card (the dual card is built
    from it) and a JSON-RPC error (its shape is the version's: `_crosswire`'s errors)."""
    if isinstance(document, dict) and isinstance(document.get("result"), dict):
        document = document["result"]
    return isinstance(document, dict) and ("skills" in document or "error" in document)


# ---- cards -------------------------------------------------------------------------------------

V1_CARD = {
    "name": "a",
    "description": "d",
    "version": "1",
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "capabilities": {"streaming": True, "extendedAgentCard": True},
    "skills": [],
    "supportedInterfaces": [
        {"url": "http://h/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "http://h/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0",
         "tenant": "t"},
    ],
    "securitySchemes": {"k": {"apiKeySecurityScheme": {"name": "X-Key", "location": "header"}}},
    "securityRequirements": [{"schemes": {"k": {"list": ["read"]}}}],
}  # fmt: skip


def test_the_v03_card_names_every_interface_and_what_it_cannot_carry() -> None:
    made = served_card(V1_CARD, {Version.V0_3})
    card = made.value
    assert card["url"] == "http://h/rpc" and card["preferredTransport"] == "JSONRPC"
    assert card["additionalInterfaces"] == [
        {"url": "http://h/rpc", "transport": "JSONRPC"},
        {"url": "http://h/rest", "transport": "HTTP+JSON"},
    ]
    assert card["protocolVersion"] == "0.3.0" and "supportedInterfaces" not in card
    assert card["supportsAuthenticatedExtendedCard"] is True
    assert "extendedAgentCard" not in card["capabilities"]
    assert card["securitySchemes"] == {"k": {"type": "apiKey", "name": "X-Key", "in": "header"}}
    assert card["security"] == [{"k": ["read"]}]
    assert [lost.value for lost in made.lost] == ['"t"']
    v03_types.AgentCard.model_validate(card)


def test_the_dual_card_lists_each_interface_in_both_versions_and_the_v03_fields() -> None:
    card = served_card(V1_CARD, {Version.V1_0, Version.V0_3}).value
    said = [(i["protocolBinding"], i["protocolVersion"]) for i in card["supportedInterfaces"]]
    assert said == [
        ("JSONRPC", "1.0"),
        ("HTTP+JSON", "1.0"),
        ("JSONRPC", "0.3"),
        ("HTTP+JSON", "0.3"),
    ]
    assert card["url"] == "http://h/rpc" and card["protocolVersion"] == "0.3"
    assert card["capabilities"]["extendedAgentCard"] is True
    assert card["supportsAuthenticatedExtendedCard"] is True
    v03_types.AgentCard.model_validate(card)  # a v0.3 client reads it
    json_format.ParseDict(card, v10.AgentCard(), ignore_unknown_fields=True)


def test_a_v03_card_served_as_v1_says_version_1_0_on_every_interface() -> None:
    legacy = served_card(V1_CARD, {Version.V0_3}).value
    card = served_card(legacy, {Version.V1_0}).value
    assert {i["protocolVersion"] for i in card["supportedInterfaces"]} == {"1.0"}
    assert not {"url", "preferredTransport", "additionalInterfaces"} & set(card)
    assert card["capabilities"]["extendedAgentCard"] is True
    json_format.ParseDict(card, v10.AgentCard())


# ---- errors ------------------------------------------------------------------------------------


def test_a_v1_rest_error_becomes_a2a_sdk_03s_message_and_status() -> None:
    info = {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "TASK_NOT_CANCELABLE",
        "domain": "a2a-protocol.org",
    }
    v1 = {
        "error": {"code": 400, "status": "FAILED_PRECONDITION", "message": "no", "details": [info]}
    }
    found = rest_error(400, v1, Version.V1_0, Version.V0_3)
    assert (found.status, found.document) == (409, {"message": "no"})
    assert {lost.path for lost in found.lost} == {"body.error.status", "body.error.details"}


@pytest.mark.parametrize(
    ("status", "message", "reason", "new"),
    [
        (404, "Task not found", "TASK_NOT_FOUND", 404),
        (409, "Task cannot be canceled - current state: completed", "TASK_NOT_CANCELABLE", 400),
        (501, "This operation is not supported", "UNSUPPORTED_OPERATION", 400),
    ],
)
def test_a_v03_rest_error_gets_the_v1_status_and_error_info(
    status: int, message: str, reason: str, new: int
) -> None:
    found = rest_error(status, {"message": message}, Version.V0_3, Version.V1_0)
    assert found.status == new
    error = found.document["error"]
    assert error["message"] == message and error["details"][0]["reason"] == reason
    assert "written from the error table" in found.renames[0].describe()


def test_grpc_errors_take_each_versions_status_code() -> None:
    to_v1 = grpc_error(12, "TaskNotCancelableError: no", None, Version.V0_3, Version.V1_0)
    assert to_v1.status == 9  # FAILED_PRECONDITION
    assert to_v1.details["details"][0]["reason"] == "TASK_NOT_CANCELABLE"
    back = grpc_error(9, "no", to_v1.details, Version.V1_0, Version.V0_3)
    assert back.status == 12  # a2a-sdk 0.3's UNIMPLEMENTED
    assert grpc_error(0, "", None, Version.V1_0, Version.V0_3).status == 0


# ---- names and headers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "verb", "v1", "v03", "binding"),
    [
        ("SendMessage", "POST", "/a/message:send", "/a/v1/message:send", "HTTP+JSON"),
        ("CancelTask", "POST", "/r/tasks/t-1:cancel", "/r/v1/tasks/t-1:cancel", "HTTP+JSON"),
        ("GetTask", "GET", "/tasks/t-1?historyLength=2", "/v1/tasks/t-1?historyLength=2",
         "HTTP+JSON"),
        ("SubscribeToTask", "POST", "/lf.a2a.v1.A2AService/SubscribeToTask",
         "/a2a.v1.A2AService/TaskSubscription", "GRPC"),
        ("SendMessage", "POST", "/rpc", "/rpc", "JSONRPC"),
    ],
)  # fmt: skip
def test_targets_go_both_ways(name: str, verb: str, v1: str, v03: str, binding: str) -> None:
    assert target(name, verb, v1, binding, Version.V1_0, Version.V0_3).target == v03
    assert target(name, verb, v03, binding, Version.V0_3, Version.V1_0).target == v1


def test_wire_names_are_the_operation_tables() -> None:
    assert wire_name("SendMessage", "JSONRPC", "POST", Version.V0_3) == "message/send"
    assert wire_name("GetTask", "HTTP+JSON", "GET", Version.V0_3) == "GET /v1/tasks/{task_id}"
    assert wire_name("ListTasks", "GRPC", "POST", Version.V0_3) is None


def test_a_v1_request_says_its_version_and_a_v03_one_does_not() -> None:
    sent = (("X-A2A-Extensions", "u"), ("Accept", "*/*"))
    found, _ = headers(sent, "request", Version.V0_3, Version.V1_0)
    assert found == (("a2a-extensions", "u"), ("Accept", "*/*"), ("A2A-Version", "1.0"))
    back, _ = headers(found, "request", Version.V1_0, Version.V0_3)
    assert back == (("x-a2a-extensions", "u"), ("Accept", "*/*"))


# ---- the tables are the descriptors' -------------------------------------------------------------


def test_the_v03_proto_names_are_the_shipped_descriptors() -> None:
    pool = a2a_pool()
    message = pool.FindMessageTypeByName("a2a.v1.Message")
    assert "content" in message.fields_by_camelcase_name
    config = pool.FindMessageTypeByName("a2a.v1.SendMessageConfiguration")
    assert {"pushNotification", "blocking"} <= set(config.fields_by_camelcase_name)
    file = pool.FindMessageTypeByName("a2a.v1.FilePart")
    assert {"fileWithUri", "fileWithBytes", "mimeType", "name"} <= set(
        file.fields_by_camelcase_name
    )
    states = pool.FindEnumTypeByName("a2a.v1.TaskState").values_by_name
    assert "TASK_STATE_CANCELLED" in states and "TASK_STATE_CANCELED" not in states


def test_pruning_lists_what_the_v03_proto_does_not_have() -> None:
    message = {"messageId": "m", "role": "ROLE_USER", "referenceTaskIds": ["t"], "parts": []}
    found = body({"message": message}, "SendMessage", "request", V1, PROTO)
    assert found.value["message"] == {"messageId": "m", "role": "ROLE_USER", "content": []}
    assert [lost.path for lost in found.lost] == ["$.message.referenceTaskIds"]


def test_reading_a_v1_document_as_v1_changes_nothing() -> None:
    task = {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}
    assert read(task, TASK, V1).value is task
    assert write(task, TASK, V1).renames == ()
