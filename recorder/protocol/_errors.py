"""The A2A error table: each error's code in every binding (a2a-wire.md §5).

HTTP and gRPC columns are the v1.0.1 spec's; where v1.0.0 (and its TCK) differed the row keeps
that too, so a capture of either can be named.  The standard JSON-RPC errors' rows carry the py
SDK's mapping, and the v0.3 columns what a2a-sdk 0.3.26 answers (None: no such error, or gRPC
UNKNOWN).  Unknown codes are named by `unknown_error_name`, never dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

# google.rpc.Code: number -> name (the gRPC status codes).
GRPC_STATUS_NAMES: dict[int, str] = {
    0: "OK",
    1: "CANCELLED",
    2: "UNKNOWN",
    3: "INVALID_ARGUMENT",
    4: "DEADLINE_EXCEEDED",
    5: "NOT_FOUND",
    6: "ALREADY_EXISTS",
    7: "PERMISSION_DENIED",
    8: "RESOURCE_EXHAUSTED",
    9: "FAILED_PRECONDITION",
    10: "ABORTED",
    11: "OUT_OF_RANGE",
    12: "UNIMPLEMENTED",
    13: "INTERNAL",
    14: "UNAVAILABLE",
    15: "DATA_LOSS",
    16: "UNAUTHENTICATED",
}
GRPC_STATUS_CODES: dict[str, int] = {name: code for code, name in GRPC_STATUS_NAMES.items()}

ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
ERROR_DOMAIN = "a2a-protocol.org"


@dataclass(frozen=True, slots=True)
class ErrorRow:
    """One error in each binding; `_v1_0_0` columns are set only where v1.0.0 differs."""

    name: str
    code: int
    http_status: int
    grpc_status: str
    reason: str | None
    message: str
    standard: bool = False
    http_status_v1_0_0: int | None = None
    grpc_status_v1_0_0: str | None = None
    name_v0_3: str | None = None
    http_status_v0_3: int | None = None
    grpc_status_v0_3: str | None = None

    @property
    def grpc_code(self) -> int:
        return GRPC_STATUS_CODES[self.grpc_status]


ERRORS: tuple[ErrorRow, ...] = (
    ErrorRow("TaskNotFoundError", -32001, 404, "NOT_FOUND", "TASK_NOT_FOUND", "Task not found",
             http_status_v0_3=404, grpc_status_v0_3="NOT_FOUND"),
    ErrorRow("TaskNotCancelableError", -32002, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE",
             "Task cannot be canceled", http_status_v1_0_0=409, http_status_v0_3=409,
             grpc_status_v0_3="UNIMPLEMENTED"),
    ErrorRow("PushNotificationNotSupportedError", -32003, 400, "FAILED_PRECONDITION",
             "PUSH_NOTIFICATION_NOT_SUPPORTED", "Push Notification is not supported",
             grpc_status_v1_0_0="UNIMPLEMENTED", http_status_v0_3=501,
             grpc_status_v0_3="UNIMPLEMENTED"),
    ErrorRow("UnsupportedOperationError", -32004, 400, "FAILED_PRECONDITION",
             "UNSUPPORTED_OPERATION", "This operation is not supported",
             grpc_status_v1_0_0="UNIMPLEMENTED", http_status_v0_3=501,
             grpc_status_v0_3="UNIMPLEMENTED"),
    ErrorRow("ContentTypeNotSupportedError", -32005, 400, "INVALID_ARGUMENT",
             "CONTENT_TYPE_NOT_SUPPORTED", "Incompatible content types", http_status_v1_0_0=415,
             http_status_v0_3=415, grpc_status_v0_3="UNIMPLEMENTED"),
    ErrorRow("InvalidAgentResponseError", -32006, 500, "INTERNAL", "INVALID_AGENT_RESPONSE",
             "Invalid agent response", http_status_v1_0_0=502, http_status_v0_3=502,
             grpc_status_v0_3="INTERNAL"),
    ErrorRow("ExtendedAgentCardNotConfiguredError", -32007, 400, "FAILED_PRECONDITION",
             "EXTENDED_AGENT_CARD_NOT_CONFIGURED", "Extended Agent Card is not configured",
             name_v0_3="AuthenticatedExtendedCardNotConfiguredError", http_status_v0_3=404),
    ErrorRow("ExtensionSupportRequiredError", -32008, 400, "FAILED_PRECONDITION",
             "EXTENSION_SUPPORT_REQUIRED", "Extension support required"),
    ErrorRow("VersionNotSupportedError", -32009, 400, "FAILED_PRECONDITION",
             "VERSION_NOT_SUPPORTED", "Version not supported",
             grpc_status_v1_0_0="UNIMPLEMENTED"),
    # The v1.1 draft (a2aproject/A2A #1810): a send whose ifGenerationMatch is stale.
    ErrorRow("TaskGenerationMismatchError", -32010, 409, "ABORTED", "TASK_GENERATION_MISMATCH",
             "Task generation mismatch"),
    # JSON-RPC 2.0 standard errors (spec §9.5); HTTP/gRPC columns are the py SDK's mapping.
    ErrorRow("JSONParseError", -32700, 400, "INVALID_ARGUMENT", None, "Invalid JSON payload",
             standard=True, http_status_v0_3=400, grpc_status_v0_3="INTERNAL"),
    ErrorRow("InvalidRequestError", -32600, 400, "INVALID_ARGUMENT", "INVALID_REQUEST",
             "Invalid Request", standard=True, http_status_v0_3=400,
             grpc_status_v0_3="INVALID_ARGUMENT"),
    ErrorRow("MethodNotFoundError", -32601, 404, "NOT_FOUND", "METHOD_NOT_FOUND",
             "Method not found", standard=True, http_status_v0_3=404,
             grpc_status_v0_3="NOT_FOUND"),
    ErrorRow("InvalidParamsError", -32602, 400, "INVALID_ARGUMENT", "INVALID_PARAMS",
             "Invalid params", standard=True, http_status_v0_3=422,
             grpc_status_v0_3="INVALID_ARGUMENT"),
    ErrorRow("InternalError", -32603, 500, "INTERNAL", "INTERNAL_ERROR", "Internal error",
             standard=True, http_status_v0_3=500, grpc_status_v0_3="INTERNAL"),
)  # fmt: skip

_BY_CODE: dict[int, ErrorRow] = {row.code: row for row in ERRORS}
_BY_REASON: dict[str, ErrorRow] = {row.reason: row for row in ERRORS if row.reason}
_BY_NAME: dict[str, ErrorRow] = {row.name: row for row in ERRORS} | {
    row.name_v0_3: row for row in ERRORS if row.name_v0_3
}


def error_by_code(code: int) -> ErrorRow | None:
    return _BY_CODE.get(code)


def error_by_reason(reason: str) -> ErrorRow | None:
    return _BY_REASON.get(reason)


def error_by_name(name: str) -> ErrorRow | None:
    """The row for an error name, v1.0 or v0.3 spelling, or None."""
    return _BY_NAME.get(name)


def errors_by_http(http_status: int, status_name: str | None = None) -> tuple[ErrorRow, ...]:
    """Rows an HTTP+JSON error with this status (and gRPC status name) may be, v1.0.0's
    included; several rows share most pairs, so the ErrorInfo reason comes first."""
    return tuple(
        row
        for row in ERRORS
        if http_status in (row.http_status, row.http_status_v1_0_0)
        and (status_name is None or status_name in (row.grpc_status, row.grpc_status_v1_0_0))
    )


def errors_by_grpc_status(status: str | int) -> tuple[ErrorRow, ...]:
    """Rows a gRPC status (name or number) may be, under v1.0.1 or v1.0.0."""
    name = GRPC_STATUS_NAMES.get(status, "") if isinstance(status, int) else status
    return tuple(row for row in ERRORS if name in (row.grpc_status, row.grpc_status_v1_0_0))


def unknown_error_name(kind: str, detail: int | str) -> str:
    """The name for an error no row explains: `JSONRPCError(-32099)`, `HTTPError(404)`."""
    return f"{kind}({detail})"
