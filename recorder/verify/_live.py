"""Recorded ids and the live ids that stand for them: replay's provenance, the other way (pure).

Slot by slot (`Step.slots`): ISSUED is the live id the agent handed out in its place (the
request waits for it, and is not sent when none came); OWN and FRESH get a fresh value of the
same look (`fresh_id`; the receiver's URL for a webhook, a new secret for a push-config token),
kept for later uses; UNKNOWN and FIXED are sent as recorded.

Learning pairs a live answer with the recorded one by where each id sits (`located_ids`): in
the same document if it has one there, else the first that does.  The first live value learnt
is kept, and only successful answers teach.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from recorder.protocol import IdKind, Json
from recorder.script import (
    CARD_OPERATIONS,
    Provenance,
    RecordedSlot,
    Step,
    answer_documents,
    answer_succeeded,
    fresh_id,
    located_ids,
)

Webhook = Callable[[str], str]  # recorded webhook URL -> live URL


@dataclass(frozen=True, slots=True)
class Missing:
    """A request that names an id the agent handed out in the recording, live not (yet)."""

    value: str
    issuer: int | None  # the recorded exchange that handed it out


@dataclass
class LiveIds:
    """What this run has learnt: recorded value -> live value."""

    webhook: Webhook
    issuer: dict[str, int] = field(default_factory=dict)  # Script.issuer
    to_live: dict[str, str] = field(default_factory=dict)
    taught: dict[str, int] = field(default_factory=dict)  # recorded id -> exchange that taught it

    def missing(self, step: Step) -> list[Missing]:
        """The issued ids the step names that have no live counterpart yet."""
        return [
            Missing(r.slot.value, self.issuer.get(r.slot.value))
            for r in step.slots
            if r.provenance is Provenance.ISSUED and r.slot.value not in self.to_live
        ]

    def mapping(self, step: Step) -> dict[str, str]:
        """Recorded -> live for every id the step names, minting what is new (none `missing`)."""
        found: dict[str, str] = {}
        for recorded in step.slots:
            live = self._live(recorded)
            if live is not None:
                found[recorded.slot.value] = live
        return found

    def _live(self, recorded: RecordedSlot) -> str | None:
        value, provenance = recorded.slot.value, recorded.provenance
        if provenance in (Provenance.UNKNOWN, Provenance.FIXED):
            return None
        if provenance is Provenance.ISSUED:
            return self.to_live[value]
        if value not in self.to_live:
            self.to_live[value] = self._mint(recorded)
        return self.to_live[value]

    def _mint(self, recorded: RecordedSlot) -> str:
        kind = recorded.slot.kind
        if kind is IdKind.WEBHOOK:
            return self.webhook(recorded.slot.value)
        if recorded.provenance is Provenance.FRESH and kind is None:
            return str(uuid.uuid4())  # a push-config secret: the client's own, new each run
        return fresh_id(recorded.slot.value)

    def learn_document(self, step: Step, index: int, live: Json) -> None:
        """Learn from one live document as it comes, paired with the recorded one at `index`."""
        recorded = _teaching_documents(step)
        if index < len(recorded):
            self._learn(step, pair_ids([recorded[index]], [live], anywhere=False))

    def learn(self, step: Step, live: Sequence[Json], success: bool) -> None:
        if success:
            self._learn(step, pair_ids(_teaching_documents(step), live))

    def _learn(self, step: Step, pairs: Sequence[tuple[str, str]]) -> None:
        for recorded, live in pairs:
            if recorded not in self.to_live:
                self.to_live[recorded] = live
                self.taught[recorded] = step.number


def _teaching_documents(step: Step) -> list[Json]:
    """The recorded answer's documents, when it handed out ids (a success, not a card)."""
    exchange = step.exchange
    if exchange.classification.operation in CARD_OPERATIONS or exchange.classification.error:
        return []
    documents = answer_documents(exchange.response)
    success = answer_succeeded(exchange.classification.binding, exchange.response, documents)
    return documents if success else []


def pair_ids(
    recorded: Sequence[Json], live: Sequence[Json], *, anywhere: bool = True
) -> list[tuple[str, str]]:
    """(recorded id, live id) for each id of the recorded documents found at the same place
    in the live ones: the same document index first, then (`anywhere`) any document."""
    at: dict[tuple[int, object, str], str] = {}
    first: dict[tuple[object, str], str] = {}
    for index, document in enumerate(live):
        for where, key, value in located_ids(document):
            at.setdefault((index, where, key), value)
            first.setdefault((where, key), value)
    pairs: list[tuple[str, str]] = []
    for index, document in enumerate(recorded):
        for where, key, value in located_ids(document):
            found = at.get((index, where, key)) or (first.get((where, key)) if anywhere else None)
            if found is not None:
                pairs.append((value, found))
    return pairs


def poll_states(documents: Sequence[Json]) -> tuple[str, ...]:
    """Every task state an answer reports, in order: what a poll waits to see."""
    found: list[str] = []
    for document in documents:
        _states(document, found)
    return tuple(found)


def _states(value: Json, out: list[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "state" and isinstance(item, str):
                out.append(item)
            else:
                _states(item, out)
    elif isinstance(value, list):
        for item in value:
            _states(item, out)
