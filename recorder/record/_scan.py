"""A last look for secrets that redaction did not know to look for (pure).

Tokens of well-known formats can sit where no rule looks (a JWT in a message, a cloud key in
an artifact).  They are not replaced (a client's own content may be what a test replays), but
the exchange gets a note naming the kind and where, and the recorder warns.  `RepeatedHeaders`
looks across requests: a header whose value is the same high-entropy token on every request
(`X-Tenant-Seal`) is most likely a credential, noted once, when the pattern is clear
(`MIN_REQUESTS`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator

from recorder.capture import Headers, Request, Response

# Well-known token formats: (kind, the literal every such token holds, pattern), anchored on
# their issuers' prefixes; the literal is searched first, as this scan sees every exchange.
SECRET_PATTERNS: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    (
        "JWT",
        ("eyJ",),
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ),
    ("private key", ("PRIVATE KEY-----",), re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")),
    ("AWS access key", ("AKIA", "ASIA"), re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    (
        "GitHub token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    ),
    ("Slack token", ("xox",), re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("Google API key", ("AIza",), re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("OpenAI-style key", ("sk-",), re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{32,}")),
)
# Larger bodies are files, not credentials: not scanned, so the recorder does not stall.
MAX_SCANNED_BYTES = 1 << 20


def scan_exchange(request: Request, response: Response | None) -> tuple[str, ...]:
    """Notes (`possible secret: JWT in request body`) for what the patterns find."""
    texts = list(_texts(request, response))
    whole = "\n".join(text for _, text in texts)
    # Nearly every exchange holds none of the literals: one look at the whole settles it.
    likely = [
        (kind, pattern)
        for kind, literals, pattern in SECRET_PATTERNS
        if any(literal in whole for literal in literals)
    ]
    if not likely:
        return ()
    found: dict[str, None] = {}
    for kind, pattern in likely:
        for where, text in texts:
            if text and pattern.search(text):
                found[f"possible secret: {kind} in {where}"] = None
    return tuple(sorted(found, key=list(_note_order(texts)).index))


def _note_order(texts: list[tuple[str, str]]) -> Iterator[str]:
    # Notes in the order of the places, then the patterns, as one scan per place gives them.
    for where, _ in texts:
        for kind, _, _ in SECRET_PATTERNS:
            yield f"possible secret: {kind} in {where}"


def _texts(request: Request, response: Response | None) -> Iterator[tuple[str, str]]:
    yield "request target", request.target
    yield "request headers", "\n".join(f"{k}: {v}" for k, v in request.headers)
    yield "request body", _text(request.body)
    yield "request messages", "\n".join(m.json or "" for m in request.messages)
    if response is None:
        return
    yield "response headers", "\n".join(f"{k}: {v}" for k, v in response.headers)
    yield "response body", _text(response.body)
    yield "response events", "\n".join(line for e in response.events for line in e.lines)
    yield "response messages", "\n".join(m.json or "" for m in response.messages)


def _text(body: bytes) -> str:
    if not body or len(body) > MAX_SCANNED_BYTES:
        return ""
    return body.decode("utf-8", errors="ignore")


# A value is a likely token when it is one word of at least MIN_TOKEN_LENGTH characters, mixes
# character classes, and its characters carry MIN_ENTROPY bits each or more (a random base64
# or hex token does; words, versions and host names do not).
MIN_REQUESTS = 3
MIN_TOKEN_LENGTH = 16
MIN_ENTROPY = 3.5
_TOKEN = re.compile(r"[A-Za-z0-9+/=_.~-]+")
_CLASSES = (str.islower, str.isupper, str.isdigit)
# Headers that are the same on every request of a client and carry no secret.
ORDINARY_HEADERS = frozenset(
    {
        "host",
        "user-agent",
        "accept",
        "accept-encoding",
        "accept-language",
        "content-type",
        "connection",
        "origin",
        "referer",
        "a2a-version",
        "a2a-extensions",
        "x-a2a-extensions",
    }
)


def likely_token(value: str) -> bool:
    """Whether a header value looks like a random token (see the constants above)."""
    if len(value) < MIN_TOKEN_LENGTH or not _TOKEN.fullmatch(value):
        return False
    if sum(any(is_class(c) for c in value) for is_class in _CLASSES) < 2:
        return False
    counts = Counter(value).values()
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts)
    return entropy >= MIN_ENTROPY


class RepeatedHeaders:
    """Headers sent with the same likely-token value on every request seen."""

    def __init__(self) -> None:
        self._requests = 0
        self._same: dict[str, str] = {}  # lower-case name -> the value every request sent
        self._noted: set[str] = set()

    def see(self, headers: Headers) -> tuple[str, ...]:
        self._requests += 1
        sent = {k.lower(): v for k, v in headers}
        if self._requests == 1:
            self._same = {
                k: v for k, v in sent.items() if k not in ORDINARY_HEADERS and likely_token(v)
            }
        else:
            self._same = {k: v for k, v in self._same.items() if sent.get(k) == v}
        if self._requests < MIN_REQUESTS:
            return ()
        new = [k for k in self._same if k not in self._noted]
        self._noted.update(new)
        names = {k.lower(): k for k, _ in headers}
        return tuple(
            f"possible secret: header {names[k]} (the same high-entropy value on every request)"
            for k in new
        )
