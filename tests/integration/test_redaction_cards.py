"""API keys a card declares are redacted even when the card is not in the recording (issue 20,
finding 7): the recorder fetches the upstream's card at start, unrecorded, or takes one given
with `card=` (a file or URL); when it can do neither it says so.  And `before_record` changes
or drops exchanges before they are redacted and written."""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from _helpers import free_port

from recorder import OptionError
from recorder.capture import Exchange, read_capture
from recorder.demo import DemoAgent
from recorder.record import RecordingProxy

TIMEOUT = 15.0
SEAL = "X-Tenant-Seal"  # a name that says nothing: only the card says it is a key
SEAL_VALUE = "seal-value-0123456789"


def _send(base: str, text: str = "hello") -> httpx.Response:
    """A curl-like client: straight to the REST route, no card fetched first."""
    body = {
        "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
    }
    return httpx.post(
        f"{base}/a2a/rest/message:send",
        json=body,
        headers={"A2A-Version": "1.0", SEAL: SEAL_VALUE},
        timeout=TIMEOUT,
    )


def _record(out: Path, agent: DemoAgent, **options: object) -> None:
    with RecordingProxy(upstream=agent.base_url, out=out, **options) as proxy:  # type: ignore[arg-type]
        assert _send(proxy.url).status_code == 200


def _seal(out: Path) -> str | None:
    (exchange,) = read_capture(out).exchanges  # the card fetched at start is not recorded
    return exchange.request.header(SEAL)


def test_the_upstream_card_is_fetched_at_start_and_not_recorded(tmp_path: Path) -> None:
    out = tmp_path / "fetched.http"
    with DemoAgent(enable_grpc=False, api_key_headers=(SEAL,)) as agent:
        _record(out, agent)
    assert _seal(out) == "<redacted:1>"
    assert SEAL_VALUE not in out.read_text()


def test_without_the_fetch_the_key_stays_in_clear(tmp_path: Path) -> None:
    """The reproducer of finding 7, kept to show what the fetch is for."""
    out = tmp_path / "clear.http"
    with DemoAgent(enable_grpc=False, api_key_headers=(SEAL,)) as agent:
        _record(out, agent, fetch_card=False)
    assert _seal(out) == SEAL_VALUE


def test_a_card_given_as_a_file_or_url(tmp_path: Path) -> None:
    with DemoAgent(enable_grpc=False, api_key_headers=(SEAL,)) as agent:
        card = httpx.get(agent.base_url + "/.well-known/agent-card.json", timeout=TIMEOUT).json()
        with DemoAgent(enable_grpc=False) as plain:  # an upstream whose card declares nothing
            (tmp_path / "card.json").write_text(json.dumps(card))
            _record(tmp_path / "file.http", plain, card=str(tmp_path / "card.json"))
            url = agent.base_url + "/.well-known/agent-card.json"
            _record(tmp_path / "url.http", plain, card=url, fetch_card=False)
    assert _seal(tmp_path / "file.http") == "<redacted:1>"
    assert _seal(tmp_path / "url.http") == "<redacted:1>"


def test_a_card_that_cannot_be_read_stops_the_start(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="^card: cannot read an agent card from .*missing.json"):
        RecordingProxy(
            upstream="http://127.0.0.1:9",
            out=tmp_path / "x.http",
            card=str(tmp_path / "missing.json"),
        ).start()


def test_an_upstream_without_a_card_is_said(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    port = free_port()
    with (
        caplog.at_level(logging.WARNING, logger="recorder.record._redaction"),
        RecordingProxy(upstream=f"http://127.0.0.1:{port}", out=tmp_path / "down.http"),
    ):
        pass
    assert f"could not fetch the agent card of http://127.0.0.1:{port}" in caplog.text
    assert "--card" in caplog.text


def test_before_record_changes_and_drops_exchanges(tmp_path: Path) -> None:
    seen: list[int] = []

    def hook(exchange: Exchange) -> Exchange | None:
        seen.append(exchange.number)
        if b"drop me" in exchange.request.body:
            return None
        if b"boom" in exchange.request.body:
            raise RuntimeError("the hook failed")
        headers = tuple(
            (k, "by-hook") if k == "A2A-Version" else (k, v) for k, v in exchange.request.headers
        )
        return replace(exchange, request=replace(exchange.request, headers=headers))

    out = tmp_path / "hooked.http"
    with (
        DemoAgent(enable_grpc=False, api_key_headers=(SEAL,)) as agent,
        RecordingProxy(upstream=agent.base_url, out=out, before_record=hook) as proxy,
    ):
        for text in ("keep", "drop me", "boom"):
            assert _send(proxy.url, text).status_code == 200
    kept = read_capture(out).exchanges
    assert len(seen) == 3 and len(kept) == 2
    changed, failed = kept
    assert changed.request.header("A2A-Version") == "by-hook"
    assert changed.request.header(SEAL) == "<redacted:1>"  # redaction runs after the hook
    assert "before_record failed: RuntimeError('the hook failed')" in failed.notes
    assert failed.request.header(SEAL) == "<redacted:1>"
