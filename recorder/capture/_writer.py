"""The only code that touches disk for captures: an append-only writer, read and write.

Invariant of `CaptureWriter`: after `__init__` and after every `append` returns, the file on
disk is a complete, parseable capture (header plus whole exchanges), flushed and fsynced.  An
exchange is rendered before the lock is taken and written with one `write` under it, so a crash
(`kill -9`) can only lose exchanges whose `append` had not returned.
"""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from recorder.capture._model import Capture, Exchange
from recorder.capture._parse import parse_bytes
from recorder.capture._render import render, render_exchange, render_header


class CaptureWriter:
    """Append exchanges to a `.http` capture as they complete; thread-safe.

    `CaptureWriter(path, header)` creates (or truncates) the file and writes the header of
    `header`, then any exchanges it already holds.  `append(exchange)` adds one; numbers must
    increase strictly (ValueError otherwise, and ValueError for values that cannot be rendered;
    the file is untouched in both cases).  `close()` is idempotent; the writer is a context
    manager.

    Example::

        with CaptureWriter("out.http", Capture(started=..., recorder_version="0.1.0")) as w:
            w.append(exchange)
    """

    def __init__(self, path: str | os.PathLike[str], capture_header: Capture) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._last_number: int | None = None
        header = render_header(capture_header)
        self._file: BinaryIO | None = open(self.path, "wb")  # noqa: SIM115 - closed in close()
        self._write(header)
        _fsync_directory(self.path.parent)
        for exchange in capture_header.exchanges:
            self.append(exchange)

    def append(self, exchange: Exchange) -> None:
        """Render one exchange and append it durably (write, flush, fsync)."""
        text = render_exchange(exchange)
        with self._lock:
            if self._file is None:
                raise ValueError(f"{self.path}: capture writer is closed")
            if self._last_number is not None and exchange.number <= self._last_number:
                raise ValueError(
                    f"exchange {exchange.number} after {self._last_number}: numbers must increase"
                )
            self._write(text)
            self._last_number = exchange.number

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    @property
    def closed(self) -> bool:
        return self._file is None

    def __enter__(self) -> CaptureWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _write(self, text: str) -> None:
        assert self._file is not None
        self._file.write(text.encode("utf-8"))
        self._file.flush()
        os.fsync(self._file.fileno())


def read_capture(path: str | os.PathLike[str]) -> Capture:
    """Read and parse a capture file; CaptureParseError names `path:line` on damage."""
    return parse_bytes(Path(path).read_bytes(), os.fspath(path))


def write_capture(path: str | os.PathLike[str], capture: Capture) -> None:
    """Write a whole capture atomically (temporary file in the same folder, then rename)."""
    target = Path(path)
    data = render(capture).encode("utf-8")
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        # mkstemp makes the file 0600; a capture is an ordinary file, so follow the umask.
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _fsync_directory(target.parent)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _fsync_directory(folder: Path) -> None:
    # Makes the new directory entry durable; not every platform can open a directory.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
