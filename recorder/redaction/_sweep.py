"""Finding known secrets in text however it was encoded, and replacing them (pure).

A secret is looked for in the *decoded* value: a JSON string `"abc\\/def\\u0026"` holds
`abc/def&`, whatever escapes its encoder chose.  `sweep_text` replaces every secret a text
holds, as it reads and as each layer decodes it: JSON string tokens (written anew, ASCII-only
if they were), percent-encoded runs (`+` for a space too), and base64 runs of 12 or more
characters (either alphabet, padded or not; swept, then encoded again the same way).  Layers
nest up to `MAX_DEPTH`.  Only what holds a secret is rewritten.  Text is `str` throughout:
bytes that are not UTF-8 travel as surrogate escapes and come back as the same bytes.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import quote, quote_plus, unquote, unquote_plus

MAX_DEPTH = 4
PLACEHOLDER_PATTERN = r"<redacted:\d+>"
_PLACEHOLDER = re.compile(PLACEHOLDER_PATTERN)
MIN_BASE64 = 12  # a shorter run is too often a word, an id or a number
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
# Only the JSON strings that hold an escape (in JSON text, backslashes are only in strings, so
# a scan never starts one at a closing quote): the others read as written.
_ESCAPED_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)+"', re.DOTALL)
_PERCENT_RUN = re.compile(r"[^\s\"'<>\\]*%[0-9A-Fa-f]{2}[^\s\"'<>\\]*")
# Scanned left to right, a run is always matched from its first character (no look-behind,
# which would make the scan several times slower).
_BASE64_RUN = re.compile(rf"[A-Za-z0-9+/_-]{{{MIN_BASE64},}}={{0,2}}")
# Characters a re-encoded percent run keeps as they are: a placeholder reads as itself.
_KEPT = "<>:/?#[]@!$&'()*+,;=~"


@dataclass(slots=True)
class Finder:
    """The secrets to look for: `pattern` matches any, `placeholder` names a match's
    replacement, `exact` those replaced only where a whole JSON string equals them."""

    pattern: re.Pattern[str] | None
    placeholder: Callable[[str], str]
    exact: Mapping[str, str] = field(default_factory=dict)
    keep_placeholders: bool = True  # False: a placeholder is replaced like a secret (masking)

    def sub(self, text: str) -> str:
        if self.pattern is None:
            return text
        return self.pattern.sub(self._replace, text)

    def _replace(self, match: re.Match[str]) -> str:
        found = match.group()
        if self.keep_placeholders and _PLACEHOLDER.fullmatch(found):
            return found
        return self.placeholder(found)

    @property
    def empty(self) -> bool:
        return self.pattern is None and not self.exact


def sweep_text(text: str, finder: Finder, depth: int = 0) -> str:
    """`text` with every secret `finder` knows replaced, in every encoding it may hold."""
    if finder.empty or not text:
        return text
    swept = finder.sub(text)
    if depth >= MAX_DEPTH:
        return swept
    if '"' in swept and ("\\" in swept or finder.exact):
        tokens = _JSON_STRING if finder.exact else _ESCAPED_JSON_STRING
        swept = tokens.sub(lambda m: _json_token(m.group(), finder, depth), swept)
    if finder.pattern is None:
        return swept
    if "%" in swept:
        swept = _PERCENT_RUN.sub(lambda m: _percent_run(m.group(), finder, depth), swept)
    return _BASE64_RUN.sub(lambda m: _base64_run(m.group(), finder, depth), swept)


def sweep_value(value: str, finder: Finder, depth: int = 0) -> str:
    """A decoded string value: the placeholder if it is an `exact` secret, else swept."""
    exact = finder.exact.get(value)
    if exact is not None:  # its hit was noted when it was learnt
        return exact
    return sweep_text(value, finder, depth)


def _json_token(token: str, finder: Finder, depth: int) -> str:
    inner = token[1:-1]
    if "\\" not in inner:  # it reads as it is written: the layers around it saw it whole
        exact = finder.exact.get(inner)
        return token if exact is None else json.dumps(exact, ensure_ascii=token.isascii())
    try:
        inner = json.loads(token)
    except (ValueError, RecursionError):
        return token  # not a JSON string after all (free text with quotes)
    swept = sweep_value(inner, finder, depth + 1)
    if swept == inner:
        return token
    return json.dumps(swept, ensure_ascii=token.isascii())


def _percent_run(run: str, finder: Finder, depth: int) -> str:
    kept = _KEPT + "".join(c for c in dict.fromkeys(run) if c.isascii() and c != "%")
    for decode, encode in ((unquote, quote), (unquote_plus, quote_plus)):
        decoded = decode(run, errors="surrogateescape")
        swept = sweep_text(decoded, finder, depth + 1)
        if swept != decoded:
            return encode(as_bytes(swept), safe=kept)
        if "+" not in run:
            break
    return run


def _base64_run(run: str, finder: Finder, depth: int) -> str:
    urlsafe = "-" in run or "_" in run
    if urlsafe and ("+" in run or "/" in run):
        return run
    body = run.rstrip("=")
    if len(body) % 4 == 1:
        return run
    try:
        data = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_" if urlsafe else None)
    except (binascii.Error, ValueError):
        return run
    try:
        decoded, inner = data.decode("utf-8"), depth + 1
    except UnicodeDecodeError:  # binary (a file): the secret as it reads, no layers within
        decoded, inner = data.decode("utf-8", "surrogateescape"), MAX_DEPTH
    swept = sweep_text(decoded, finder, inner)
    if swept == decoded:
        return run
    altchars = b"-_" if urlsafe else None
    encoded = base64.b64encode(as_bytes(swept), altchars=altchars).decode("ascii")
    return encoded if run.endswith("=") or len(run) % 4 == 0 else encoded.rstrip("=")


def as_text(data: bytes) -> str:
    """Bytes as text for sweeping; `as_bytes` gives back the same bytes."""
    return data.decode("utf-8", "surrogateescape")


def as_bytes(text: str) -> bytes:
    """Text back to bytes: surrogate escapes are their bytes again, other lone surrogates kept."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def secret_pattern(
    secrets: Mapping[str, object], *, placeholders: bool = False
) -> re.Pattern[str] | None:
    """One pattern for all `secrets`, longest first, after the placeholders themselves: a
    placeholder is consumed whole, so no secret is found inside one.  None when none."""
    if not secrets and not placeholders:
        return None
    ordered = sorted(secrets, key=len, reverse=True)
    return re.compile("|".join([PLACEHOLDER_PATTERN, *(re.escape(s) for s in ordered)]))
