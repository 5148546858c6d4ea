"""A last look for secrets that redaction did not know to look for (pure).

Redaction replaces what A2A and the card say is secret.  Tokens of well-known formats can still
sit elsewhere: a JWT in a message, a cloud key in an artifact.  Those are not replaced (a
client's own content may be what a test replays), but each exchange that holds one gets a note
naming the kind and where, and the recorder warns, so nobody commits one unawares.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from recorder.capture import Request, Response

# Well-known token formats: (kind, the literal every such token holds, pattern).  Anchored on
# prefixes their issuers document, so that ordinary ids and hashes do not trip them.  The
# literal is looked for first (a plain substring search), so the patterns run only on the rare
# text that could hold a match: this scan sees every exchange the recorder writes.
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
# Bodies larger than this are not scanned: a capture's big bodies are files, not credentials,
# and the recorder must not stall on them.
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
