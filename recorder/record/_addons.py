"""The recording addons, one job each, and the order they run in.

`recording_addons()` builds the set `mitmdump -s recorder/record/addon.py` loads and
`RecordingProxy` runs: one parent addon over the seven, in the order of the design: the
classifier first (it keeps the request as sent), then what rewrites (push relay, card),
redaction, saving, and the console.  Never silent: mitmproxy only logs an exception in a hook,
so the set's `Ledger` counts and shows each, and `Audit`, after the set, counts an exchange such
an error kept out of the capture as lost.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from mitmproxy import http

from recorder.protocol import parse_json
from recorder.record._cards import CardRewrite
from recorder.record._classifier import Classifier
from recorder.record._console import Console
from recorder.record._deadline import Deadlines
from recorder.record._grpcrecord import GrpcRecord
from recorder.record._ledger import Ledger, LedgerLog, lost
from recorder.record._push import PUSH_CONFIG_OPERATIONS
from recorder.record._redaction import Redaction
from recorder.record._relay import PushAddon
from recorder.record._save import Save
from recorder.record._state import state_of

logger = logging.getLogger(__name__)

LEDGER_AT_START = "a2a_ledger_at_start"  # flow.metadata: the ledger's count as an event began
TROUBLED = "a2a_troubled"  # flow.metadata: what went wrong during one of the flow's events
COUNTED = "a2a_counted_lost"  # flow.metadata: the audit counted this flow as lost


@dataclass
class RecordingAddons:
    """The addon set, and the one entry point that is not a mitmproxy hook: gRPC calls."""

    name: ClassVar[str] = "a2a_recorder"  # mitmproxy's name for the parent addon

    deadlines: Deadlines
    classifier: Classifier
    push: PushAddon
    cards: CardRewrite
    redaction: Redaction
    save: Save
    console: Console
    ledger: Ledger
    addons: list[object] = field(init=False)  # what mitmproxy traverses, in order
    audit: Audit = field(init=False)  # the chain entry to add right after this set
    _log: LedgerLog | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.addons = self.chain()
        self.audit = Audit(self.ledger, self.save.forget)

    def listen(self) -> None:
        """Count and show every error logged from now on (idempotent)."""
        self.console.listening = True
        if self._log is None:
            self._log = LedgerLog(self.ledger)
            self._log.install()
        while self.redaction.unsaid:  # what the start found, before the console listened
            self.ledger.warn(self.redaction.unsaid.pop(0))

    def close(self) -> None:
        """Stop listening (after the run, its summary written), and let go of every lock."""
        self.save.release()
        if self._log is not None:
            self._log.uninstall()
            self._log = None

    # The set's own hooks run before its children's: see the module docstring.
    def requestheaders(self, flow: http.HTTPFlow) -> None:
        flow.metadata[LEDGER_AT_START] = self.ledger.seen

    request = responseheaders = response = error = requestheaders

    def chain(self) -> list[object]:
        """The addons in the order mitmproxy must call them."""
        return [
            self.deadlines,
            self.classifier,
            self.push,
            self.cards,
            self.redaction,
            self.save,
            self.console,
        ]

    def record_grpc(self, record: GrpcRecord, upstream: str) -> None:
        """Write one gRPC call observed by the tap (`upstream`: `grpc://127.0.0.1:50051`)."""
        classification = self.classifier.classify(None, record.request, record.response)
        if classification.operation in PUSH_CONFIG_OPERATIONS:
            for message in record.request.messages:
                self.push.learn_grpc(parse_json(message.json), upstream)
        self.save.record(
            upstream,
            classification,
            record.request,
            record.response,
            notes=record.notes,
            started=record.started,
            ended=record.ended,
            error=record.error,
        )


@dataclass
class Audit:
    """mitmproxy addon, the chain entry after the recording set: see the module docstring."""

    ledger: Ledger
    forget: Callable[[http.HTTPFlow], None]  # the save addon lets go of a flow counted lost
    name: ClassVar[str] = "a2a_audit"

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        self._event_over(flow)

    request = responseheaders = requestheaders

    def response(self, flow: http.HTTPFlow) -> None:
        self._event_over(flow)
        self._ended(flow)

    error = response

    def _event_over(self, flow: http.HTTPFlow) -> None:
        before = flow.metadata.pop(LEDGER_AT_START, None)
        if isinstance(before, int) and self.ledger.seen > before:
            flow.metadata[TROUBLED] = self.ledger.last

    def _ended(self, flow: http.HTTPFlow) -> None:
        reason = flow.metadata.get(TROUBLED)
        state = state_of(flow)
        if reason is None or (state is not None and state.saved) or flow.metadata.get(COUNTED):
            return
        flow.metadata[COUNTED] = True
        if state is not None:
            state.saved = True  # dealt with: not to be written as cut at stop
        self.forget(flow)
        logger.error(
            "%s %s was not recorded: %s",
            flow.request.method,
            _cut(flow.request.path),
            reason,
            extra=lost(1, f"an error inside the recorder: {reason}"),
        )


def _cut(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def recording_addons(echo: Callable[[str], None] | None = None) -> RecordingAddons:
    """A fresh addon set; `echo` receives the console's lines (default: stderr)."""
    ledger = Ledger()
    classifier = Classifier()
    redaction = Redaction()
    save = Save(classifier, redaction)
    push, console = PushAddon(), Console(save, ledger, echo)
    push.warn = console.warning
    redaction.fetched = classifier.learn_card
    return RecordingAddons(
        Deadlines(), classifier, push, CardRewrite(), redaction, save, console, ledger
    )
