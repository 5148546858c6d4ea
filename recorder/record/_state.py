"""What the recording addons know about one live flow, kept on the flow itself.

Each addon, in their fixed order (`recording_addons`), reads and adds to one `FlowState` in
`flow.metadata`: no addon calls another or keeps a per-flow table.  The classifier, first in
line, creates it when the request is complete, before any addon rewrites the forwarded one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mitmproxy import http
from mitmproxy.proxy.mode_specs import ReverseMode

from recorder.capture import Request, Response
from recorder.protocol import Classification
from recorder.record._flows import SseTee, origin

METADATA_KEY = "a2a_recorder"


@dataclass
class FlowState:
    """One flow as the recording sees it."""

    request: Request  # as the client sent it
    classification: Classification  # from the request alone, until the response refines it
    upstream: str  # the origin whose capture the exchange goes to
    notes: list[str] = field(default_factory=list)
    tee: SseTee | None = None
    delivery: bool = False  # a push delivery (relay, known webhook, push proxy)
    pushed: bool = False  # arrived through the push proxy
    # What the capture keeps of the answer: the agent's, taken before any rewrite; an addon
    # that rewrites an answer for the client and wants the capture to show it says so here.
    response: Response | None = None
    card: dict[str, Any] | None = None  # the agent card the answer held, parsed once
    if_none_match: str | None = None  # a card fetch's validator, held back from the agent
    saved: bool = False  # written (or deliberately left out); later hooks leave it alone


def state_of(flow: http.HTTPFlow) -> FlowState | None:
    found = flow.metadata.get(METADATA_KEY)
    return found if isinstance(found, FlowState) else None


def attach(flow: http.HTTPFlow, state: FlowState) -> FlowState:
    flow.metadata[METADATA_KEY] = state
    return state


def is_reverse(flow: http.HTTPFlow) -> bool:
    return isinstance(flow.client_conn.proxy_mode, ReverseMode)


def own_origin(flow: http.HTTPFlow) -> str:
    """The proxy's address as this client reached it."""
    host, port = flow.client_conn.sockname[:2]
    return origin("https" if flow.client_conn.tls_established else "http", host, port)


def upstream_origin(flow: http.HTTPFlow) -> str:
    return origin(flow.request.scheme, flow.request.host, flow.request.port)


def mode_spec(client: Any) -> str | None:
    """The full spec of the mode a connection came in on (`regular@127.0.0.1:8482`)."""
    return getattr(getattr(client, "proxy_mode", None), "full_spec", None)
