"""Replay a capture as a fake agent: one transport-neutral core, thin HTTP and gRPC faces.

- `core` (no I/O): `ReplayService` decides every answer: the capture read as a script
  (`recorder.script`, which verify shares), a live request read by the same rules, resolved
  against the live session state, carried out, and its answer built as a value; faults a
  profile asks for, refusals and misses, versions crossed, deliveries planned, a journal and
  a report of what was not replayed.
- `faces`: a `Runner` does what goes around a decision (forwarding, push deliveries, pacing);
  the HTTP face (`ReplayHttp` on connections of our own over httptools) and the gRPC handler
  only translate bytes; `Replayer` runs both on a thread.
- `fleet`: `Fleet` replays a folder of captures at once, a `Replayer` per agent, each on a
  port of its own or all behind one forward proxy.

`IdFactory` mints the ids handed out (seed it to replay the same bytes).  A fault profile
(`Replayer(faults=["SendStreamingMessage:cut-after=2", ...])`; `FaultSpec`s from
`parse_fault`, `read_faults(path)` for a `faults.toml`, the kinds in `FAULT_KINDS`) makes the
service answer as real networks do; `capture_as` translates a capture into the other protocol
version, as replay's `ServeVersion` serves it.
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
