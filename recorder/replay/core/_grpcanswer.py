"""Recorded gRPC calls as answers for live ones, and live calls as capture requests (pure).

No grpcio here: a `GrpcAnswer` is values (metadata, timed message bytes, status), with the
recorded `grpc-status-details-bin` ids swapped, so an SDK client raises the same A2A error.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from recorder._errors import GrpcCodecError
from recorder.capture import GrpcMessage, Headers, Request, Response
from recorder.protocol import (
    DETAILS_HEADER,
    MESSAGE_HEADER,
    STATUS_HEADER,
    decode_binary_header,
    decode_grpc_message,
    decode_message,
    decode_status_details,
    encode_message,
    encode_status_details,
    is_binary_header,
)
from recorder.script import Swap, Template

OK, UNKNOWN, UNIMPLEMENTED, INTERNAL = 0, 2, 12, 13
# Metadata grpcio writes itself (or refuses from an application): never replayed.
RESERVED_METADATA = frozenset(
    {
        "content-type",
        "te",
        "user-agent",
        "date",
        "content-length",
        "grpc-encoding",
        "grpc-accept-encoding",
        STATUS_HEADER,
        MESSAGE_HEADER,
        DETAILS_HEADER,
    }
)
CARD_TYPE_SUFFIX = ".AgentCard"

Metadata = tuple[tuple[str, str | bytes], ...]
Rewrite = Callable[[bytes], bytes]


@dataclass(frozen=True, slots=True)
class GrpcAnswer:
    """What one call sends: initial metadata, timed messages, then the status."""

    initial: Metadata
    messages: tuple[tuple[int, bytes], ...]
    code: int
    details: str
    trailing: Metadata


def live_request(path: str, data: bytes, metadata: Iterable[tuple[str, str | bytes]]) -> Request:
    """A capture `Request` for a live call, as the recorder would have captured it."""
    headers: list[tuple[str, str]] = [("content-type", "application/grpc")]
    for key, value in metadata:
        text = base64.b64encode(value).decode().rstrip("=") if isinstance(value, bytes) else value
        headers.append((key, text))
    found = decode_message(path, data, "request")
    message = (
        GrpcMessage(0, json=found[1], type_name=found[0])
        if found is not None
        else GrpcMessage(0, raw=data)
    )
    return Request("POST", path, tuple(headers), http_version="HTTP/2", messages=(message,))


def recorded_status(response: Response) -> tuple[int, str, bytes | None]:
    """(`grpc-status`, decoded `grpc-message`, details bytes) from trailers or trailers-only."""
    fields = {k.lower(): v for k, v in (*response.headers, *response.trailers)}
    raw_code = fields.get(STATUS_HEADER, "0").strip()
    code = int(raw_code) if raw_code.isascii() and raw_code.isdigit() else UNKNOWN
    details = fields.get(DETAILS_HEADER)
    try:
        blob = decode_binary_header(details) if details is not None else None
    except ValueError:
        blob = None
    return code, decode_grpc_message(fields.get(MESSAGE_HEADER, "")), blob


def grpc_answer(
    response: Response, swap: Swap, rewrite: Rewrite, templates: Sequence[Template | None]
) -> GrpcAnswer:
    """The recorded answer with live ids (`templates`: its messages prepared), `rewrite` fixing a
    served card's interfaces; a recorded message that no longer encodes ends the call with
    INTERNAL, saying so."""
    try:
        messages = tuple(
            _message(m, t, swap, rewrite) for m, t in zip(response.messages, templates, strict=True)
        )
    except GrpcCodecError as err:
        return GrpcAnswer((), (), INTERNAL, f"a recorded message does not encode: {err}", ())
    code, text, blob = recorded_status(response)
    trailing = _application_metadata(response.trailers)
    if blob is not None:
        trailing = (*trailing, (DETAILS_HEADER, _swap_details(blob, swap)))
    return GrpcAnswer(
        _application_metadata(response.headers),
        messages,
        code,
        swap.text(text),
        trailing,
    )


def error_answer(code: int, text: str, details: list[dict[str, object]]) -> GrpcAnswer:
    """A status with `details` (google.protobuf.Any dicts) in `grpc-status-details-bin`."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")  # protobuf strings are UTF-8
    status = {"code": code, "message": text, "details": details}
    blob = decode_binary_header(encode_status_details(status))
    return GrpcAnswer((), (), code, text, ((DETAILS_HEADER, blob),))


def _message(
    message: GrpcMessage, template: Template | None, swap: Swap, rewrite: Rewrite
) -> tuple[int, bytes]:
    if template is None or message.type_name is None:
        return message.offset_us, message.raw or b""
    text = template.render(swap.lookup, swap.embedded)
    if message.type_name.endswith(CARD_TYPE_SUFFIX):
        text = rewrite(text.encode("utf-8", "surrogatepass")).decode("utf-8", "surrogatepass")
    return message.offset_us, encode_message(message.type_name, text)


def _swap_details(blob: bytes, swap: Swap) -> bytes:
    status = decode_status_details(blob)
    if status is None:
        return blob
    try:
        swapped = json.loads(swap.json_text(json.dumps(status)))
        return decode_binary_header(encode_status_details(swapped))
    except (GrpcCodecError, ValueError):
        return blob


def _application_metadata(headers: Headers) -> Metadata:
    out: list[tuple[str, str | bytes]] = []
    for key, value in headers:
        name = key.lower()
        if name.startswith(":") or name in RESERVED_METADATA:
            continue
        if is_binary_header(name):
            try:
                out.append((name, decode_binary_header(value)))
            except ValueError:
                continue
        else:
            out.append((name, value))
    return tuple(out)
