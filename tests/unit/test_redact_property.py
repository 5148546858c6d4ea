"""Property: whatever characters a secret holds and whichever JSON encoder wrote it, no decoding
of the redacted exchange holds it (issue 20, "Redaction on values, not text").

A secret is drawn with characters that need escaping (quotes, backslashes, `/`, `<>&`, control
characters, U+2028, non-ASCII), becomes a push-config token (found by parsing) or a header
credential, and is embedded in every part of a request and its answer by one of several
encoders: Python with and without `ensure_ascii`, Go (`<>&` and U+2028/9 as `\\u` escapes),
JavaScript (`JSON.stringify`), upper-case `\\u` hex, and `\\/`.  Inside the documents it also
sits percent-encoded in a URL and in base64.  The redacted exchange is then decoded every way
the test knows (`_decodings`) and none of them may hold the secret.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote, unquote, unquote_plus

from hypothesis import given, settings
from hypothesis import strategies as st

from recorder.capture import GrpcMessage, Request, Response, SseEvent
from recorder.redaction import MIN_SWEPT_LENGTH, Redactor

Encoder = Callable[[Any], str]


def _python_ascii(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True)


def _python_utf8(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _go(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for char in "<>&\u2028\u2029":
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text


def _javascript(value: Any) -> str:
    # JSON.stringify: only `"`, `\` and control characters escaped, the short forms first.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _upper_hex(value: Any) -> str:
    return re.sub(r"\\u([0-9a-f]{4})", lambda m: "\\u" + m.group(1).upper(), _python_ascii(value))


def _slashes(value: Any) -> str:
    return _python_ascii(value).replace("/", "\\/")


ENCODERS: tuple[Encoder, ...] = (
    _python_ascii,
    _python_utf8,
    _go,
    _javascript,
    _upper_hex,
    _slashes,
)

# Characters that need escaping somewhere, and ordinary ones.
_SPECIAL = "\"\\/<>&'%+=:;, \t\n\r\x00\x1f\x7f\u2028\u2029éü€😀"
_ORDINARY = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_."


# The fixed text of the exchanges below: a secret it holds would be found there by chance.
_FIXED = (
    "Authorization: Bearer Content-Type: application/json /a2a/jsonrpc?note= event: echo "
    "http://127.0.0.1:1/hook https://example.test/cb?token= push-token-0 the key is before "
    "after pushNotificationConfig message params result inner nested exact bytes"
)


def _plausible(secret: str) -> bool:
    """Not a piece of a placeholder's own text (`<redacte`, `00000000`, which the capture
    then holds as the placeholder, not as the secret) or of the exchange's fixed text, and
    not mere punctuation."""
    digits = "".join(c for c in secret if c.isdigit()) or "1"
    return (
        secret not in f"<redacted:{digits}>"
        and secret not in _FIXED
        and sum(c in _ORDINARY for c in secret) >= 4
    )


secrets = st.text(
    alphabet=st.sampled_from(_SPECIAL + _ORDINARY), min_size=MIN_SWEPT_LENGTH, max_size=24
).filter(_plausible)
# What an HTTP header value can carry: visible ASCII, no white space at either end.
header_secrets = st.text(
    alphabet=st.sampled_from("".join(c for c in _SPECIAL + _ORDINARY if "!" <= c <= "~")),
    min_size=MIN_SWEPT_LENGTH,
    max_size=24,
).filter(_plausible)


def _embedded(secret: str) -> dict[str, Any]:
    """A document holding the secret in text, in a URL, and in base64 (standard and URL-safe)."""
    raw = f"before {secret} after".encode()
    return {
        "text": f"the key is {secret}!",
        "url": "https://example.test/cb?token=" + quote(secret, safe="") + "&x=1",
        "bytes": base64.b64encode(b"\x89PNG " + raw).decode(),
        "raw": base64.urlsafe_b64encode(raw).decode().rstrip("="),
        "nested": json.dumps({"inner": secret}),
        "exact": secret,
    }


def _exchange(secret: str, encode: Encoder, in_header: bool) -> tuple[Request, Response]:
    config = {"url": "http://127.0.0.1:1/hook", "token": "push-token-0" if in_header else secret}
    headers = (("Authorization", f"Bearer {secret}"),) if in_header else ()
    request = Request(
        "POST",
        "/a2a/jsonrpc?note=" + quote(secret, safe=""),
        (*headers, ("Content-Type", "application/json")),
        encode(
            {"params": {"pushNotificationConfig": config, "message": _embedded(secret)}}
        ).encode(),
        messages=(GrpcMessage(0, json=encode(_embedded(secret))),),
    )
    response = Response(
        200,
        "OK",
        (("X-Echo", quote(secret, safe="")),),
        events=(
            SseEvent(0, ("event: echo", "data: " + encode({"result": _embedded(secret)}))),
            SseEvent(5, ("data: " + encode(config),)),
        ),
        messages=(GrpcMessage(9, json=encode({"echo": _embedded(secret)})),),
    )
    return request, response


def _texts(request: Request, response: Response) -> Iterator[str]:
    """Every part of the exchange as text."""
    yield request.target
    for part in (request, response):
        yield from (value for _, value in part.headers)
        yield part.body.decode("utf-8", "surrogateescape")
        yield from (m.json or "" for m in part.messages)
    for event in response.events:
        yield from event.lines
        yield "\n".join(line[5:].lstrip() for line in event.lines if line.startswith("data:"))


def _decodings(text: str, depth: int = 0) -> Iterator[str]:
    """`text`, and what JSON, percent-decoding and base64 make of it, recursively."""
    yield text
    if depth > 3:
        return
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    for value in _strings(document):
        yield from _decodings(value, depth + 1)
    for decode in (unquote, unquote_plus):
        if "%" in text or "+" in text:
            yield from _decodings(decode(text), depth + 1)
    for run in re.findall(r"[A-Za-z0-9+/_-]{12,}={0,2}", text):
        for altchars in (None, b"-_"):
            try:
                data = base64.b64decode(run + "=" * (-len(run) % 4), altchars=altchars)
            except (binascii.Error, ValueError):
                continue
            yield from _decodings(data.decode("utf-8", "replace"), depth + 1)


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)
    elif isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from _strings(value)


@settings(max_examples=1000, deadline=None)
@given(
    secret=secrets,
    header_secret=header_secrets,
    encode=st.sampled_from(ENCODERS),
    in_header=st.booleans(),
)
def test_no_decoding_of_the_redacted_exchange_holds_the_secret(
    secret: str, header_secret: str, encode: Encoder, in_header: bool
) -> None:
    secret = header_secret if in_header else secret
    request, response = _exchange(secret, encode, in_header)
    redacted_request, redacted_response, notes = Redactor().exchange(request, response)
    assert redacted_response is not None
    assert notes  # the note says something was redacted
    for text in _texts(redacted_request, redacted_response):
        for decoded in _decodings(text):
            assert secret not in decoded, (text, decoded)


# Any text at all (lone surrogates, stray escapes, broken percent-encoding and base64): the
# redactor never raises, whatever part of an exchange the text is in.
_PIECES = st.one_of(
    st.text(st.characters(codec=None), max_size=16),
    st.sampled_from(['"', "\\", "\\u00e9", "\\ud800", "%41", "%FF", "%", "+", "==", '"url"']),
    st.just('{"url": "x", "token": "'),
    st.just("QUJDREVGR0hJSktMTU5PUA=="),
)


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(_PIECES, max_size=10), secret=header_secrets)
def test_any_text_is_redacted_without_an_error(parts: list[str], secret: str) -> None:
    text = "".join(parts) + quote(secret, safe="") + base64.b64encode(secret.encode()).decode()
    data = text.encode("utf-8", "surrogatepass")
    r = Redactor()
    r.request(Request("GET", "/x", (("Authorization", f"Bearer {secret}"),)))
    out = r.request(Request("POST", "/x?q=" + text, (("X-Note", text),), data))
    r.response(Response(200, events=(SseEvent(0, ("data: " + text, text)),)))
    r.response(Response(200, messages=(GrpcMessage(0, json=text), GrpcMessage(1, raw=data))))
    assert secret not in out.target.partition("?")[2]
