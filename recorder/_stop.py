"""How a server command (record, replay) stops: one orderly stop for every stop signal."""

from __future__ import annotations

import os
import signal
import time

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopSignals:
    """Ctrl-C, SIGTERM and SIGHUP all ask for one orderly stop.

    Installed before a server starts and kept until it has stopped, so that a second Ctrl-C
    (or a signal during start-up) never interrupts the stop: it is answered with `busy`.  The
    handler takes no lock: it runs between two bytecodes of the main thread, maybe inside code
    that holds that very lock, and would wait for itself for ever.  So it counts, writes with
    `os.write`, and `wait()` polls.
    """

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
        """Ignore further stop signals: all is written and the process is exiting (a late
        Ctrl-C during the interpreter's teardown would otherwise kill it, exit -2)."""
        for number in STOP_SIGNALS:
            signal.signal(number, signal.SIG_IGN)
