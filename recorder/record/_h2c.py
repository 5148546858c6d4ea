"""The h2c upgrade offer, taken out before a request goes on, and kept in the capture.

mitmproxy relays cleartext HTTP as HTTP/1.1 only: an agent that accepted an offer of
`Upgrade: h2c` would switch protocols mid-connection, and the relay would break. So the offer
(`Upgrade: h2c`, `Connection`, `HTTP2-Settings`) is removed, as mitmdump's own `DisableH2C`
does. Unlike that addon, this one keeps the headers as the client sent them in the flow's
metadata, so the capture holds the request the client made, with a note saying what the
agent did not see. The JDK's HttpClient (the Java SDK's client) offers h2c on every cleartext
request. A request that opens with the HTTP/2 preface (prior knowledge) is killed, as before.
"""

from __future__ import annotations

import logging

from mitmproxy import http

from recorder.capture import Headers
from recorder.protocol import NOTE_H2C_OFFER
from recorder.record._flows import headers_of

logger = logging.getLogger(__name__)

OFFER_HEADERS = ("upgrade", "connection", "http2-settings")
# flow.metadata: the request's headers as the client sent them, before the offer was taken out
AS_SENT = "a2a_headers_as_sent"
NOTE = (
    f"{NOTE_H2C_OFFER}: the recorder relays HTTP/1.1, so the agent did not see the request's "
    "Upgrade, Connection and HTTP2-Settings headers (kept here as the client sent them)"
)


class RefuseH2c:
    """mitmproxy addon: take h2c offers out, remembering them; kill prior-knowledge HTTP/2."""

    def request(self, flow: http.HTTPFlow) -> None:
        request = flow.request
        if request.headers.get("upgrade", "").strip().lower() == "h2c":
            flow.metadata[AS_SENT] = headers_of(request)
            for name in OFFER_HEADERS:
                request.headers.pop(name, None)
            logger.info("took an h2c upgrade offer out of %s %s", request.method, request.path)
        elif request.method == "PRI" and request.path == "*" and request.http_version == "HTTP/2.0":
            if flow.killable:
                flow.kill()  # type: ignore[no-untyped-call]
            logger.warning("an HTTP/2 connection with prior knowledge was refused (not relayed)")


def as_sent(flow: http.HTTPFlow) -> tuple[Headers, str] | None:
    """The request's headers as the client sent them, and the note, if an offer was taken out."""
    headers = flow.metadata.get(AS_SENT)
    return None if headers is None else (headers, NOTE)
