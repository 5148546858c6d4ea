"""The classifier addon, first in line: keep each request as the client sent it, and say what
every exchange is (binding, operation, ids, error), once per flow.

It classifies from the complete request (other addons must know a card fetch or a push config
before forwarding), then adds the error the response carried.  An exchange at an interface a
card lists is A2A even when unknown to the tables; without a card, a path that carried a known
JSON-RPC operation is an endpoint from then on; a GET answered with a card is a card fetch.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from mitmproxy import ctx, http

from recorder.capture import Request, Response
from recorder.protocol import (
    AGENT_CARD,
    NOTE_STREAM_TRUNCATED,
    Binding,
    Classification,
    Interface,
    classify,
    find_card,
    interfaces_from_card,
    is_event_stream,
    response_error,
)
from recorder.record._flows import (
    EVENT_OFFSETS,
    NOT_STORED,
    UNKNOWN_EVENT_TIMES,
    SseTee,
    decoded_body,
    field_value,
    to_request,
    to_response,
)
from recorder.record._h2c import as_sent
from recorder.record._options import AddonOptionError, addon_options, declare, touched
from recorder.record._push import as_delivery
from recorder.record._state import FlowState, attach, state_of, upstream_origin

logger = logging.getLogger(__name__)

EXTENDED_CARD = "GetExtendedAgentCard"
CARD_OPERATIONS = frozenset({AGENT_CARD, EXTENDED_CARD})

OPTIONS = addon_options("webhook_paths")


class Classifier:
    """mitmproxy addon; see the module docstring."""

    name = "a2a_classifier"  # mitmproxy names addons by class; ours carry the a2a_ prefix

    def __init__(self) -> None:
        self.webhook_paths: tuple[str, ...] = ()
        self._interfaces: dict[str, tuple[Interface, ...]] = {}  # upstream origin -> card's
        self._learned: dict[str, tuple[Interface, ...]] = {}  # upstream -> seen in traffic

    def load(self, loader: Any) -> None:
        declare(loader, OPTIONS)

    def configure(self, updated: set[str]) -> None:
        if not touched(updated, OPTIONS):
            return
        paths = tuple(ctx.options.a2a_webhook_paths)
        if bad := [p for p in paths if not p.startswith("/")]:
            raise AddonOptionError(f"{{webhook_paths}} must start with '/': {bad}")
        self.webhook_paths = paths

    # -- hooks --------------------------------------------------------------------------------

    def request(self, flow: http.HTTPFlow) -> None:
        captured, notes = to_request(flow.request)
        if (offer := as_sent(flow)) is not None:
            captured, notes = replace(captured, headers=offer[0]), (*notes, offer[1])
        upstream = upstream_origin(flow)
        classification = self.classify(upstream, captured)
        self._learn_endpoint(upstream, captured, classification)
        attach(flow, FlowState(captured, classification, upstream, list(notes)))

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        """An event stream goes on to the client live; a tee keeps a copy of each event."""
        state = state_of(flow)
        response = flow.response
        if (
            state is None
            or response is None
            or not is_event_stream(field_value(response, b"content-type"))
        ):
            return
        if not flow.live:  # read from a file: the body is here whole (or was not kept)
            self._frame_whole(flow, state)
            return
        encoded = (field_value(response, b"content-encoding") or "identity") != "identity"
        state.tee = SseTee(compressed=encoded)
        if encoded:
            state.notes.append("compressed event stream not framed")
        response.stream = state.tee

    @staticmethod
    def _frame_whole(flow: http.HTTPFlow, state: FlowState) -> None:
        """An event stream whose body is here whole: its events, at `EVENT_OFFSETS` or 0."""
        assert flow.response is not None
        body, notes = decoded_body(flow.response)
        if flow.response.raw_content is None:
            notes = (*notes, f"response {NOT_STORED}")
        offsets = flow.metadata.get(EVENT_OFFSETS)
        state.tee = SseTee()
        state.tee.replay(body, offsets or ())
        state.notes.extend(notes if offsets else (*notes, UNKNOWN_EVENT_TIMES))

    def response(self, flow: http.HTTPFlow) -> None:
        state = state_of(flow)
        if state is None or flow.response is None:
            return
        self._take_response(flow, state)
        if state.tee is not None and state.tee.truncated:
            state.notes.append(NOTE_STREAM_TRUNCATED)
        self.refine(flow, state)
        if state.classification.operation in CARD_OPERATIONS and not state.delivery:
            self._learn_card(upstream_origin(flow), state)

    def error(self, flow: http.HTTPFlow) -> None:
        """A flow that failed: keep what came back before it did (a cut stream's events)."""
        state = state_of(flow)
        if state is None or state.saved:
            return
        if flow.response is not None:
            self._take_response(flow, state)
        self.refine(flow, state)

    @staticmethod
    def _take_response(flow: http.HTTPFlow, state: FlowState) -> None:
        assert flow.response is not None
        if state.tee is not None:
            state.tee.close()
        state.response, notes = to_response(flow.response, state.tee)
        state.notes.extend(notes)

    # -- shared ---------------------------------------------------------------------------------

    def refine(self, flow: http.HTTPFlow, state: FlowState) -> None:
        """The request's classification, plus the error the answer carried, or a delivery's."""
        if state.delivery:
            own = (urlsplit(state.request.target).path,)
            found = self.classify(
                upstream_origin(flow), state.request, state.response, webhook_paths=own
            )
            state.classification = as_delivery(found, state.request)
        elif state.response is not None and not state.classification.is_known:
            # Once more with the answer: a GET answered with an agent card is a card fetch.
            state.classification = self.classify(
                upstream_origin(flow), state.request, state.response
            )
        elif state.response is not None:
            error = response_error(state.classification.binding, state.response)
            if error != state.classification.error:
                state.classification = replace(state.classification, error=error)

    def classify(
        self,
        upstream: str | None,
        request: Request,
        response: Response | None = None,
        *,
        webhook_paths: tuple[str, ...] = (),
    ) -> Classification:
        """Classify with the card of `upstream`; None uses every card seen (gRPC's case)."""
        if upstream is None:
            interfaces = tuple(i for found in self._interfaces.values() for i in found)
        else:
            interfaces = self._interfaces.get(upstream, ()) + self._learned.get(upstream, ())
        try:
            return classify(
                request,
                response,
                interfaces=interfaces,
                webhook_paths=(*self.webhook_paths, *webhook_paths),
            )
        except Exception as exc:  # a classifier bug must not break the proxy, nor go unsaid
            logger.exception("classification failed: %r", exc)
            return Classification(reason=f"classification failed: {exc}")

    def learn_card(self, upstream: str, card: dict[str, Any]) -> None:
        """Take `card`'s interfaces as `upstream`'s."""
        try:
            self._interfaces[upstream] = tuple(interfaces_from_card(card))
        except (ValueError, TypeError, KeyError) as exc:
            logger.warning("agent card interfaces not understood: %s", exc)

    def _learn_card(self, upstream: str, state: FlowState) -> None:
        assert state.response is not None
        card = find_card(state.response.body, state.classification)
        if card is None:
            return
        state.card = card
        self.learn_card(upstream, card)

    def _learn_endpoint(self, upstream: str, request: Request, found: Classification) -> None:
        """A path that carried a known JSON-RPC operation is that upstream's endpoint."""
        if found.binding is not Binding.JSONRPC or not found.is_known:
            return
        url = upstream + urlsplit(request.target).path
        known = self._learned.get(upstream, ())
        if all(i.url != url for i in known):
            self._learned[upstream] = (*known, Interface(url, Binding.JSONRPC, found.version))
