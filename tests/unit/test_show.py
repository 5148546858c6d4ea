"""`show`: the task a send created, the state and error columns on real captures of every
binding and version, JSON Lines, filters, one exchange whole, and what cannot be printed."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from recorder.capture import (
    Capture,
    Exchange,
    GrpcMessage,
    Request,
    Response,
    SseEvent,
    read_capture,
)
from recorder.protocol import classify
from recorder.show import (
    capture_rows,
    check_operations,
    json_lines,
    render_one,
    render_table,
    select,
)


def capture(*exchanges: Exchange) -> Capture:
    return Capture(started="2026-11-30T00:00:00.000000Z", recorder_version="0", exchanges=exchanges)


TASK = {"task": {"id": "9f1c2a77-task", "status": {"state": "TASK_STATE_COMPLETED"}}}


def grpc_send(notes: tuple[str, ...]) -> Exchange:
    request = Request(
        "POST",
        "/lf.a2a.v1.A2AService/SendMessage",
        (("content-type", "application/grpc"),),
        http_version="HTTP/2",
        messages=(GrpcMessage(0, json=json.dumps({"message": {"messageId": "m"}})),),
    )
    response = Response(
        200,
        headers=(("content-type", "application/grpc"),),
        http_version="HTTP/2",
        messages=(GrpcMessage(10, json=json.dumps(TASK)),),
        trailers=(("grpc-status", "0"),),
    )
    return Exchange(1, classify(request, response), request, response, notes=notes)


def test_a_grpc_send_shows_the_task_it_created() -> None:
    (row,) = capture_rows(capture(grpc_send(())))
    assert (row["binding"], row["operation"], row["task"]) == (
        "GRPC",
        "SendMessage",
        "9f1c2a77-task",
    )
    assert "9f1c2a77…" in render_table([row])


def test_flagged_notes_follow_the_table_and_ordinary_ones_do_not() -> None:
    notes = ("redacted: Authorization", "possible secret: JWT in request body")
    table = render_table(capture_rows(capture(grpc_send(notes))))
    assert table.splitlines()[-1] == "#1: possible secret: JWT in request body"
    assert "redacted: Authorization" not in table
    plain = render_table(capture_rows(capture(grpc_send(()))))
    assert len(plain.splitlines()) == 2


# -- the state column, on real captures of every binding and version -----------------------------

CAPTURES = Path(__file__).resolve().parents[2] / "captures"


def _column(path: str, key: str) -> list[object]:
    return [row[key] for row in capture_rows(read_capture(CAPTURES / path))]


def test_state_kind_and_error_of_real_answers() -> None:
    push = capture_rows(read_capture(CAPTURES / "a2a-python-1.3.0" / "08-push-configs.http"))
    deliveries = [(r["state"], r["kind"]) for r in push if r["operation"] == "PushDelivery"]
    assert deliveries == [
        ("TASK_STATE_SUBMITTED", "task"),
        ("TASK_STATE_WORKING", "statusUpdate"),
        (None, "artifactUpdate"),
        ("TASK_STATE_COMPLETED", "statusUpdate"),
    ]
    # A stream shows its last state, whatever the version or binding.
    for path in (
        "a2a-python-1.3.0/05-streaming.http",
        "a2a-python-0.3.26/05-streaming.http",
        "a2a-js-1.3.0/grpc/05-streaming.http",
        "a2a-python-0.3.26/grpc/05-streaming.http",
    ):
        assert _column(path, "state")[-1] == "TASK_STATE_COMPLETED", path
    # v0.3 states read as v1.0 names; errors are named; gRPC statuses by name.
    assert _column("a2a-python-0.3.26/http-json/07-cancel.http", "state")[1:] == [
        "TASK_STATE_WORKING",
        "TASK_STATE_CANCELED",
    ]
    errors = capture_rows(read_capture(CAPTURES / "a2a-js-1.3.0" / "grpc" / "11-errors.http"))
    assert [(r["grpc_status"], r["error"]) for r in errors[1:]] == [
        ("NOT_FOUND", "TaskNotFoundError"),
        ("OK", None),
        ("FAILED_PRECONDITION", "TaskNotCancelableError"),
    ]
    assert _column("a2a-python-1.3.0/grpc/09-list-tasks.http", "tasks")[-1] == 1


def _send_answer(state: str, seed: str) -> Exchange:
    request = Request(
        "POST",
        "/a2a/jsonrpc",
        (("content-type", "application/json"),),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {"message": {"messageId": seed}},
            }
        ).encode(),
    )
    task = {"id": f"task-{seed}", "contextId": "c", "status": {"state": state}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"task": task}}).encode()
    response = Response(200, headers=(("content-type", "application/json"),), body=body)
    return Exchange(1, classify(request, response), request, response)


def test_input_required_completed_and_failed_are_told_apart() -> None:
    rows = capture_rows(
        capture(
            *(
                replace(_send_answer(state, str(n)), number=n)
                for n, state in enumerate(
                    (
                        "TASK_STATE_INPUT_REQUIRED",
                        "TASK_STATE_COMPLETED",
                        "input-required",
                        "TASK_STATE_FAILED",
                        "NEW_STATE",
                    ),
                    1,
                )
            )
        )
    )
    assert [r["status"] for r in rows] == [200] * 5
    table = render_table(rows).splitlines()
    assert [line.split()[6] for line in table[1:]] == [
        "INPUT_REQUIRED",
        "COMPLETED",
        "INPUT_REQUIRED",
        "FAILED",
        "NEW_STATE",
    ]


# -- --json is JSON Lines ------------------------------------------------------------------------


def test_json_lines_one_object_per_exchange() -> None:
    rows = capture_rows(read_capture(CAPTURES / "a2a-python-1.3.0" / "11-errors.http"))
    text = json_lines(rows)
    lines = text.splitlines()
    assert len(lines) == len(rows) == 4 and text.endswith("\n")
    assert [json.loads(line) for line in lines] == rows


# -- filters and one exchange --------------------------------------------------------------------


def test_select_by_operation_binding_and_task() -> None:
    rows = capture_rows(read_capture(CAPTURES / "a2a-python-1.3.0" / "08-push-configs.http"))
    assert [r["number"] for r in select(rows, operations=["pushdelivery"])] == [8, 9, 10, 11]
    assert [r["number"] for r in select(rows, operations=["SendMessage"], task="7C1F")] == [12]
    assert [r["number"] for r in select(rows, bindings=["http"])] == [1, 8, 9, 10, 11]
    v03 = capture_rows(read_capture(CAPTURES / "a2a-python-0.3.26" / "07-cancel.http"))
    assert [r["operation"] for r in select(v03, operations=["tasks/cancel"])] == ["CancelTask"]
    check_operations(["GetTask", "message/send", "agentcard"])
    with pytest.raises(ValueError, match="unknown operation 'GetTasks'; expected one of: "):
        check_operations(["GetTasks"])


def test_one_exchange_whole() -> None:
    path = CAPTURES / "a2a-python-1.3.0" / "11-errors.http"
    text = render_one(read_capture(path), 4)
    head, _, rest = text.partition("\n\n")
    assert head.splitlines()[1].split()[:3] == ["4", "0.046", "JSONRPC"]
    assert rest.startswith("### 4 CancelTask JSONRPC TaskNotCancelableError")
    assert '"method": "CancelTask"' in rest and "HTTP/1.1 200 OK" in rest
    with pytest.raises(LookupError, match=r"no exchange 9 \(the capture has 1..4\)"):
        render_one(read_capture(path), 9)


# -- what cannot be printed ----------------------------------------------------------------------


def test_lone_surrogates_and_control_characters_are_escaped() -> None:
    request = Request(
        "POST",
        "/a2a/jsonrpc",
        (("content-type", "application/json"),),
        b'{"jsonrpc":"2.0","id":"\\ud800","method":"GetTask","params":{"id":"\\udfff\\u001b[31m"}}',
    )
    body = (
        b'{"jsonrpc":"2.0","id":"\\ud800","result":{"id":"\\udfff","status":{"state":"\\ud801"}}}'
    )
    event = SseEvent(0, ('data: {"task":{"id":"t","status":{"state":"\ud802"}}}',))
    stream = Response(200, headers=(("content-type", "text/event-stream"),), events=(event,))
    plain = Response(200, headers=(("content-type", "application/json"),), body=body)
    rows = capture_rows(
        capture(
            Exchange(1, classify(request, plain), request, plain),
            Exchange(2, classify(request, stream), request, stream, error="reset \x1b[2J\udc00"),
        )
    )
    assert rows[0]["task"] == "\udfff\x1b[31m" and rows[1]["state"] == "\ud802"
    table = render_table(rows)
    table.encode("utf-8")
    assert "\\udfff\\x1b[31m" in table and "\x1b" not in table
    assert "\\ud801" in table and "\\ud802" in table and "reset \\x1b[2J\\udc00" in table
    lines = json_lines(rows)
    lines.encode("utf-8")
    assert [json.loads(line) for line in lines.splitlines()] == rows


# -- the command ---------------------------------------------------------------------------------


def _show(*args: str | Path) -> tuple[int, str, str]:
    from click.testing import CliRunner

    from recorder.cli import main

    result = CliRunner().invoke(main, ["show", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def test_op_takes_the_json_rpc_method_of_any_version() -> None:
    """`--op message/send` names SendMessage in a v1.0 capture too (issue 30: it printed an
    empty table, exit 0), and `tasks/cancel` CancelTask in a v0.3 one."""
    v1 = CAPTURES / "a2a-python-1.3.0" / "03-blocking-task.http"
    code, out, _ = _show(v1, "--op", "message/send")
    assert code == 0 and [line.split()[:4] for line in out.splitlines()[1:]] == [
        ["2", "0.025", "JSONRPC", "SendMessage"]
    ]
    v03 = CAPTURES / "a2a-python-0.3.26" / "07-cancel.http"
    code, out, _ = _show(v03, "--op", "CancelTask", "--json")
    cancels = [json.loads(line)["number"] for line in out.splitlines()]
    assert code == 0 and cancels
    assert _show(v03, "--op", "tasks/cancel", "--json")[1] == out


def test_the_words_op_takes_are_listed_without_a_blank() -> None:
    _, _, err = _show(CAPTURES / "a2a-python-1.3.0" / "03-blocking-task.http", "--op", "x")
    listed = err.split("expected one of: ")[1].split(" (see")[0].split(", ")
    assert "" not in listed and {"message/send", "SendMessage", "tasks/send"} <= set(listed)


def test_show_command_filters_numbers_and_errors(tmp_path: Path) -> None:
    path = CAPTURES / "a2a-python-1.3.0" / "08-push-configs.http"
    code, out, _ = _show(path, "--op", "PushDelivery", "--binding", "http", "--json")
    assert code == 0 and [json.loads(x)["number"] for x in out.splitlines()] == [8, 9, 10, 11]
    code, out, _ = _show(path, "--task", "7c1f5f90", "--op", "sendmessage")
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == ["#", "12"]
    code, out, _ = _show(path, "11")
    assert code == 0 and "### 11 PushDelivery HTTP 200" in out and "COMPLETED" in out
    code, _, err = _show(path, "13")
    assert code == 2 and "no exchange 13 (the capture has 1..12)" in err
    code, _, err = _show(path, "--op", "Pushdeliveries")
    assert code == 2 and "unknown operation 'Pushdeliveries'" in err and "PushDelivery" in err
    code, _, err = _show(path, "3", "--task", "x")
    assert code == 2 and "use one or the other" in err
    code, _, err = _show(path, "--binding", "SOAP")
    assert code == 2 and "'jsonrpc', 'http+json', 'grpc'" in err


def test_printable_escapes_exactly_unicodes_controls_and_surrogates() -> None:
    """Every code point, against Unicode's own categories (Cc, Cs), with and without kept
    characters.  One regular expression does it now: character by character, a 100 MB body
    took 70 s (issue 20)."""
    import unicodedata

    from recorder.show import printable

    every = "".join(map(chr, range(0x110000)))
    for keep in ("", "\n\t"):
        escaped = [c for c in every if unicodedata.category(c) in ("Cc", "Cs") and c not in keep]
        table = {
            ord(c): f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}" for c in escaped
        }
        assert printable(every, keep) == every.translate(table)
        assert len(escaped) == 65 - len(keep) + 2048
