"""The capture model and the `.http` file format (docs/capture-format.md).

The model (`Capture` ... `GrpcMessage`), pure `render` / `parse`, and `CaptureWriter`,
`read_capture`, `write_capture` and the drafts: the only code that touches disk, each writer
holding its capture's `claim` (one writing process per capture).  A damaged file is a
`CaptureParseError`; `render*` raise `ValueError` for values the format cannot hold exactly.
May import `recorder.protocol` and the root's shared modules (`_errors`, `_files`).
"""

from recorder._errors import CaptureBusyError, CaptureExistsError, CaptureParseError
from recorder.capture._bodies import JSON_FORMS, JsonForm
from recorder.capture._model import (
    FORMAT_VERSION,
    Capture,
    Exchange,
    GrpcMessage,
    Headers,
    Request,
    Response,
    SseEvent,
    header_value,
    started_at,
)
from recorder.capture._parse import parse, parse_bytes
from recorder.capture._render import outcome, render, render_exchange, render_header
from recorder.capture._salvage import Cut, salvage
from recorder.capture._writer import (
    CaptureWriter,
    check_regular,
    claim,
    draft_beside,
    file_kind,
    holds_exchanges,
    promote,
    read_capture,
    read_regular,
    recover_capture,
    release,
    remove_capture,
    set_aside,
    write_capture,
)

__all__ = [
    "FORMAT_VERSION",
    "JSON_FORMS",
    "Capture",
    "CaptureBusyError",
    "CaptureExistsError",
    "CaptureParseError",
    "CaptureWriter",
    "Cut",
    "Exchange",
    "GrpcMessage",
    "Headers",
    "JsonForm",
    "Request",
    "Response",
    "SseEvent",
    "check_regular",
    "claim",
    "draft_beside",
    "file_kind",
    "header_value",
    "holds_exchanges",
    "outcome",
    "parse",
    "parse_bytes",
    "promote",
    "read_capture",
    "read_regular",
    "recover_capture",
    "release",
    "remove_capture",
    "render",
    "render_exchange",
    "render_header",
    "salvage",
    "set_aside",
    "started_at",
    "write_capture",
]
