"""The save addon, last in line: write each exchange to its capture when it is complete.

- An exchange is written once, on `response` (a stream: at its end) or `error`, numbered per
  capture in completion order; one the format refuses is written as a marked stand-in.
- Stopping keeps everything: what is in flight is written as it stands, noted `cut by recorder
  shutdown`, then each capture is finalised.
- A disk that refuses loses nothing yet: exchanges are held in memory (up to `HELD_LIMIT`
  bytes) and written with the next one; what is still held at the end is logged lost.
- One writing process per capture: `configure` claims `a2a_out` until stop.
- The agent card is kept as the agent served it; anything left out is counted by its reason.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mitmproxy import command, ctx, http

from recorder._errors import error_message
from recorder.capture import (
    Exchange,
    Request,
    Response,
    claim,
    release,
    render_exchange,
)
from recorder.options import split_for
from recorder.protocol import (
    NOTE_CLIENT_CLOSED,
    NOTE_RECORDER_CUT,
    NOTE_STREAM_TRUNCATED,
    Classification,
    answered_state,
)
from recorder.record._classifier import Classifier
from recorder.record._ledger import lost
from recorder.record._options import AddonOptionError, addon_options, declare, touched
from recorder.record._redaction import Redaction
from recorder.record._sinks import Sink, capture_path, out_problem
from recorder.record._stand_in import stand_in
from recorder.record._state import state_of

logger = logging.getLogger(__name__)

OPTIONS = addon_options("out", "split", "record_all", "existing")
CUT_ERROR = "cut: the recorder shut down before the exchange ended"
HELD_LIMIT = 64 << 20  # bytes of exchanges held in memory while the disk refuses them

Listener = Callable[[Path, Exchange, int], None]  # capture, exchange, bytes written
LeftOutListener = Callable[[str, int], None]  # why, how many left out for it so far
PUSH_PROXY_OTHER = "not a push delivery (the agent's own traffic through the push proxy)"


@dataclass
class Totals:
    """What the recording wrote, for the summary at stop and `a2a.stats`."""

    exchanges: int = 0
    errors: int = 0
    bytes: int = 0
    redactions: int = 0
    dropped_by_hook: int = 0  # exchanges the user's before_record hook left out
    captures: set[Path] = field(default_factory=set)
    left_out: Counter[str] = field(default_factory=Counter)  # reason -> exchanges not recorded

    def add(self, path: Path, exchange: Exchange, size: int) -> None:
        self.exchanges += 1
        self.bytes += size
        self.captures.add(path)
        failed = exchange.response is None or exchange.error or exchange.classification.error
        self.errors += bool(failed)
        self.redactions += any(note.startswith("redacted: ") for note in exchange.notes)


class Save:
    """mitmproxy addon; see the module docstring."""

    name = "a2a_save"  # mitmproxy names addons by class; ours carry the a2a_ prefix

    def __init__(self, classifier: Classifier, redaction: Redaction) -> None:
        self.classifier = classifier
        self.redaction = redaction
        self.out: Path | None = None
        self.split = "none"
        self.record_all = False
        self.existing = "refuse"
        self.listeners: list[Listener] = []
        self.left_out_listeners: list[LeftOutListener] = []
        self.totals = Totals()
        # A new capture's offsets count from when the recorder took its output (offline: the
        # earliest item), so no exchange starts before it.
        self.origin: float | None = None
        self._sinks: dict[Path, Sink] = {}
        self._claimed: Path | None = None  # `out`, from configure to stop
        self._finalised: set[Path] = set()
        self._contexts: dict[str, str] = {}  # task id -> its context (`--split context`)
        self._inflight: dict[str, http.HTTPFlow] = {}
        self._stopping = False
        self._lock = threading.RLock()

    def load(self, loader: Any) -> None:
        declare(loader, OPTIONS)

    def configure(self, updated: set[str]) -> None:
        if not touched(updated, OPTIONS):
            return
        options = ctx.options
        out = Path(options.a2a_out).expanduser() if options.a2a_out else None
        split = options.a2a_split or split_for(forward=False)  # mitmdump: one capture
        if out != self.out:
            if problem := out_problem(out, split, options.a2a_existing):
                raise AddonOptionError(problem)
            self.release()
            self._claim(out)
            if self.origin is None:
                self.origin = time.time()
        self.out, self.split = out, split
        self.record_all = options.a2a_all
        self.existing = options.a2a_existing

    # -- hooks ----------------------------------------------------------------------------------

    def request(self, flow: http.HTTPFlow) -> None:
        if state_of(flow) is not None:
            self._inflight[flow.id] = flow

    def response(self, flow: http.HTTPFlow) -> None:
        self._save(flow, None)

    def error(self, flow: http.HTTPFlow) -> None:
        self._save(flow, flow.error.msg if flow.error else "unknown error")

    def done(self) -> None:
        self.begin_stop()
        self.finish()

    def _claim(self, out: Path | None) -> None:
        try:
            if out is not None:
                claim(out)
        except OSError as exc:  # another process writes it; a lock file that cannot be made
            raise AddonOptionError(error_message(exc)) from None
        self._claimed = out

    def release(self) -> None:
        """Let go of the claim of `out` (idempotent)."""
        with self._lock:
            claimed, self._claimed = self._claimed, None
        if claimed is not None:
            release(claimed)

    def forget(self, flow: http.HTTPFlow) -> None:
        """Let go of a flow that will not be written (an error kept it out)."""
        self._inflight.pop(flow.id, None)

    # -- stopping -------------------------------------------------------------------------------

    def begin_stop(self) -> None:
        """From now on, an exchange that ends in an error was cut by this shutdown."""
        self._stopping = True

    def finish(self) -> None:
        """Write what is still in flight as cut, then finalise every capture."""
        self._stopping = True
        for flow in list(self._inflight.values()):
            state = state_of(flow)
            if state is not None and not state.saved:
                self._cut(flow)
        with self._lock:
            sinks = [s for path, s in self._sinks.items() if path not in self._finalised]
            self._finalised.update(s.path for s in sinks)
        for sink in sinks:
            self._finalise(sink)
        self.release()

    def _cut(self, flow: http.HTTPFlow) -> None:
        try:
            self.classifier.error(flow)  # takes what came back so far
            self._save(flow, CUT_ERROR)
        except Exception as exc:  # one exchange's failure must not cost the others
            logger.exception(
                "%s %s in flight at stop was not recorded",
                flow.request.method,
                flow.request.path[:100],
                extra=lost(1, f"an error inside the recorder at stop: {exc!r}"),
            )

    # -- commands -------------------------------------------------------------------------------

    @command.command("a2a.flush")  # type: ignore[untyped-decorator]
    def flush(self) -> None:
        """Write what the disk refused so far, and sync every open capture to disk now."""
        with self._lock:
            landed = [(sink, sink.flush()) for sink in self._sinks.values() if sink.held]
        for sink, written in landed:
            self._written(sink, written)
        for sink in list(self._sinks.values()):
            if sink.writer is not None:
                sink.writer.sync()

    @command.command("a2a.stats")  # type: ignore[untyped-decorator]
    def stats(self) -> str:
        """Exchanges, errors, bytes and redactions written so far, and the captures."""
        t = self.totals
        files = ", ".join(str(path) for path in sorted(t.captures)) or "none yet"
        return (
            f"{t.exchanges} exchanges, {t.errors} errors, {t.bytes} bytes, "
            f"{t.redactions} redacted; captures: {files}"
        )

    # -- writing --------------------------------------------------------------------------------

    def _save(self, flow: http.HTTPFlow, error: str | None) -> None:
        state = state_of(flow)
        if state is None or state.saved:
            return
        state.saved = True
        self._inflight.pop(flow.id, None)
        if state.pushed and not state.delivery and not self.record_all:
            self._leave_out(f"{state.request.method} {flow.request.pretty_url}: {PUSH_PROXY_OTHER}")
            return
        notes = list(state.notes)
        if error is not None and state.response is not None and not self._stopping:
            closed = "client" in error.lower()
            notes.append(NOTE_CLIENT_CLOSED if closed else NOTE_STREAM_TRUNCATED)
        try:
            self.record(
                state.upstream,
                state.classification,
                state.request,
                state.response,
                notes=notes,
                started=flow.request.timestamp_start,
                ended=_end_time(flow),
                error=error,
            )
        except BaseException:
            state.saved = False  # not written: `Audit` counts it lost
            raise

    def record(
        self,
        upstream: str,
        classification: Classification,
        request: Request,
        response: Response | None,
        *,
        notes: Sequence[str],
        started: float,
        ended: float,
        error: str | None,
    ) -> None:
        """Write one exchange (HTTP here, gRPC from the tap); times are epoch seconds."""
        if not (classification.is_a2a or self.record_all):
            self._leave_out(classification.reason or f"{request.method} {request.target}: not A2A")
            return
        if self.out is None:
            return
        if error is not None and self._stopping:
            notes, error = [*notes, NOTE_RECORDER_CUT], CUT_ERROR
        with self._lock:
            sink = self._sink(upstream, classification, response, started)
            kept = self.redaction.redact(
                sink.path,
                Exchange(
                    number=sink.count + 1,
                    classification=classification,
                    request=request,
                    response=response,
                    started_us=max(0, round((started - sink.started) * 1e6)),
                    duration_us=max(0, round((ended - started) * 1e6)),
                    notes=tuple(notes),
                    error=error,
                ),
            )
            if kept is None:
                self.totals.dropped_by_hook += 1
                return
            landed = self._append(sink, kept)
        self._written(sink, landed)

    def _leave_out(self, why: str) -> None:
        with self._lock:
            self.totals.left_out[why] += 1
            count = self.totals.left_out[why]
        for listener in self.left_out_listeners:
            listener(why, count)

    def _written(self, sink: Sink, landed: list[tuple[Exchange, int]]) -> None:
        for exchange, size in landed:
            self.totals.add(sink.path, exchange, size)
            for listener in self.listeners:
                listener(sink.path, exchange, size)

    def _append(self, sink: Sink, exchange: Exchange) -> list[tuple[Exchange, int]]:
        """Hand `exchange` to its sink and write what it holds; what reached the file."""
        exchange, data = _rendered(sink, exchange)
        failing = sink.failing
        sink.hold(exchange, data)
        generation = self.redaction.redactor(sink.path).generation
        sink.stale = sink.stale or (
            sink.count > 1 + sink.resumed_after and generation > sink.written_at
        )
        sink.written_at = generation
        landed = sink.flush()
        if sink.failing is not None:
            self._refused(sink, failing is None)
        elif failing is not None:
            logger.warning("%s takes writes again: exchanges held in memory written", sink.path)
        return landed

    def _refused(self, sink: Sink, first: bool) -> None:
        """The disk refused `sink`'s exchanges: hold them, within the bound."""
        why = _why(sink.failing)
        if first:
            logger.warning(
                "cannot write to %s: %s; exchanges are held in memory (up to %d MiB) "
                "and written when it takes writes again",
                sink.path,
                why,
                HELD_LIMIT >> 20,
            )
        if sum(s.held_bytes for s in self._sinks.values()) > HELD_LIMIT:
            dropped = sink.drop_newest()
            logger.error(
                "exchange %s to %s lost: %s, and %d MiB are held in memory already",
                _what(dropped.request),
                sink.path,
                why,
                HELD_LIMIT >> 20,
                extra=lost(1, f"could not be written to {sink.path}: {why}"),
            )

    def _sink(
        self,
        upstream: str,
        classification: Classification,
        response: Response | None,
        started: float,
    ) -> Sink:
        """The open capture for an exchange, opened on first use; call with the lock held."""
        assert self.out is not None
        context = self._context(classification, response) if self.split == "context" else None
        path = capture_path(self.out, self.split, upstream, context)
        sink = self._sinks.get(path)
        if sink is not None and path in self._finalised:  # an exchange after stop
            sink.reopen()
            self._finalised.discard(path)
        if sink is None:
            sink = Sink.open(
                path,
                upstream,
                existing=self.existing,
                keep_secrets=self.redaction.keep_secrets,
                started=self.origin if self.origin is not None else started,
            )
            sink.prepare(self.redaction.redactor(path))
            self._sinks[path] = sink
        return sink

    def _context(self, classification: Classification, response: Response | None) -> str | None:
        """The A2A context of an exchange (`--split context`): its request's, its task's, else
        its answer's (a first turn names none)."""
        answer = answered_state(response)
        told = answer.context_id if answer else None
        task = classification.task_id or (answer.task_id if answer else None)
        context = classification.context_id or self._contexts.get(task or "") or told
        if task and context:
            self._contexts.setdefault(task, context)
        return context

    def _finalise(self, sink: Sink) -> None:
        """Write what is held (or count it lost), then finalise the file."""
        with self._lock:
            landed = sink.flush() if sink.held else []
            held = len(sink.held)
            while sink.held:
                sink.drop_newest()
        self._written(sink, landed)
        if held:
            why = _why(sink.failing)
            logger.error(
                "%d exchanges could not be written to %s: %s",
                held,
                sink.path,
                why,
                extra=lost(held, f"could not be written to {sink.path}: {why}"),
            )
        redactor = None if self.redaction.keep_secrets else self.redaction.redactor(sink.path)
        try:
            sink.finalise(redactor, lambda e: self.redaction.rework(sink.path, e))
        except OSError as exc:
            logger.error("could not close %s: %s", sink.path, exc.strerror or exc)


def _rendered(sink: Sink, exchange: Exchange) -> tuple[Exchange, bytes]:
    """The exchange as written, rendered: a marked stand-in when the format refuses it."""
    try:
        return exchange, render_exchange(exchange).encode("utf-8")
    except ValueError as exc:
        logger.error(
            "exchange #%d of %s could not be written as recorded (%s); "
            "it is written marked instead",
            exchange.number,
            sink.path,
            exc,
        )
        exchange = stand_in(exchange, str(exc))
        return exchange, render_exchange(exchange).encode("utf-8")


def _why(failure: OSError | None) -> str:
    """Why the disk refused, in words (an OSError made from a message has no `strerror`)."""
    return (failure.strerror or str(failure)) if failure is not None else "no reason given"


def _what(request: Request) -> str:
    """`POST /a2a/jsonrpc` (the target cut short), to name an exchange in a message."""
    target = request.target if len(request.target) <= 100 else request.target[:100] + "…"
    return f"{request.method} {target}"


def _end_time(flow: http.HTTPFlow) -> float:
    """When the exchange ended: its response's end, else its error's time, else now."""
    if flow.response is not None and flow.response.timestamp_end:
        return flow.response.timestamp_end
    if flow.error is not None:
        return flow.error.timestamp
    return time.time()
