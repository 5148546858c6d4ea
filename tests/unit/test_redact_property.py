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
import html
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import fields
from typing import Any
from urllib.parse import quote, unquote, unquote_plus

from hypothesis import given, settings
from hypothesis import strategies as st

from recorder.capture import (
    Capture,
    Exchange,
    GrpcMessage,
    Request,
    Response,
    SseEvent,
    parse,
    render,
)
from recorder.protocol import Classification, classify
from recorder.redaction import MIN_SWEPT_LENGTH, Redactor
from recorder.report import render_report
from recorder.show import capture_rows, json_lines, render_table

Encoder = Callable[[Any], str]


def _redacted(
    redactor: Redactor, request: Request, response: Response | None
) -> tuple[Request, Response | None, tuple[str, ...]]:
    """Both sides of an exchange redacted as the recorder does (`Redactor.rework`), and its
    redaction note."""
    kept = redactor.rework(Exchange(1, Classification(), request, response))
    return kept.request, kept.response, tuple(n for n in kept.notes if n.startswith("redacted: "))


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
    redacted_request, redacted_response, notes = _redacted(Redactor(), request, response)
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


# -- ids (issue 29): a secret inside an id is never in clear in a derived line either -----------

_ID_NAMES = ("task", "context", "message", "config")


def _ids(secret: str, where: str) -> dict[str, str]:
    ids = {name: f"{name}-0000" for name in _ID_NAMES}
    ids[where] = f"{where}-{secret}-1"
    return ids


def _jsonrpc(method: str, params: Any, result: Any) -> tuple[Request, Response]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return (
        Request("POST", "/a2a/jsonrpc", _JSON, json.dumps(body).encode()),
        Response(
            200, "OK", _JSON, json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}).encode()
        ),
    )


def _grpc(rpc: str, request: Any, answer: Any) -> tuple[Request, Response]:
    metadata = (("content-type", "application/grpc"),)
    return (
        Request(
            "POST",
            f"/lf.a2a.v1.A2AService/{rpc}",
            metadata,
            http_version="HTTP/2",
            messages=(GrpcMessage(0, json=json.dumps(request)),),
        ),
        Response(
            200,
            "",
            metadata,
            http_version="HTTP/2",
            messages=(GrpcMessage(5, json=json.dumps(answer)),),
            trailers=(("grpc-status", "0"),),
        ),
    )


_JSON = (("Content-Type", "application/json"),)


def _id_exchanges(ids: dict[str, str]) -> Iterator[tuple[Request, Response]]:
    """A send, a get and a push-config create naming `ids`, over JSON-RPC, HTTP+JSON and gRPC."""
    message = {
        "messageId": ids["message"],
        "contextId": ids["context"],
        "taskId": ids["task"],
        "role": "ROLE_USER",
        "parts": [{"text": "hi"}],
    }
    task = {
        "id": ids["task"],
        "contextId": ids["context"],
        "status": {"state": "TASK_STATE_WORKING"},
    }
    config = {"taskId": ids["task"], "id": ids["config"], "url": "http://127.0.0.1:1/hook"}
    yield _jsonrpc("SendMessage", {"message": message}, {"task": task})
    yield _jsonrpc("GetTask", {"id": ids["task"]}, task)
    yield _jsonrpc("CreateTaskPushNotificationConfig", config, config)
    yield _grpc("SendMessage", {"message": message}, {"task": task})
    yield _grpc("GetTask", {"id": ids["task"]}, task)
    yield _grpc("CreateTaskPushNotificationConfig", config, config)
    path = f"/a2a/rest/tasks/{quote(ids['task'], safe='')}"
    yield Request("GET", path, _JSON), Response(200, "OK", _JSON, json.dumps(task).encode())


def _shown(capture: Capture) -> Iterator[str]:
    """What a user sees of a capture: its file, `show` (table and JSON), the report page."""
    text = render(capture)
    yield text
    read = parse(text)
    yield from (
        str(getattr(e.classification, f.name))
        for e in read.exchanges
        for f in fields(Classification)
    )
    rows = capture_rows(read)
    yield render_table(rows)
    for line in json_lines(rows).splitlines():
        yield from _strings(json.loads(line))
    yield html.unescape(render_report(read, name="ids.http"))


@settings(max_examples=300, deadline=None)
@given(secret=header_secrets, where=st.sampled_from(_ID_NAMES))
def test_a_secret_inside_an_id_is_in_clear_nowhere(secret: str, where: str) -> None:
    # The pages' own words (`upstream`, `status`) may be a secret's text too: what is shown
    # holds the secret no more often than what is shown of a capture that never held it.
    shown = "\n".join(_shown(_secret_in_ids(secret, where)))
    without = "\n".join(_shown(_secret_in_ids("Zx7" + "q" * len(secret), where)))
    assert shown.count(secret) <= without.count(secret), shown


def _secret_in_ids(secret: str, where: str) -> Capture:
    """A capture whose login carried `secret` and whose ids hold it, redacted as recorded."""
    redactor = Redactor()  # as the recorder redacts each exchange (`Redaction.redact`)
    login = Request("GET", "/.well-known/agent-card.json", (("Authorization", f"Bearer {secret}"),))
    kept = [redactor.rework(Exchange(1, Classification(), login, None))]
    for number, (request, response) in enumerate(_id_exchanges(_ids(secret, where)), 2):
        exchange = Exchange(number, classify(request, response), request, response)
        kept.append(redactor.rework(exchange))
    return Capture("2026-12-01T00:00:00.000000Z", "0.1.0", tuple(kept))
