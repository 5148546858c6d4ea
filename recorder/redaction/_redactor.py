"""The redactor: secrets in an exchange become stable placeholders (pure: values in, values out).

Each distinct secret becomes `<redacted:N>`, the same wherever it appears in one capture, so
replay can still match them up.  Per part of an exchange, it *learns* what the rules (`_rules`)
call secret, then *sweeps* every known secret wherever it appears, however encoded (`_sweep`):
a value the rules name whatever its length, any other from `MIN_SWEPT_LENGTH` characters
(shorter ones are too likely ordinary words).  Redacting is idempotent, so `rework` redacts an
exchange again once more is known (`generation`).  Each exchange's note names what was redacted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import unquote_plus

from recorder.capture import Exchange, GrpcMessage, Headers, Request, Response, SseEvent
from recorder.protocol import NOT_JSON, Classification, is_push_config, parse_json, value_at
from recorder.redaction._rules import (
    COOKIE_HEADERS,
    SCHEMED_HEADERS,
    SECRET_FIELDS,
    SECRET_HEADERS,
    Rules,
    canonical_header,
    is_credential_name,
)
from recorder.redaction._sweep import (
    PLACEHOLDER_PATTERN,
    Finder,
    as_bytes,
    as_text,
    secret_pattern,
    sweep_text,
)

PLACEHOLDER = re.compile(PLACEHOLDER_PATTERN)
REDACTED_NOTE = "redacted: "
MIN_SWEPT_LENGTH = 8
_SECRET_HEADER_NAMES = frozenset(h.lower() for h in SECRET_HEADERS)
# A classification's values: ids (each a known secret's placeholder, whatever its length), and
# texts that may hold one (a REST method's path, a reason quoting the request).
_IDS = ("tenant", "task_id", "context_id", "config_id")
_TEXTS = ("method", "reason")
_COOKIE_SEPARATOR = re.compile(r"(;\s*)")
NO_RULES = Rules()

# A part of a header value: its text, and whether that text is a secret.
Part = tuple[str, bool]


class Redactor:
    """Turns secrets into stable placeholders across one capture; `max_secrets` bounds those
    remembered (oldest forgotten first), for one that outlives a capture (a replay journal)."""

    def __init__(self, rules: Rules = NO_RULES, *, max_secrets: int | None = None) -> None:
        self.extra_headers: set[str] = set()
        self.query_keys: set[str] = set()
        self.generation = 0  # grows whenever the redactor learns a name or a sweepable secret
        self.max_secrets = max_secrets
        self._placeholders: dict[str, str] = {}  # secret -> placeholder
        self._sweepable: dict[str, str] = {}  # the secrets swept wherever they appear
        self._finder: Finder | None = None  # for `_sweepable`, made when first needed
        self._quoting: tuple[int, Finder] | None = None  # `quoted`'s, and `_last` when made
        self._last = 0  # the last placeholder number given
        self._names: set[str] = set()
        self._secret_names: dict[str, str] = {}  # secret -> where first seen
        self._hits: set[str] = set()
        self.learn_rules(rules)

    # -- what was redacted ---------------------------------------------------------------

    @property
    def redacted(self) -> tuple[str, ...]:
        """The header and field names redacted so far, sorted."""
        return tuple(sorted(self._names))

    def take_hits(self) -> tuple[str, ...]:
        """The names redacted since the last call, sorted (for a per-exchange note)."""
        hits, self._hits = self._hits, set()
        return tuple(sorted(hits))

    def _hit(self, name: str) -> None:
        self._names.add(name)
        self._hits.add(name)

    # -- learning names --------------------------------------------------------------------

    def learn_rules(self, rules: Rules) -> None:
        self.learn_names(rules.header_names(), rules.param_names())

    def learn_card(self, card: Mapping[str, Any]) -> None:
        """Also redact the API keys (headers, query parameters) this card's schemes name."""
        self.learn_rules(Rules(cards=(card,)))

    def learn_names(self, headers: Iterable[str] = (), params: Iterable[str] = ()) -> None:
        """Also redact these headers and query parameters (any case for headers)."""
        new_headers = {name.lower() for name in headers} - self.extra_headers
        new_params = set(params) - self.query_keys
        if new_headers or new_params:
            self.extra_headers |= new_headers
            self.query_keys |= new_params
            self.generation += 1

    def secret_header(self, name: str) -> bool:
        lower = name.lower()
        return (
            lower in _SECRET_HEADER_NAMES or lower in self.extra_headers or is_credential_name(name)
        )

    def secret_param(self, name: str) -> bool:
        return name in self.query_keys or is_credential_name(name)

    # -- placeholders ----------------------------------------------------------------------

    def placeholder(self, secret: str, name: str = "secret") -> str:
        """The stable placeholder for `secret` (allocated on first sight, where `name` says)."""
        found = self._placeholders.get(secret)
        if found is not None:
            return found
        self._last += 1
        found = self._placeholders[secret] = f"<redacted:{self._last}>"
        self._secret_names.setdefault(secret, name)
        if len(secret) >= MIN_SWEPT_LENGTH:
            self._sweepable[secret] = found
            self._finder = None
            self.generation += 1  # earlier exchanges may hold it
        self._forget_oldest()
        return found

    def skip_placeholders(self, count: int) -> None:
        """Number new placeholders after `count` (a capture continued from an earlier run)."""
        self._last = max(self._last, count)

    def _forget_oldest(self) -> None:
        if self.max_secrets is None or len(self._placeholders) <= self.max_secrets:
            return
        oldest = next(iter(self._placeholders))
        del self._placeholders[oldest]
        self._secret_names.pop(oldest, None)
        if self._sweepable.pop(oldest, None) is not None:
            self._finder = None

    def _learn(self, secret: str, name: str) -> str:
        """The placeholder of a value the rules name, and the hit noted."""
        self._hit(name)
        if PLACEHOLDER.fullmatch(secret):
            return secret  # redacted already
        return self.placeholder(secret, name)

    def _swept_placeholder(self, secret: str) -> str:
        self._hit(self._secret_names.get(secret, "secret"))
        return self._placeholders[secret]

    @property
    def sweepable(self) -> Mapping[str, str]:
        """The secrets swept wherever they appear, with their placeholders."""
        return self._sweepable

    def finder(self, exact: Mapping[str, str] | None = None) -> Finder:
        """What `_sweep` needs to find the known secrets (plus `exact` whole-string ones)."""
        if exact:
            return Finder(secret_pattern(self._sweepable), self._swept_placeholder, exact)
        if self._finder is None:
            self._finder = Finder(secret_pattern(self._sweepable), self._swept_placeholder)
        return self._finder

    # -- exchanges -------------------------------------------------------------------------

    def rework(self, exchange: Exchange) -> Exchange:
        """An exchange redacted (again) with what is known now, its classification too."""
        self.take_hits()
        request = self.request(exchange.request)
        response = self.response(exchange.response) if exchange.response is not None else None
        classification = _changed(
            exchange.classification,
            **{k: self.value(v) for k in _IDS if (v := getattr(exchange.classification, k))},
            **{k: self.text(v) for k in _TEXTS if (v := getattr(exchange.classification, k))},
        )
        names = {
            name
            for n in exchange.notes
            if n.startswith(REDACTED_NOTE)
            for name in n[len(REDACTED_NOTE) :].split(", ")
        }
        notes = with_redaction_note(exchange.notes, names | set(self.take_hits()))
        parts = {"request": request, "response": response, "classification": classification}
        return _changed(exchange, notes=notes, **parts)

    def request(self, request: Request) -> Request:
        self.learn_head(request.headers, request.target)
        body = self.body(request.body)
        messages = self.messages(request.messages)
        return _changed(
            request,
            target=self.target(request.target),
            headers=self.headers(request.headers),
            body=body,
            messages=messages,
        )

    def response(self, response: Response) -> Response:
        self.learn_head(response.headers)
        body = self.body(response.body)
        events = tuple(self.event(e) for e in response.events)
        messages = self.messages(response.messages)
        return _changed(
            response,
            headers=self.headers(response.headers),
            body=body,
            events=events,
            messages=messages,
            trailers=self.headers(response.trailers),
        )

    def learn(self, request: Request) -> None:
        """Learn a request's secrets without redacting it, for what is redacted later."""
        self.learn_head(request.headers, request.target)
        for document in (as_text(request.body), *(m.json for m in request.messages if m.json)):
            self._push_secrets(document)

    # -- heads -----------------------------------------------------------------------------

    def learn_head(self, headers: Headers, target: str = "") -> None:
        """Learn the secrets of credential headers and query parameters (before sweeping)."""
        for name, value in headers:
            if self.secret_header(name):
                self.header_value(name, value)
        if "?" in target:
            self.target(target)

    def headers(self, headers: Headers) -> Headers:
        """Credential headers with their secrets replaced; known secrets swept from the rest."""
        finder = self.finder()
        return tuple(
            (k, self.header_value(k, v) if self.secret_header(k) else sweep_text(v, finder))
            for k, v in headers
        )

    def header_value(self, name: str, value: str) -> str:
        """A credential header's value with its secret parts replaced."""
        canonical = canonical_header(name)
        return "".join(
            self._learn(text, canonical) if secret else text
            for text, secret in _credential_parts(name.lower(), value)
        )

    def target(self, target: str) -> str:
        """The request target: credential query values replaced, known secrets swept."""
        path, sep, query = target.partition("?")
        finder = self.finder()
        if not sep:
            return sweep_text(target, finder)
        items = (self._query_item(item, finder) for item in query.split("&"))
        # Then the whole, as it reads: a secret with a `&` in it spans two items.
        return finder.sub(sweep_text(path, finder) + sep + "&".join(items))

    def _query_item(self, item: str, finder: Finder) -> str:
        name, sep, value = item.partition("=")
        key = _unquote_plus(name)
        if not sep or not value or not self.secret_param(key):
            return sweep_text(item, finder)
        # Left unescaped so that it reads (and diffs) like every other placeholder.
        return f"{name}={self._learn(_unquote_plus(value), f'query:{key}')}"

    # -- bodies ----------------------------------------------------------------------------

    def body(self, body: bytes) -> bytes:
        """`body` with push-config secrets and known secrets replaced; else the same bytes."""
        if not body:
            return body
        text = as_text(body)
        swept = self.document(text)
        return body if swept == text else as_bytes(swept)

    def document(self, text: str) -> str:
        """A body's text (JSON or not): its push-config secrets learnt, then all known swept."""
        exact = self._push_secrets(text)
        finder = self.finder(exact)
        return text if finder.empty else sweep_text(text, finder)

    def text(self, text: str) -> str:
        """Free text (a report line) with the known secrets swept."""
        return sweep_text(text, self.finder())

    def quoted(self, text: str) -> str:
        """Free text quoting values as JSON: known secrets swept, a quoted one of any length."""
        if self._quoting is None or self._quoting[0] != self._last:
            self._quoting = (self._last, self.finder(self._placeholders))
        return sweep_text(text, self._quoting[1])

    def value(self, text: str) -> str:
        """A value shown on its own: its placeholder if a known secret, whatever its length."""
        if text in self._placeholders:
            return self._swept_placeholder(text)
        return self.text(text)

    def event(self, event: SseEvent) -> SseEvent:
        """An SSE event: each `data:` line as a document, other lines as text."""
        lines = tuple(self._event_line(line) for line in event.lines)
        return event if lines == event.lines else replace(event, lines=lines)

    def _event_line(self, line: str) -> str:
        field_name, sep, value = line.partition(":")
        if field_name != "data" or not sep:
            return self.text(line)
        lead = " " if value.startswith(" ") else ""
        return f"data:{lead}{self.document(value[len(lead) :])}"

    def messages(self, messages: tuple[GrpcMessage, ...]) -> tuple[GrpcMessage, ...]:
        """gRPC messages: decoded ones as documents; undecodable bytes swept as they are."""
        return tuple(self._message(m) for m in messages)

    def _message(self, message: GrpcMessage) -> GrpcMessage:
        if message.json is not None:
            swept = self.document(message.json)
            return message if swept == message.json else replace(message, json=swept)
        raw = message.raw or b""
        swept_raw = self.body(raw) if self._sweepable else raw
        return message if swept_raw == raw else replace(message, raw=swept_raw)

    def _push_secrets(self, text: str) -> dict[str, str]:
        """The push-config secrets of a JSON document, learnt: value -> placeholder."""
        if '"url"' not in text and "\\u" not in text:
            return {}  # push-config secrets sit beside a `url` key, however it is spelt
        found = dict(_push_config_secrets(parse_json(text)))
        return {secret: self._learn(secret, name) for secret, name in found.items()}


def _changed[V: (Request, Response, Classification, Exchange)](value: V, **fields: Any) -> V:
    """`value` itself when no field changed (`replace` is costly, and this runs per exchange)."""
    if all(getattr(value, name) == new for name, new in fields.items()):
        return value
    return replace(value, **fields)


def _credential_parts(name: str, value: str) -> list[Part]:
    """A credential header's value split into plain and secret parts (`name` lower-case)."""
    if name in SCHEMED_HEADERS:
        scheme, sep, credentials = value.partition(" ")
        if sep and credentials.strip():
            return [(f"{scheme} ", False), (credentials.strip(), True)]
    if name in COOKIE_HEADERS:
        pairs = _COOKIE_SEPARATOR.split(value)
        if name == "set-cookie":  # `name=value; Path=/; HttpOnly`: only the first pair
            return [*_cookie_pair(pairs[0]), ("".join(pairs[1:]), False)]
        return [part for pair in pairs for part in _cookie_pair(pair)]
    return [(value, bool(value))]


def _cookie_pair(pair: str) -> list[Part]:
    if _COOKIE_SEPARATOR.fullmatch(pair) or not pair:
        return [(pair, False)]
    name, sep, value = pair.partition("=")
    if not sep:
        return [(pair, True)]
    return [(f"{name}=", False), (value, bool(value))]


def _unquote_plus(text: str) -> str:
    return unquote_plus(text, errors="surrogateescape")


def with_redaction_note(notes: tuple[str, ...], names: set[str]) -> tuple[str, ...]:
    """`notes` with one redaction note naming `names`, where the old one stood (else last)."""
    if not names:
        return notes
    note = f"{REDACTED_NOTE}{', '.join(sorted(names))}"
    kept = [n for n in notes if not n.startswith(REDACTED_NOTE)]
    at = next((i for i, n in enumerate(notes) if n.startswith(REDACTED_NOTE)), len(notes))
    return (*kept[:at], note, *kept[at:])


def _push_config_secrets(node: Any) -> Iterator[tuple[str, str]]:
    """(secret, field name) pairs for push-config secrets anywhere in a JSON document."""
    if node is NOT_JSON:
        return
    if isinstance(node, list):
        for item in node:
            yield from _push_config_secrets(item)
        return
    if not isinstance(node, dict):
        return
    if is_push_config(node):
        for path in SECRET_FIELDS:
            value = value_at(node, path)
            if isinstance(value, str) and value:
                yield value, ".".join(path)
    for child in node.values():
        yield from _push_config_secrets(child)
