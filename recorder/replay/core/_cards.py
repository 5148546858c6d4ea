"""The cards a replay serves: the recorded ones, their interfaces pointed at the replayer (pure).

A client calls the interfaces a card lists, so every recorded upstream is rewritten to the
replayer's URL and every gRPC interface to its gRPC face (`serve_at`).  `interfaces` are what
live requests are classified with.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from recorder.capture import Exchange, Request, Response
from recorder.protocol import (
    AGENT_CARD,
    Binding,
    Classification,
    Interface,
    card_location,
    interfaces_from_card,
    rewrite_card,
    rewrite_grpc_interfaces,
    rewrite_url,
    route_base,
)
from recorder.replay.core._answer import HttpAnswer, Rewrite
from recorder.replay.core._grpcanswer import CARD_TYPE_SUFFIX
from recorder.script import recorded_cards


class Cards:
    def __init__(self, upstreams: Sequence[str], card_bytes: Rewrite) -> None:
        self.upstreams = list(upstreams)
        self.base_url = ""
        self.grpc_target: str | None = None
        self._card_bytes = card_bytes  # the card for the versions served

    def serve_at(self, base_url: str, grpc_target: str | None = None) -> None:
        self.base_url, self.grpc_target = base_url, grpc_target

    def rewrite(
        self, location: tuple[str, ...] | None, exchange: Exchange | None = None
    ) -> Rewrite:
        """How a card at `location` in an answer is served (`()` for a whole body)."""
        at = location or ()
        # The capture's upstreams, and where the client fetched this card: a capture begun
        # over gRPC names only its gRPC upstream, and its cards the recorder's HTTP address.
        found = [*self.upstreams, *(_host_origin(exchange.request) if exchange else [])]
        # Served nowhere in particular (no `base_url`): the cards as recorded.
        upstreams = list(dict.fromkeys(found)) if self.base_url else []
        fetched = exchange is not None and exchange.classification.operation == AGENT_CARD

        def rewrite(body: bytes) -> bytes:
            for upstream in upstreams:
                body = rewrite_card(body, upstream, self.base_url, at=at).body
            if self.grpc_target:
                body = rewrite_grpc_interfaces(body, self.grpc_target, at=at).body
            return self._card_bytes(body) if fetched and not at else body

        return rewrite

    def relocated(self, answer: HttpAnswer, exchange: Exchange) -> HttpAnswer:
        """`answer` with a `Location` naming a recorded upstream pointed at the replayer."""
        if not self.base_url:
            return answer
        upstreams = dict.fromkeys([*self.upstreams, *_host_origin(exchange.request)])
        headers = []
        for name, value in answer.headers:
            if name.lower() == "location":
                moved = (rewrite_url(value, u, self.base_url) for u in upstreams)
                value = next((url for url in moved if url is not None), value)
            headers.append((name, value))
        return dataclasses.replace(answer, headers=tuple(headers))

    def changed_grpc(self, response: Response) -> bool:
        """Whether a gRPC answer's card is served other than recorded."""
        rewrite = self.rewrite(())
        cards = (
            m.json.encode("utf-8", "surrogatepass")
            for m in response.messages
            if m.json is not None and (m.type_name or "").endswith(CARD_TYPE_SUFFIX)
        )
        return any(rewrite(card) != card for card in cards)


def is_card(exchange: Exchange) -> bool:
    return card_location(exchange.classification) is not None


def _host_origin(request: Request) -> list[str]:
    host = request.header("host")
    return [f"http://{host}"] if host else []


def interfaces(exchanges: Sequence[Exchange]) -> tuple[Interface, ...]:
    """The interfaces live requests are read by: the recorded cards', every path that carried a
    known JSON-RPC operation, and every HTTP+JSON request's mount point."""
    found = [i for card in recorded_cards(exchanges) for i in interfaces_from_card(card)]
    learned: list[Interface] = []  # after the cards': theirs say tenants and versions
    for exchange in exchanges:
        c = exchange.classification
        path = exchange.request.target.partition("?")[0]
        if c.binding is Binding.JSONRPC and c.is_known:
            learned.append(Interface(f"http://replay{path}", Binding.JSONRPC, c.version))
        base = _rest_base(c, exchange.request.method, path)
        if base:  # a mount at the root is not learnt: every path would be under it
            learned.append(Interface(f"http://replay{base}", Binding.HTTP_JSON, c.version))
    return tuple(dict.fromkeys([*found, *learned]))


def _rest_base(c: Classification, verb: str, path: str) -> str | None:
    """Where the HTTP+JSON interface an exchange was recorded under is mounted."""
    if c.binding is not Binding.HTTP_JSON:
        return None
    if c.is_known and c.operation and c.version:
        return route_base(c.operation, c.version, verb, path)
    rest = c.method.partition(" ")[2] if c.method else ""
    if rest.startswith("/") and path.endswith(rest):
        return path[: len(path) - len(rest)] if rest != "/" else path.removesuffix("/")
    return None
