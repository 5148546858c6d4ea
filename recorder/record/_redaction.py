"""The redaction addon: secrets out of the capture (never out of what the proxy forwards).

Each capture has its own `Redactor`, so placeholders are stable within a file; it knows the
credential names of every agent card seen and the user's own; `a2a_keep_secrets` turns it off.
A scan then warns once about likely tokens no rule covered (`_scan`).  A client with a cached
card never shows the card that declares an API key, so one can be given (`a2a_card`) and the
upstream's own is fetched at start, unrecorded (`a2a_fetch_card`).  `before_record` may change
or drop each exchange before redaction.  What is learnt later is applied to earlier exchanges
when the capture is finalised (`rework`): until then `kill -9` can leave such a value in them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mitmproxy import ctx, http
from mitmproxy.proxy.mode_specs import ProxyMode, ReverseMode

import recorder
from recorder._background import host_port
from recorder.capture import Exchange
from recorder.record._options import AddonOptionError, addon_options, declare, touched
from recorder.record._scan import RepeatedHeaders, scan_exchange
from recorder.record._state import state_of
from recorder.redaction import BeforeRecord, Redactor

logger = logging.getLogger(__name__)

OPTIONS = addon_options("keep_secrets", "redact_headers", "redact_params", "card", "fetch_card")
FETCH_TIMEOUT = 5.0  # seconds for the card fetched at start
# Where an agent serves its card at its root: the spec's path (§8.2), then v0.1/v0.2's.
CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
# So that the agent's operator can tell the recorder's own fetch from a client's.
USER_AGENT = f"a2a-recorder/{recorder.__version__} (card fetch for redaction)"


class Redaction:
    """mitmproxy addon; see the module docstring."""

    name = "a2a_redaction"  # mitmproxy names addons by class; ours carry the a2a_ prefix

    def __init__(self) -> None:
        self.keep_secrets = False
        self.before_record: BeforeRecord | None = None
        self._headers: tuple[str, ...] = ()
        self._params: tuple[str, ...] = ()
        self._cards: list[dict[str, Any]] = []
        self._redactors: dict[object, Redactor] = {}
        self._repeated: dict[object, RepeatedHeaders] = {}
        self._warned: set[str] = set()
        # Warnings of the start, before anyone listens (`RecordingAddons.listen` says them).
        self.unsaid: list[str] = []
        self.fetched: Callable[[str, dict[str, Any]], None] = lambda _origin, _card: None

    def load(self, loader: Any) -> None:
        declare(loader, OPTIONS)

    def configure(self, updated: set[str]) -> None:
        if "a2a_card" in updated and ctx.options.a2a_card:
            self.learn_card(_given_card(ctx.options.a2a_card))
        if ({"a2a_fetch_card", "mode"} & updated) and ctx.options.a2a_fetch_card:
            for origin in _reverse_origins(ctx.options.mode):
                self._fetch_card(origin)
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

    def _fetch_card(self, origin: str) -> None:
        try:
            card = fetch_card(origin)
        except (OSError, ValueError) as exc:
            self.unsaid.append(
                f"could not fetch the agent card of {origin} ({exc}): API keys it declares are "
                "redacted once a client fetches the card through the recorder, or give it "
                "with --card"
            )
            logger.warning("%s", self.unsaid[-1])
            return
        self.learn_card(card)
        self.fetched(origin, card)

    # -- what the save addon calls ---------------------------------------------------------

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

    def redact(self, capture: object, exchange: Exchange) -> Exchange | None:
        """The exchange as its capture keeps it; None when `before_record` leaves it out."""
        exchange_or_none = self._before_record(exchange)
        if exchange_or_none is None or self.keep_secrets:
            return exchange_or_none
        kept = self.redactor(capture).rework(exchange_or_none)
        request = kept.request
        repeated = self._repeated.setdefault(capture, RepeatedHeaders())
        suspects = (*scan_exchange(request, kept.response), *repeated.see(request.headers))
        for suspect in suspects:
            if suspect not in self._warned:
                self._warned.add(suspect)
                logger.warning("%s (left as is; check the capture before sharing it)", suspect)
        return replace(kept, notes=(*kept.notes, *suspects))

    def _before_record(self, exchange: Exchange) -> Exchange | None:
        if self.before_record is None:
            return exchange
        try:
            return self.before_record(exchange)
        except Exception as exc:  # the user's hook: its failure must not lose the exchange
            logger.exception("before_record failed on exchange #%d", exchange.number)
            return replace(exchange, notes=(*exchange.notes, f"before_record failed: {exc!r}"))

    def rework(self, capture: object, exchange: Exchange) -> Exchange:
        """An exchange written earlier, redacted with all that its capture's redactor knows."""
        return exchange if self.keep_secrets else self.redactor(capture).rework(exchange)


# -- cards from outside the recording (I/O) ----------------------------------------------------


def _given_card(source: str) -> dict[str, Any]:
    """The card `a2a_card` names; AddonOptionError when it cannot be read."""
    try:
        if urlsplit(source).scheme in ("http", "https"):
            return _card_document(_get(source))
        return _card_document(Path(source).read_bytes())
    except (OSError, ValueError) as exc:
        raise AddonOptionError(f"{{card}}: cannot read an agent card from {source}: {exc}") from exc


def fetch_card(origin: str) -> dict[str, Any]:
    """The agent card an upstream serves at its well-known path(s)."""
    problems = []
    for path in CARD_PATHS:  # where the upstream's own card is, newest first
        try:
            return _card_document(_get(origin.rstrip("/") + path))
        except (OSError, ValueError) as exc:
            problems.append(f"{path}: {exc}")
    raise ValueError("; ".join(problems))


def _get(url: str) -> bytes:
    import httpx

    try:
        answer = httpx.get(
            url,
            headers={"User-Agent": USER_AGENT},
            timeout=FETCH_TIMEOUT,
            follow_redirects=True,
            trust_env=False,
        )
    except httpx.HTTPError as exc:
        raise OSError(str(exc) or type(exc).__name__) from exc
    if answer.status_code != 200:
        raise ValueError(f"HTTP {answer.status_code}")
    return answer.content


def _card_document(data: bytes) -> dict[str, Any]:
    document = json.loads(data)
    if not isinstance(document, dict):
        raise ValueError("not a JSON object")
    return document


def _reverse_origins(modes: Sequence[str]) -> list[str]:
    """The HTTP upstreams of mitmproxy's reverse modes (`reverse:http://host:port@8080`)."""
    found = []
    for text in modes:
        try:
            mode = ProxyMode.parse(text)
        except ValueError:
            continue  # mitmproxy itself refuses it, and says why
        if isinstance(mode, ReverseMode) and mode.scheme in ("http", "https"):
            host, port = mode.address
            found.append(f"{mode.scheme}://{host_port(host, port)}")
    return found
