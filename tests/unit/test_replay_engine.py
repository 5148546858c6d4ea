"""The replay engine's choice among identical requests: recorded order, then the last repeats,
and the cost of a long session grows with its length, not with its square.  Exchanges are
built in memory and classified by the real classifier; no sockets."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

import pytest

from recorder.capture import Exchange, Request, Response
from recorder.protocol import classify
from recorder.replay import _engine
from recorder.replay._engine import Engine, Match
from recorder.replay._ids import Json, Pair

HEADERS = (("Content-Type", "application/json"), ("A2A-Version", "1.0"))


def send(message_id: str, rpc_id: int) -> Request:
    params = {"message": {"messageId": message_id, "role": "ROLE_USER",
                          "parts": [{"text": "echo bench"}]}}
    body = {"jsonrpc": "2.0", "id": rpc_id, "method": "SendMessage", "params": params}
    return Request("POST", "/a2a/jsonrpc", HEADERS, json.dumps(body).encode())


def recorded_sends(count: int) -> list[Exchange]:
    out = []
    for n in range(1, count + 1):
        request = send(f"m-{n}", n)
        task = {"id": f"t-{n}", "contextId": f"c-{n}", "status": {"state": "TASK_STATE_COMPLETED"}}
        body = json.dumps({"jsonrpc": "2.0", "id": n, "result": {"task": task}}).encode()
        response = Response(200, "OK", HEADERS, body)
        out.append(Exchange(n, classify(request, response), request, response))
    return out


def serve(engine: Engine, count: int) -> list[int]:
    numbers = []
    for n in range(count):
        request = send(f"live-{n}", 1000 + n)
        found = engine.match(request, classify(request))
        assert isinstance(found, Match)
        numbers.append(found.recorded.exchange.number)
    return numbers


def test_identical_requests_are_served_in_order_then_the_last_repeats() -> None:
    engine = Engine(recorded_sends(5))
    assert serve(engine, 7) == [1, 2, 3, 4, 5, 5, 5]


@pytest.mark.parametrize("count", [50, 200])
def test_a_long_session_checks_each_candidate_about_once(
    monkeypatch: pytest.MonkeyPatch, count: int
) -> None:
    calls = 0
    real = _engine.pairs

    def counted(live: Json, recorded: Json) -> Iterator[Pair]:
        nonlocal calls
        calls += 1
        found: Iterable[Pair] = real(live, recorded)
        yield from found

    monkeypatch.setattr(_engine, "pairs", counted)
    engine = Engine(recorded_sends(count))
    assert serve(engine, count) == list(range(1, count + 1))
    assert calls <= 6 * count  # a few per request; a quadratic scan makes count * count / 2


def get_task(target: str) -> tuple[Request, Response]:
    body = json.dumps({"id": "t-1", "contextId": "c-1",
                       "status": {"state": "TASK_STATE_COMPLETED"}}).encode()
    return Request("GET", target, HEADERS), Response(200, "OK", HEADERS, body)


def test_a_redacted_api_key_in_the_query_matches_any_live_key() -> None:
    request, response = get_task("/tasks/t-1?key=<redacted:1>&historyLength=2")
    recorded = Exchange(1, classify(request, response), request, response)
    assert recorded.classification.operation == "GetTask"
    engine = Engine([recorded])
    live, _ = get_task("/tasks/t-1?historyLength=2&key=the-real-key")
    assert isinstance(engine.match(live, classify(live)), Match)
    other, _ = get_task("/tasks/t-1?historyLength=5&key=the-real-key")
    assert not isinstance(engine.match(other, classify(other)), Match)


def list_tasks(rpc_id: int) -> Request:
    body = {"jsonrpc": "2.0", "id": rpc_id, "method": "ListTasks", "params": {}}
    return Request("POST", "/a2a/jsonrpc", HEADERS, json.dumps(body).encode())


def test_a_request_naming_no_id_gets_its_own_clients_ids() -> None:
    send_exchange = recorded_sends(1)[0]
    listing = list_tasks(2)
    listed = {"jsonrpc": "2.0", "id": 2, "result": {"tasks": [{"id": "t-1", "contextId": "c-1"}]}}
    response = Response(200, "OK", HEADERS, json.dumps(listed).encode())
    engine = Engine([send_exchange, Exchange(2, classify(listing, response), listing, response)])
    handed = {}
    for client in ("127.0.0.1:5001", "127.0.0.1:5002"):  # two clients, one connection each
        request = send(f"live-{client}", 7)
        found = engine.match(request, classify(request), client=client)
        assert isinstance(found, Match)
        engine.mint_ids(found)
        handed[client] = found.conversation.to_live["t-1"]
    assert handed["127.0.0.1:5001"] != handed["127.0.0.1:5002"]
    for client in ("127.0.0.1:5001", "127.0.0.1:5002", "127.0.0.1:5001"):
        request = list_tasks(9)
        found = engine.match(request, classify(request), client=client)
        assert isinstance(found, Match)
        assert found.conversation.to_live["t-1"] == handed[client]
    # On a connection never seen, the conversation that last sent something answers.
    request = list_tasks(10)
    found = engine.match(request, classify(request), client="127.0.0.1:5003")
    assert isinstance(found, Match)
    assert found.conversation.to_live["t-1"] == handed["127.0.0.1:5002"]
