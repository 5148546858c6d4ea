"""The capture files a recording writes: which file an exchange goes to, and each file's life.

A `Sink` is one capture file: opened on its first exchange (new, or continued with
`existing="append"`), appended to as exchanges complete (held in memory while the disk
refuses), finalised at stop: the names redacted go into the header, and when the redactor
learnt something after an exchange was written, the earlier exchanges are redacted again
(`Redaction.rework`), atomically, so a kill meanwhile leaves the file as it was.  A sink is
never opened twice with truncation: a late exchange continues the same file.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

import recorder
from recorder.capture import (
    Capture,
    CaptureWriter,
    Exchange,
    file_kind,
    holds_exchanges,
    read_capture,
    started_at,
    write_capture,
)
from recorder.redaction import SECRET_FIELDS, SECRET_HEADERS, Redactor

logger = logging.getLogger(__name__)
CAPTURE_SUFFIX = ".http"  # `--out s.http` names a capture, never a folder of them

_PLACEHOLDER_NUMBER = re.compile(rb"<redacted:(\d+)>")


@dataclass
class Sink:
    """One capture file: its writer, numbering, held exchanges and redaction bookkeeping.
    Exchanges are written in the order held, kept while the disk refuses: no gaps."""

    path: Path
    upstream: str
    started: float  # epoch seconds the capture's offsets count from
    writer: CaptureWriter | None = None  # None until the file is made (or resumed)
    header: Capture | None = None  # what a new capture starts with
    overwrite: bool = False  # a new capture may replace one that holds exchanges
    count: int = 0  # the last number handed out (written or held)
    resumed_after: int = 0  # exchanges up to this number were there before this recording
    written_at: int = 0  # the redactor generation when the last exchange was handed over
    stale: bool = False  # an exchange was written before the redactor knew what it knows now
    held: deque[tuple[Exchange, bytes]] = field(default_factory=deque)  # rendered, not written
    held_bytes: int = 0
    failing: OSError | None = None  # why the last write failed, until one succeeds

    @classmethod
    def open(
        cls,
        path: Path,
        upstream: str,
        *,
        existing: str,
        keep_secrets: bool,
        started: float | None = None,
    ) -> Sink:
        """Start (or, with `existing="append"`, continue) the capture at `path`."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if existing == "append" and holds_exchanges(path):
            return cls._resume(path, upstream)
        started = time.time() if started is None else started
        header = Capture(
            started=started_at(started),
            recorder_version=recorder.__version__,
            upstreams=(upstream,),
            redacted=redaction_policy(keep_secrets),
        )
        return cls(path, upstream, started, header=header, overwrite=existing == "overwrite")

    @classmethod
    def _resume(cls, path: Path, upstream: str) -> Sink:
        writer = CaptureWriter.resume(path)
        header = read_capture(path)
        last = writer.last_number or 0
        return cls(path, upstream, _epoch(header.started), writer, count=last, resumed_after=last)

    def reopen(self) -> None:
        """After `finalise`: a late exchange continues the same file."""
        if self.writer is not None and self.writer.closed:
            self.writer = CaptureWriter.resume(self.path)

    def hold(self, exchange: Exchange, data: bytes) -> None:
        """Take exchange number `count + 1`, rendered as `data`, to be written in turn."""
        self.held.append((exchange, data))
        self.held_bytes += len(data)
        self.count = exchange.number

    def drop_newest(self) -> Exchange:
        """Give up the exchange held last (its number is handed out again)."""
        exchange, data = self.held.pop()
        self.held_bytes -= len(data)
        self.count = exchange.number - 1
        return exchange

    def flush(self) -> list[tuple[Exchange, int]]:
        """Write what is held, oldest first, until the disk refuses; those written, sized."""
        landed: list[tuple[Exchange, int]] = []
        try:
            if self.writer is None:
                assert self.header is not None
                self.writer = CaptureWriter(self.path, self.header, overwrite=self.overwrite)
            while self.held:
                exchange, data = self.held[0]
                landed.append((exchange, self.writer.append_rendered(exchange.number, data)))
                self.held.popleft()
                self.held_bytes -= len(data)
        except OSError as exc:
            self.failing = exc
            return landed
        self.failing = None
        return landed

    def prepare(self, redactor: Redactor) -> None:
        """Keep placeholders distinct from those an earlier recording of the file handed out."""
        if self.resumed_after:
            numbers = _PLACEHOLDER_NUMBER.findall(self.path.read_bytes())
            redactor.skip_placeholders(max((int(n) for n in numbers), default=0))

    def finalise(self, redactor: Redactor | None, rework: Callable[[Exchange], Exchange]) -> None:
        """Close the file, then write the redacted names into its header and redact earlier
        exchanges again if the redactor learnt more (an error of that rewrite is logged)."""
        if self.writer is None:
            return
        self.writer.close()
        if redactor is None:
            return
        self.stale = self.stale or self.written_at < redactor.generation
        try:
            capture = read_capture(self.path)
            updated = self._finalised(capture, redactor, rework)
            if updated != capture:
                write_capture(self.path, updated)
        except (OSError, ValueError) as exc:
            # Exchanges written before the redactor learnt a secret may still hold it: an
            # error.  Otherwise only the header's list of redacted names is the policy's.
            logger.log(
                logging.ERROR if self.stale else logging.WARNING,
                "could not finalise the redaction of %s: %s%s",
                self.path,
                exc,
                "" if self.stale else " (its header lists what would be redacted)",
            )

    def _finalised(
        self, capture: Capture, redactor: Redactor, rework: Callable[[Exchange], Exchange]
    ) -> Capture:
        exchanges = capture.exchanges
        if self.stale:
            exchanges = tuple(rework(e) if e.number > self.resumed_after else e for e in exchanges)
        names = set(redactor.redacted) | (set(capture.redacted) if self.resumed_after else set())
        upstreams = tuple(dict.fromkeys((*capture.upstreams, self.upstream)))
        return replace(
            capture, exchanges=exchanges, redacted=tuple(sorted(names)), upstreams=upstreams
        )


def _epoch(started: str) -> float:
    try:
        return datetime.strptime(started, "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
    except ValueError:
        return time.time()


def out_problem(out: Path | None, split: str, existing: str) -> str | None:
    """What is wrong with `out` for this split and `existing` policy, or None."""
    if out is None:
        return None
    return (
        _shape_problem(out, split)
        or _write_problem(out, split)
        or _held_problem(out, split, existing)
    )


def _shape_problem(out: Path, split: str) -> str | None:
    if split == "none" and out.is_dir():
        return f"{{out}} is a directory, expected a file: {out}"
    if split == "none" and out.exists() and not out.is_file():
        return f"{{out}} is not a regular file: {out} is {file_kind(out.stat().st_mode)}"
    if split != "none" and out.exists() and not out.is_dir():
        return f"{{out}} must be a directory with {{split={split}}}: {out}"
    if split != "none" and out.suffix == CAPTURE_SUFFIX and not out.is_dir():
        return (
            f"{{out}} names a capture file ({out}), but {{split={split}}} writes a capture per "
            f"{'context' if split == 'context' else 'upstream'} into a folder: give a folder"
        )
    if split == "none" and not out.parent.is_dir():
        return f"{{out}}: its folder does not exist: {out.parent}"
    return None


def _write_problem(out: Path, split: str) -> str | None:
    """A place the recorder could not write to (known up front: read-only, no permission)."""
    folder = out if split != "none" and out.is_dir() else out.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # forward mode makes the folder: its first existing parent
    unwritable = [p for p in (folder, out) if p.exists() and not os.access(p, os.W_OK)]
    if not unwritable:
        return None
    why = "read-only file system" if _read_only(unwritable[0]) else "permission denied"
    return f"cannot write to {unwritable[0]}: {why}"


def _read_only(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _held_problem(out: Path, split: str, existing: str) -> str | None:
    """A capture with exchanges nobody said what to do with, or a damaged one to continue."""
    if existing == "overwrite":
        return None
    held = [out] if split == "none" else sorted(out.glob("*.http")) if out.is_dir() else []
    taken = [path for path in held if holds_exchanges(path)]
    if taken and existing == "append":
        return next(filter(None, map(_damage, taken)), None)
    if taken:
        names = ", ".join(str(path) for path in taken[:3]) + (" ..." if len(taken) > 3 else "")
        return (
            f"{names} already {'holds' if len(taken) == 1 else 'hold'} recorded exchanges: "
            "append to it ({existing=append}) or overwrite it ({existing=overwrite})"
        )
    return None


def _damage(path: Path) -> str | None:
    try:
        read_capture(path)
    except (OSError, ValueError) as exc:
        return f"cannot append to {path}: {exc}"
    return None


def capture_path(out: Path, split: str, upstream: str, context_id: str | None) -> Path:
    """The capture file for an exchange with `upstream` (`scheme://host:port`)."""
    if split == "none":
        return out
    name = safe_name(upstream.partition("://")[2])
    if split == "context" and context_id:
        name += "." + safe_name(context_id)
    return out / f"{name}.http"


def redaction_policy(keep_secrets: bool) -> tuple[str, ...]:
    """The header's list of what this capture redacts (names; exchanges note actual hits)."""
    if keep_secrets:
        return ()
    fields = (".".join(path) for path in SECRET_FIELDS)
    return (*SECRET_HEADERS, *fields)


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "upstream"
