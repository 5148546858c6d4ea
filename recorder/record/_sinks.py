"""The capture files a recording writes: which file an exchange goes to, and each file's state."""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import recorder
from recorder.capture import Capture, CaptureWriter, read_capture, started_at, write_capture
from recorder.record._redact import SECRET_FIELDS, SECRET_HEADERS, Redactor

logger = logging.getLogger(__name__)

SPLITS = ("none", "upstream", "context")


@dataclass
class Sink:
    """One capture file: its writer, redactor and exchange counter."""

    writer: CaptureWriter
    started: float
    redactor: Redactor = field(default_factory=Redactor)
    count: int = 0

    @classmethod
    def open(cls, path: Path, upstream: str, *, keep_secrets: bool,
             cards: list[dict[str, Any]]) -> Sink:
        """Start a capture at `path` for `upstream`; the redactor learns the cards seen so far."""
        started = time.time()
        header = Capture(started=started_at(started), recorder_version=recorder.__version__,
                         upstreams=(upstream,), redacted=redaction_policy(keep_secrets))
        path.parent.mkdir(parents=True, exist_ok=True)
        sink = cls(CaptureWriter(path, header), started)
        for card in cards:
            sink.redactor.learn_card(card)
        return sink

    def close(self, *, keep_secrets: bool) -> None:
        """Close the file; then the header lists the names actually redacted, not the policy."""
        self.writer.close()
        if keep_secrets:
            return
        path = self.writer.path
        try:
            capture = read_capture(path)
            if capture.redacted != self.redactor.redacted:
                write_capture(path, replace(capture, redacted=self.redactor.redacted))
        except (OSError, ValueError) as exc:
            logger.warning("could not update the redaction list of %s: %s", path, exc)


def out_problem(out: Path | None, split: str) -> str | None:
    """What is wrong with `a2a_out` for this split, or None."""
    if out is None:
        return None
    if split == "none" and out.is_dir():
        return f"a2a_out is a directory, expected a file: {out}"
    if split != "none" and out.exists() and not out.is_dir():
        return f"a2a_out must be a directory with a2a_split={split}"
    if split == "none" and not out.parent.is_dir():
        return f"a2a_out's directory does not exist: {out.parent}"
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

