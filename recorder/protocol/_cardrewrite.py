"""Point an agent card's interface URLs at a proxy or replayer (pure: bytes in, bytes out).

SDK clients call the URLs a card lists, so every interface URL at the upstream's origin (or a
loopback spelling of it) moves to the proxy's, keeping path and query.  The agent's JSON style
is kept: tokens are swapped in the raw text, re-serialised only if that does not parse back.  A
signed card no longer verifies once rewritten (`CardRewrite.signed`: the caller warns).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from recorder.protocol._paths import parse_json, value_at
from recorder.protocol._types import AGENT_CARD, Binding, Classification

# Where interface URLs live: (list key or None for the card itself, field).
INTERFACE_URL_FIELDS: tuple[tuple[str | None, str], ...] = (
    ("supportedInterfaces", "url"),
    (None, "url"),
    ("additionalInterfaces", "url"),
)

# Where the card sits in a response body, by how it was fetched.
CARD_LOCATIONS: dict[tuple[str, Binding], tuple[str, ...]] = {
    (AGENT_CARD, Binding.HTTP): (),
    ("GetExtendedAgentCard", Binding.HTTP_JSON): (),
    ("GetExtendedAgentCard", Binding.JSONRPC): ("result",),
}

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class CardRewrite:
    """The card to serve (the original bytes when unchanged) and the (old, new) URLs."""

    body: bytes
    replaced: tuple[tuple[str, str], ...] = ()
    signed: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.replaced)


Origin = tuple[str, str, int]


def card_location(classification: Classification) -> tuple[str, ...] | None:
    """The card's key path in this exchange's response body; None if it carries none."""
    if classification.binding is None or classification.operation is None:
        return None
    return CARD_LOCATIONS.get((classification.operation, classification.binding))


def find_card(body: bytes, classification: Classification) -> dict[str, Any] | None:
    at = card_location(classification)
    if at is None:
        return None
    card = value_at(parse_json(body), at)
    return card if isinstance(card, dict) else None


def url_origin(url: str) -> tuple[str, str, int | None] | None:
    """(scheme, host, port as written) of a URL, lower-cased, loopback names folded together;
    None when it has no host or does not parse."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    if not host:
        return None
    return parts.scheme.lower(), "127.0.0.1" if host in LOOPBACK_HOSTS else host, port


def origin_of(url: str) -> Origin | None:
    """(scheme, host, port) of an http(s) URL (`url_origin`, its port filled in); else None."""
    found = url_origin(url)
    if found is None or found[0] not in DEFAULT_PORTS:
        return None
    scheme, host, port = found
    return scheme, host, port if port is not None else DEFAULT_PORTS[scheme]


def rewrite_url(url: str, upstream: str, proxy: str) -> str | None:
    """`url` moved to the proxy's origin if it points at the upstream agent, else None."""
    here, there = origin_of(url), origin_of(upstream)
    if here is None or there is None or here != there:
        return None
    target = urlsplit(proxy)
    parts = urlsplit(url)
    return urlunsplit((target.scheme, target.netloc, parts.path, parts.query, parts.fragment))


def rewrite_card(
    body: bytes, upstream: str, proxy: str, *, at: tuple[str, ...] = ()
) -> CardRewrite:
    """Rewrite the interface URLs of the card at key path `at`; no card there: unchanged."""
    return _rewrite(body, at, lambda card: _rewrite_in_place(card, upstream, proxy))


def _rewrite(
    body: bytes, at: tuple[str, ...], edit: Callable[[dict[str, Any]], Iterable[tuple[str, str]]]
) -> CardRewrite:
    """Apply `edit` (in place, yielding (old, new) URLs) to the card at `at`."""
    document = parse_json(body)
    card = value_at(document, at)
    if not isinstance(card, dict):
        return CardRewrite(body)
    signed = bool(card.get("signatures"))
    replaced = tuple(edit(card))
    if not replaced:
        return CardRewrite(body, signed=signed)
    return CardRewrite(_reencode(body, document, replaced), replaced, signed)


def _entries(card: dict[str, Any], list_key: str | None) -> list[dict[str, Any]]:
    holders = [card] if list_key is None else card.get(list_key)
    return [h for h in holders if isinstance(h, dict)] if isinstance(holders, list) else []


def _url_holders(card: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str]]:
    for list_key, field in INTERFACE_URL_FIELDS:
        yield from ((entry, field) for entry in _entries(card, list_key))


def _rewrite_in_place(card: dict[str, Any], upstream: str, proxy: str) -> Iterator[tuple[str, str]]:
    for holder, field in _url_holders(card):
        old = holder.get(field)
        if not isinstance(old, str):
            continue
        new = rewrite_url(old, upstream, proxy)
        if new is not None and new != old:
            holder[field] = new
            yield old, new


def _reencode(body: bytes, document: Any, replaced: tuple[tuple[str, str], ...]) -> bytes:
    # surrogatepass, as json.loads reads bytes: raw lone surrogates still make a card.
    text = body.decode("utf-8", "surrogatepass")
    for old, new in dict(replaced).items():
        for ascii_only in (True, False):
            token = json.dumps(old, ensure_ascii=ascii_only)
            text = text.replace(token, json.dumps(new, ensure_ascii=ascii_only))
    try:
        if json.loads(text) == document:
            return text.encode("utf-8", "surrogatepass")
    except ValueError:
        pass
    return _dumps_like(body, document)


def _dumps_like(body: bytes, document: Any) -> bytes:
    """Re-serialise in the original's broad style: indented if it had newlines, else compact."""
    if b"\n" in body.strip():
        return json.dumps(document, indent=2, ensure_ascii=False).encode("utf-8", "surrogatepass")
    separators = (", ", ": ") if b'": ' in body else (",", ":")
    text = json.dumps(document, separators=separators, ensure_ascii=False)
    return text.encode("utf-8", "surrogatepass")


# gRPC interfaces: (list key or None for the card itself, binding field, url field).
GRPC_INTERFACE_FIELDS: tuple[tuple[str | None, str, str], ...] = (
    ("supportedInterfaces", "protocolBinding", "url"),
    ("additionalInterfaces", "transport", "url"),
    (None, "preferredTransport", "url"),
)
GRPC_BINDING = "GRPC"


def grpc_url(old: str, target: str) -> str:
    """`old` pointed at `target` (`host:port`), keeping a scheme if `old` had one."""
    scheme, sep, _ = old.partition("://")
    return f"{scheme}://{target}" if sep else target


def rewrite_grpc_interfaces(body: bytes, target: str, *, at: tuple[str, ...] = ()) -> CardRewrite:
    """Point every GRPC interface of the card at `target`, the recorder's `host:port` (no match
    against the one gRPC upstream: a TLS front or load balancer may stand between)."""
    return _rewrite(body, at, lambda card: _point_grpc_at(card, target))


def _point_grpc_at(card: dict[str, Any], target: str) -> Iterator[tuple[str, str]]:
    for list_key, binding, field in GRPC_INTERFACE_FIELDS:
        for holder in _entries(card, list_key):
            old = holder.get(field)
            if not isinstance(old, str) or str(holder.get(binding, "")).upper() != GRPC_BINDING:
                continue
            new = grpc_url(old, target)
            if new != old:
                holder[field] = new
                yield old, new


# --- caching (spec §8.6): a rewritten card needs its own ETag; weak stays weak (RFC 9110) ---


def card_etag(served: bytes, agents: str) -> str:
    """An ETag for the card bytes a client receives, as weak or strong as the agent's."""
    digest = hashlib.sha256(served).hexdigest()[:32]
    return f'W/"{digest}"' if agents.strip().startswith("W/") else f'"{digest}"'


def etag_matches(if_none_match: str, etag: str) -> bool:
    """RFC 9110 §13.1.2's weak comparison of `If-None-Match` with `etag`; `*` matches."""
    wanted = etag.strip().removeprefix("W/")
    tags = (tag.strip() for tag in if_none_match.split(","))
    return any(tag == "*" or tag.removeprefix("W/") == wanted for tag in tags)
