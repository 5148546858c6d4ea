"""What went wrong while recording: one ledger, never silent.

Two tallies, by reason: **lost**, exchanges a client got an answer to that are not in the
capture, and **errors** inside the recorder (what is left out on purpose is no incident).  They
arrive through logging, so an unplanned error counts like a planned one: `LedgerLog` turns
every ERROR record of the run into an error, or a loss when its `extra` says so (`lost(n,
reason)`).  `clean` is false when anything was lost or failed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

LOGGERS = ("mitmproxy", "recorder")  # whose records the ledger hears
OWN_LOGGER = "recorder"  # whose warnings are passed on too
LOST_KEY = "a2a_lost"
REASON_KEY = "a2a_reason"


class Kind(StrEnum):
    LOST = "lost"
    ERROR = "error"
    WARNING = "warning"  # passed on once, not counted


@dataclass(frozen=True, slots=True)
class Incident:
    """The first occurrence of one reason, as listeners hear of it."""

    kind: Kind
    reason: str
    detail: str = ""  # a traceback, or what the first exchange left out was


Listener = Callable[[Incident], None]


def lost(count: int, reason: str) -> dict[str, Any]:
    """`extra` for a log record that says `count` exchanges were lost, and why."""
    return {LOST_KEY: count, REASON_KEY: reason}


@dataclass
class Ledger:
    """The ledger; see the module docstring.  Thread-safe: records come from any thread."""

    lost: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    listeners: list[Listener] = field(default_factory=list)
    seen: int = 0  # losses and errors so far, each record once
    last: str = ""  # the reason of the latest loss or error
    _warned: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def clean(self) -> bool:
        """Nothing lost and no error inside the recorder."""
        return not self.lost and not self.errors

    @property
    def lost_count(self) -> int:
        return sum(self.lost.values())

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())

    def lose(self, count: int, reason: str, detail: str = "") -> None:
        self._count(self.lost, Kind.LOST, reason, detail, count)
        self._saw(reason)

    def fail(self, reason: str, detail: str = "") -> None:
        self._count(self.errors, Kind.ERROR, reason, detail, 1)
        self._saw(reason)

    def warn(self, reason: str) -> None:
        with self._lock:
            first = reason not in self._warned
            self._warned.add(reason)
        if first:
            self._tell(Incident(Kind.WARNING, reason))

    def summary(self) -> list[str]:
        """A line per reason: what was lost, what failed."""
        return [
            *(f"{many(n, 'exchange')} lost: {reason}" for reason, n in self.lost.items()),
            *(f"error inside the recorder{_times(n)}: {r}" for r, n in self.errors.items()),
        ]

    def _count(self, tally: dict[str, int], kind: Kind, reason: str, detail: str, n: int) -> None:
        with self._lock:
            first = reason not in tally
            tally[reason] = tally.get(reason, 0) + n
        if first:
            self._tell(Incident(kind, reason, detail))

    def _saw(self, reason: str) -> None:
        with self._lock:
            self.seen += 1
            self.last = reason

    def _tell(self, incident: Incident) -> None:
        for listener in list(self.listeners):
            listener(incident)


def many(count: int, noun: str) -> str:
    """`1 exchange`, `3 exchanges`."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _times(count: int) -> str:
    return "" if count == 1 else f" ({count} times)"


class LedgerLog(logging.Handler):
    """Logging handler: ERROR records become errors or losses of `ledger`, the recorder's
    WARNING records are passed on once each."""

    def __init__(self, ledger: Ledger) -> None:
        super().__init__(logging.WARNING)
        self.ledger = ledger
        self._formatter = logging.Formatter()

    def install(self) -> None:
        for name in LOGGERS:
            logging.getLogger(name).addHandler(self)

    def uninstall(self) -> None:
        for name in LOGGERS:
            logging.getLogger(name).removeHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        reason = str(getattr(record, REASON_KEY, "") or record.getMessage())
        if record.levelno < logging.ERROR:
            if record.name.startswith(OWN_LOGGER):
                self.ledger.warn(reason)
            return
        detail = self._formatter.formatException(record.exc_info) if record.exc_info else ""
        count = getattr(record, LOST_KEY, 0)
        if isinstance(count, int) and count > 0:
            self.ledger.lose(count, reason, detail)
        else:
            self.ledger.fail(reason, detail)
