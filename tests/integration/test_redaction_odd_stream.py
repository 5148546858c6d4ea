"""An SSE answer with a data line that is not UTF-8 is recorded, byte for byte, and still
redacted (issue 20, finding 3: a UnicodeEncodeError in redaction dropped the whole answer
while the client got HTTP 200)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from _helpers import exchanges, wait_for

from recorder.protocol import render_events
from recorder.record import RecordingProxy

TOKEN = "stream-bearer-token-0123"
# One line with a byte UTF-8 cannot hold (0xE9, Latin-1 é) next to an echo of the token.
EVENTS = (
    b'data: {"text": "caf\xe9 ' + TOKEN.encode() + b'"}\n\nevent: done\ndata: {"final": true}\n\n'
)


class _Streamer(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(EVENTS)))
        self.end_headers()
        self.wfile.write(EVENTS)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def streamer() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Streamer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_non_utf8_data_line_is_recorded_losslessly_and_redacted(
    streamer: str, tmp_path: Path
) -> None:
    out = tmp_path / "odd-stream.http"
    with RecordingProxy(upstream=streamer, out=out, record_all=True, fetch_card=False) as proxy:
        answer = httpx.post(
            f"{proxy.url}/a2a/jsonrpc",
            json={"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {}},
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=10,
        )
        assert answer.status_code == 200 and answer.content == EVENTS  # forwarded untouched
        assert wait_for(lambda: len(exchanges(out)) == 1)
    (exchange,) = exchanges(out)
    assert exchange.response is not None
    assert exchange.request.header("Authorization") == "Bearer <redacted:1>"
    events = [e.lines for e in exchange.response.events]
    assert events == [
        ('data: {"text": "caf\udce9 <redacted:1>"}',),
        ("event: done", 'data: {"final": true}'),
    ]
    recorded = render_events(events, exchange.response.newline)
    assert recorded == EVENTS.replace(TOKEN.encode(), b"<redacted:1>")  # every other byte kept
    assert TOKEN not in out.read_text()
