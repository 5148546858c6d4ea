"""The recording addons, one job each, and the order they run in.

`recording_addons()` builds the set that `mitmdump -s recorder/record/addon.py` loads and that
`RecordingProxy` runs, as one parent addon whose `addons` are the seven (mitmproxy's nesting:
each still declares its own options and hooks, but mitmproxy's per-addon dispatch, a context
manager per addon per event, is paid once).  mitmproxy calls every hook on them in list order,
and the order is the design: the classifier first (it keeps the request as the client sent it,
before the others touch the forwarded one), then the addons that rewrite what passes (push
relay, card), then redaction, then saving, then the console, which reports what was saved.

- `Deadlines`: slow clients are cut off, oversized requests get 413
  (`a2a_read_timeout`, `a2a_max_request_size`);
- `Classifier`: snapshot the request, classify, learn cards (`a2a_webhook_paths`);
- `PushAddon`: push relay, push proxy, webhooks from configs (uses `a2a_webhook_paths`);
- `CardRewrite`: card URLs to the recorder, its own ETag and 304 (`a2a_card_rewrite`);
- `Redaction`: a redactor per capture, the secret scan (`a2a_keep_secrets`,
  `a2a_redact_headers`, `a2a_redact_params`);
- `Save`: captures, cut-on-stop, finalising; commands `a2a.flush`, `a2a.stats`
  (`a2a_out`, `a2a_split`, `a2a_all`, `a2a_existing`);
- `Console`: a line per exchange, warnings, the summary (`a2a_quiet`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from recorder.protocol import parse_json
from recorder.record._cards import CardRewrite
from recorder.record._classifier import Classifier
from recorder.record._console import Console
from recorder.record._deadline import Deadlines
from recorder.record._grpcrecord import GrpcRecord
from recorder.record._push import PUSH_CONFIG_OPERATIONS
from recorder.record._redaction import Redaction
from recorder.record._relay import PushAddon
from recorder.record._save import Save


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
    addons: list[object] = field(init=False)  # what mitmproxy traverses, in order

    def __post_init__(self) -> None:
        self.addons = self.chain()

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


def recording_addons(echo: Callable[[str], None] | None = None) -> RecordingAddons:
    """A fresh addon set; `echo` receives the console's lines (default: stderr)."""
    classifier = Classifier()
    redaction = Redaction()
    save = Save(classifier, redaction)
    push, console = PushAddon(), Console(save, echo)
    push.warn = console.warning
    return RecordingAddons(Deadlines(), classifier, push, CardRewrite(), redaction, save, console)
