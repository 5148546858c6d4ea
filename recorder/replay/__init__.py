"""Replay a capture as a fake agent: one transport-neutral service, thin HTTP and gRPC faces.

`ReplayService` (pure) decides every answer; a `Runner` does what goes around it (misses,
forwarding, push deliveries before and after); the HTTP face (`ReplayHttp`, on connections of
our own over httptools: `_http`) and the gRPC handler only translate bytes; `Replayer` runs
both on a thread.  `Fleet` replays a folder of captures at once, a `Replayer` per agent, each
on a port of its own or all behind one forward proxy (`_fleet`, `_route`, `_proxy`).  See
`_service` for the model, `_state` for the session state and its invariants.  `IdFactory`
mints the ids handed out (seed it to replay the same bytes).

A fault profile (`Replayer(faults=["SendStreamingMessage:cut-after=2", ...])`; `FaultSpec`s
from `parse_fault`, `read_faults(path)` for a `faults.toml`, the kinds in `FAULT_KINDS`, the
grammar `recorder.protocol`'s) makes the service answer as real networks do (`_faults`):
streams cut and continued by `SubscribeToTask`, delays, error statuses, resets, other SSE
framings, malformed envelopes; each such answer is journaled with the specs behind it.

The capture read as a script (steps, ids and their origin, the swap of recorded values for
live ones) is `recorder.script`'s, which verify shares; `capture_as` translates a capture into
the other protocol version, as replay's `ServeVersion` serves it.
"""

from recorder._errors import FaultSpecError
from recorder.protocol import FAULT_KINDS, FaultSpec, parse_fault, parse_faults, read_faults
from recorder.replay._answer import HttpAnswer
from recorder.replay._faults import Shape
from recorder.replay._fleet import Fleet, FleetAgent, fleet_paths, ports_file_problem
from recorder.replay._grpcanswer import GrpcAnswer
from recorder.replay._journal import Journal, JournalDelivery, JournalRequest, SeenId
from recorder.replay._limits import Limits
from recorder.replay._pushes import PlannedDelivery
from recorder.replay._replayer import Replayer
from recorder.replay._report import Report
from recorder.replay._server import ReplayHttp
from recorder.replay._service import Client, Miss, Refused, ReplayService, Served
from recorder.replay._timing import Timing
from recorder.replay._versions import CaptureAs, ServeVersion, capture_as
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
