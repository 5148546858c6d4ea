"""The only code that touches disk for captures: an append-only writer, read and write.

It keeps docs/capture-format.md's "Durability" promises:
- `append` writes each exchange unbuffered, so a killed process loses none whose `append`
  returned; one syncer thread fsyncs every writer at once (group commit), off the caller's thread.
- Whole exchanges or nothing: a failed write is cut off again and its `OSError` raised; a
  writer never truncates a file that holds exchanges (it creates, or `resume`s).
- A capture that may replace another is a draft beside it, renamed over it atomically.
- One writing process per capture: every writer `claim`s it (a `flock`), and another process's
  writer is refused before it touches the file, with an error naming the holder.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shlex
import stat
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from recorder._errors import CaptureBusyError, CaptureExistsError
from recorder._files import fsync_directory, replace_file
from recorder.capture._model import Capture, Exchange
from recorder.capture._parse import parse_bytes
from recorder.capture._render import render, render_exchange, render_header
from recorder.capture._salvage import Cut, salvage


class CaptureWriter:
    """Append exchanges to a `.http` capture as they complete; thread-safe.

    A new capture refuses a file with exchanges unless `overwrite=True` (`resume` continues
    one); `append` takes strictly increasing numbers; the capture is `claim`ed until `close()`.
    """

    def __init__(
        self, path: str | os.PathLike[str], capture_header: Capture, *, overwrite: bool = False
    ) -> None:
        self.path = Path(path)
        with _claimed_unless_failing(self.path):
            if not overwrite and holds_exchanges(self.path):
                raise CaptureExistsError(f"{self.path} already holds a capture with exchanges")
            self._setup(open(self.path, "wb", buffering=0), None)  # noqa: SIM115 - see close()
        try:
            self._write(render_header(capture_header).encode("utf-8"))
        except OSError:
            self._abandon()
            raise
        fsync_directory(self.path.parent)
        for exchange in capture_header.exchanges:
            self.append(exchange)

    @classmethod
    def resume(cls, path: str | os.PathLike[str]) -> CaptureWriter:
        """Continue the capture at `path`; CaptureParseError when it is damaged (left as is)."""
        writer = cls.__new__(cls)
        writer.path = Path(path)
        with _claimed_unless_failing(writer.path):
            existing = read_capture(path)
            last = existing.exchanges[-1].number if existing.exchanges else None
            writer._setup(open(writer.path, "ab", buffering=0), last)  # noqa: SIM115
        return writer

    def _setup(self, file: IO[bytes], last_number: int | None) -> None:
        _SYNCER.opened()
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = file
        self._end = os.fstat(file.fileno()).st_size  # where the last whole write ends
        self._last_number = last_number
        self._written = 0  # appends so far; the syncer catches up with it
        self._synced = 0
        self._synced_changed = threading.Condition()

    @property
    def last_number(self) -> int | None:
        return self._last_number

    def append(self, exchange: Exchange) -> int:
        """Append one exchange (write now, fsync soon); the bytes written.  OSError when the
        disk refuses leaves the file as it was."""
        return self.append_rendered(exchange.number, render_exchange(exchange).encode("utf-8"))

    def append_rendered(self, number: int, data: bytes) -> int:
        """Append exchange `number`, already rendered (`render_exchange`) as `data`."""
        with self._lock:
            if self._file is None:
                raise ValueError(f"{self.path}: capture writer is closed")
            if self._last_number is not None and number <= self._last_number:
                raise ValueError(
                    f"exchange {number} after {self._last_number}: numbers must increase"
                )
            self._write(data)
            self._last_number = number
        _SYNCER.want(self)
        return len(data)

    def sync(self, timeout: float | None = 10.0) -> bool:
        """Wait until everything appended so far is on disk; False if `timeout` passed."""
        target = self._written
        with self._synced_changed:
            return self._synced_changed.wait_for(lambda: self._synced >= target, timeout)

    def close(self) -> None:
        """Sync and close; an OSError of the sync is raised once the file is closed."""
        with self._lock:
            file, self._file = self._file, None
        if file is None:
            return
        try:
            os.fsync(file.fileno())
        finally:
            file.close()
            self._mark_synced(self._written)
            release(self.path)
            _SYNCER.closed(self)  # outside the lock: the syncer may be waiting for it

    @property
    def closed(self) -> bool:
        return self._file is None

    def __enter__(self) -> CaptureWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, data: bytes) -> None:
        """Write all of `data` (into the page cache), or none of it."""
        assert self._file is not None
        view, done = memoryview(data), 0
        try:
            while done < len(data):
                done += self._file.write(view[done:]) or 0
        except OSError as exc:
            raise self._cut_back(exc) from None
        self._end += len(data)
        self._written += 1

    def _cut_back(self, failure: OSError) -> OSError:
        """Cut the file back to its last whole write; the error to raise."""
        assert self._file is not None
        fd = self._file.fileno()
        try:
            os.ftruncate(fd, self._end)
            os.lseek(fd, self._end, os.SEEK_SET)
        except OSError as cut:
            return OSError(
                failure.errno,
                f"{failure.strerror}; the part written could not be cut off again "
                f"({cut.strerror}): {self.path} may end damaged",
            )
        return failure

    def _abandon(self) -> None:
        """A new capture whose header did not fit: close it and take it away."""
        assert self._file is not None
        self._file.close()
        self._file = None
        self.path.unlink(missing_ok=True)
        release(self.path)
        _SYNCER.closed(self)

    def _sync_now(self) -> None:
        """The syncer's fsync, on a duplicate descriptor outside the lock: appends go on."""
        with self._lock:
            if self._file is None:
                return
            target, fd = self._written, os.dup(self._file.fileno())
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        self._mark_synced(target)

    def _mark_synced(self, count: int) -> None:
        with self._synced_changed:
            self._synced = max(self._synced, count)
            self._synced_changed.notify_all()


GROUP_COMMIT = 0.05  # seconds the syncer lets appends gather before one fsync for them all


class _Syncer:
    """The thread, while any writer is open, that fsyncs writers `GROUP_COMMIT` after appends."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._pending: dict[int, CaptureWriter] = {}
        self._open = 0
        self._thread: threading.Thread | None = None

    def opened(self) -> None:
        with self._changed:
            self._open += 1
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="a2a-capture-sync", daemon=True
                )
                self._thread.start()

    def closed(self, writer: CaptureWriter) -> None:
        with self._changed:
            self._pending.pop(id(writer), None)
            self._open -= 1
            thread = self._thread if self._open == 0 else None
            if thread is not None:
                self._thread = None
                self._changed.notify_all()
        if thread is not None:
            thread.join()

    def want(self, writer: CaptureWriter) -> None:
        with self._changed:
            if not self._pending:
                self._changed.notify_all()
            self._pending[id(writer)] = writer

    def _run(self) -> None:
        while (batch := self._next(threading.current_thread())) is not None:
            for writer in batch:
                # A full or vanished disk: the next write says so to its caller.
                with contextlib.suppress(OSError):
                    writer._sync_now()

    def _next(self, me: threading.Thread) -> list[CaptureWriter] | None:
        """The writers to sync once a group gathered; None once this thread is stopped."""
        with self._changed:
            self._changed.wait_for(lambda: bool(self._pending) or self._thread is not me)
            if self._thread is not me:
                return None
            self._changed.wait(GROUP_COMMIT)  # let a group gather; a stop cuts it short
            batch = list(self._pending.values())
            self._pending.clear()
            return batch


_SYNCER = _Syncer()


def holds_exchanges(path: Path) -> bool:
    """Whether `path` is a regular file with more than a capture header (may be data)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with path.open("rb") as handle:
            head = handle.read(1 << 16)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return False
    return b"\n###" in head or (bool(head) and not head.startswith(b"# a2a-recorder capture"))


def read_capture(path: str | os.PathLike[str], *, only: int | None = None) -> Capture:
    """Read and parse a capture file (`only`: exchange number `only` alone, see `parse`)."""
    return parse_bytes(read_regular(path), os.fspath(path), only=only)


def recover_capture(path: str | os.PathLike[str]) -> tuple[Capture, Cut | None]:
    """`read_capture`, except that a capture cut short gives the exchanges before the `Cut`."""
    return salvage(read_regular(path), os.fspath(path))


def read_regular(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a regular file; OSError for anything else (`check_regular`)."""
    check_regular(path)
    return Path(path).read_bytes()


def check_regular(path: str | os.PathLike[str]) -> None:
    """OSError unless `path` is a regular file (a FIFO would block, `/dev/zero` never ends)."""
    mode = os.stat(path).st_mode
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory", os.fspath(path))
    if not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, f"not a regular file ({file_kind(mode)})", os.fspath(path))


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, from its `st_mode`."""
    kinds = (
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def write_capture(path: str | os.PathLike[str], capture: Capture) -> None:
    """Write a whole capture atomically (`recorder._files.replace_file`), `claim`ed."""
    data = render(capture).encode("utf-8")
    with claimed(path):
        replace_file(path, data)


# -- drafts: a capture written beside the one it may replace ------------------------------------


def draft_beside(path: str | os.PathLike[str]) -> Path:
    """A fresh hidden name beside `path` for a capture that may replace it (folder made)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    return target.with_name(f".{target.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.recording")


def promote(draft: str | os.PathLike[str], path: str | os.PathLike[str]) -> None:
    """Put `draft` in `path`'s place, `claim`ed, in one atomic rename (durable on return)."""
    with claimed(path):
        os.replace(draft, path)
    fsync_directory(Path(path).parent)


def set_aside(draft: str | os.PathLike[str], kept: str | os.PathLike[str]) -> bool:
    """Keep `draft` as `kept` (replacing what is there); False when there is no draft."""
    try:
        os.replace(draft, kept)
    except FileNotFoundError:
        return False
    fsync_directory(Path(kept).parent)
    return True


def remove_capture(path: str | os.PathLike[str]) -> None:
    """Remove a capture file (a draft, a stale kept recording) if there is one."""
    Path(path).unlink(missing_ok=True)


# -- the claim: one writing process per capture ---------------------------------------------------

_claims: dict[Path, tuple[int, int]] = {}  # lock file -> (its descriptor, claims held)
_claiming = threading.Lock()


def claim(path: str | os.PathLike[str]) -> None:
    """Claim the capture at `path` for this process: a `flock` on `.<name>.lock` beside it,
    which the kernel lets go however the process ends (CaptureBusyError names another holder)."""
    file = _lock_file(path)
    with _claiming:
        fd, count = _claims.get(file, (-1, 0))
        _claims[file] = (fd if count else _take(file, Path(path)), count + 1)


def release(path: str | os.PathLike[str]) -> None:
    """Let go of one claim of `path`; the last one removes the lock file."""
    file = _lock_file(path)
    with _claiming:
        fd, count = _claims.pop(file)
        if count > 1:
            _claims[file] = (fd, count - 1)
            return
        with contextlib.suppress(OSError):  # still locked: nobody takes the file meanwhile
            file.unlink(missing_ok=True)
        os.close(fd)


@contextlib.contextmanager
def claimed(path: str | os.PathLike[str]) -> Iterator[None]:
    claim(path)
    try:
        yield
    finally:
        release(path)


@contextlib.contextmanager
def _claimed_unless_failing(path: Path) -> Iterator[None]:
    """Claimed, and kept claimed unless the block fails."""
    claim(path)
    try:
        yield
    except BaseException:
        release(path)
        raise


def _lock_file(path: str | os.PathLike[str]) -> Path:
    absolute = Path(os.path.abspath(path))  # one claim however the path is spelt
    return absolute.with_name(f".{absolute.name}.lock")


def _take(file: Path, capture: Path) -> int:
    """The descriptor of `file`, locked, with this process named in it."""
    file.parent.mkdir(parents=True, exist_ok=True)
    while True:
        # Read-only: an open lock file must not keep its file system from a read-only remount.
        fd = os.open(file, os.O_RDONLY | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 1000).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise CaptureBusyError(
                f"{capture} is being written by {holder}: nothing was written to it; wait "
                "until that writer is done, or write to another file"
            ) from None
        if os.fstat(fd).st_ino == _inode(file):  # not removed by a holder letting go meanwhile
            with contextlib.suppress(OSError):  # a full disk: the lock holds all the same
                file.write_text(_holder(), encoding="utf-8", errors="replace")
            return fd
        os.close(fd)


def _holder() -> str:
    """This process as the lock file names it: `process 12 (a2a-recorder record --out x)`."""
    program = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
    words = ["a2a-recorder" if program == "__main__.py" else program, *sys.argv[1:]]
    return f"process {os.getpid()} ({shlex.join(words)[:300]})"


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None
