"""The error table, and every row recognised in every binding's error shape."""

from __future__ import annotations

import base64
import json

import pytest
from a2a.utils import errors as sdk_errors
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from recorder.capture import Request, Response, SseEvent
from recorder.protocol import (
    ERROR_DOMAIN,
    ERROR_INFO_TYPE,
    ERRORS,
    Binding,
    ErrorRow,
    error_by_code,
    error_by_name,
    error_by_reason,
    errors_by_grpc_status,
    errors_by_http,
    response_error,
)

ROWS = [pytest.param(row, id=row.name) for row in ERRORS]
REASON_ROWS = [pytest.param(row, id=row.name) for row in ERRORS if row.reason]


# ---- the table against the py SDK's own mapping ----


@pytest.mark.parametrize("row", ROWS)
def test_row_agrees_with_py_sdk(row: ErrorRow) -> None:
    if row.code == -32010:
        pytest.skip("TaskGenerationMismatchError is the v1.1 draft's: a2a-sdk 1.3.0 has none")
    sdk_class = getattr(sdk_errors, row.name, None)
    if sdk_class is None:  # the SDK names -32007 ExtendedAgentCardNotConfiguredError too
        sdk_class = sdk_errors.ExtendedAgentCardNotConfiguredError
    assert sdk_errors.JSON_RPC_ERROR_CODE_MAP[sdk_class] == row.code
    mapping = sdk_errors.A2A_ERROR_MAPPING.get(sdk_class)
    if mapping is None:
        assert row.code == -32700  # the py SDK maps no HTTP status to a JSON parse error
        return
    assert (mapping.http_code, mapping.grpc_status, mapping.reason) == (
        row.http_status,
        row.grpc_status,
        row.reason,
    )


EXPECTED = {  # hand-copied from a2a-wire.md §5, v1.0.1 columns, then v1.0.0 differences
    "TaskNotFoundError": (-32001, 404, "NOT_FOUND", None, None),
    "TaskNotCancelableError": (-32002, 400, "FAILED_PRECONDITION", 409, None),
    "PushNotificationNotSupportedError": (-32003, 400, "FAILED_PRECONDITION", None,
                                          "UNIMPLEMENTED"),
    "UnsupportedOperationError": (-32004, 400, "FAILED_PRECONDITION", None, "UNIMPLEMENTED"),
    "ContentTypeNotSupportedError": (-32005, 400, "INVALID_ARGUMENT", 415, None),
    "InvalidAgentResponseError": (-32006, 500, "INTERNAL", 502, None),
    "ExtendedAgentCardNotConfiguredError": (-32007, 400, "FAILED_PRECONDITION", None, None),
    "ExtensionSupportRequiredError": (-32008, 400, "FAILED_PRECONDITION", None, None),
    "VersionNotSupportedError": (-32009, 400, "FAILED_PRECONDITION", None, "UNIMPLEMENTED"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a2a_rows_by_hand(name: str) -> None:
    row = error_by_name(name)
    assert row is not None
    got = (
        row.code,
        row.http_status,
        row.grpc_status,
        row.http_status_v1_0_0,
        row.grpc_status_v1_0_0,
    )
    assert got == EXPECTED[name]
    # The reason rule (spec §10.6): UPPER_SNAKE of the name without "Error".
    snake = "".join("_" + c if c.isupper() else c.upper() for c in name.removesuffix("Error"))
    assert row.reason == snake.lstrip("_")


@pytest.mark.parametrize("row", ROWS)
def test_lookups(row: ErrorRow) -> None:
    assert error_by_code(row.code) is row
    assert error_by_name(row.name) is row
    if row.reason:
        assert error_by_reason(row.reason) is row
    assert row in errors_by_http(row.http_status, row.grpc_status)
    assert row in errors_by_grpc_status(row.grpc_status)
    assert row in errors_by_grpc_status(row.grpc_code)


def test_v03_name_and_standard_codes() -> None:
    assert error_by_name("AuthenticatedExtendedCardNotConfiguredError") is error_by_code(-32007)
    assert {r.code for r in ERRORS if r.standard} == {-32700, -32600, -32601, -32602, -32603}
    assert error_by_code(-32099) is None
    assert errors_by_http(409) == (error_by_code(-32002), error_by_code(-32010))
    assert errors_by_http(409, "ABORTED") == (error_by_code(-32010),)  # the v1.1 draft's
    assert len(errors_by_grpc_status("UNIMPLEMENTED")) == 3


# ---- every row in every binding's shape ----


def _error_info(row: ErrorRow) -> dict[str, object]:
    return {"@type": ERROR_INFO_TYPE, "reason": row.reason, "domain": ERROR_DOMAIN, "metadata": {}}


def jsonrpc_body(row: ErrorRow) -> bytes:
    error = {"code": row.code, "message": row.message}
    if row.reason:
        error["data"] = [_error_info(row)]
    return json.dumps({"jsonrpc": "2.0", "id": "1", "error": error}).encode()


def rest_body(row: ErrorRow, *, details: bool = True, http: int | None = None) -> bytes:
    status = {"code": http or row.http_status, "status": row.grpc_status, "message": row.message}
    if details and row.reason:
        status["details"] = [_error_info(row)]
    return json.dumps({"error": status}).encode()


def grpc_details(row: ErrorRow, *, padded: bool = False) -> str:
    """`grpc-status-details-bin` as grpc puts it on the wire: base64, padding dropped."""
    detail = any_pb2.Any()
    detail.Pack(error_details_pb2.ErrorInfo(reason=row.reason or "", domain=ERROR_DOMAIN))
    status = status_pb2.Status(code=row.grpc_code, message=row.message, details=[detail])
    text = base64.b64encode(status.SerializeToString()).decode("ascii")
    return text if padded else text.rstrip("=")


@pytest.mark.parametrize("row", ROWS)
@pytest.mark.parametrize("http_status", [200, 500])
def test_jsonrpc_body(row: ErrorRow, http_status: int) -> None:
    response = Response(http_status, body=jsonrpc_body(row))
    assert response_error(Binding.JSONRPC, response) == row.name


@pytest.mark.parametrize("row", ROWS)
def test_jsonrpc_sse_event(row: ErrorRow) -> None:
    events = (
        SseEvent(0, ('data: {"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t"}}}',)),
        SseEvent(5, ("event: error", "data: " + jsonrpc_body(row).decode())),
    )
    response = Response(200, events=events, newline="\r\n")
    assert response_error(Binding.JSONRPC, response) == row.name


@pytest.mark.parametrize("row", ROWS)
def test_jsonrpc_sse_data_line_without_event_type(row: ErrorRow) -> None:
    response = Response(200, events=(SseEvent(0, ("data: " + jsonrpc_body(row).decode(),)),))
    assert response_error(Binding.JSONRPC, response) == row.name


@pytest.mark.parametrize("row", REASON_ROWS)
def test_rest_body_by_reason(row: ErrorRow) -> None:
    response = Response(row.http_status, body=rest_body(row))
    assert response_error(Binding.HTTP_JSON, response) == row.name


@pytest.mark.parametrize("row", ROWS)
def test_rest_body_by_status_without_details(row: ErrorRow) -> None:
    response = Response(row.http_status, body=rest_body(row, details=False))
    unique = len(errors_by_http(row.http_status, row.grpc_status)) == 1
    expected = row.name if unique else f"HTTPError({row.http_status} {row.grpc_status})"
    assert response_error(Binding.HTTP_JSON, response) == expected


@pytest.mark.parametrize("row", REASON_ROWS)
def test_rest_sse_error_event(row: ErrorRow) -> None:
    events = (SseEvent(0, ("event: error", "data: " + rest_body(row).decode())),)
    assert response_error(Binding.HTTP_JSON, Response(200, events=events)) == row.name


@pytest.mark.parametrize("row", REASON_ROWS)
@pytest.mark.parametrize("padded", [False, True])
def test_grpc_trailers_with_details(row: ErrorRow, padded: bool) -> None:
    trailers = (
        ("grpc-status", str(row.grpc_code)),
        ("grpc-message", row.message),
        ("grpc-status-details-bin", grpc_details(row, padded=padded)),
    )
    response = Response(200, headers=(("content-type", "application/grpc"),), trailers=trailers)
    assert response_error(Binding.GRPC, response) == row.name


@pytest.mark.parametrize("row", REASON_ROWS)
def test_grpc_trailers_only(row: ErrorRow) -> None:
    headers = (
        ("content-type", "application/grpc"),
        ("grpc-status", str(row.grpc_code)),
        ("grpc-status-details-bin", grpc_details(row)),
    )
    assert response_error(Binding.GRPC, Response(200, headers=headers)) == row.name


# ---- hand-written cases ----


@pytest.mark.parametrize(
    ("binding", "response", "expected"),
    [
        (Binding.JSONRPC, Response(200, body=b'{"jsonrpc":"2.0","id":1,"error":{"code":-32099}}'),
         "JSONRPCError(-32099)"),
        (Binding.JSONRPC, Response(200, body=b'{"jsonrpc":"2.0","id":1,"result":{}}'), None),
        (Binding.JSONRPC, Response(307, headers=(("location", "/a2a/jsonrpc/"),)),
         None),
        (Binding.JSONRPC, Response(404, body=b'{"detail":"Not Found"}'), "HTTPError(404)"),
        (Binding.JSONRPC, Response(200, body=b'{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}'),
         "JSONRPCError('x')"),
        # v0.3 compat: free-form data, the code alone names the error.
        (Binding.JSONRPC,
         Response(200, body=b'{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"m",'
                            b'"data":null}}'), "TaskNotFoundError"),
        # v1.0.0 statuses, no details.
        (Binding.HTTP_JSON,
         Response(409, body=b'{"error":{"code":409,"status":"FAILED_PRECONDITION"}}'),
         "TaskNotCancelableError"),
        (Binding.HTTP_JSON,
         Response(415, body=b'{"error":{"code":415,"status":"INVALID_ARGUMENT"}}'),
         "ContentTypeNotSupportedError"),
        (Binding.HTTP_JSON, Response(204), None),
        (Binding.HTTP_JSON, Response(503, body=b"upstream down"), "HTTPError(503)"),
        # An unknown reason falls back to the status pair.
        (Binding.HTTP_JSON, Response(404, body=json.dumps({"error": {
            "code": 404, "status": "NOT_FOUND", "details": [
                {"@type": ERROR_INFO_TYPE, "reason": "SOMETHING_ELSE"}]}}).encode()),
         "HTTPError(404 NOT_FOUND)"),
        (Binding.GRPC, Response(200, trailers=(("grpc-status", "0"),)), None),
        (Binding.GRPC, Response(200, trailers=(("grpc-status", "14"),)), "GRPCError(UNAVAILABLE)"),
        (Binding.GRPC, Response(200, trailers=(("grpc-status", "12"),)),
         "GRPCError(UNIMPLEMENTED)"),
        (Binding.GRPC, Response(200, trailers=(("grpc-status", "99"),)), "GRPCError(99)"),
        (Binding.GRPC, Response(200, trailers=(("grpc-status", "5"),
                                               ("grpc-status-details-bin", "!!!not base64"))),
         "GRPCError(NOT_FOUND)"),
        (Binding.GRPC, Response(200, trailers=(("grpc-status", "5"),
                                               ("grpc-status-details-bin", "AAAA"))),
         "GRPCError(NOT_FOUND)"),
        (Binding.GRPC, Response(200, trailers=(("Grpc-Status", "9"),)),
         "GRPCError(FAILED_PRECONDITION)"),
        (Binding.GRPC, Response(415), "HTTPError(415)"),
        (None, Response(500), "HTTPError(500)"),
        (Binding.HTTP, Response(200, body=b'{"name":"agent"}'), None),
    ],
)  # fmt: skip
def test_hand_written(binding: Binding | None, response: Response, expected: str | None) -> None:
    assert response_error(binding, response) == expected


def test_grpc_error_detail_built_like_grpc_does_via_classify() -> None:
    from recorder.capture import GrpcMessage
    from recorder.protocol import classify

    row = error_by_name("TaskNotFoundError")
    assert row is not None
    request = Request(
        "POST",
        "/lf.a2a.v1.A2AService/GetTask",
        headers=(("content-type", "application/grpc"), ("te", "trailers")),
        http_version="HTTP/2.0",
        messages=(GrpcMessage(0, json='{"id":"t-404"}'),),
    )
    response = Response(
        200,
        headers=(("content-type", "application/grpc"),),
        trailers=(
            ("grpc-status", "5"),
            ("grpc-message", "Task not found"),
            ("grpc-status-details-bin", grpc_details(row)),
        ),
    )
    found = classify(request, response)
    assert (found.operation, found.task_id, found.error) == ("GetTask", "t-404", row.name)
