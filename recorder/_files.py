"""The one way a2a-recorder writes a file whole: beside it, synced, then renamed over it.

A reader sees the old file or the new one, never a part of either; a write that fails (a full
disk, a file size limit) leaves the old file as it was, or no file where there was none, never
an empty or half-written one.  What is not a regular file (`/dev/stdout`, a FIFO) is written
to as it is: it cannot be replaced.  A symbolic link stays; the file it points to is replaced.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def replace_file(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None) -> None:
    """Put `data` at `path` atomically (see the module docstring); OSError says why not.  The
    file gets the permission bits `mode`, else those of the file it replaces, else the umask's."""
    target = Path(os.path.realpath(path))
    try:
        found = os.stat(target).st_mode
    except FileNotFoundError:
        found = stat.S_IFREG | 0o666 & ~_umask()
    if not stat.S_ISREG(found):
        target.write_bytes(data)
        return
    bits = stat.S_IMODE(found) if mode is None else mode
    temporary = None
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        os.fchmod(fd, bits)  # mkstemp makes 0600
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException as exc:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
        if isinstance(exc, OSError):  # named for the file asked for, not the temporary one
            exc.filename, exc.filename2 = os.fspath(path), None
        raise
    fsync_directory(target.parent)


def fsync_directory(folder: Path) -> None:
    """Make a new directory entry durable (not every platform can open a directory)."""
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


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
