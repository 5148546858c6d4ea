"""The replay core: what the agent would answer, decided without I/O.

`ReplayService.handle(request, client)` reads a live request (`_reader`) by the capture's rules,
resolves it against the live session state (`_resolve`, `_state`), carries the decision out
(`_carry`) and builds the answer as a value (`_building`); docs/architecture.md walks the steps.

Imports `recorder.script`, `recorder.protocol`, `recorder.capture`, `recorder.redaction`;
never the faces or the fleet, nor anything that does I/O.
"""

from recorder.replay.core._answer import HttpAnswer, standard_reason
from recorder.replay.core._faults import NO_SHAPE, Shape
from recorder.replay.core._grpcanswer import INTERNAL, GrpcAnswer, error_answer, live_request
from recorder.replay.core._journal import Journal, JournalDelivery, JournalRequest, SeenId
from recorder.replay.core._pushes import PlannedDelivery
from recorder.replay.core._report import Report
from recorder.replay.core._service import (
    Answer,
    Client,
    Miss,
    Outcomes,
    Refused,
    ReplayService,
    Served,
)
from recorder.replay.core._versions import CaptureAs, ServeVersion, capture_as

__all__ = [
    "INTERNAL",
    "NO_SHAPE",
    "Answer",
    "CaptureAs",
    "Client",
    "GrpcAnswer",
    "HttpAnswer",
    "Journal",
    "JournalDelivery",
    "JournalRequest",
    "Miss",
    "Outcomes",
    "PlannedDelivery",
    "Refused",
    "ReplayService",
    "Report",
    "SeenId",
    "ServeVersion",
    "Served",
    "Shape",
    "capture_as",
    "error_answer",
    "live_request",
    "standard_reason",
]
