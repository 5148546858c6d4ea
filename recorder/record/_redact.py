"""Redact secrets from captured requests and responses (pure: values in, values out).

Applied when an exchange is written to the capture, never to what the proxy forwards.  Each
distinct secret becomes a stable placeholder, `<redacted:1>`, `<redacted:2>` ..., so the same
token seen in a push-config body and later in a webhook's `Authorization` header reads the same
in the capture and replay can still match them up.

What counts as a secret, as data:
- the headers in `SECRET_HEADERS`; headers and query parameters whose name says they carry a
  credential (`CREDENTIAL_NAME`: `*token*`, `*secret*`, `*api-key*`, `*password*`,
  `x-*-auth*` ..., but never A2A's own pagination cursors); the names a user adds; and the API
  keys that an agent card's `securitySchemes` declare (v1.0 `apiKeySecurityScheme{location,
  name}`, v0.3 `{type: apiKey, in, name}`);
- in JSON bodies, SSE event data and decoded gRPC messages, the push-config fields in
  `SECRET_FIELDS` of any object that also has a `url` (this one rule covers v1.0 flat
  `TaskPushNotificationConfig`, v0.3 nested `pushNotificationConfig`, inline send
  configurations, JSON-RPC params and results, REST bodies, stream events).

A secret once seen is also swept from every later *response* (body, events), wherever it
appears: an agent that echoes a token in an error message must not leak it.  Requests are not
swept: the replayer matches on their content, and a client's own text stays the client's.

Redacting is idempotent (a placeholder is never a secret), so a capture can be redacted again
once more is known: `generation` counts what the redactor learnt (a name from a card, a secret
long enough to sweep), and `rework` redacts an exchange written earlier with today's knowledge.

JSON bodies keep their exact formatting: the secret's string token is swapped in the raw text, so
the capture's byte-form detection (pretty or compact) is unaffected.  `Authorization`-style values
keep their scheme (`Bearer <redacted:1>`).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import unquote_plus

from recorder.capture import Exchange, GrpcMessage, Headers, Request, Response, SseEvent
from recorder.protocol import PAGINATION_FIELDS, parse_json

SECRET_HEADERS: tuple[str, ...] = (
    "Authorization",
    "Proxy-Authorization",
    "Cookie",
    "Set-Cookie",
    "X-A2A-Notification-Token",
)
# Header and query parameter names that say they carry a credential, whatever the card says.
CREDENTIAL_NAME = re.compile(r"token|secret|api[-_]?key|passw(?:or)?d|^x-.+-auth", re.IGNORECASE)
NOT_CREDENTIALS = frozenset(name.lower() for name in PAGINATION_FIELDS)
PLACEHOLDER = re.compile(r"<redacted:\d+>")
REDACTED_NOTE = "redacted: "
# Headers whose value is `<scheme> <credentials>`: only the credentials are secret.
SCHEMED_HEADERS = frozenset({"authorization", "proxy-authorization"})

# Push-config secrets: key paths inside an object that also carries a `url`.
SECRET_FIELDS: tuple[tuple[str, ...], ...] = (
    ("token",),
    ("authentication", "credentials"),
)


# Sweeping a known secret out of responses replaces every occurrence of its text; shorter
# values are too likely to be ordinary words or numbers.
MIN_SWEPT_LENGTH = 8


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


@functools.lru_cache(maxsize=1024)
def is_credential_name(name: str) -> bool:
    """Whether a header or query parameter's name says it holds a credential (cached: the
    same few header names come with every exchange)."""
    return name.lower() not in NOT_CREDENTIALS and CREDENTIAL_NAME.search(name) is not None


@dataclass
class Redactor:
    """Turns secrets into stable placeholders across one capture.

    Example::

        r = Redactor()
        r.request(Request("GET", "/", (("Authorization", "Bearer s3cret"),)))
        # -> headers (("Authorization", "Bearer <redacted:1>"),); r.redacted == ("Authorization",)
    """

    extra_headers: set[str] = field(default_factory=set)
    query_keys: set[str] = field(default_factory=set)
    generation: int = 0  # grows whenever the redactor learns a name or a sweepable secret
    _placeholders: dict[str, str] = field(default_factory=dict)
    _skipped: int = 0  # placeholder numbers an earlier recording of the same file used
    _names: set[str] = field(default_factory=set)
    _secret_names: dict[str, str] = field(default_factory=dict)  # secret -> where first seen
    _hits: set[str] = field(default_factory=set)

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

    def learn_card(self, card: Mapping[str, Any]) -> None:
        """Also redact the API keys (headers, query parameters) this card's schemes name."""
        self.learn_names(api_key_headers(card), api_key_names(card, "query"))

    def learn_names(self, headers: Iterable[str] = (), params: Iterable[str] = ()) -> None:
        """Also redact these headers and query parameters (any case for headers)."""
        new_headers = {name.lower() for name in headers} - self.extra_headers
        new_params = set(params) - self.query_keys
        if new_headers or new_params:
            self.extra_headers |= new_headers
            self.query_keys |= new_params
            self.generation += 1

    def rework(self, exchange: Exchange) -> Exchange:
        """An exchange written earlier, redacted again with what is known now; its redaction
        note names everything redacted in it, then and now."""
        request, response, note = self.exchange(exchange.request, exchange.response)
        names = {
            name
            for n in (*exchange.notes, *note)
            if n.startswith(REDACTED_NOTE)
            for name in n[len(REDACTED_NOTE) :].split(", ")
        }
        notes = _with_redaction_note(exchange.notes, names)
        return replace(exchange, request=request, response=response, notes=notes)

    def exchange(
        self, request: Request, response: Response | None
    ) -> tuple[Request, Response | None, tuple[str, ...]]:
        """Both sides redacted, and the note naming what was (`redacted: Authorization`)."""
        self.take_hits()
        request = self.request(request)
        response = self.response(response) if response is not None else None
        hits = self.take_hits()
        return request, response, (f"redacted: {', '.join(hits)}",) if hits else ()

    def request(self, request: Request) -> Request:
        return _changed(
            request,
            target=self.target(request.target),
            headers=self.headers(request.headers),
            body=self.body(request.body),
            messages=_messages(request.messages, self.body),
        )

    def response(self, response: Response) -> Response:
        return _changed(
            response,
            headers=self.headers(response.headers),
            body=self.response_body(response.body),
            events=tuple(self.event(e) for e in response.events),
            messages=_messages(response.messages, self.response_body),
        )

    def response_body(self, body: bytes) -> bytes:
        """A response body (or gRPC response message): push-config secrets, then known ones."""
        return self.sweep(self.body(body))

    def target(self, target: str) -> str:
        """The request target with the values of credential query parameters redacted."""
        path, sep, query = target.partition("?")
        if not sep:
            return target
        return path + sep + "&".join(self._query_item(item) for item in query.split("&"))

    def event(self, event: SseEvent) -> SseEvent:
        """An SSE event with push-config secrets in its data, and known secrets, redacted."""
        lines = tuple(self._event_line(line) for line in event.lines)
        return event if lines == event.lines else replace(event, lines=lines)

    def headers(self, headers: Headers) -> Headers:
        return tuple(
            (k, self._header_value(k, v)) if self._secret_header(k) else (k, v) for k, v in headers
        )

    def _secret_header(self, name: str) -> bool:
        lower = name.lower()
        return (
            lower in _SECRET_HEADER_NAMES
            or lower in self.extra_headers
            or (is_credential_name(name))
        )

    def body(self, body: bytes) -> bytes:
        """`body` with push-config secrets swapped for placeholders; non-JSON comes back as is."""
        if b'"url"' not in body:
            return body  # push-config secrets sit beside a `url`: no url, nothing to find
        found = dict(_secrets(parse_json(body)))
        if not found:
            return body
        text = body.decode("utf-8", "surrogatepass")
        for secret, name in found.items():
            self._hit(name)
            if PLACEHOLDER.fullmatch(secret):
                continue  # redacted already
            self._secret_names.setdefault(secret, name)
            placeholder = json.dumps(self.placeholder(secret))
            for ascii_only in (True, False):
                text = text.replace(json.dumps(secret, ensure_ascii=ascii_only), placeholder)
        return text.encode("utf-8", "surrogatepass")

    def sweep(self, body: bytes) -> bytes:
        """`body` with every known secret (of MIN_SWEPT_LENGTH or more) replaced, as text."""
        if not self._placeholders or not body:
            return body
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return body
        swept = self._sweep_text(text)
        return body if swept == text else swept.encode("utf-8")

    def _sweep_text(self, text: str) -> str:
        for secret, placeholder in self._placeholders.items():
            if len(secret) < MIN_SWEPT_LENGTH:
                continue
            escaped = json.dumps(secret)[1:-1]  # as it reads inside a JSON string
            for form in dict.fromkeys((secret, escaped)):
                if form in text:
                    text = text.replace(form, placeholder)
                    self._hit(self._secret_names.get(secret, "secret"))
        return text

    def _event_line(self, line: str) -> str:
        field_name, sep, value = line.partition(":")
        if field_name != "data" or not sep:
            return self._sweep_text(line)
        lead = " " if value.startswith(" ") else ""
        data = self.body(value[len(lead) :].encode("utf-8")).decode("utf-8")
        return self._sweep_text(f"data:{lead}{data}")

    def _query_item(self, item: str) -> str:
        name, sep, value = item.partition("=")
        key = unquote_plus(name)
        if not sep or not value or not (key in self.query_keys or is_credential_name(key)):
            return item
        self._hit(f"query:{key}")
        if PLACEHOLDER.fullmatch(value):
            return item
        secret = unquote_plus(value)
        self._secret_names.setdefault(secret, f"query:{key}")
        # Left unescaped so that it reads (and diffs) like every other placeholder.
        return f"{name}={self.placeholder(secret)}"

    def skip_placeholders(self, count: int) -> None:
        """Number new placeholders after `count` (a capture continued from an earlier run)."""
        self._skipped = max(self._skipped, count - len(self._placeholders))

    def placeholder(self, secret: str) -> str:
        """The stable placeholder for `secret` (allocated on first sight)."""
        if secret not in self._placeholders:
            number = self._skipped + len(self._placeholders) + 1
            self._placeholders[secret] = f"<redacted:{number}>"
            if len(secret) >= MIN_SWEPT_LENGTH:
                self.generation += 1  # earlier responses may hold it
        return self._placeholders[secret]

    def _header_value(self, name: str, value: str) -> str:
        canonical = _canonical_header(name)
        self._hit(canonical)
        scheme, sep, credentials = value.partition(" ")
        if name.lower() in SCHEMED_HEADERS and sep and credentials.strip():
            scheme, secret = f"{scheme} ", credentials.strip()
        else:
            scheme, secret = "", value
        if not secret or PLACEHOLDER.fullmatch(secret):
            return value
        self._secret_names.setdefault(secret, canonical)
        return scheme + self.placeholder(secret)


def _changed[V: (Request, Response)](value: V, **fields: Any) -> V:
    """`value` itself when no field changed (`replace` is costly, and this runs per exchange)."""
    if all(getattr(value, name) == new for name, new in fields.items()):
        return value
    return replace(value, **fields)


def _messages(
    messages: tuple[GrpcMessage, ...], redact_body: Callable[[bytes], bytes]
) -> tuple[GrpcMessage, ...]:
    """gRPC messages with secrets redacted in their JSON, as bodies are."""
    return tuple(
        replace(m, json=redact_body(m.json.encode()).decode()) if m.json is not None else m
        for m in messages
    )


_SECRET_HEADER_NAMES = {h.lower(): h for h in SECRET_HEADERS}


def _canonical_header(name: str) -> str:
    return _SECRET_HEADER_NAMES.get(name.lower(), name)


def _with_redaction_note(notes: tuple[str, ...], names: set[str]) -> tuple[str, ...]:
    """`notes` with one redaction note naming `names`, where the old one stood (else last)."""
    if not names:
        return notes
    note = f"{REDACTED_NOTE}{', '.join(sorted(names))}"
    kept = [n for n in notes if not n.startswith(REDACTED_NOTE)]
    at = next((i for i, n in enumerate(notes) if n.startswith(REDACTED_NOTE)), len(notes))
    return (*kept[:at], note, *kept[at:])


def _secrets(node: Any) -> Iterator[tuple[str, str]]:
    """(secret, field name) pairs for push-config secrets anywhere in a JSON document."""
    if isinstance(node, list):
        for item in node:
            yield from _secrets(item)
        return
    if not isinstance(node, dict):
        return
    if "url" in node:
        for path in SECRET_FIELDS:
            value = _at(node, path)
            if isinstance(value, str) and value:
                yield value, ".".join(path)
    for child in node.values():
        yield from _secrets(child)


def _at(node: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node
