"""Verify's pure core: the plan of sends, live ids, outgoing requests, credentials (no sockets)."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path

import pytest
from _agent_model import Client, Recording

import recorder.verify as verify
from recorder.capture import Capture, Exchange, GrpcMessage, Request, Response, read_capture
from recorder.protocol import Binding, Interface, Version, classify
from recorder.protocol._grpc import decode_message
from recorder.script import Provenance, answer_documents
from recorder.verify._outgoing import (
    PathMap,
    grpc_outgoing,
    http_outgoing,
    substitute_target,
)
from recorder.verify._plan import events_by

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "captures"


def _plan(name: str) -> verify.Plan:
    return verify.make_plan(read_capture(CORPUS / name))


def _ops(plan: verify.Plan) -> list[list[str]]:
    return [[s.exchange.classification.operation or "-" for s in send.steps] for send in plan.sends]


# ---- the plan -----------------------------------------------------------------------------


def test_a_cancel_during_a_subscription_waits_for_its_first_event_not_for_its_end() -> None:
    plan = _plan("a2a-python-1.3.0/06-subscribe.http")
    assert _ops(plan) == [["AgentCard"], ["SendMessage"], ["SubscribeToTask"], ["CancelTask"]]
    card, send, subscribe, cancel = plan.sends
    assert subscribe.concurrent == frozenset()
    assert cancel.concurrent == {subscribe.step.number}
    # The subscription's second event (the canceled status) came because of the cancel.
    assert cancel.events == ((subscribe.step.number, 1),)
    assert cancel.waits_us[subscribe.step.number] > 0


def test_a_run_of_identical_polls_is_one_send() -> None:
    plan = _plan("a2a-python-1.3.0/04-polling.http")
    ops = _ops(plan)
    assert ops[:2] == [["AgentCard"], ["SendMessage"]]
    assert len(ops) == 3 and set(ops[2]) == {"GetTask"} and len(ops[2]) > 1
    assert plan.sends[2].is_poll and not plan.sends[1].is_poll
    assert plan.sends[2].step is plan.sends[2].steps[-1]


def test_push_deliveries_are_expected_by_webhook_and_counted_in_the_waits() -> None:
    plan = _plan("a2a-python-1.3.0/08-push-configs.http")
    assert [len(found) for found in plan.deliveries.values()] == [4]
    (key,) = plan.deliveries
    assert key.startswith("http://127.0.0.1:") and key.endswith("/webhook")
    assert all(d.classification.operation == "PushDelivery" for d in plan.deliveries[key])
    assert not any(s.step.exchange.classification.operation == "PushDelivery" for s in plan.sends)
    assert plan.numbers == {
        e.number for e in read_capture(CORPUS / "a2a-python-1.3.0/08-push-configs.http").exchanges
    }


def test_a_grpc_recording_without_deliveries_expects_none() -> None:
    plan = _plan("a2a-python-1.3.0/grpc/08-push-configs.http")
    assert plan.deliveries == {}  # the corpus's gRPC recorder (before its relay) saw none


def test_an_exchange_recorded_without_a_response_is_skipped_with_its_reason() -> None:
    capture = read_capture(CORPUS / "a2a-python-1.3.0/03-blocking-task.http")
    cut = replace(capture.exchanges[1], response=None, error="upstream reset")
    plan = verify.make_plan(replace(capture, exchanges=(capture.exchanges[0], cut)))
    assert _ops(plan) == [["AgentCard"]]
    (skipped,) = plan.skipped
    assert skipped.exchange.number == cut.number
    assert "recorded without a response (upstream reset)" in skipped.reason


def test_events_count_only_those_surely_before_a_moment() -> None:
    capture = read_capture(CORPUS / "a2a-python-1.3.0/06-subscribe.http")
    subscribe = capture.exchanges[2]
    end = subscribe.started_us + subscribe.duration_us
    assert events_by(subscribe, subscribe.started_us) == 0
    assert events_by(subscribe, end + 1) == 2
    assert events_by(capture.exchanges[1], end) == 0  # no stream


# ---- live ids -----------------------------------------------------------------------------


def _recording() -> tuple[Capture, list[str]]:
    recording = Recording()
    client = Client("c")
    recording.run(client, [("send", "echo a"), ("get", 0), ("probe-get", "nope-1"), ("list", None)])
    return recording.capture(), client.tasks


def test_ids_the_client_chooses_are_fresh_and_issued_ones_wait_for_the_agent() -> None:
    capture, tasks = _recording()
    plan = verify.make_plan(capture)
    send, get, probe, listing = (s.step for s in plan.sends)
    ids = verify.LiveIds(lambda url: "http://live/hook", dict(plan.script.issuer))
    mapping = ids.mapping(send)
    (message_id,) = [r.slot.value for r in send.slots if r.provenance is Provenance.FRESH]
    assert mapping[message_id] != message_id and len(mapping[message_id]) == 36
    assert ids.missing(get)[0].value == tasks[0]
    assert ids.missing(get)[0].issuer == send.number
    assert ids.mapping(probe) == {}  # a probe goes out as recorded
    assert ids.missing(probe) == [] and ids.missing(listing) == []


def test_live_answers_teach_by_place_whatever_their_key_order() -> None:
    capture, tasks = _recording()
    plan = verify.make_plan(capture)
    send, get = plan.sends[0].step, plan.sends[1].step
    ids = verify.LiveIds(lambda url: url, dict(plan.script.issuer))
    live = {
        "jsonrpc": "2.0",
        "id": 9,
        "result": {
            "task": {
                "status": {"state": "TASK_STATE_COMPLETED"},
                "contextId": "live-ctx",
                "id": "live-task",
                "history": [],
                "artifacts": [{"parts": [], "artifactId": "live-art", "name": "echo"}],
            }
        },
    }
    ids.learn(send, [live], success=True)
    assert ids.to_live[tasks[0]] == "live-task"
    assert ids.taught[tasks[0]] == send.number
    assert ids.missing(get) == [] and ids.mapping(get) == {tasks[0]: "live-task"}


def test_an_error_teaches_nothing() -> None:
    capture, tasks = _recording()
    plan = verify.make_plan(capture)
    ids = verify.LiveIds(lambda url: url, dict(plan.script.issuer))
    ids.learn(
        plan.sends[0].step,
        [{"jsonrpc": "2.0", "id": 1, "result": {"task": {"id": "x"}}}],
        success=False,
    )
    assert tasks[0] not in ids.to_live


def test_a_stream_teaches_event_by_event() -> None:
    plan = _plan("a2a-python-1.3.0/05-streaming.http")
    stream = plan.sends[1].step
    recorded_task = stream.response_ids[0]
    ids = verify.LiveIds(lambda url: url, dict(plan.script.issuer))
    first = json.loads(json.dumps(answer_documents(stream.exchange.response)[0]))
    first["result"]["task"]["id"] = "live-1"
    ids.learn_document(stream, 0, first)
    assert ids.to_live[recorded_task] == "live-1"


def test_pairs_fall_back_to_any_document_at_the_same_place() -> None:
    recorded = [{"task": {"id": "t"}}, {"statusUpdate": {"taskId": "t"}}]
    live = [{"statusUpdate": {"taskId": "T"}}]
    assert verify.pair_ids(recorded, live) == [("t", "T")]
    assert verify.pair_ids(recorded, live, anywhere=False) == []


def test_poll_states_read_every_state_in_order() -> None:
    documents = [{"result": {"tasks": [{"status": {"state": "A"}}, {"status": {"state": "B"}}]}}]
    assert verify.poll_states(documents) == ("A", "B")
    assert verify.poll_states([{"error": {"code": 1}}]) == ()


# ---- outgoing requests --------------------------------------------------------------------


def test_target_ids_are_replaced_whole_segment_by_segment() -> None:
    mapping = {"t-1": "live/1", "c-1": "live-c"}
    assert substitute_target("/a2a/rest/tasks/t-1:cancel", mapping) == (
        "/a2a/rest/tasks/live%2F1:cancel"
    )
    assert substitute_target("/tasks/t-1/pushNotificationConfigs/c-1", mapping) == (
        "/tasks/live%2F1/pushNotificationConfigs/live-c"
    )
    assert substitute_target("/tasks?contextId=c-1&pageSize=5", mapping) == (
        "/tasks?contextId=live-c&pageSize=5"
    )
    assert substitute_target("/tasks/t-10?x=t-1x", mapping) == "/tasks/t-10?x=t-1x"


def test_paths_move_from_the_recorded_agent_s_interfaces_to_the_live_one_s() -> None:
    recorded = [
        Interface("http://old:1/a2a/jsonrpc", Binding.JSONRPC, Version.V1_0),
        Interface("http://old:1/a2a/rest", Binding.HTTP_JSON, Version.V1_0),
    ]
    live = [
        Interface("http://new:2/rpc", Binding.JSONRPC, Version.V1_0),
        Interface("http://new:2/a2a/rest", Binding.HTTP_JSON, Version.V1_0),
    ]
    paths = PathMap.of(recorded, live, ("", "/agent"))
    assert paths.apply(Binding.JSONRPC, Version.V1_0, "/a2a/jsonrpc/") == "/rpc/"
    assert paths.apply(Binding.JSONRPC, None, "/a2a/jsonrpc?x=1") == "/rpc?x=1"
    assert paths.apply(Binding.HTTP_JSON, Version.V1_0, "/a2a/rest/tasks/1") == (
        "/a2a/rest/tasks/1"
    )
    assert paths.apply(Binding.HTTP, None, "/.well-known/agent-card.json") == (
        "/agent/.well-known/agent-card.json"
    )
    assert paths.apply(Binding.JSONRPC, Version.V1_0, "/elsewhere") == "/elsewhere"


def _request(
    headers: tuple[tuple[str, str], ...], body: bytes = b"{}", target: str = "/a2a/jsonrpc"
) -> Request:
    return Request("POST", target, headers, body)


def test_http_requests_go_out_as_recorded_less_framing_with_credentials_in() -> None:
    request = _request(
        (
            ("Host", "old:1"),
            ("Content-Length", "2"),
            ("Connection", "keep-alive"),
            ("Authorization", "Bearer <redacted:1>"),
            ("A2A-Version", "1.0"),
        ),
        b'{"id": "t-1"}',
    )
    credentials = verify.Credentials.of(["Authorization: Bearer real"])
    out = http_outgoing(request, Binding.JSONRPC, Version.V1_0, {"t-1": "live"}, credentials)
    assert out.headers == (
        ("Connection", "keep-alive"),
        ("Authorization", "Bearer real"),
        ("A2A-Version", "1.0"),
    )
    assert out.body == b'{"id": "live"}' and out.method == "POST"


def test_a_placeholder_never_goes_out() -> None:
    request = _request((("Authorization", "Bearer <redacted:1>"),))
    with pytest.raises(verify.PlaceholderError, match="header Authorization"):
        http_outgoing(request, Binding.JSONRPC, None, {}, verify.Credentials())
    query = _request((), target="/a2a/jsonrpc?key=%3Credacted%3A2%3E")
    with pytest.raises(verify.PlaceholderError, match="query"):
        http_outgoing(query, Binding.JSONRPC, None, {}, verify.Credentials())
    filled = http_outgoing(query, Binding.JSONRPC, None, {}, verify.Credentials.of((), ["key=k-1"]))
    assert filled.target == "/a2a/jsonrpc?key=k-1"


def test_a_body_placeholder_that_stands_for_a_supplied_credential_goes_out_filled() -> None:
    """The recorder sweeps a known secret from bodies with its header's placeholder (issue
    20 #6): the value supplied for the header fills the body too, JSON-escaped."""
    request = _request(
        (("Authorization", "Bearer <redacted:1>"), ("Cookie", "sid=<redacted:2>; t=<redacted:3>")),
        b'{"text": "my key is <redacted:1>, cookie <redacted:2>", "x": "<redacted:9>"}',
    )
    given = verify.Credentials.of(['Authorization: Bearer re"al-secret', "Cookie: sid=s-1; t=dark"])
    credentials = given.reading([request])
    assert credentials.placeholders == {
        "<redacted:1>": 're"al-secret',
        "<redacted:2>": "s-1",
        "<redacted:3>": "dark",
    }
    with pytest.raises(verify.PlaceholderError, match="the body"):  # <redacted:9> is unknown
        http_outgoing(request, Binding.JSONRPC, None, {}, credentials)
    known = replace(request, body=request.body.replace(b', "x": "<redacted:9>"', b""))
    out = http_outgoing(known, Binding.JSONRPC, None, {}, credentials)
    assert json.loads(out.body) == {"text": 'my key is re"al-secret, cookie s-1'}
    assert (
        verify.Credentials.of(["Authorization: Basic other"]).reading([request]).placeholders == {}
    )


def test_a_body_recorded_decoded_goes_out_encoded_again() -> None:
    request = _request((("Content-Encoding", "gzip"),), b'{"a": 1}')
    out = http_outgoing(request, Binding.JSONRPC, None, {}, verify.Credentials())
    assert gzip.decompress(out.body) == b'{"a": 1}'
    odd = http_outgoing(
        _request((("Content-Encoding", "zstd"),)), Binding.JSONRPC, None, {}, verify.Credentials()
    )
    assert odd.headers == ()


def test_grpc_calls_carry_custom_metadata_and_the_message_with_live_ids() -> None:
    path = "/lf.a2a.v1.A2AService/GetTask"
    request = Request(
        "POST",
        path,
        (
            (":authority", "old:1"),
            ("content-type", "application/grpc"),
            ("te", "trailers"),
            ("a2a-version", "1.0"),
            ("x-trace-bin", "AAEC"),
            ("user-agent", "grpc-python"),
        ),
        messages=(GrpcMessage(0, json='{"id":"t-1"}', type_name="lf.a2a.v1.GetTaskRequest"),),
    )
    out = grpc_outgoing(request, {"t-1": "live-1"}, verify.Credentials())
    assert out.metadata == (("a2a-version", "1.0"), ("x-trace-bin", b"\x00\x01\x02"))
    assert decode_message(path, out.message, "request") == (
        "lf.a2a.v1.GetTaskRequest",
        '{"id":"live-1"}',
    )
    assert not out.server_streaming
    stream = grpc_outgoing(
        replace(
            request,
            target="/lf.a2a.v1.A2AService/SubscribeToTask",
            messages=(GrpcMessage(0, json='{"id":"t-1"}'),),
        ),
        {},
        verify.Credentials(),
    )
    assert stream.server_streaming


# ---- credentials --------------------------------------------------------------------------


def test_credentials_come_from_options_then_the_environment() -> None:
    credentials = verify.Credentials.of(
        ["X-Api-Key: from-cli"],
        ["key=k"],
        {
            "A2A_VERIFY_HEADER_X_API_KEY": "from-env",
            "A2A_VERIFY_HEADER_COOKIE": "c=1",
            "A2A_VERIFY_PARAM_TOKEN": "t",
        },
    )
    assert credentials.header("x-api-key") == "from-cli"
    assert credentials.header("Cookie") == "c=1"
    assert credentials.param("token") == "t" and credentials.param("key") == "k"
    assert verify.Credentials.environment_name("header", "X-API-Key") == (
        "A2A_VERIFY_HEADER_X_API_KEY"
    )
    for bad in (["no colon"], [": value"]):
        with pytest.raises(ValueError, match="expected 'Name: value'"):
            verify.Credentials.of(bad)
    with pytest.raises(ValueError, match="expected 'name=value'"):
        verify.Credentials.of((), ["novalue"])


def test_every_redacted_secret_nothing_fills_is_listed_before_anything_is_sent() -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "<redacted:3>"}]},
            "configuration": {
                "taskPushNotificationConfig": {"url": "http://h/w", "token": "<redacted:2>"}
            },
        },
    }
    request = Request(
        "POST",
        "/a2a/jsonrpc?key=<redacted:4>",
        (("Authorization", "Bearer <redacted:1>"),),
        json.dumps(body).encode(),
    )
    reply = Response(200, "OK", (), b"{}")
    exchange = Exchange(1, classify(request, reply), request, reply)
    steps = verify.make_plan(Capture("2026-01-01T00:00:00.000000Z", "t", (exchange,))).script.steps
    missing = verify.missing_credentials(steps, verify.Credentials())
    text = "\n".join(missing)
    assert "header Authorization" in text and "A2A_VERIFY_HEADER_AUTHORIZATION" in text
    assert "query parameter key" in text and "--param key=VALUE" in text
    assert "<redacted:3>" in text and "<redacted:2>" not in text  # the token is the client's
    filled = verify.Credentials.of(["Authorization: Bearer x"], ["key=y"])
    assert ["<redacted:3>" in line for line in verify.missing_credentials(steps, filled)] == [True]
