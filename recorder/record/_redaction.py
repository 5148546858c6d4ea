"""The redaction addon: secrets out of the capture (never out of what the proxy forwards).

Each capture file has its own `Redactor`, so placeholders (`<redacted:1>`) are stable within
a file.  Every redactor knows the credential names of every agent card the recorder has seen,
plus the names the user adds (`a2a_redact_headers`, `a2a_redact_params`).  `a2a_keep_secrets`
turns it all off.  After redaction, a scan for well-known token formats notes (and warns once
about) what no rule covered.

Exchanges are written as they complete, so something learnt later (an API key name that a
card declares after requests already used it; a token first seen in a header after an answer
echoed it) is applied to the earlier exchanges when the capture is finalised at stop
(`Save`, via `rework`).  Until then, `kill -9` can leave such a value in the exchanges written
before it was learnt; names that say they hold a credential are redacted from the start.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from mitmproxy import ctx, http

from recorder.capture import Exchange, Request, Response
from recorder.record._options import Option, declare, touched
from recorder.record._scan import scan_exchange
from recorder.record._state import state_of
from recorder.redaction import Redactor

logger = logging.getLogger(__name__)

OPTIONS = (
    Option("a2a_keep_secrets", bool, False, "Write secrets to the capture instead of redacting."),
    Option(
        "a2a_redact_headers",
        Sequence[str],
        [],
        "More header names to redact (beyond the known ones and any *token*, *secret*, "
        "*api-key*, *password*, x-*-auth*).",
    ),
    Option("a2a_redact_params", Sequence[str], [], "More query parameter names to redact."),
)


class Redaction:
    """mitmproxy addon; see the module docstring."""

    name = "a2a_redaction"  # mitmproxy names addons by class; ours carry the a2a_ prefix

    def __init__(self) -> None:
        self.keep_secrets = False
        self._headers: tuple[str, ...] = ()
        self._params: tuple[str, ...] = ()
        self._cards: list[dict[str, Any]] = []
        self._redactors: dict[object, Redactor] = {}
        self._warned: set[str] = set()

    def load(self, loader: Any) -> None:
        declare(loader, OPTIONS)

    def configure(self, updated: set[str]) -> None:
        if not touched(updated, OPTIONS):
            return
        self.keep_secrets = ctx.options.a2a_keep_secrets
        self._headers = tuple(ctx.options.a2a_redact_headers)
        self._params = tuple(ctx.options.a2a_redact_params)
        for redactor in self._redactors.values():
            redactor.learn_names(self._headers, self._params)

    def response(self, flow: http.HTTPFlow) -> None:
        state = state_of(flow)
        if state is not None and state.card is not None:
            self.learn_card(state.card)

    # -- what the save addon calls ---------------------------------------------------------------

    def learn_card(self, card: dict[str, Any]) -> None:
        self._cards.append(card)
        for redactor in self._redactors.values():
            redactor.learn_card(card)

    def redactor(self, capture: object) -> Redactor:
        """The redactor of one capture file (made on first use, knowing every card seen)."""
        found = self._redactors.get(capture)
        if found is None:
            found = self._redactors[capture] = Redactor()
            found.learn_names(self._headers, self._params)
            for card in self._cards:
                found.learn_card(card)
        return found

    def redact(
        self, capture: object, request: Request, response: Response | None
    ) -> tuple[Request, Response | None, tuple[str, ...]]:
        """The exchange as its capture keeps it, with notes naming what was redacted or found."""
        if self.keep_secrets:
            return request, response, ()
        request, response, notes = self.redactor(capture).exchange(request, response)
        suspects = scan_exchange(request, response)
        for suspect in suspects:
            if suspect not in self._warned:
                self._warned.add(suspect)
                logger.warning("%s (left as is; check the capture before sharing it)", suspect)
        return request, response, (*notes, *suspects)

    def rework(self, capture: object, exchange: Exchange) -> Exchange:
        """An exchange written earlier, redacted with all that its capture's redactor knows."""
        return exchange if self.keep_secrets else self.redactor(capture).rework(exchange)
