"""What the replay service returns for a request, and the `Ledger` that journals it and reports
answers the replayer wrote itself or a fault made.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from recorder.capture import Request
from recorder.replay.core._answer import HttpAnswer
from recorder.replay.core._carry import Seen, seen
from recorder.replay.core._faults import NO_SHAPE, Shape
from recorder.replay.core._grpcanswer import GrpcAnswer
from recorder.replay.core._journal import AnswerKind, Journal, JournalRequest, Outcome
from recorder.replay.core._misses import MissReport
from recorder.replay.core._pushes import PlannedDelivery
from recorder.replay.core._reader import Reading
from recorder.replay.core._report import Report
from recorder.script import Step

Answer = HttpAnswer | GrpcAnswer


@dataclass(frozen=True, slots=True)
class Client:
    """Who sent a request, as far as the transport knows: the peer (`host:port`)."""

    connection: str | None = None

    @classmethod
    def at(cls, address: tuple[str, int] | None) -> Client:
        """The client on the connection from `address` (None: unknown)."""
        if not address:
            return cls(None)
        host = f"[{address[0]}]" if ":" in address[0] else address[0]
        return cls(f"{host}:{address[1]}")

    @classmethod
    def peer(cls, text: str | None) -> Client:
        """The client a gRPC peer string names (`ipv4:127.0.0.1:5000`), named as over HTTP."""
        if not text:
            return cls(None)
        scheme, _, rest = text.partition(":")
        return cls(rest if scheme in ("ipv4", "ipv6") else text)


NOBODY = Client()  # a client the transport cannot name


@dataclass(slots=True)  # made per request: not frozen, which costs
class Served:
    answer: Answer
    step: Step
    session: int | None
    deliveries: tuple[PlannedDelivery, ...]
    journal: int
    kind: AnswerKind = "recorded"
    changes: tuple[str, ...] = ()
    shape: Shape = NO_SHAPE  # how to send it, as a fault profile asks


@dataclass(frozen=True, slots=True)
class Miss:
    answer: Answer
    report: MissReport
    journal: int

    def describe(self) -> str:
        return self.report.describe()


@dataclass(frozen=True, slots=True)
class Refused:
    answer: Answer
    reason: str
    journal: int


Outcomes = Served | Miss | Refused


@dataclass(slots=True)  # made per request: not frozen, which costs
class Logged:
    """What the journal says of a request besides the request itself."""

    outcome: Outcome
    kind: AnswerKind
    changes: tuple[str, ...] = ()
    step: Step | None = None
    session: int | None = None
    detail: str | None = None
    seen: Seen | None = None
    faults: tuple[str, ...] = ()  # the fault specs that made the answer what it is


class Ledger:
    """Journals each request and reports what the replayer wrote or a fault made."""

    def __init__(self, journal: Journal, report: Report) -> None:
        self.journal = journal
        self.report = report

    def log(
        self,
        request: Request,
        client: Client,
        reading: Reading,
        logged: Logged,
        answer: Answer,
        shape: Shape = NO_SHAPE,
    ) -> int:
        """Journal a request and what became of it; its journal number."""
        number = self.journal.next_number()
        status: int | None = answer.code if isinstance(answer, GrpcAnswer) else answer.status
        if shape.reset:
            status = None  # nothing was answered
        ids = logged.seen if logged.seen is not None else seen(None, reading.live.readings[0], None)
        self.journal.add_request(
            JournalRequest(
                number,
                time.time(),
                client.connection,
                request,
                reading.classification,
                logged.outcome,
                logged.step.number if logged.step else None,
                logged.session,
                logged.detail,
                status,
                ids,
                logged.kind,
                logged.changes,
                faults=logged.faults,
            )
        )
        return number

    def synthesized(self, number: int, why: str, request: Request | None = None) -> None:
        """A report line for an answer the replayer wrote (redacted, as the journal's)."""
        if request is None:
            entry = next((e for e in self.journal.requests if e.number == number), None)
            request = entry.request if entry else None
        where = self.journal.line(request, why) if request else why
        self.report.synthesized(f"request {number}, {where}")

    def faulted(
        self, number: int, request: Request, specs: Sequence[str], changes: Sequence[str]
    ) -> None:
        """A report line for an answer a fault profile made (none when no spec did)."""
        if specs:
            line = self.journal.line(request, "; ".join(changes))
            self.report.faulted(f"request {number}, {line}", specs)
