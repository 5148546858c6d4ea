"""Past v1.0.1: a custom binding named by a URI, the v1.1 draft's task generation and its error."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from recorder.capture import Capture, Exchange, Request, Response, parse, render
from recorder.diff import diff_captures
from recorder.protocol import UNKNOWN, Binding, classify, interfaces_from_card
from recorder.show import capture_rows, render_table

URI = "urn:example:a2a:binding:mail"
CARD = {"supportedInterfaces": [{"url": "http://h:1/mail", "protocolBinding": URI}]}


def test_a_request_at_a_custom_binding_url_is_that_binding() -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage"}).encode()
    c = classify(Request("POST", "/mail/inbox", body=body), interfaces=interfaces_from_card(CARD))
    assert (c.binding, c.binding_uri, c.binding_name) == (Binding.CUSTOM, URI, URI)
    assert (c.operation, c.method, c.reason) == (
        UNKNOWN,
        "POST SendMessage",
        f"custom binding {URI}",
    )
    elsewhere = classify(
        Request("POST", "/other", body=body), interfaces=interfaces_from_card(CARD)
    )
    assert elsewhere.binding is Binding.JSONRPC  # only at its URL


def test_the_capture_names_the_binding_by_its_uri_and_reads_it_back() -> None:
    request = Request("POST", "/mail", body=b"{}")
    c = classify(request, interfaces=interfaces_from_card(CARD))
    capture = Capture("2026-01-01T00:00:00.000000Z", "t", (Exchange(1, c, request, Response(200)),))
    text = render(capture)
    assert f"### 1 unknown {URI} 200" in text
    assert parse(text) == capture


def _task(
    generation: object, state: str = "TASK_STATE_WORKING", task: str = "t-1"
) -> dict[str, object]:
    return {"id": task, "contextId": "c", "status": {"state": state}, "generation": generation}


def _capture(*generations: object, current: object = None) -> Capture:
    exchanges = []
    for n, generation in enumerate(generations, 1):
        params: dict[str, object] = {"id": "t-1"}
        if current is not None:
            params["currentGeneration"] = current
        request = Request("POST", "/a2a/jsonrpc", (("Content-Type", "application/json"),),
                          json.dumps({"jsonrpc": "2.0", "id": n, "method": "GetTask",
                                      "params": params}).encode())  # fmt: skip
        answer = json.dumps({"jsonrpc": "2.0", "id": n, "result": _task(generation)}).encode()
        response = Response(200, "OK", (("Content-Type", "application/json"),), answer)
        exchanges.append(Exchange(n, classify(request, response), request, response, n, 1))
    return Capture("2026-01-01T00:00:00.000000Z", "t", tuple(exchanges))


@given(st.integers(0, 2**40), st.integers(0, 2**40), st.lists(st.integers(0, 3), max_size=4))
def test_generations_compare_by_their_steps_not_their_values(
    a: int, b: int, steps: list[int]
) -> None:
    def counted(start: int) -> list[object]:
        values = [start]
        for step in steps:
            values.append(values[-1] + step)
        return values

    as_text = [str(v) for v in counted(b)]  # int64 is a string in proto-JSON
    same = diff_captures(
        _capture(*counted(a)), _capture(*as_text, current=None), collapse_polls=False
    )
    assert same.same, same.summary()


def test_another_step_is_a_difference() -> None:
    found = diff_captures(_capture(3, 4, 5), _capture(10, 11, 13), collapse_polls=False)
    assert not found.same
    [pair] = [p for p in found.exchanges if p.differences]
    assert [(d.path, d.old, d.new) for d in pair.differences] == [
        ("body.result.generation", "<gen+2>", "<gen+3>")
    ]


def test_show_says_the_generation_the_answer_carried() -> None:
    rows = capture_rows(_capture(7, 8))
    assert [r["generation"] for r in rows] == [7, 8]
    assert "WORKING gen 8" in render_table(rows)


def test_a_stale_if_generation_match_is_named() -> None:
    error = {"code": -32010, "message": "Task generation mismatch"}
    response = Response(200, body=json.dumps({"jsonrpc": "2.0", "id": 1, "error": error}).encode())
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {}}).encode()
    assert (
        classify(Request("POST", "/", body=body), response).error == "TaskGenerationMismatchError"
    )
    rest = {"error": {"code": 409, "status": "ABORTED", "message": "stale"}}
    answer = Response(409, body=json.dumps(rest).encode())
    assert classify(Request("POST", "/message:send", body=b"{}"), answer).error == (
        "TaskGenerationMismatchError"
    )
