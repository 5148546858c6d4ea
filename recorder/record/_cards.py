"""The card addon: in reverse mode, point the agent card's interface URLs at the recorder.

SDK clients call the URLs a card lists, which would bypass a reverse proxy (DESIGN.md); the
capture keeps the agent's card.  The rewritten card gets an ETag of its own (A2A spec §8.6), and
a client's `If-None-Match` is answered here.  A signed card no longer verifies once rewritten:
the exchange says so, and the recorder warns once.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from mitmproxy import ctx, http

from recorder.protocol import (
    card_etag,
    card_location,
    etag_matches,
    rewrite_card,
    rewrite_grpc_interfaces,
)
from recorder.record._classifier import CARD_OPERATIONS
from recorder.record._options import addon_options, declare, touched
from recorder.record._state import FlowState, is_reverse, own_origin, state_of

logger = logging.getLogger(__name__)

OPTIONS = addon_options("card_rewrite")
# Headers a 304 keeps from the 200 it stands for (RFC 9110 §15.4.5).
NOT_MODIFIED_KEEPS = frozenset(
    {"cache-control", "content-location", "date", "etag", "expires", "vary", "last-modified"}
)


class CardRewrite:
    """mitmproxy addon; see the module docstring."""

    name = "a2a_cards"  # mitmproxy names addons by class; ours carry the a2a_ prefix

    def __init__(self) -> None:
        self.enabled = True
        self.grpc_target: str | None = None  # the recorder's gRPC `host:port`, when it has one
        self._warned_signed = False

    def load(self, loader: Any) -> None:
        declare(loader, OPTIONS)

    def configure(self, updated: set[str]) -> None:
        if touched(updated, OPTIONS):
            self.enabled = ctx.options.a2a_card_rewrite

    def request(self, flow: http.HTTPFlow) -> None:
        state = state_of(flow)
        if state is None or not self._applies(flow, state):
            return
        held = flow.request.headers.pop("if-none-match", None)
        if held is not None:
            state.if_none_match = held
            state.notes.append("If-None-Match held back: answered for the rewritten card")

    def response(self, flow: http.HTTPFlow) -> None:
        state = state_of(flow)
        if (
            state is None
            or flow.response is None
            or state.response is None
            or not self._applies(flow, state)
        ):
            return
        self._rewrite(flow, state)
        if state.if_none_match is not None:
            self._answer_validator(flow, state, state.if_none_match)

    def _applies(self, flow: http.HTTPFlow, state: FlowState) -> bool:
        return (
            self.enabled
            and is_reverse(flow)
            and not (state.delivery or state.pushed)
            and state.classification.operation in CARD_OPERATIONS
        )

    def _rewrite(self, flow: http.HTTPFlow, state: FlowState) -> None:
        assert flow.response is not None and state.response is not None
        at = card_location(state.classification) or ()
        body = state.response.body
        result = rewrite_card(body, state.upstream, own_origin(flow), at=at)
        if self.grpc_target:
            grpc = rewrite_grpc_interfaces(result.body, self.grpc_target, at=at)
            result = replace(grpc, replaced=(*result.replaced, *grpc.replaced))
        if not result.changed:
            return
        flow.response.content = result.body
        agents = flow.response.headers.get("etag")
        if agents is not None:
            flow.response.headers["etag"] = card_etag(result.body, agents)
        state.notes.append("card rewritten")
        if result.signed:
            self._signed(state)

    def _answer_validator(self, flow: http.HTTPFlow, state: FlowState, validator: str) -> None:
        assert flow.response is not None
        etag = flow.response.headers.get("etag")
        if flow.response.status_code != 200 or etag is None or not etag_matches(validator, etag):
            return
        kept = [
            (k, v)
            for k, v in flow.response.headers.fields
            if k.decode("latin-1").lower() in NOT_MODIFIED_KEEPS
        ]
        flow.response = http.Response.make(304, b"", kept)
        state.notes.append("answered 304: If-None-Match matched the card the client holds")

    def _signed(self, state: FlowState) -> None:
        state.notes.append("card signature no longer verifies")
        if not self._warned_signed:
            self._warned_signed = True
            logger.warning(
                "the agent card is signed; the rewritten card's signature no longer verifies. "
                "Use forward-proxy mode (or leave cards as they are: --no-card-rewrite, "
                "card_rewrite=False) to keep it."
            )
