"""Agent card interfaces: where an agent says each binding lives.

v1.0 cards list `supportedInterfaces` (spec §8.3), v0.3 cards `url`, `preferredTransport` and
`additionalInterfaces`; the py SDK's hybrid card holds both, read v1.0 first without duplicates.
Junk entries are skipped; nothing raises on a dict.  Cards are served at `agent-card.json`,
v0.1-v0.2's `agent.json` or VoltAgent's `<agentId>/agent-card.json` under `/.well-known/`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from recorder.protocol._types import Binding, Version

# Card binding / transport names -> Binding (v0.3 used the same three strings).
_BINDINGS: dict[str, Binding] = {
    "JSONRPC": Binding.JSONRPC,
    "HTTP+JSON": Binding.HTTP_JSON,
    "GRPC": Binding.GRPC,
}


@dataclass(frozen=True, slots=True)
class Interface:
    url: str
    binding: Binding
    version: Version | None = None
    tenant: str | None = None
    uri: str | None = None  # a custom binding's name, a URI (`Binding.CUSTOM`)
    path: str = field(init=False, repr=False, compare=False)  # the URL's, no trailing `/`

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", urlsplit(self.url).path.rstrip("/"))


# A custom binding's name: a URI (spec §5.8), `scheme:` then no space (`https://...`, `urn:...`).
_CUSTOM_BINDING = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+\Z")
_CARD_PATH = re.compile(r"/\.well-known/(?:[^/]+/)?(?:agent-card|agent)\.json\Z")
# Fields every card has, v0.1 to v1.0 (each version's schema requires them).
_CARD_SHAPE: tuple[tuple[str, type], ...] = (
    ("name", str),
    ("version", str),
    ("capabilities", Mapping),
    ("skills", list),
)


def card_path(path: str) -> str | None:
    """The well-known card part at the end of a request path, or None."""
    found = _CARD_PATH.search(path)
    return found.group(0) if found else None


def looks_like_card(document: object) -> bool:
    if not isinstance(document, Mapping):
        return False
    if not all(isinstance(document.get(key), kind) for key, kind in _CARD_SHAPE):
        return False
    return isinstance(document.get("supportedInterfaces"), list) or isinstance(
        document.get("url"), str
    )


def parse_version(value: object) -> Version | None:
    """`1.0`, `1.0.0`, `0.3.0` -> Version by major.minor; anything else -> None."""
    if not isinstance(value, str):
        return None
    major_minor = ".".join(value.strip().split(".")[:2])
    try:
        return Version(major_minor)
    except ValueError:
        return None


def interfaces_from_card(card: Mapping[str, Any]) -> tuple[Interface, ...]:
    if not isinstance(card, Mapping):
        return ()
    found = [*_v1_interfaces(card), *_v03_interfaces(card)]
    return tuple(dict.fromkeys(found))


def _v1_interfaces(card: Mapping[str, Any]) -> list[Interface]:
    entries = card.get("supportedInterfaces")
    if not isinstance(entries, list):
        return []
    return [
        iface
        for entry in entries
        if isinstance(entry, Mapping)
        and (
            iface := _interface(
                entry.get("url"),
                entry.get("protocolBinding"),
                entry.get("protocolVersion"),
                entry.get("tenant"),
            )
        )
        is not None
    ]


def _v03_interfaces(card: Mapping[str, Any]) -> list[Interface]:
    version = card.get("protocolVersion")
    pairs: list[tuple[object, object]] = [
        (card.get("url"), card.get("preferredTransport") or "JSONRPC")
    ]
    extra = card.get("additionalInterfaces")
    if isinstance(extra, list):
        pairs += [(e.get("url"), e.get("transport")) for e in extra if isinstance(e, Mapping)]
    found = (_interface(url, transport, version, None) for url, transport in pairs)
    return [iface for iface in found if iface is not None]


def _interface(url: object, binding: object, version: object, tenant: object) -> Interface | None:
    if not isinstance(url, str) or not url or not isinstance(binding, str):
        return None
    known = _BINDINGS.get(binding.upper())
    custom = known is None and _CUSTOM_BINDING.match(binding) is not None
    if known is None and not custom:
        return None
    tenant_value = tenant if isinstance(tenant, str) and tenant else None
    kind = Binding.CUSTOM if known is None else known
    return Interface(url, kind, parse_version(version), tenant_value, binding if custom else None)
