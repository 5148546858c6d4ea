"""Everything an A2A endpoint was asked is recorded, through the real recorder.

1. Malformed requests to a real a2a-sdk agent's JSON-RPC endpoint (issue 20, finding 4: they
   were forwarded and answered, and left out of the capture without a word).  Each is recorded
   with operation `unknown`, the exact bytes the client sent and the agent's own answer; the
   console says so; `show`, `lint`, `diff` and `replay` read the capture.
2. The card the recorder fetches at start names the endpoints: junk sent there before any
   valid request is recorded (issue 29: it was left out).  Without a card (`fetch_card=False`,
   nobody fetched one), a path that carried a known JSON-RPC request is an endpoint from then
   on; before anything says so, junk there is left out, and the console says what and why,
   once and in the stop summary.
3. An unknown route under the card's HTTP+JSON interface is recorded with the agent's 404.
4. The variants real SDKs and agents send (sdk-variants.md): Java's trailing-slash route and
   `POST /{tenant}`, .NET's singular method, the 0.1 dialect, card paths and a card known by
   its answer, every push delivery header, unknown methods, bodies that are not JSON, batches:
   a tiny agent of our own answers each, and each is classified and recorded.

Every server binds 127.0.0.1 on a free port and is stopped by its context manager.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from _helpers import exchanges, wait_for
from _tiny_agents import Answer, TinyAgent, TinyRequest, json_head
from click.testing import CliRunner

from recorder.capture import Exchange, read_capture
from recorder.cli import main
from recorder.demo import DemoAgent
from recorder.protocol import UNKNOWN, Binding
from recorder.record import RecordingProxy
from recorder.replay import Replayer

TIMEOUT = 10.0
JSONRPC_PATH = "/a2a/jsonrpc"
REST = "/a2a/rest"
V1 = {"A2A-Version": "1.0"}
JSON = {**V1, "Content-Type": "application/json"}

# (content type, body): what clients nobody tested with send to a JSON-RPC endpoint.
MALFORMED: dict[str, tuple[str, bytes]] = {
    "malformed-json": ("application/json", b'{"jsonrpc":'),
    "batch": ("application/json", b'[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}}]'),
    "empty-batch": ("application/json", b"[]"),
    "unknown-method": ("application/json", b'{"jsonrpc":"2.0","id":7,"method":"tasks/explode"}'),
    "null": ("application/json", b"null"),
    "deep-nesting": ("application/json", b"[" * 100_000),
    "huge-id": ("application/json", b'{"jsonrpc":"2.0","id":' + b"9" * 10_000 + b"}"),
    "xml": ("application/xml", b'<?xml version="1.0"?><call><method>x</method></call>'),
    "invalid-utf8": ("application/json", b'{"jsonrpc":"2.0","id":1,"method":"Get\xff\xfeTask"}'),
    "empty-body": ("application/json", b""),
    "string": ("application/json", b'"SendMessage"'),
}  # fmt: skip


def _post(url: str, content_type: str, body: bytes) -> httpx.Response:
    headers = {**V1, "Content-Type": content_type}
    return httpx.post(url, content=body, headers=headers, timeout=TIMEOUT)


def _unknowns(path: Path) -> list[Exchange]:
    return [e for e in read_capture(path).exchanges if e.classification.operation == UNKNOWN]


@pytest.fixture(scope="module")
def agent() -> DemoAgent:
    with DemoAgent(enable_grpc=False) as running:
        yield running


# ---- 1. malformed requests to the JSON-RPC endpoint --------------------------------------------


@pytest.fixture(scope="module")
def malformed(agent: DemoAgent, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """One recording: the card, each malformed request, a GET; what the clients got."""
    out = tmp_path_factory.mktemp("reach") / "malformed.http"
    lines: list[str] = []
    with RecordingProxy(upstream=agent.base_url, out=out, console=lines.append) as proxy:
        card = httpx.get(proxy.url + "/.well-known/agent-card.json", headers=V1, timeout=TIMEOUT)
        endpoint = next(
            i["url"]
            for i in card.json()["supportedInterfaces"]
            if i["protocolBinding"] == "JSONRPC"
        )
        got = {name: _post(endpoint, ctype, body) for name, (ctype, body) in MALFORMED.items()}
        got["get"] = httpx.get(endpoint, headers=V1, timeout=TIMEOUT)
        assert wait_for(lambda: len(exchanges(out)) == len(got) + 1, timeout=TIMEOUT)
    return {"out": out, "lines": lines, "got": got, "endpoint": endpoint, "proxy": proxy.url}


def test_each_malformed_request_is_recorded_with_the_agents_answer(
    malformed: dict[str, object],
) -> None:
    out, got = malformed["out"], malformed["got"]
    assert isinstance(out, Path) and isinstance(got, dict)
    assert str(malformed["endpoint"]).startswith(str(malformed["proxy"]))  # the card was rewritten
    recorded = _unknowns(out)
    assert len(recorded) == len(got)  # every one, none left out
    for exchange, (name, answer) in zip(recorded, got.items(), strict=True):
        c = exchange.classification
        assert (c.binding, c.operation) == (Binding.JSONRPC, UNKNOWN), name
        assert c.reason, name
        if name in MALFORMED:
            assert exchange.request.body == MALFORMED[name][1], name  # byte for byte
        assert exchange.response is not None, name
        assert exchange.response.status == answer.status_code, name
        assert exchange.response.body == answer.content, name  # the agent's own answer


def test_reasons_and_errors_say_what_happened(malformed: dict[str, object]) -> None:
    out = malformed["out"]
    assert isinstance(out, Path)
    by_body = {e.request.body: e.classification for e in _unknowns(out)}
    unknown = by_body[MALFORMED["unknown-method"][1]]
    assert (unknown.method, unknown.reason) == (
        "tasks/explode",
        "unknown JSON-RPC method 'tasks/explode'",
    )
    assert unknown.error == "MethodNotFoundError"  # the agent's -32601
    assert by_body[MALFORMED["empty-batch"][1]].reason == "empty JSON-RPC batch"
    assert by_body[MALFORMED["null"][1]].reason == "body is JSON null, not a JSON-RPC request"
    assert (
        by_body[MALFORMED["deep-nesting"][1]].reason
        == "body not read as JSON (nested too deep to read)"
    )
    assert "4300 digits" in str(by_body[MALFORMED["huge-id"][1]].reason)
    assert "can't decode byte 0xff" in str(by_body[MALFORMED["invalid-utf8"][1]].reason)


def test_the_console_shows_each_one(malformed: dict[str, object]) -> None:
    lines = malformed["lines"]
    assert isinstance(lines, list)
    unknown_lines = [line for line in lines if " JSONRPC unknown " in line]
    assert len(unknown_lines) == len(MALFORMED) + 1, lines
    assert any("MethodNotFoundError" in line for line in unknown_lines)
    assert not [line for line in lines if line.startswith("left out")]


def test_show_lint_and_diff_read_the_capture(malformed: dict[str, object]) -> None:
    out = malformed["out"]
    runner = CliRunner()
    shown = runner.invoke(main, ["show", str(out)])
    assert shown.exit_code == 0, shown.output
    assert shown.output.count("unknown") >= len(MALFORMED)
    as_json = runner.invoke(main, ["show", "--json", str(out)])
    assert as_json.exit_code == 0, as_json.output
    for number in (2, 5, 7, 10):
        one = runner.invoke(main, ["show", str(out), str(number)])
        assert one.exit_code == 0, one.output
    linted = runner.invoke(main, ["lint", str(out)])
    assert linted.exit_code in (0, 1), linted.output  # findings or none, never a crash
    assert "Traceback" not in linted.output
    diffed = runner.invoke(main, ["diff", str(out), str(out)])
    assert diffed.exit_code == 0, diffed.output


def test_replay_serves_the_agents_own_error_to_an_unknown_method(
    malformed: dict[str, object],
) -> None:
    out = malformed["out"]
    assert isinstance(out, Path)
    body = MALFORMED["unknown-method"][1]
    recorded = next(e for e in _unknowns(out) if e.request.body == body)
    assert recorded.response is not None
    with Replayer([read_capture(out)]) as replayer:
        answer = _post(replayer.url + JSONRPC_PATH, "application/json", body)
    assert answer.status_code == recorded.response.status
    assert answer.json() == json.loads(recorded.response.body)


# ---- 2. without a card --------------------------------------------------------------------------


def _send(url: str) -> httpx.Response:
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "echo hi"}]}
    envelope = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    return httpx.post(url, json=envelope, headers=V1, timeout=TIMEOUT)


FIRST = ("malformed-json", "null", "xml", "invalid-utf8")


def test_junk_before_any_valid_request_is_recorded_as_the_card_fetched_at_start_says(
    agent: DemoAgent, tmp_path: Path
) -> None:
    out = tmp_path / "first.http"
    lines: list[str] = []
    with RecordingProxy(upstream=agent.base_url, out=out, console=lines.append) as proxy:
        got = {name: _post(proxy.url + JSONRPC_PATH, *MALFORMED[name]) for name in FIRST}
        assert wait_for(lambda: len(exchanges(out)) == len(FIRST), timeout=TIMEOUT)
    recorded = read_capture(out).exchanges
    assert [e.request.body for e in recorded] == [MALFORMED[name][1] for name in FIRST]
    for exchange, answer in zip(recorded, got.values(), strict=True):
        assert exchange.classification.operation == UNKNOWN
        assert exchange.response is not None and exchange.response.body == answer.content
    assert not [line for line in lines if line.startswith("left out")], lines


def test_without_a_card_a_known_request_makes_the_path_an_endpoint(
    agent: DemoAgent, tmp_path: Path
) -> None:
    out = tmp_path / "learned.http"
    lines: list[str] = []
    recording = RecordingProxy(
        upstream=agent.base_url, out=out, console=lines.append, fetch_card=False
    )
    with recording as proxy:
        url = proxy.url + JSONRPC_PATH
        before = _post(url, "application/json", b"null")  # nothing says this is an endpoint yet
        again = _post(url, "application/json", b"null")
        assert _send(url).status_code == 200
        after = _post(url, "application/json", b"null")
        assert wait_for(lambda: len(exchanges(out)) == 2, timeout=TIMEOUT)
    assert before.status_code == again.status_code == after.status_code == 200  # all forwarded
    first, second = read_capture(out).exchanges
    assert first.classification.operation == "SendMessage"
    assert (second.classification.operation, second.request.body) == (UNKNOWN, b"null")
    # The two left out are said: once as they happen, and counted at stop.
    said = [line for line in lines if line.startswith("left out")]
    assert said[0] == (
        "left out (not A2A; --all records it): no A2A route for POST /a2a/jsonrpc"
    ), lines
    assert said[1] == (
        "left out 2 exchanges that are not A2A (--all records them): "
        "2× no A2A route for POST /a2a/jsonrpc"
    ), lines
    assert len(said) == 2


# ---- 3. an unknown route under the card's HTTP+JSON interface -----------------------------------


def test_unknown_rest_route_is_recorded_with_the_agents_answer(
    agent: DemoAgent, tmp_path: Path
) -> None:
    out = tmp_path / "rest.http"
    with RecordingProxy(upstream=agent.base_url, out=out) as proxy:
        card = httpx.get(proxy.url + "/.well-known/agent-card.json", headers=V1, timeout=TIMEOUT)
        rest = next(
            i["url"]
            for i in card.json()["supportedInterfaces"]
            if i["protocolBinding"] == "HTTP+JSON"
        )
        answer = httpx.get(rest + "/tasks/t-1/history", headers=V1, timeout=TIMEOUT)
        assert wait_for(lambda: len(exchanges(out)) == 2, timeout=TIMEOUT)
    exchange = read_capture(out).exchanges[1]
    c = exchange.classification
    assert (c.binding, c.operation, c.method) == (
        Binding.HTTP_JSON,
        UNKNOWN,
        "GET /tasks/t-1/history",
    )
    assert c.reason == "no HTTP+JSON route for GET /tasks/t-1/history"
    assert exchange.response is not None
    assert (exchange.response.status, exchange.response.body) == (
        answer.status_code,
        answer.content,
    )
    assert answer.status_code == 404


# ---- 4. the variants real SDKs and agents send, each classified and recorded ---------------------

CARD_SHAPED_PATHS = (
    "/.well-known/agent-card.json",
    "/.well-known/agent.json",
    "/.well-known/echo-agent/agent-card.json",
    "/agents/echo/.well-known/agent-card.json",
    "/a2a/",  # no card path: known by its answer
)


def _interface(url: str, binding: str) -> dict[str, str]:
    return {"url": url, "protocolBinding": binding, "protocolVersion": "1.0"}


async def _own_answer(url: str, request: TinyRequest, answer: Answer) -> None:
    """An agent that serves its card wherever asked and answers the rest with its own errors."""
    if request.method == "GET" and request.path == "/.well-known/agent.json":
        # A v0.1 card (specification/json/a2a.json at tag v0.1.0): one `url`, JSON-RPC.
        v01 = {"name": "own answers", "url": url + JSONRPC_PATH, "version": "1",
               "capabilities": {}, "skills": []}  # fmt: skip
        await _json(answer, 200, v01)
    elif request.method == "GET" and request.path in CARD_SHAPED_PATHS:
        interfaces = [
            _interface(url + JSONRPC_PATH, "JSONRPC"),
            _interface(url + REST, "HTTP+JSON"),
        ]
        card = {
            "name": "own answers", "description": "", "version": "1",
            "supportedInterfaces": interfaces, "capabilities": {}, "skills": [],
            "defaultInputModes": [], "defaultOutputModes": [],
        }  # fmt: skip
        await _json(answer, 200, card)
    elif request.path.startswith(REST + "/"):
        await _json(answer, 404, {"error": {"code": 404, "status": "NOT_FOUND", "message": "no"}})
    elif request.path == "/hook":
        await answer(200, json_head(0), [])
    else:
        try:
            rpc_id = json.loads(request.body).get("id")
        except (ValueError, AttributeError):
            rpc_id = None
        error = {"code": -32601, "message": "not served by this agent"}
        await _json(answer, 200, {"jsonrpc": "2.0", "id": rpc_id, "error": error})


async def _json(answer: Answer, status: int, document: object) -> None:
    body = json.dumps(document).encode()
    await answer(status, json_head(len(body)), [body])


def _rpc(method: str, params: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()


STATUS_UPDATE = json.dumps({"message": {"taskId": "t1", "contextId": "c1", "role": "ROLE_AGENT"}})
# name -> (verb, path, headers, body, operation, version or None)
SENT: dict[str, tuple[str, str, dict[str, str], bytes, str, str | None]] = {
    "java-list-trailing-slash": ("GET", "/a2a/rest/tasks/t1/pushNotificationConfigs/", V1, b"",
                                 "ListTaskPushNotificationConfigs", "1.0"),
    "dotnet-singular-method": ("POST", JSONRPC_PATH, JSON,
                               _rpc("ListTaskPushNotificationConfig", {"taskId": "t1"}),
                               "ListTaskPushNotificationConfigs", "1.0"),
    "java-tenant-path": ("POST", JSONRPC_PATH + "/acme", JSON, _rpc("GetTask", {"id": "t1"}),
                         "GetTask", "1.0"),
    "tasks/send": ("POST", JSONRPC_PATH, JSON, _rpc("tasks/send", {"id": "t1", "message": {}}),
                   "SendMessage", "0.1"),
    "tasks/sendSubscribe": ("POST", JSONRPC_PATH, JSON,
                            _rpc("tasks/sendSubscribe", {"id": "t1", "message": {}}),
                            "SendStreamingMessage", "0.1"),
    "tasks/pushNotification/set": ("POST", JSONRPC_PATH, JSON,
                                   _rpc("tasks/pushNotification/set", {"id": "t1"}),
                                   "CreateTaskPushNotificationConfig", "0.1"),
    "tasks/pushNotification/get": ("POST", JSONRPC_PATH, JSON,
                                   _rpc("tasks/pushNotification/get", {"id": "t1"}),
                                   "GetTaskPushNotificationConfig", "0.1"),
    "fasta2a-tasks/list": ("POST", JSONRPC_PATH, JSON, _rpc("tasks/list", {}), "ListTasks", "0.1"),
    "x-a2a-notification-token": ("POST", "/hook", {"X-A2A-Notification-Token": "t"},
                                 STATUS_UPDATE.encode(), "PushDelivery", "1.0"),
    "go-a2a-notification-token": ("POST", "/hook", {"A2A-Notification-Token": "t"},
                                  STATUS_UPDATE.encode(), "PushDelivery", "1.0"),
    "authorization": ("POST", "/hook", {"Authorization": "Bearer t"}, STATUS_UPDATE.encode(),
                      "PushDelivery", "1.0"),
    "unknown-method": ("POST", JSONRPC_PATH, JSON, _rpc("tasks/explode", {}), UNKNOWN, None),
    "not-json": ("POST", JSONRPC_PATH, JSON, b"hello agent", UNKNOWN, None),
    "xml": ("POST", JSONRPC_PATH, {"Content-Type": "application/xml"}, b"<x/>", UNKNOWN, None),
    "batch": ("POST", JSONRPC_PATH, JSON, b"[" + _rpc("GetTask", {"id": "t1"}) + b"]", UNKNOWN,
              None),
    "empty-batch": ("POST", JSONRPC_PATH, JSON, b"[]", UNKNOWN, None),
    "unknown-route": ("DELETE", "/a2a/rest/tasks/t1", V1, b"", UNKNOWN, None),
}  # fmt: skip


def test_variants_are_classified_and_recorded(tmp_path: Path) -> None:
    out = tmp_path / "variants.http"
    agent = TinyAgent(lambda request, answer: _own_answer(agent.base_url, request, answer))
    with agent:
        # fetch_card=False: the recorder's own card fetch at start would be one more request.
        with RecordingProxy(upstream=agent.base_url, out=out, fetch_card=False) as proxy:
            cards = [httpx.get(proxy.url + p, timeout=TIMEOUT) for p in CARD_SHAPED_PATHS]
            answers = {
                name: httpx.request(
                    verb, proxy.url + path, headers=h, content=body, timeout=TIMEOUT
                )
                for name, (verb, path, h, body, _op, _v) in SENT.items()
            }
            total = len(CARD_SHAPED_PATHS) + len(SENT)
            assert wait_for(lambda: len(exchanges(out)) == total, timeout=TIMEOUT)
        seen = len(agent.requests)

    assert seen == len(CARD_SHAPED_PATHS) + len(SENT)  # every request reached the agent
    for card in cards:  # each card, wherever served, points the client at the recorder
        served = card.json()
        urls = [i["url"] for i in served.get("supportedInterfaces", [])] + [served.get("url", "")]
        assert all(u.startswith(proxy.url) for u in urls if u), urls
    assert cards[1].json()["url"] == proxy.url + JSONRPC_PATH  # the v0.1 card's only URL
    recorded = {e.request.target: e for e in read_capture(out).exchanges[: len(CARD_SHAPED_PATHS)]}
    for path in CARD_SHAPED_PATHS:
        assert recorded[path].classification.operation == "AgentCard", path
        assert "card rewritten" in recorded[path].notes, path
    rest = read_capture(out).exchanges[len(CARD_SHAPED_PATHS) :]
    for exchange, (name, (verb, path, _h, body, operation, version)) in zip(
        rest, SENT.items(), strict=True
    ):
        c = exchange.classification
        assert (exchange.request.method, exchange.request.target) == (verb, path), name
        assert exchange.request.body == body, name
        assert (c.operation, c.version.value if c.version else None) == (operation, version) or (
            operation == UNKNOWN and c.operation == UNKNOWN
        ), (name, c)
        assert exchange.response is not None, name
        assert exchange.response.body == answers[name].content, name
    tenant = next(e for e in rest if e.request.target == JSONRPC_PATH + "/acme")
    assert tenant.classification.tenant == "acme"
    go = next(e for e in rest if e.request.header("A2A-Notification-Token") is not None)
    assert str(go.request.header("A2A-Notification-Token")).startswith("<redacted:")
