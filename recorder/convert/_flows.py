"""mitmproxy flows (`.mitm` / `.flow` files) -> `Observed` exchanges.

A flow file written by `mitmdump -w` holds each HTTP exchange as the proxy saw it: the request
and response with their raw bodies (content-encoded as on the wire) and timestamps.  The
record package's flow conversion turns the parts into capture values (decoding gzip and
friends, with a note); an event stream, buffered whole by mitmproxy unless an addon streamed
it, is framed into events here, with offsets 0 since the file keeps no arrival times.
Non-HTTP flows (TCP, UDP, DNS) have no A2A meaning here and are skipped.

The only I/O is `read_flows`, which reads a flow file with `mitmproxy.io.FlowReader` and keeps
the complete flows of a file that was cut short.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mitmproxy import exceptions, http, io
from mitmproxy.flow import Flow

from recorder._errors import ConvertError
from recorder.capture import check_regular
from recorder.convert._observed import Observed, framed
from recorder.protocol import is_event_stream
from recorder.record._flows import origin, to_request, to_response

NOT_STORED = "body not stored in the flow file (streamed through)"


def observed_from_flow(flow: Flow) -> Observed | None:
    """One HTTP flow as an `Observed` exchange; None for flows that are not HTTP."""
    if not isinstance(flow, http.HTTPFlow):
        return None
    request, notes = to_request(flow.request)
    if flow.request.raw_content is None:
        notes = (*notes, f"request {NOT_STORED}")
    response = None
    if flow.response is not None:
        response, response_notes = to_response(flow.response)
        notes = (*notes, *response_notes)
        if flow.response.raw_content is None:
            notes = (*notes, f"response {NOT_STORED}")
        if is_event_stream(response.header("content-type")):
            response, stream_notes = framed(response)
            notes = (*notes, *stream_notes)
    start = flow.request.timestamp_start
    return Observed(
        origin=origin(flow.request.scheme, flow.request.host, flow.request.port),
        request=request,
        response=response,
        started=start,
        duration_us=int((_end(flow) - start) * 1_000_000),
        notes=notes,
        error=flow.error.msg if flow.error is not None else None,
    )


def observed_from_flows(flows: Iterable[Flow]) -> tuple[list[Observed], int]:
    """The HTTP flows as `Observed` exchanges, and how many flows were not HTTP."""
    found = [(f, observed_from_flow(f)) for f in flows]
    kept = [o for _, o in found if o is not None]
    return kept, len(found) - len(kept)


@dataclass(frozen=True)
class FlowFile:
    """The flows read from a flow file, and what stopped the reading early, if anything."""

    flows: list[Flow]
    damage: str | None = None


def read_flows(path: Path) -> FlowFile:
    """Every complete flow in a mitmproxy flow file.

    A file cut short (mitmdump killed while writing) keeps the flows before the cut, and
    `damage` says where reading stopped.  Raises `ConvertError` (`path: what is wrong`) when
    the file cannot be read, or when not even its first flow is whole.
    """
    flows: list[Flow] = []
    try:
        check_regular(path)
        with path.open("rb") as handle:
            flows.extend(io.FlowReader(handle).stream())
    except OSError as exc:
        raise ConvertError(f"{path}: {exc.strerror or exc}") from exc
    except (exceptions.FlowReadException, KeyError, AttributeError) as exc:
        # KeyError/AttributeError: a well-framed record that is no flow state mitmproxy knows.
        damage = f"{path}: damaged or not a mitmproxy flow file after {len(flows)} flow(s): {exc}"
        if not flows:
            raise ConvertError(damage) from exc
        return FlowFile(flows, damage)
    return FlowFile(flows)


def _end(flow: http.HTTPFlow) -> float:
    candidates = (
        flow.response.timestamp_end if flow.response is not None else None,
        flow.request.timestamp_end,
        flow.request.timestamp_start,
    )
    return next((t for t in candidates if t), 0.0)
