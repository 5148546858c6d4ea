"""What a replay miss says (issue 23): protocol paths as the binding names them (`params.id`,
not `$.body.id`), words instead of internal tokens (never `~own`), and the exchange that handed
out each recorded id it names."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from recorder.capture import Request, read_capture
from recorder.replay import Miss, ReplayService, Served

CORPUS = Path(__file__).parents[2] / "captures" / "a2a-python-1.3.0"
HEADERS = (("Host", "127.0.0.1:9"), ("Content-Type", "application/json"), ("A2A-Version", "1.0"))


def _jsonrpc(method: str, params: dict[str, object]) -> Request:
    body = {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params}
    return Request("POST", "/a2a/jsonrpc", HEADERS, json.dumps(body).encode())


def _miss(service: ReplayService, request: Request) -> str:
    outcome = service.handle(request)
    assert isinstance(outcome, Miss), outcome
    return outcome.describe()


def test_a_jsonrpc_miss_names_params_paths_and_no_token() -> None:
    service = ReplayService([read_capture(CORPUS / "03-blocking-task.http")])
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "bye"}]}
    text = _miss(service, _jsonrpc("SendMessage", {"message": message}))
    assert "params.message.parts[0].text" in text, text
    assert "$." not in text and "~" not in text, text


def test_a_missing_own_id_is_said_in_words() -> None:
    capture = read_capture(CORPUS / "03-blocking-task.http")
    send = next(x for x in capture.exchanges if x.classification.operation == "SendMessage")
    params = json.loads(send.request.body)["params"]
    params["message"]["contextId"] = "conv-1"  # the recording sent none, or its own
    params["message"]["messageId"] = str(uuid.uuid4())
    params["message"]["parts"] = [{"text": "something else"}]
    text = _miss(ReplayService([capture]), _jsonrpc("SendMessage", params))
    assert "~" not in text, text
    assert "params.message" in text, text


def test_a_rest_miss_names_the_url_path_and_the_body_as_rest_does() -> None:
    service = ReplayService([read_capture(CORPUS / "http-json" / "04-polling.http")])
    target = "/a2a/rest/tasks/never-issued-task"
    text = _miss(service, Request("GET", target, HEADERS))
    assert "path.taskId" in text, text
    assert "$." not in text and "~" not in text, text


def test_a_read_of_another_story_names_the_exchange_that_handed_out_its_ids() -> None:
    polling = read_capture(CORPUS / "04-polling.http")  # a send, then GetTask polls
    cancel = read_capture(CORPUS / "07-cancel.http")  # another send, never read
    service = ReplayService([polling, cancel])
    send = next(x for x in cancel.exchanges if x.classification.operation == "SendMessage")
    served = service.handle(send.request)
    assert isinstance(served, Served)
    live_task = json.loads(served.answer.body)["result"]["task"]["id"]
    text = _miss(service, _jsonrpc("GetTask", {"id": live_task}))
    polled = next(x for x in polling.exchanges if x.classification.operation == "GetTask")
    issuer = next(x for x in polling.exchanges if x.classification.operation == "SendMessage")
    assert f"{polled.classification.task_id} (handed out by #{issuer.number})" in text, text
    assert "~" not in text, text
