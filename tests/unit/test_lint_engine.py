"""The lint engine: the pure per-exchange API, the live Linter, ordering, lines, robustness."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from _lintkit import KEYS, assemble, good_session, jsonrpc, message, task
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_lint_rules import _late_config

from recorder.capture import Exchange, GrpcMessage, Request, Response, SseEvent, read_capture
from recorder.lint import (
    RULES,
    Level,
    LintContext,
    Linter,
    Rule,
    exchange_lines,
    lint_capture,
    lint_exchange,
)
from recorder.protocol import Classification, Severity, SpecVersion

DATA = Path(__file__).resolve().parents[1] / "data" / "lint"


def _broken() -> list[Exchange]:
    session = good_session()
    session[1] = jsonrpc("SendMessage", {"message": message()}, result={"task": task("done")})
    return session


def test_lint_exchange_is_pure_and_the_context_moves_on_explicitly() -> None:
    capture = assemble(_broken())
    context = LintContext.create("1.0.1", keys=KEYS)
    card, send = capture.exchanges[0], capture.exchanges[1]
    assert lint_exchange(card, context) == []
    assert context.session.card is None  # linting taught the context nothing
    after = context.saw_request(card).saw_response(card)
    assert after.session.card is not None and len(after.session.interfaces) == 3
    (finding,) = lint_exchange(send, after)
    assert (finding.rule, finding.exchange, finding.operation) == ("names.enums", 2, "SendMessage")
    assert finding.location == "exchange 2"
    assert finding.brief.startswith("MUST names.enums: TaskStatus.state is 'done'")


def test_the_linter_fed_live_finds_what_lint_capture_finds() -> None:
    capture = assemble(_late_config(None)())
    offline = lint_capture(capture, keys=KEYS)
    assert [f.rule for f in offline] == ["push.authentication"]
    linter = Linter(keys=KEYS)
    live = []
    for exchange in capture.exchanges:  # the send started before the delivery
        if exchange.classification.operation == "SendMessage":
            linter.saw_request(exchange)
    for exchange in capture.exchanges:
        live += linter.feed(exchange)
    assert [(f.rule, f.exchange) for f in live] == [(f.rule, f.exchange) for f in offline]


def test_a_linter_fed_only_on_completion_does_not_judge_a_config_it_has_not_seen() -> None:
    capture = assemble(_late_config(None)())
    linter = Linter(keys=KEYS)
    assert [f for x in capture.exchanges for f in linter.feed(x)] == []


def test_findings_are_ordered_by_exchange_then_by_table_and_carry_lines() -> None:
    text = (DATA / "clean.http").read_text(encoding="utf-8")
    lines = exchange_lines(text)
    assert sorted(lines) == list(range(1, 13))
    assert all(text.split("\n")[line - 1].startswith(f"### {n} ") for n, line in lines.items())
    found = lint_capture(
        read_capture(DATA / "clean.http"),
        spec="1.0.0",
        file="x.http",
        text=text,
        rules=[r for r in RULES if r.id != "card.signature-verifies"],
    )
    assert found == []
    broken = assemble(_broken())
    found = lint_capture(broken, file="b.http", text=text)
    assert [(f.file, f.line) for f in found] == [("b.http", lines[2])]


def test_exchanges_that_are_not_a2a_give_no_findings() -> None:
    junk = Exchange(
        1, Classification(reason="no A2A route"), Request("GET", "/favicon.ico"), Response(404)
    )
    assert lint_exchange(junk, LintContext()) == []


def _explodes(view: Any, session: Any, spec: Any) -> list[Any]:
    raise KeyError("boom")


def test_a_failing_check_is_a_may_finding_not_a_crash() -> None:
    rule = Rule(
        "test.explodes",
        "A rule whose check fails.",
        _explodes,
        {SpecVersion.V1_0_1: Level(Severity.MUST, "§0")},
    )
    context = LintContext.create("1.0.1", rules=[rule])
    (finding,) = lint_exchange(assemble(good_session()).exchanges[1], context)
    assert finding.severity is Severity.MAY and "KeyError" in finding.message


_KEYS = st.sampled_from(
    [
        "task",
        "message",
        "status",
        "state",
        "role",
        "parts",
        "id",
        "contextId",
        "kind",
        "statusUpdate",
        "error",
        "code",
        "data",
        "details",
        "result",
        "jsonrpc",
        "@type",
        "reason",
        "supportedInterfaces",
        "signatures",
        "protected",
        "url",
        "text",
    ]
)
_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=8)
    | st.sampled_from(["TASK_STATE_WORKING", "completed", "ROLE_USER", "task"])
)


def _nest(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=5)


JSON = st.recursive(_LEAVES, _nest, max_leaves=12)
TARGETS = [
    ("POST", "/a2a/jsonrpc"), ("POST", "/a2a/rest/message:send"),
    ("POST", "/a2a/rest/message:stream"), ("GET", "/a2a/rest/tasks/t1"),
    ("GET", "/.well-known/agent-card.json"), ("POST", "/webhook"),
    ("POST", "/lf.a2a.v1.A2AService/SendStreamingMessage"), ("POST", "/a2a/rest/v1/message:send"),
    ("POST", "/a2a.v1.A2AService/SendMessage"), ("GET", "/a2a/rest/tasks?status=working"),
]  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    target=st.sampled_from(TARGETS),
    method=st.sampled_from(
        ["SendMessage", "GetTask", "SendStreamingMessage", "message/send", "CancelTask"]
    ),
    request=JSON,
    answer=JSON,
    events=st.lists(JSON, max_size=3),
    status=st.sampled_from([200, 400, 404, 500]),
    grpc_status=st.sampled_from(["0", "5", "9", "x", ""]),
)
def test_no_check_fails_on_any_json(
    target: tuple[str, str],
    method: str,
    request: Any,
    answer: Any,
    events: list[Any],
    status: int,
    grpc_status: str,
) -> None:
    verb, path = target
    grpc = path.startswith(("/lf.", "/a2a.v1."))
    if path == "/a2a/jsonrpc":
        request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": request}
    headers = (("content-type", "application/grpc"),) if grpc else (("A2A-Version", "x"),)
    req = Request(
        verb,
        path,
        headers,
        b"" if grpc else json.dumps(request).encode(),
        messages=(GrpcMessage(0, json=json.dumps(request)),) if grpc else (),
    )
    resp = Response(
        status,
        "",
        (("content-type", "text/event-stream"),),
        b"" if events else json.dumps(answer).encode(),
        events=tuple(SseEvent(0, ("data: " + json.dumps(e),)) for e in events),
        messages=tuple(GrpcMessage(0, json=json.dumps(e)) for e in events) if grpc else (),
        trailers=(("grpc-status", grpc_status),),
    )
    card, push_config = good_session()[0], good_session()[9]
    capture = assemble([card, push_config, Exchange(0, Classification(), req, resp)])
    found = lint_capture(capture, keys=KEYS)
    assert not [f for f in found if f.message.startswith("the check failed")], found


def test_bytes_that_are_not_utf_8_neither_crash_a_check_nor_a_report() -> None:
    # A capture keeps a byte that is not UTF-8 as a lone surrogate (surrogateescape), and JSON
    # may escape one ("\udcff"); checks and every report must cope with both.
    from recorder.lint import LintRun, render
    from recorder.protocol import LATEST_SPEC

    session = good_session()
    weird_card = {
        "name": "\udcff",
        "\udcfe": 1,
        "signatures": [{"protected": "e30", "signature": "AA"}],
    }
    card = session[0]
    assert card.response is not None
    session[0] = replace(
        card,
        response=replace(
            card.response,
            body=json.dumps(weird_card).encode(),
            headers=(("Content-Type", "application/json; x=\udcff"),),
        ),
    )
    stream = session[4]
    assert stream.response is not None
    session[4] = replace(
        stream,
        response=replace(
            stream.response,
            headers=(("Content-Type", "text/\udcffevent-stream"),),
            events=(SseEvent(0, ("data: {\udcff",)),),
        ),
    )
    found = lint_capture(assemble(session), keys={"": {}})
    assert found and not [f for f in found if f.message.startswith("the check failed")]
    run = LintRun(LATEST_SPEC, RULES, ("x.http",), tuple(found))
    for fmt in ("text", "json", "sarif"):
        render(run, fmt).encode("utf-8")  # no lone surrogate left to refuse
