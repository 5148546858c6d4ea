"""Lint checks on the agent card, push deliveries, tenants, and the guide's takeaways.

Card rules read the agent's original card (`_view`), so a signature is checked over what the
agent signed, and only with a key (from a JWK Set the capture holds, or `Session.keys`).  A push
delivery is matched to a config the session saw by webhook and task, or not judged.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from recorder.lint._jws import protected_header, sdk_payload, spec_payload, verifies
from recorder.lint._view import ExchangeView, PushConfig, Session, Violation
from recorder.protocol import CORE_BINDINGS, Binding, SpecVersion, Version

_VERSION_FORM = re.compile(r"[0-9]+\.[0-9]+")
_MAX_AGE = re.compile(r"(?:^|[,\s])max-age\s*=\s*[0-9]+", re.IGNORECASE)
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+")


def _card(view: ExchangeView) -> Mapping[str, Any] | None:
    body = view.response_json
    ok = view.is_card and view.status == 200 and isinstance(body, Mapping)
    return body if ok else None


def _entries(card: Mapping[str, Any], key: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each object in the card's list `key` (`supportedInterfaces`, `signatures`), and where."""
    entries = card.get(key)
    for index, entry in enumerate(entries if isinstance(entries, list) else ()):
        if isinstance(entry, Mapping):
            yield f"card.{key}[{index}]", entry


# ---- the card (§3.6, §5.8, §8.3.1, §8.4, §8.6) ----


def interface_url(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    for where, entry in _entries(_card(view) or {}, "supportedInterfaces"):
        url, binding = entry.get("url"), entry.get("protocolBinding")
        if isinstance(url, str) and url and not _usable(url, binding):
            wanted = "an absolute http(s) URL" if binding in _HTTP_BINDINGS else "an absolute URL"
            wanted += " or host:port" if binding == Binding.GRPC.value else ""
            yield Violation(
                f"the {binding} interface URL is not usable as declared", wanted, url, where
            )


_HTTP_BINDINGS = (Binding.JSONRPC.value, Binding.HTTP_JSON.value)


def _usable(url: str, binding: object) -> bool:
    """An absolute URL (http or https for the HTTP bindings); host:port also for gRPC."""
    parts = urlsplit(url)
    if binding == Binding.GRPC.value and re.fullmatch(r"[^/\s]+:[0-9]+", url):
        return True
    if binding in _HTTP_BINDINGS:
        return parts.scheme in ("http", "https") and bool(parts.netloc)
    return bool(parts.scheme and (parts.netloc or parts.path))


def binding_name(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    for where, entry in _entries(_card(view) or {}, "supportedInterfaces"):
        name = entry.get("protocolBinding")
        if isinstance(name, str) and name not in CORE_BINDINGS and not _URI.fullmatch(name):
            yield Violation(
                f"custom binding {name!r} is not named by a URI",
                "JSONRPC, GRPC, HTTP+JSON or a URI",
                name,
                where,
            )


def protocol_version(
    view: ExchangeView, session: Session, spec: SpecVersion
) -> Iterator[Violation]:
    for where, entry in _entries(_card(view) or {}, "supportedInterfaces"):
        value = entry.get("protocolVersion")
        if isinstance(value, str) and not _VERSION_FORM.fullmatch(value):
            yield Violation(
                f"protocolVersion {value!r} is not Major.Minor",
                "Major.Minor, such as 1.0",
                value,
                where,
            )


def cache_control(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    if _card(view) is None:
        return
    value = view.response_headers.get("cache-control")
    if value is None or not _MAX_AGE.search(value):
        yield Violation(
            "the card is served without a Cache-Control max-age",
            "Cache-Control: max-age=<seconds>",
            value or "(absent)",
            "response",
        )


def etag(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    if _card(view) is not None and "etag" not in view.response_headers:
        yield Violation(
            "the card is served without an ETag", "an ETag header", "(absent)", "response"
        )


def signature_header(
    view: ExchangeView, session: Session, spec: SpecVersion
) -> Iterator[Violation]:
    for where, entry in _entries(_card(view) or {}, "signatures"):
        header = protected_header(entry)
        if header is None:
            yield Violation(
                "the protected header is no base64url JSON object",
                "base64url of {alg, typ, kid}",
                str(entry.get("protected")),
                where,
            )
            continue
        missing = [name for name in ("alg", "kid") if not isinstance(header.get(name), str)]
        if missing:
            yield Violation(
                f"the protected header has no {' and no '.join(missing)}",
                "alg and kid",
                ", ".join(sorted(header)) or "(empty)",
                where,
            )


def signature_typ(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    for where, entry in _entries(_card(view) or {}, "signatures"):
        header = protected_header(entry)
        if header is not None and header.get("typ") != "JOSE":
            yield Violation(
                "the protected header's typ is not JOSE",
                "typ: JOSE",
                repr(header.get("typ")) if "typ" in header else "(absent)",
                where,
            )


def signature_verifies(
    view: ExchangeView, session: Session, spec: SpecVersion
) -> Iterator[Violation]:
    card = _card(view)
    for where, entry in _entries(card or {}, "signatures"):
        header = protected_header(entry) or {}
        key = session.keys.get(str(header.get("kid")))
        if card is None or key is None or verifies(entry, spec_payload(card), key):
            continue
        sdk = verifies(entry, sdk_payload(card), key)
        actual = (
            "it verifies only over the card without the fields the proto does not "
            "define and without empty values (what both 1.3.0 SDKs sign)"
            if sdk
            else "it does not verify"
        )
        yield Violation(
            f"the signature by key {header.get('kid')!r} does not verify over the card as served",
            "a signature over the canonical card (§8.4.1)",
            actual,
            where,
        )


# ---- push deliveries (§4.3.3, §13.2) ----


def push_authentication(
    view: ExchangeView, session: Session, spec: SpecVersion
) -> Iterator[Violation]:
    configs = [c for c in _configs_for(view, session) if c.schemes]
    if not configs or any(_authenticates(view, c) for c in configs):
        return
    wanted = configs[-1]
    expected = f"Authorization: {wanted.schemes[0]} {wanted.credentials or '<credentials>'}"
    actual = view.request_headers.get("authorization")
    token = "x-a2a-notification-token" in view.request_headers
    shown = f"Authorization: {actual}" if actual else "no Authorization header"
    yield Violation(
        "the delivery does not carry the authentication its push config asked for",
        expected,
        shown + (" (X-A2A-Notification-Token sent)" if token else ""),
        "request",
    )


def _configs_for(view: ExchangeView, session: Session) -> list[PushConfig]:
    host = view.request_headers.get("host", "")
    task = view.classification.task_id
    return [
        c
        for c in session.push_configs
        if _same_webhook(c.url, host, view.path) and c.task_id in (None, task)
    ]


def _same_webhook(url: str, host: str, path: str) -> bool:
    parts = urlsplit(url)
    same_host = not host or not parts.netloc or parts.netloc.lower() == host.lower()
    return same_host and (parts.path or "/") == path


def _authenticates(view: ExchangeView, config: PushConfig) -> bool:
    scheme, _, credentials = view.request_headers.get("authorization", "").partition(" ")
    if scheme.lower() not in {s.lower() for s in config.schemes}:
        return False
    return config.credentials is None or credentials.strip() == config.credentials


# ---- tenants (§8.3.2 in v1.0.1; the guide's HTTP+JSON section) ----


def tenant(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    if view.operation is None or view.binding is None:
        return
    declared = {
        iface.tenant
        for iface in session.interfaces
        if iface.binding is view.binding and iface.version in (Version.V1_0, None)
    }
    if not declared:
        return
    sent = view.wire_tenant()
    if sent in declared:
        return
    if declared == {None}:
        yield Violation(
            f"the request names tenant {sent!r}, but the interface declares none",
            "no tenant",
            repr(sent),
            "request",
        )
    else:
        wanted = " or ".join(repr(t) for t in sorted(t or "" for t in declared))
        yield Violation(
            "the request's tenant is not the interface's",
            wanted,
            repr(sent) if sent else "(no tenant)",
            "request",
        )


# ---- the guide's takeaways ----


def subscribe_verb(view: ExchangeView, session: Session, spec: SpecVersion) -> Iterator[Violation]:
    if view.name != "SubscribeToTask" or view.binding is not Binding.HTTP_JSON:
        return
    if view.verb != "POST":
        yield Violation(
            "the client subscribes with GET",
            "POST /tasks/{id}:subscribe",
            f"{view.verb} {view.path}",
            "request",
        )
    if view.status in (404, 405):
        yield Violation(
            f"the server refuses {view.verb} on :subscribe",
            "GET and POST served",
            f"HTTP {view.status}",
            "response",
        )
