"""Where requests hold ids, and what each id is: the position table against real captures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _agent_model import Client, Recording

import recorder.replay as replay
import recorder.script as scripts
from recorder.capture import GrpcMessage, Request, read_capture
from recorder.protocol import ID_FIELDS, IdRole, classify
from recorder.script import find_slots, positions_of, request_value

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted((ROOT / "captures").rglob("*.http")) + sorted(
    (ROOT / "tests" / "data").rglob("*.http")
)
ID_KEYS = set(ID_FIELDS) | {"id", "name", "parent", "url", "token", "credentials", "pageToken"}


def _id_strings(value: object, where: tuple[str | int, ...] = ()) -> set[tuple[str | int, ...]]:
    """Locations of strings under id-like keys (the JSON-RPC envelope's `id` aside)."""
    found: set[tuple[str | int, ...]] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ID_KEYS and isinstance(v, str) and v:
                found.add((*where, k))
            found |= _id_strings(v, (*where, k))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found |= _id_strings(item, (*where, i))
    return found


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_id_in_every_recorded_request_is_at_a_table_position(path: Path) -> None:
    for exchange in read_capture(path).exchanges:
        c = exchange.classification
        if c.operation is None or c.operation in ("AgentCard", "PushDelivery"):
            continue
        value = request_value(exchange.request, c)
        located = {s.location for s in find_slots(value, positions_of(c))}
        body = {("body", *w) for w in _id_strings(value.get("body"))}
        query = {
            ("query", *w[:-1]) if isinstance(w[-1], int) else ("query", *w)
            for w in _id_strings(value.get("query"))
        }
        missing = (body | query) - located
        assert not missing, (exchange.number, c.operation, c.version, sorted(missing))


def v03_grpc(path: str, message: object) -> Request:
    return Request(
        "POST",
        f"/a2a.v1.A2AService/{path}",
        (("content-type", "application/grpc"),),
        messages=(GrpcMessage(0, json=json.dumps(message)),),
    )


@pytest.mark.parametrize(
    ("request_", "want"),
    [
        (v03_grpc("GetTask", {"name": "tasks/t-1"}), [("t-1", IdRole.REFERENCE)]),
        (
            v03_grpc(
                "CreateTaskPushNotificationConfig",
                {
                    "parent": "tasks/t-1",
                    "configId": "c-1",
                    "config": {
                        "name": "tasks/t-1/pushNotificationConfigs/c-1",
                        "pushNotificationConfig": {"id": "c-1", "url": "http://h/w", "token": "k"},
                    },
                },
            ),
            [
                ("t-1", IdRole.REFERENCE),
                ("c-1", IdRole.CHOSEN),
                ("t-1", IdRole.REFERENCE),
                ("c-1", IdRole.CHOSEN),
                ("c-1", IdRole.CHOSEN),
                ("http://h/w", IdRole.FRESH),
                ("k", IdRole.FRESH),
            ],
        ),
        (
            Request("GET", "/a2a/rest/tasks/t-9/pushNotificationConfigs/c-9"),
            [("t-9", IdRole.REFERENCE), ("c-9", IdRole.REFERENCE)],
        ),
        (
            Request(
                "POST",
                "/a2a/rest/tasks/t-9/pushNotificationConfigs",
                (("content-type", "application/json"),),
                b'{"id": "c-new", "url": "http://h/w"}',
            ),
            [("c-new", IdRole.CHOSEN), ("http://h/w", IdRole.FRESH), ("t-9", IdRole.REFERENCE)],
        ),
    ],
)
def test_positions_tell_references_from_the_client_s_own(
    request_: Request, want: list[tuple[str, IdRole]]
) -> None:
    c = classify(request_)
    assert c.operation is not None, c.reason
    slots = find_slots(request_value(request_, c), positions_of(c))
    assert sorted((s.value, s.role) for s in slots) == sorted(want)


def test_a_recorded_session_s_ids_get_their_provenance_at_load() -> None:
    recording = Recording()
    recording.run(
        Client("recorder"),
        [
            ("send", "echo a"),
            ("get", 0),
            ("probe-get", "nonexistent-1"),
            ("bogus", None),
            ("list", None),
        ],
    )
    script = scripts.load_script([recording.capture()])
    got = [[r.provenance.value for r in step.slots] for step in script.steps]
    assert got == [["fresh"], ["issued"], ["unknown"], ["fresh", "unknown"], []]
    send, get, probe, bogus, listing = script.steps
    assert send.creating and not send.stateless
    # The send introduces its task and context (not the message or artifact ids it names).
    task = send.exchange.response and json.loads(send.exchange.response.body)["result"]["task"]
    assert task and send.introduced == (task["id"], task["contextId"])
    assert script.origin[task["id"]] == (send.index, 0)
    assert get.names == (task["id"],) and get.named == (task["id"],) and not get.creating
    assert (
        get.key == script.steps[1].key and "~issued" in get.key[2] and task["id"] not in get.key[2]
    )
    assert probe.stateless and bogus.stateless
    assert listing.listing and set(listing.response_ids) >= {task["id"]}
    assert script.issuer[send.response_ids[0]] == send.number


@pytest.mark.parametrize("package", [replay, scripts], ids=lambda p: p.__name__)
def test_the_package_exports_are_complete_and_sorted(package: object) -> None:
    names = package.__all__  # type: ignore[attr-defined]
    assert names == sorted(names, key=lambda n: (not n[0].isupper(), n))
    assert all(hasattr(package, name) for name in names)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: str(p.relative_to(ROOT)))
def test_located_ids_are_the_ids_the_script_learns_from_each_answer(path: Path) -> None:
    """`located_ids` (verify pairs live answers by it) finds what the script's loader finds."""
    script = scripts.load_script([read_capture(path)])
    for step in script.steps:
        response = step.exchange.response
        documents = scripts.answer_documents(response)
        if (
            not scripts.answer_succeeded(step.exchange.classification.binding, response, documents)
            or step.exchange.classification.error
        ):
            continue
        if step.exchange.classification.operation in scripts.CARD_OPERATIONS:
            continue
        located = [value for d in documents for _, _, value in scripts.located_ids(d)]
        assert set(step.response_ids) <= set(located), step.number
        for document in documents:
            for where, _, value in scripts.located_ids(document):
                held = document
                for part in where:
                    held = held[part]
                assert value in held  # the string at `where` holds the id (a name: a part)


def test_located_ids_give_paths_and_split_resource_names() -> None:
    document = {
        "jsonrpc": "2.0",
        "id": "rpc-1",
        "result": {
            "task": {
                "id": "t-1",
                "contextId": "c-1",
                "metadata": {"id": "not-an-id"},
                "artifacts": [{"artifactId": "a-1"}],
            },
            "name": "tasks/t-1/pushNotificationConfigs/cfg-1",
        },
    }
    assert scripts.located_ids(document) == [
        (("result", "task", "id"), "id", "t-1"),
        (("result", "task", "contextId"), "contextId", "c-1"),
        (("result", "task", "artifacts", 0, "artifactId"), "artifactId", "a-1"),
        (("result", "name"), "taskId", "t-1"),
        (("result", "name"), "configId", "cfg-1"),
    ]
    assert scripts.located_ids({"error": {"code": 5, "message": "t-1"}}) == []
