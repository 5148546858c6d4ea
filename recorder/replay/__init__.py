"""Replay a capture as a fake agent: one transport-neutral core, thin HTTP and gRPC faces.

- `core` (no I/O): `ReplayService` decides every answer from the capture read as a script
  (`recorder.script`, which verify shares) and the live session state.
- `faces`: a `Runner` does what goes around a decision, the HTTP and gRPC faces only translate
  bytes, and `Replayer` runs both on a thread.
- `fleet`: `Fleet` replays a folder of captures at once, a `Replayer` per agent.

`IdFactory` mints the ids handed out (seed it to replay the same bytes); a fault profile
(`parse_fault`, `read_faults`) makes the service answer as real networks do.
"""

from recorder._errors import FaultSpecError
from recorder.protocol import FAULT_KINDS, FaultSpec, parse_fault, parse_faults, read_faults
from recorder.replay.core import (
    CaptureAs,
    Client,
    GrpcAnswer,
    HttpAnswer,
    Journal,
    JournalDelivery,
    JournalRequest,
    Miss,
    PlannedDelivery,
    Refused,
    ReplayService,
    Report,
    SeenId,
    Served,
    ServeVersion,
    Shape,
    capture_as,
)
from recorder.replay.faces import Limits, Replayer, ReplayHttp, Timing
from recorder.replay.fleet import Fleet, FleetAgent, fleet_paths, ports_file_problem
from recorder.script import IdFactory

__all__ = [
    "CaptureAs",
    "Client",
    "FAULT_KINDS",
    "FaultSpec",
    "FaultSpecError",
    "Fleet",
    "FleetAgent",
    "GrpcAnswer",
    "HttpAnswer",
    "IdFactory",
    "Journal",
    "JournalDelivery",
    "JournalRequest",
    "Limits",
    "Miss",
    "PlannedDelivery",
    "Refused",
    "ReplayHttp",
    "ReplayService",
    "Replayer",
    "Report",
    "SeenId",
    "ServeVersion",
    "Served",
    "Shape",
    "Timing",
    "capture_as",
    "fleet_paths",
    "parse_fault",
    "parse_faults",
    "ports_file_problem",
    "read_faults",
]
