"""What counts as a secret, as data (pure): header and parameter names, push-config fields, and
the API keys an agent card declares.

`SECRET_HEADERS` are always credentials; `CREDENTIAL_NAME` matches names that say they carry one
whatever the card says, but `NOT_CREDENTIALS` (A2A's pagination cursors, nonces); `SECRET_FIELDS`
are the push-config secrets in any JSON object that also has a `url`.  `Rules` is one set of
these a user extends; the recorder and the replayer's journal apply the same.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from recorder.protocol import PAGINATION_FIELDS, PUSH_CONFIG_SECRETS

SECRET_HEADERS: tuple[str, ...] = (
    "Authorization",
    "Proxy-Authorization",
    "Cookie",
    "Set-Cookie",
    "X-A2A-Notification-Token",
)
CREDENTIAL_NAME = re.compile(
    r"token|secret|passw(?:or)?d|api[-_]?key|^key$|[-_]key$|^x-auth|^x-.+-auth", re.IGNORECASE
)
NOT_CREDENTIALS = frozenset(
    name.lower()
    for name in (*PAGINATION_FIELDS, "Idempotency-Key", "Sec-WebSocket-Key", "Sec-WebSocket-Accept")
)
# Headers whose value is `<scheme> <credentials>`: only the credentials are secret.
SCHEMED_HEADERS = frozenset({"authorization", "proxy-authorization"})
# Headers whose value is `name=value` pairs: each value is a secret, the names are not.
COOKIE_HEADERS = frozenset({"cookie", "set-cookie"})

# Push-config secrets: key paths inside an object that also carries a `url`.
SECRET_FIELDS: tuple[tuple[str, ...], ...] = PUSH_CONFIG_SECRETS
_SECRET_HEADER_NAMES = {h.lower(): h for h in SECRET_HEADERS}


@functools.lru_cache(maxsize=1024)
def is_credential_name(name: str) -> bool:
    """Whether a header or query parameter's name says it holds a credential (cached)."""
    return name.lower() not in NOT_CREDENTIALS and CREDENTIAL_NAME.search(name) is not None


def canonical_header(name: str) -> str:
    """`Authorization` for `authorization`; other names as given."""
    return _SECRET_HEADER_NAMES.get(name.lower(), name)


def api_key_headers(card: Mapping[str, Any]) -> tuple[str, ...]:
    """Header names that the card's security schemes put API keys in (v1.0 and v0.3 shapes)."""
    return api_key_names(card, "header")


def api_key_names(card: Mapping[str, Any], location: str) -> tuple[str, ...]:
    """Names of the API keys the card's security schemes put in `location` (header, query)."""
    schemes = card.get("securitySchemes")
    if not isinstance(schemes, Mapping):
        return ()
    return tuple(name for s in schemes.values() if (name := _api_key_name(s, location)))


def _api_key_name(scheme: Any, location: str) -> str | None:
    if not isinstance(scheme, Mapping):
        return None
    v1 = scheme.get("apiKeySecurityScheme")
    if isinstance(v1, Mapping) and str(v1.get("location", "")).lower() == location:
        return _str_or_none(v1.get("name"))
    if scheme.get("type") == "apiKey" and str(scheme.get("in", "")).lower() == location:
        return _str_or_none(scheme.get("name"))
    return None


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True, slots=True)
class Rules:
    """What one redactor treats as secret beyond the built-in names: more `headers` (any case)
    and `params`, and `cards` whose security schemes name API keys."""

    headers: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    cards: tuple[Mapping[str, Any], ...] = field(default=())
    keep_secrets: bool = False

    def with_card(self, card: Mapping[str, Any]) -> Rules:
        return Rules(self.headers, self.params, (*self.cards, card), self.keep_secrets)

    def header_names(self) -> Iterable[str]:
        yield from self.headers
        for card in self.cards:
            yield from api_key_headers(card)

    def param_names(self) -> Iterable[str]:
        yield from self.params
        for card in self.cards:
            yield from api_key_names(card, "query")
