"""Replay a capture as a fake agent: one transport-neutral service, thin HTTP and gRPC faces.

`ReplayService` (pure) decides every answer; `ReplayApp` (ASGI) and the gRPC handler only
translate bytes; `Replayer` runs both on a thread.  See `_service` for the model.
"""

from recorder.replay._grpcanswer import GrpcAnswer
from recorder.replay._ids import Provenance
from recorder.replay._journal import Journal, JournalDelivery, JournalRequest, SeenId
from recorder.replay._replayer import Replayer
from recorder.replay._report import Report
from recorder.replay._respond import HttpAnswer
from recorder.replay._server import ReplayApp
from recorder.replay._service import (
    Client,
    Miss,
    PlannedDelivery,
    Refused,
    ReplayService,
    Served,
)
from recorder.replay._timing import Timing
from recorder.replay._uvicorn import Limits

__all__ = [
    "Client",
    "GrpcAnswer",
    "HttpAnswer",
    "Journal",
    "JournalDelivery",
    "JournalRequest",
    "Limits",
    "Miss",
    "PlannedDelivery",
    "Provenance",
    "Refused",
    "ReplayApp",
    "ReplayService",
    "Replayer",
    "Report",
    "SeenId",
    "Served",
    "Timing",
]
