"""Replay that holds for any client (issue 33): each case a client nobody here wrote met.

Each test builds a capture as an agent answered (the model agent, or exchanges written as a
framework's own routes answer), replays it to a client that does what the issue's client did,
and checks what that client sees.  Each failed on the replay core before this issue.
"""

from __future__ import annotations

import itertools
import json
from urllib.parse import urlsplit

import pytest
from _agent_model import Client, ModelAgent, Recording, new_uuid
from hypothesis import given, settings
from hypothesis import strategies as st

from recorder.capture import Capture, Exchange, Request, Response
from recorder.protocol import Binding, Interface, classify
from recorder.replay import Client as Conn
from recorder.replay import (
    HttpAnswer,
    IdFactory,
    Miss,
    ReplayService,
    Served,
    ServeVersion,
    parse_fault,
)
from recorder.replay.core._answer import prepare_http, render_http
from recorder.script import Swap, prepare, wire_bytes
from recorder.script._values import path_of

JSON = (("content-type", "application/json"),)
INTERFACES = (Interface("http://127.0.0.1:9/a2a/jsonrpc", Binding.JSONRPC),)
_numbers = itertools.count(1)


def exchange(request: Request, status: int, document: object, started: int) -> Exchange:
    reply = Response(
        status, "OK" if status < 400 else "Not Found", JSON, json.dumps(document).encode()
    )
    return Exchange(
        next(_numbers), classify(request, reply, interfaces=INTERFACES), request, reply, started
    )


def post(path: str, body: object, headers: tuple[tuple[str, str], ...] = JSON) -> Request:
    return Request("POST", path, headers, json.dumps(body).encode())


def body_of(outcome: object) -> dict[str, object]:
    answer = outcome.answer  # type: ignore[attr-defined]
    assert isinstance(answer, HttpAnswer)
    found: dict[str, object] = json.loads(answer.body)
    return found


# ---- 2. an agent's own routes get their own answers -----------------------------------------


def own_route_capture(probe: bool) -> tuple[list[Exchange], list[str]]:
    """A client creates three tasks over JSON-RPC, then reads each on the framework's own
    `POST /a2a/jsonrpc/v1/tasks:get` (a JSON-RPC-shaped body without a method), and
    (`probe`) reads a task nobody issued there: 404."""
    agent, client = ModelAgent(), Client("reader", identity=False)
    recording = Recording(agent)
    for text in ("one", "two", "three"):
        recording.step(client, ("send", f"echo {text}"))
    exchanges = list(recording.exchanges)
    started = 10_000
    for task in client.tasks:
        body = {"jsonrpc": "2.0", "id": 7, "params": {"id": task}}
        answer = {"jsonrpc": "2.0", "id": 7, "result": agent.tasks[task]}
        exchanges.append(exchange(post("/a2a/jsonrpc/v1/tasks:get", body), 200, answer, started))
        started += 1000
    if probe:
        body = {"jsonrpc": "2.0", "id": 7, "params": {"id": "nobody-issued-this"}}
        exchanges.append(
            exchange(
                post("/a2a/jsonrpc/v1/tasks:get", body), 404, {"error": "no such task"}, started
            )
        )
    return exchanges, client.tasks


@pytest.mark.parametrize("order", [[2, 0, 1], [1, 2, 0], [0, 1, 2]])
def test_an_agent_s_own_route_answers_each_task_with_its_own_answer(order: list[int]) -> None:
    exchanges, _ = own_route_capture(probe=True)
    service = ReplayService([Recording(exchanges=exchanges).capture()], ids=IdFactory(1))
    client = Client("reader", identity=False)
    texts = ("one", "two", "three")
    for text in texts:
        outcome = service.handle(client.request(("send", f"echo {text}")), Conn())
        client.saw(("send", ""), body_of(outcome))
    for n in order:
        body = {"jsonrpc": "2.0", "id": 99, "params": {"id": client.tasks[n]}}
        outcome = service.handle(post("/a2a/jsonrpc/v1/tasks:get", body), Conn())
        assert isinstance(outcome, Served) and outcome.answer.status == 200  # type: ignore[union-attr]
        task = body_of(outcome)["result"]
        assert task["id"] == client.tasks[n]  # type: ignore[index]
        assert task["artifacts"][0]["parts"][0]["text"] == f"echo {texts[n]}"  # type: ignore[index]
    nobody = {"jsonrpc": "2.0", "id": 5, "params": {"id": str(new_uuid())}}
    probe = service.handle(post("/a2a/jsonrpc/v1/tasks:get", nobody), Conn())
    assert probe.answer.status == 404  # type: ignore[union-attr]
    assert service.report.clean, service.report.as_json()


def test_an_own_route_request_unlike_every_recorded_one_is_a_miss() -> None:
    exchanges, _ = own_route_capture(probe=False)
    service = ReplayService([Recording(exchanges=exchanges).capture()], ids=IdFactory(2))
    nobody = {"jsonrpc": "2.0", "id": 5, "params": {"id": "nobody-issued-this-either"}}
    outcome = service.handle(post("/a2a/jsonrpc/v1/tasks:get", nobody), Conn())
    assert isinstance(outcome, Miss)  # never another task's answer
    assert "result" not in body_of(outcome) and "never issued" in outcome.describe()
    assert service.journal.requests[-1].answer == "synthesized"
    assert not service.report.clean


# ---- 3. ids in fields the id table does not list ---------------------------------------------


def test_an_older_dialect_s_fresh_snake_case_message_id_is_no_miss() -> None:
    def send(number: int) -> Exchange:
        params = {
            "id": f"task-{number}",
            "sessionId": f"session-{number}",
            "message": {
                "role": "user",
                "parts": [{"type": "text", "text": "hello"}],
                "message_id": str(new_uuid()),
            },
        }
        body = {"jsonrpc": "2.0", "id": number, "method": "tasks/send", "params": params}
        result = {
            "id": params["id"],
            "sessionId": params["sessionId"],
            "status": {"state": "completed"},
        }
        return exchange(
            post("/a2a/jsonrpc", body),
            200,
            {"jsonrpc": "2.0", "id": number, "result": result},
            number * 1000,
        )

    service = ReplayService([Recording(exchanges=[send(1)]).capture()], ids=IdFactory(3))
    live = {
        "jsonrpc": "2.0",
        "id": 41,
        "method": "tasks/send",
        "params": {
            "id": "task-9",
            "sessionId": "session-9",
            "message": {
                "role": "user",
                "parts": [{"type": "text", "text": "hello"}],
                "message_id": "fresh-one-123",
            },
        },
    }
    outcome = service.handle(post("/a2a/jsonrpc", live), Conn())
    assert isinstance(outcome, Served), outcome
    result = body_of(outcome)["result"]
    assert result["id"] == "task-9" and result["sessionId"] == "session-9"  # type: ignore[index]


def test_a_framework_s_own_context_field_is_known_by_its_value() -> None:
    agent, client = ModelAgent(), Client("ctx", identity=False)
    recording = Recording(agent)
    recording.step(client, ("send", "echo a"))
    context = agent.tasks[client.tasks[0]]["contextId"]
    body = {"jsonrpc": "2.0", "id": 3, "params": {"contextId": context}}
    answer = {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {"contextId": context, "tasks": [client.tasks[0]]},
    }
    exchanges = [
        *recording.exchanges,
        exchange(post("/a2a/jsonrpc/v1/contexts:get", body), 200, answer, 9000),
    ]
    service = ReplayService([Recording(exchanges=exchanges).capture()], ids=IdFactory(4))
    live = Client("ctx", identity=False)
    for _ in range(2):  # the second client gets ids of its own, not the recorded ones
        live = Client("ctx", identity=False)
        sent = body_of(service.handle(live.request(("send", "echo a")), Conn()))
        task = sent["result"]["task"]  # type: ignore[index]
        ask = {"jsonrpc": "2.0", "id": 8, "params": {"contextId": task["contextId"]}}
        outcome = service.handle(post("/a2a/jsonrpc/v1/contexts:get", ask), Conn())
        assert isinstance(outcome, Served), outcome
        got = body_of(outcome)["result"]
        assert got == {"contextId": task["contextId"], "tasks": [task["id"]]}
    assert service.report.clean


# ---- 1. a client's own id first used in a read -------------------------------------------------


def test_a_context_first_named_in_a_listing_is_the_client_s_own_from_then_on() -> None:
    ops = [("list-ctx", None), ("list-ctx", None), ("send-ctx", "echo a"), ("list-ctx", None)]
    recording = Recording(ModelAgent())
    recording.run(Client("lister", context="made-up-1"), ops)
    service = ReplayService([recording.capture()], ids=IdFactory(5))
    client = Client("lister", context="made-up-2")  # another run: another context of its own
    answers = [body_of(service.handle(client.request(op), Conn())) for op in ops]
    assert [len(a["result"]["tasks"]) for a in answers[:2]] == [0, 0]  # type: ignore[index]
    task = answers[2]["result"]["task"]  # type: ignore[index]
    assert task["contextId"] == "made-up-2"
    listed = answers[3]["result"]["tasks"]  # type: ignore[index]
    assert [t["id"] for t in listed] == [task["id"]] and listed[0]["contextId"] == "made-up-2"
    assert [e.answer for e in service.journal.requests].count("synthesized") == 0
    assert service.report.clean, service.report.as_json()


# ---- 4. push over gRPC the recording could not see -------------------------------------------


def test_a_grpc_push_config_no_delivery_was_recorded_for_is_not_clean() -> None:
    from recorder.capture import read_capture

    capture = read_capture("captures/a2a-python-1.3.0/grpc/08-push-configs.http")
    service = ReplayService([capture], ids=IdFactory(6))
    for step in service.script.steps:
        service.handle(step.exchange.request, Conn())
    report = service.report.as_json()
    assert not report["clean"]
    assert report["not_replayed"] and "over gRPC" in report["not_replayed"][0]


# ---- 6. a cut stream lives and is forgotten with its session ------------------------------------


def test_a_forgotten_session_s_cut_stream_is_not_continued() -> None:
    from recorder.capture import read_capture

    capture = read_capture("captures/a2a-python-1.3.0/05-streaming.http")
    spec = parse_fault("SendStreamingMessage:cut-after=1")
    service = ReplayService([capture], ids=IdFactory(7), faults=[spec], max_sessions=1)
    stream = next(
        s
        for s in service.script.steps
        if s.exchange.classification.operation == "SendStreamingMessage"
    )
    first = service.handle(stream.exchange.request, Conn())
    assert isinstance(first, Served) and first.kind == "adapted"
    task = stream.response_ids[0] if stream.response_ids else None
    assert task is not None and service.state.cut_of(task) is not None
    # another client's stream pushes the first session out of the LRU of one
    service.handle(stream.exchange.request, Conn())
    assert service.state.cut_of(task) is None
    subscribe = {"jsonrpc": "2.0", "id": 3, "method": "SubscribeToTask", "params": {"id": task}}
    outcome = service.handle(
        post("/a2a/jsonrpc", subscribe, (*JSON, ("a2a-version", "1.0"))), Conn()
    )
    assert not (
        isinstance(outcome, Served)
        and outcome.kind == "synthesized"
        and "cut" in " ".join(outcome.changes)
    )


# ---- 7. one swap path ----------------------------------------------------------------------


def test_a_long_numeric_id_that_is_also_a_number_leaves_the_number_alone() -> None:
    text = '{"id": "12345678", "count": 12345678, "12345678": "key", "note": "task 12345678 done"}'
    swap = Swap.of({"12345678": "live-id-a"})
    out = json.loads(prepare(text).render(swap.lookup, swap.embedded))
    assert out == {
        "id": "live-id-a",
        "count": 12345678,
        "12345678": "key",
        "note": "task live-id-a done",
    }


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


def _walk(value: object, mapping: dict[str, str]) -> object:
    if isinstance(value, dict):
        return {k: _walk(v, mapping) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, mapping) for v in value]
    if isinstance(value, str):
        return Swap.of(mapping).text(value)
    return value


@settings(max_examples=300, deadline=None)
@given(json_values, st.data())
def test_rendering_a_prepared_answer_equals_swapping_its_parsed_values(
    value: object, data: st.DataObject
) -> None:
    strings = sorted({s for s in _strings(value) if s})
    mapping = {}
    for old in (
        data.draw(st.lists(st.sampled_from(strings), unique=True, max_size=3)) if strings else []
    ):
        mapping[old] = data.draw(st.text(min_size=1, max_size=10))
    for indent in (None, 2):
        text = json.dumps(value, indent=indent, ensure_ascii=data.draw(st.booleans()))
        swap = Swap.of(mapping)
        rendered = prepare(text).render(swap.lookup, swap.embedded)
        assert json.loads(rendered) == _walk(value, mapping)
        if not mapping:
            assert rendered == text


@settings(max_examples=300, deadline=None)
@given(json_values, st.data())
def test_an_answer_prepared_with_only_its_swappable_holes_renders_the_same(
    value: object, data: st.DataObject
) -> None:
    """Holes no live lookup can change are left out (`prepare_http`'s `swappable`): a render of the
    pruned template equals a render of the whole one, ids inside longer strings included."""
    long_id = data.draw(st.text(min_size=8, max_size=12))  # also quoted inside a longer string
    value = {"v": value, "id": long_id, "note": f"see {long_id}!"}
    strings = sorted({s for s in _strings(value) if s})
    olds = data.draw(st.lists(st.sampled_from(strings), unique=True, max_size=3))
    mapping = {old: data.draw(st.text(min_size=1, max_size=10)) for old in olds}
    swappable = frozenset([*mapping, *data.draw(st.lists(st.text(max_size=6), max_size=3))])
    envelope = {"jsonrpc": "2.0", "id": 7, "result": value}
    response = Response(
        200,
        headers=(
            ("X-Id", olds[0] if olds else "h"),
            ("X-Note", f"about {long_id}"),
            ("X-Plain", "plain"),
        ),
        body=json.dumps(envelope, ensure_ascii=data.draw(st.booleans())).encode(),
    )
    whole = prepare_http(response, jsonrpc=True, ids=list(mapping))
    pruned = prepare_http(response, jsonrpc=True, ids=list(mapping), swappable=swappable)
    assert len(pruned.body.holes) <= len(whole.body.holes)
    jsonrpc_id = data.draw(st.integers() | st.text(max_size=5))
    assert render_http(response, pruned, mapping.get, jsonrpc_id) == render_http(
        response, whole, mapping.get, jsonrpc_id
    )


@given(
    st.sampled_from(["/", "//", "", "http://h/", "\t/", " /", "a:/"]),
    st.text(alphabet="/?#%:;@a1 \t\r\n", max_size=12),
)
def test_a_targets_path_is_what_a_url_parse_reads(start: str, rest: str) -> None:
    """`path_of` reads a plain origin form without a URL parse, and anything else with one."""
    assert path_of(start + rest) == urlsplit(start + rest).path


def _strings(value: object) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def test_bytes_utf8_cannot_hold_survive_a_render() -> None:
    text = '{"id": "abcdefgh", "odd": "\\ud800"}'
    swap = Swap.of({"abcdefgh": "zzzzzzzz"})
    assert (
        wire_bytes(prepare(text).render(swap.lookup, swap.embedded))
        == b'{"id": "zzzzzzzz", "odd": "\\ud800"}'
    )


# ---- 9. no credentials, no difference ---------------------------------------------------------


def credentialed_recording(refusal: bool) -> Recording:
    recording = Recording(ModelAgent())
    recording.run(Client("alice"), [("send", "echo a")])
    if refusal:
        request = Client("anon", identity=False).request(("send", "echo a"))
        reply = Response(
            401,
            "Unauthorized",
            (*JSON, ("www-authenticate", "Bearer")),
            b'{"detail":"Not authenticated"}',
        )
        recording.exchanges.append(
            Exchange(2, classify(request, reply, interfaces=INTERFACES), request, reply, 9000)
        )
    return recording


def test_a_request_without_the_recorded_credential_is_a_miss_that_names_it() -> None:
    service = ReplayService([credentialed_recording(False).capture()], ids=IdFactory(8))
    outcome = service.handle(Client("anon", identity=False).request(("send", "echo a")), Conn())
    assert isinstance(outcome, Miss)
    assert "authorization:bearer" in outcome.describe()
    assert not service.report.clean


def test_a_request_without_credentials_gets_the_agent_s_recorded_refusal() -> None:
    service = ReplayService([credentialed_recording(True).capture()], ids=IdFactory(9))
    outcome = service.handle(Client("anon", identity=False).request(("send", "echo a")), Conn())
    assert isinstance(outcome, Served) and outcome.answer.status == 401  # type: ignore[union-attr]
    authorized = service.handle(Client("alice").request(("send", "echo a")), Conn())
    assert isinstance(authorized, Served) and authorized.answer.status == 200  # type: ignore[union-attr]


def test_the_credentials_check_can_be_turned_off() -> None:
    recording = credentialed_recording(False)
    service = ReplayService([recording.capture()], ids=IdFactory(10), credentials=False)
    outcome = service.handle(Client("anon", identity=False).request(("send", "echo a")), Conn())
    assert isinstance(outcome, Served) and outcome.answer.status == 200  # type: ignore[union-attr]


# ---- 5. the cost of a request does not grow with the capture ----------------------------------


def load(rounds: int) -> Recording:
    recording = Recording(ModelAgent())
    client = Client("load", identity=False)
    for n in range(rounds):
        recording.step(client, ("send", "echo a"))
        recording.step(client, ("get", n))
    return recording


@pytest.mark.parametrize("rounds", [30, 3000])
def test_a_request_looks_at_a_few_worlds_and_classes_whatever_the_capture(rounds: int) -> None:
    service = ReplayService([load(rounds).capture()], ids=IdFactory(11))
    assert len(service.script.classes) == 1 and len(service.script.classes[0].members) == rounds
    client = Client("load", identity=False)
    for n in range(20):
        client.saw(
            ("send", ""), body_of(service.handle(client.request(("send", "echo a")), Conn()))
        )
        service.handle(client.request(("get", n)), Conn())
    assert all(len(s.worlds) == 1 for s in service.state.sessions)
    recorded_ids = {s.exchange.number for s in service.script.steps}
    assert {e.exchange for e in service.journal.requests} <= recorded_ids


# ---- 8. an absent field and its default are the same request, across versions ---------------


def _send(method: str, message: dict[str, object], **params: object) -> Request:
    body = {"jsonrpc": "2.0", "id": 5, "method": method, "params": {"message": message, **params}}
    headers = (*JSON, ("a2a-version", "1.0")) if method == "SendMessage" else JSON
    return post("/a2a/jsonrpc", body, headers)


def test_a_v1_send_naming_no_configuration_is_a_v03_blocking_send() -> None:
    from recorder.capture import read_capture

    capture = read_capture("captures/a2a-python-0.3.26/03-blocking-task.http")
    service = ReplayService([capture], ids=IdFactory(12), serve_version=ServeVersion("1.0"))
    message = {"messageId": str(new_uuid()), "role": "ROLE_USER", "parts": [{"text": "echo hello"}]}
    message["contextId"] = str(new_uuid())
    outcome = service.handle(_send("SendMessage", message), Conn())
    assert isinstance(outcome, Served), outcome
    assert body_of(outcome)["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]


def test_a_v03_send_naming_no_blocking_is_no_blocking_send() -> None:
    from recorder.capture import read_capture

    capture = read_capture("captures/a2a-python-1.3.0/03-blocking-task.http")
    service = ReplayService([capture], ids=IdFactory(13), serve_version=ServeVersion("0.3"))
    message = {
        "kind": "message",
        "messageId": str(new_uuid()),
        "role": "user",
        "parts": [{"kind": "text", "text": "echo hello"}],
        "contextId": str(new_uuid()),
    }
    unsaid = service.handle(_send("message/send", message), Conn())
    assert isinstance(unsaid, Miss)  # v0.3 leaves blocking false: not the recorded blocking send
    assert "returnImmediately" in unsaid.describe()
    said = service.handle(_send("message/send", message, configuration={"blocking": True}), Conn())
    assert isinstance(said, Served)


# ---- a field fresh in every request of its shape is learnt -------------------------------------


def test_a_field_fresh_in_every_recorded_request_is_learnt_and_said() -> None:
    from recorder.show import learnt_fields, learnt_lines

    def ping(n: int, nonce: str) -> Exchange:
        body = {"jsonrpc": "2.0", "id": n, "params": {"nonce": nonce, "ask": "status"}}
        answer = {"jsonrpc": "2.0", "id": n, "result": {"nonce": nonce, "status": "up"}}
        return exchange(post("/a2a/jsonrpc/v1/ping", body), 200, answer, n * 1000)

    capture = Recording(exchanges=[ping(n, new_uuid().hex) for n in range(1, 4)]).capture()
    service = ReplayService([capture], ids=IdFactory(14))
    live = {
        "jsonrpc": "2.0",
        "id": 9,
        "params": {"nonce": "a-nonce-never-recorded", "ask": "status"},
    }
    outcome = service.handle(post("/a2a/jsonrpc/v1/ping", live), Conn())
    assert isinstance(outcome, Served), outcome
    assert body_of(outcome)["result"] == {"nonce": "a-nonce-never-recorded", "status": "up"}
    (seen,) = service.journal.requests[-1].ids
    assert seen.learnt and seen.provenance.value == "fresh"
    assert service.journal.as_json()["requests"][-1]["ids"][0]["learnt"] is True
    numbers = sorted(learnt_fields(capture))
    assert len(numbers) == 3 and "body.nonce" in learnt_lines(learnt_fields(capture))
    other = {"jsonrpc": "2.0", "id": 9, "params": {"nonce": "another-one-here", "ask": "reboot"}}
    assert isinstance(service.handle(post("/a2a/jsonrpc/v1/ping", other), Conn()), Miss)


def test_a_request_naming_its_own_new_id_at_several_places_matches_another_like_it() -> None:
    # a2a-sdk 0.3's push config names its id three times (configId, config.name, config.id);
    # a2a-java 1.0.0.Alpha3's draft twice (configId, config.id), in a v1.0 request
    recording = Recording(ModelAgent())
    client = Client("c", identity=False)
    recording.step(client, ("send", "echo a"))
    task = client.tasks[0]
    config = {"configId": "cfg-1", "config": {"id": "cfg-1", "url": "http://127.0.0.1:9/w"}}
    body = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "CreateTaskPushNotificationConfig",
        "params": {"taskId": task, **config},
    }
    answer = {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {"taskId": task, "id": "cfg-1", "url": "http://127.0.0.1:9/w"},
    }
    request = post("/a2a/jsonrpc", body, (*JSON, ("a2a-version", "1.0")))
    exchanges = [*recording.exchanges, exchange(request, 200, answer, 9000)]
    service = ReplayService([Recording(exchanges=exchanges).capture()], ids=IdFactory(15))
    live = Client("c", identity=False)
    live.saw(("send", ""), body_of(service.handle(live.request(("send", "echo a")), Conn())))
    text = json.dumps(body).replace(task, live.tasks[0]).replace("cfg-1", "cfg-live-2")
    outcome = service.handle(post("/a2a/jsonrpc", json.loads(text), request.headers), Conn())
    assert isinstance(outcome, Served), outcome
    assert body_of(outcome)["result"]["id"] == "cfg-live-2"  # type: ignore[index]


# ---- a card fetched after a gRPC call points at the replayer -------------------------------


def test_a_card_of_a_capture_begun_over_grpc_points_at_the_replayer() -> None:
    # The fuzzer's card-after-grpc: the capture's header names only its gRPC upstream (the
    # first call was gRPC), and the card the client then fetched lists the recorder's HTTP
    # address, which must be served as the replayer's.
    recorder = "http://127.0.0.1:44373"
    card = {
        "name": "agent",
        "version": "1",
        "capabilities": {},
        "skills": [],
        "supportedInterfaces": [
            {"url": f"{recorder}/a2a/rest", "protocolBinding": "HTTP+JSON"},
            {"url": f"{recorder}/a2a/jsonrpc", "protocolBinding": "JSONRPC"},
        ],
    }
    fetch = Request("GET", "/.well-known/agent-card.json", (("host", "127.0.0.1:44373"),))
    capture = Capture(
        "2026-01-01T00:00:00.000000Z",
        "test",
        (exchange(fetch, 200, card, 0),),
        upstreams=("grpc://127.0.0.1:44374",),
    )
    service = ReplayService([capture], ids=IdFactory(9))
    service.serve_at("http://127.0.0.1:5555")
    served = service.handle(fetch, Conn())
    assert isinstance(served, Served)
    urls = [i["url"] for i in body_of(served)["supportedInterfaces"]]  # type: ignore[union-attr]
    assert urls == ["http://127.0.0.1:5555/a2a/rest", "http://127.0.0.1:5555/a2a/jsonrpc"]


# ---- an agent's routes under an HTTP+JSON mount no card named --------------------------------


def _rest_capture() -> Capture:
    """A REST send, then two unknown routes under its mount (`/a2a/rest`), one a 404, one a
    307 to the recorder's own URL: the recorder knew the mount from a card it fetched itself."""
    rest = (Interface("http://127.0.0.1:44373/a2a/rest", Binding.HTTP_JSON),)
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    send = post("/a2a/rest/message:send", {"message": message})
    task = {"id": "task-1", "contextId": "ctx-1", "status": {"state": "TASK_STATE_COMPLETED"}}
    host = (("host", "127.0.0.1:44373"),)
    missing = Request("GET", "/a2a/rest/tasks/task-1/nothing", host)
    slash = Request("GET", "/a2a/rest/nothing", host)
    redirect = Response(
        307, "Temporary Redirect", (("location", "http://127.0.0.1:44373/a2a/rest/nothing/"),)
    )
    exchanges = []
    for n, (request, response) in enumerate(
        [
            (send, Response(200, "OK", JSON, json.dumps({"task": task}).encode())),
            (missing, Response(404, "Not Found", (("content-type", "text/plain"),), b"Not Found")),
            (slash, redirect),
        ],
        1,
    ):
        c = classify(request, response, interfaces=rest)
        exchanges.append(Exchange(n, c, request, response, n))
    assert [e.classification.operation for e in exchanges] == ["SendMessage", "unknown", "unknown"]
    return Capture("2026-01-01T00:00:00.000000Z", "test", tuple(exchanges))


def test_an_unknown_route_under_a_rest_mount_no_card_named_gets_its_own_answer() -> None:
    # The fuzzer's unknown-routes: the replay read `GET /a2a/rest/nothing` as no A2A at all
    # (no card in the capture named the mount) and answered it as the agent answered another
    # unroutable request, the 404 of `/tasks/T/nothing`, where the agent had redirected.
    service = ReplayService([_rest_capture()], ids=IdFactory(10))
    service.serve_at("http://127.0.0.1:5555")
    served = service.handle(Request("GET", "/a2a/rest/nothing", ()), Conn())
    assert isinstance(served, Served) and served.step.number == 3
    assert isinstance(served.answer, HttpAnswer) and served.answer.status == 307
    # The redirect named the recorder: it names the replayer now, and the journal says so.
    assert dict(served.answer.headers)["location"] == "http://127.0.0.1:5555/a2a/rest/nothing/"
    assert "location: it points at the replayer" in served.changes
    other = service.handle(Request("GET", "/a2a/rest/else", ()), Conn())
    assert isinstance(other, Miss)


# ---- a delivery that started with its trigger belongs to it ---------------------------------


def test_a_delivery_starting_with_its_stream_is_the_stream_s() -> None:
    # The fuzzer's push-inline-grpc-stream: the capture's offsets began at its first exchange
    # written, a delivery; the gRPC stream that set it off, begun earlier, was clamped to the
    # same offset 0 and written after it, and the delivery (the SUBMITTED task) was dropped.
    from recorder.script import load_script

    stream = post(
        "/a2a/jsonrpc",
        {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {}},
    )
    task = {"id": "task-1", "contextId": "ctx-1", "status": {"state": "TASK_STATE_SUBMITTED"}}
    push = post("/hook", {"task": task}, (*JSON, ("x-a2a-notification-token", "tok")))
    delivered = exchange(push, 200, {}, 0)
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"task": task}}
    streamed = exchange(stream, 200, answer, 0)
    assert delivered.classification.operation == "PushDelivery"
    script = load_script([Capture("2026-01-01T00:00:00.000000Z", "t", (delivered, streamed))])
    assert [d.number for ds in script.deliveries.values() for d in ds] == [delivered.number]


# ---- a fresh value under a key the shape ignores -----------------------------------------------


def test_a_learnt_field_under_an_ignored_key_loads_and_replays() -> None:
    # Seed 366905033: listings filtered by `statusTimestampAfter`, a new time in every
    # request, made the field a learnt fresh value; the shape drops timestamps, and loading
    # the capture failed (KeyError) where it placed the slot's token.
    from recorder.script import load_script

    steps = []
    for n in range(3):
        when = f"2026-12-07T11:0{n}:00.123456Z"
        request = Request("GET", f"/a2a/rest/tasks?statusTimestampAfter={when}", ())
        steps.append(exchange(request, 200, {"tasks": []}, n))
    capture = Capture("2026-01-01T00:00:00.000000Z", "test", tuple(steps))
    assert load_script([capture]).steps
    service = ReplayService([capture], ids=IdFactory(11))
    live = Request("GET", "/a2a/rest/tasks?statusTimestampAfter=2026-12-08T00:00:00.5Z", ())
    assert isinstance(service.handle(live, Conn()), Served)


def test_an_unknown_route_of_a_capture_with_no_known_one_under_its_mount_replays() -> None:
    # A capture of only an agent's own routes under its REST mount (the recorder knew the
    # mount from a card it fetched itself): the same request again is its own exchange.
    exchanges = _rest_capture().exchanges[1:]
    capture = Capture("2026-01-01T00:00:00.000000Z", "test", exchanges)
    service = ReplayService([capture], ids=IdFactory(12))
    served = service.handle(Request("GET", "/a2a/rest/nothing", ()), Conn())
    assert isinstance(served, Served) and served.step.number == 3


def test_a_learnt_field_holds_when_a_default_is_spelled_out() -> None:
    # A request with a learnt fresh field that also spells out a default (a text part's
    # `mediaType: text/plain`) is the same request: its learnt field still reads fresh.
    def ask(n: int, nonce: str, part: dict[str, str]) -> Exchange:
        body = {"jsonrpc": "2.0", "id": n, "params": {"nonce": nonce, "parts": [part]}}
        answer = {"jsonrpc": "2.0", "id": n, "result": {"status": "up"}}
        return exchange(post("/a2a/jsonrpc/v1/ask", body), 200, answer, n * 1000)

    text = {"text": "status"}
    capture = Recording(exchanges=[ask(n, new_uuid().hex, text) for n in range(1, 4)]).capture()
    service = ReplayService([capture], ids=IdFactory(16))
    spelled = {"text": "status", "mediaType": "text/plain"}
    live = {"jsonrpc": "2.0", "id": 9, "params": {"nonce": "never-recorded-1", "parts": [spelled]}}
    outcome = service.handle(post("/a2a/jsonrpc/v1/ask", live), Conn())
    assert isinstance(outcome, Served), outcome


def test_a_delivery_after_a_listing_belongs_to_the_call_that_acted_on_its_task() -> None:
    # Seed 909432001, program 158: a cancel set off a delivery that reached the recorder
    # after a listing whose answer showed the task; it was attached to the listing, whose
    # live client holds no webhook, and never made.
    from recorder.script import load_script

    task = {"id": "task-1", "contextId": "ctx-1", "status": {"state": "TASK_STATE_WORKING"}}
    canceled = {**task, "status": {"state": "TASK_STATE_CANCELED"}}
    rpc = {"jsonrpc": "2.0", "id": 1}
    send = exchange(
        post("/a2a/jsonrpc", {**rpc, "method": "SendMessage", "params": {}}),
        200,
        {**rpc, "result": {"task": task}},
        0,
    )
    cancel = exchange(
        post("/a2a/jsonrpc", {**rpc, "method": "CancelTask", "params": {"id": "task-1"}}),
        200,
        {**rpc, "result": canceled},
        1000,
    )
    listing = exchange(
        post("/a2a/jsonrpc", {**rpc, "method": "ListTasks", "params": {}}),
        200,
        {**rpc, "result": {"tasks": [canceled], "nextPageToken": ""}},
        2000,
    )
    update = {
        "statusUpdate": {"taskId": "task-1", "contextId": "ctx-1", "status": canceled["status"]}
    }
    push = post("/hook", update, (*JSON, ("x-a2a-notification-token", "tok")))
    delivered = exchange(push, 200, {}, 3000)
    script = load_script(
        [Capture("2026-01-01T00:00:00.000000Z", "t", (send, cancel, listing, delivered))]
    )
    triggers = {
        script.steps[i].number: [d.number for d in ds] for i, ds in script.deliveries.items()
    }
    assert triggers == {cancel.number: [delivered.number]}
