"""The recorder's ledger: what its logging handler hears, counts and passes on once."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from recorder.record._ledger import Incident, Kind, Ledger, LedgerLog, lost


@pytest.fixture
def ledger() -> Iterator[tuple[Ledger, list[Incident]]]:
    faults = Ledger()
    heard: list[Incident] = []
    faults.listeners.append(heard.append)
    handler = LedgerLog(faults)
    handler.install()
    try:
        yield faults, heard
    finally:
        handler.uninstall()


def test_an_error_logged_by_mitmproxy_is_counted_with_its_traceback(
    ledger: tuple[Ledger, list[Incident]],
) -> None:
    faults, heard = ledger
    try:
        raise KeyError("boom")
    except KeyError as exc:
        for _ in range(3):
            logging.getLogger("mitmproxy.addonmanager").error(f"Addon error: {exc}", exc_info=True)
    assert faults.errors == {"Addon error: 'boom'": 3} and not faults.clean
    assert [f.kind for f in heard] == [Kind.ERROR]  # once, however often
    assert "Traceback" in heard[0].detail and "KeyError: 'boom'" in heard[0].detail
    assert faults.summary() == ["error inside the recorder (3 times): Addon error: 'boom'"]


def test_a_record_that_says_exchanges_were_lost_counts_them(
    ledger: tuple[Ledger, list[Incident]],
) -> None:
    faults, heard = ledger
    log = logging.getLogger("recorder.record._save")
    log.error("3 exchanges ...", extra=lost(3, "could not be written to x.http: disk full"))
    log.error("1 more", extra=lost(1, "could not be written to x.http: disk full"))
    assert faults.lost == {"could not be written to x.http: disk full": 4}
    assert faults.lost_count == 4 and faults.error_count == 0 and not faults.clean
    assert faults.summary() == ["4 exchanges lost: could not be written to x.http: disk full"]
    assert [(f.kind, f.reason) for f in heard] == [
        (Kind.LOST, "could not be written to x.http: disk full")
    ]


def test_warnings_of_our_own_are_passed_on_once_and_not_counted(
    ledger: tuple[Ledger, list[Incident]],
) -> None:
    faults, heard = ledger
    for _ in range(2):
        logging.getLogger("recorder.record._redaction").warning("possible secret: x")
    logging.getLogger("mitmproxy.proxy.server").warning("client disconnected")
    logging.getLogger("elsewhere").error("not ours")
    assert faults.clean and faults.summary() == []
    assert [(f.kind, f.reason) for f in heard] == [(Kind.WARNING, "possible secret: x")]


def test_uninstalled_it_hears_nothing() -> None:
    faults = Ledger()
    handler = LedgerLog(faults)
    handler.install()
    handler.uninstall()
    logging.getLogger("mitmproxy").error("after the run")
    assert faults.clean
