"""How a server command (record, replay) stops: one orderly stop for every stop signal."""

from __future__ import annotations

import os
import signal
import time

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopSignals:
    """Ctrl-C, SIGTERM and SIGHUP all ask for one orderly stop; a second one never interrupts it.
    The handler takes no lock (it may run inside code that holds it): it counts, writes with
    `os.write`, and `wait()` polls."""

    POLL = 0.05  # seconds; how soon a stop starts after the signal

    def __init__(self, busy: str = "stopping, please wait") -> None:
        self._busy = f"{busy}\n".encode()
        self.count = 0
        for number in STOP_SIGNALS:
            signal.signal(number, self._handle)

    def _handle(self, number: int, frame: object) -> None:
        self.count += 1
        if self.count == 2:
            os.write(2, self._busy)

    def wait(self) -> None:
        while not self.count:
            time.sleep(self.POLL)

    def finished(self) -> None:
        """Ignore further stop signals: all is written and the process is exiting."""
        for number in STOP_SIGNALS:
            signal.signal(number, signal.SIG_IGN)
