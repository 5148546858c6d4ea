"""The capture files a recording writes: which file an exchange goes to, and each file's life.

A `Sink` is one capture file: opened on its first exchange (new, or continued with
`existing="append"`), appended to as exchanges complete, finalised at stop.  Finalising writes
the names actually redacted into the header and, when the redactor learnt something after an
exchange was written (a card's API-key name, a secret seen late), redacts the earlier
exchanges again (`Redaction.rework`); the rewrite is atomic, so a kill during it leaves the
file as it was.  A sink is never opened twice with truncation: after finalising, a late
exchange continues the same file.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

import recorder
from recorder.capture import (
    Capture,
    CaptureWriter,
    Exchange,
    holds_exchanges,
    read_capture,
    started_at,
    write_capture,
)
from recorder.redaction import SECRET_FIELDS, SECRET_HEADERS, Redactor

logger = logging.getLogger(__name__)

SPLITS = ("none", "upstream", "context")
EXISTING = ("refuse", "append", "overwrite")
_PLACEHOLDER_NUMBER = re.compile(rb"<redacted:(\d+)>")


@dataclass
class Sink:
    """One capture file: its writer, start time, numbering and redaction bookkeeping."""

    path: Path
    upstream: str
    writer: CaptureWriter
    started: float  # epoch seconds the capture's offsets count from
    count: int = 0  # the last number written
    resumed_after: int = 0  # exchanges up to this number were there before this recording
    written_at: int = 0  # the redactor generation when the last exchange was written
    stale: bool = False  # an exchange was written before the redactor knew what it knows now

    @classmethod
    def open(cls, path: Path, upstream: str, *, existing: str, keep_secrets: bool) -> Sink:
        """Start (or, with `existing="append"`, continue) the capture at `path`."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if existing == "append" and holds_exchanges(path):
            return cls._resume(path, upstream)
        started = time.time()
        header = Capture(
            started=started_at(started),
            recorder_version=recorder.__version__,
            upstreams=(upstream,),
            redacted=redaction_policy(keep_secrets),
        )
        writer = CaptureWriter(path, header, overwrite=existing == "overwrite")
        return cls(path, upstream, writer, started)

    @classmethod
    def _resume(cls, path: Path, upstream: str) -> Sink:
        writer = CaptureWriter.resume(path)
        header = read_capture(path)
        last = writer.last_number or 0
        return cls(path, upstream, writer, _epoch(header.started), last, last)

    def prepare(self, redactor: Redactor) -> None:
        """Before this recording redacts anything here: keep placeholders distinct from those
        an earlier recording of the same file handed out."""
        if self.resumed_after:
            numbers = _PLACEHOLDER_NUMBER.findall(self.path.read_bytes())
            redactor.skip_placeholders(max((int(n) for n in numbers), default=0))

    def finalise(self, redactor: Redactor | None, rework: Callable[[Exchange], Exchange]) -> None:
        """Close the file; then write the redacted names into its header, and redact earlier
        exchanges again if the redactor learnt more after they were written."""
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
            logger.warning("could not finalise the redaction of %s: %s", self.path, exc)

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
    """What is wrong with `a2a_out` for this split and `a2a_existing` policy, or None."""
    if out is None:
        return None
    if split == "none" and out.is_dir():
        return f"a2a_out is a directory, expected a file: {out}"
    if split != "none" and out.exists() and not out.is_dir():
        return f"a2a_out must be a directory with a2a_split={split}"
    if split == "none" and not out.parent.is_dir():
        return f"a2a_out's directory does not exist: {out.parent}"
    if existing != "refuse":
        return None
    held = [out] if split == "none" else sorted(out.glob("*.http")) if out.is_dir() else []
    taken = [path for path in held if holds_exchanges(path)]
    if taken:
        names = ", ".join(str(path) for path in taken[:3]) + (" ..." if len(taken) > 3 else "")
        return (
            f"{names} already {'holds' if len(taken) == 1 else 'hold'} recorded exchanges: "
            "append to it (--append, a2a_existing=append) or overwrite it "
            "(--force, a2a_existing=overwrite)"
        )
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
