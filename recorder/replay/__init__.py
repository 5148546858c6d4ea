"""Replay a capture as a fake agent: one transport-neutral service, thin HTTP and gRPC faces.

`ReplayService` (pure) decides every answer; a `Runner` does what goes around it (misses,
forwarding, push deliveries before and after); `ReplayApp` (ASGI) and the gRPC handler only
translate bytes; `Replayer` runs both on a thread.  `Fleet` replays a folder of captures at
once, a `Replayer` per agent, each on a port of its own or all behind one forward proxy
(`_fleet`, `_route`, `_proxy`).  See `_service` for the model, `_state`
for the session state and its invariants.  `IdFactory` mints the ids handed out (seed it to
replay the same bytes).

A fault profile (`Replayer(faults=["SendStreamingMessage:cut-after=2", ...])`; `FaultSpec`s
from `parse_fault`, `read_faults(path)` for a `faults.toml`, the kinds in `FAULT_KINDS`, the
grammar `recorder.protocol`'s) makes the service answer as real networks do (`_faults`):
streams cut and continued by `SubscribeToTask`, delays, error statuses, resets, other SSE
framings, malformed envelopes; each such answer is journaled with the specs behind it.

For tools that play the client side (verify): `load_script` reads captures as a `Script` of
`Step`s, each recorded request's ids with their `Provenance` (`Step.slots`) and the ids its
answer handed out (`Step.response_ids`); `substitute_*` put live values in recorded bytes;
`answer_documents`, `answer_succeeded` and `located_ids` read any answer, recorded or live, as
the script reads recorded ones (`CARD_OPERATIONS` hand out no ids); `fresh_id` mints an id
that looks like a recorded one; `capture_as` translates a capture into the other protocol
version, as replay's `ServeVersion` serves it.
"""

from recorder._errors import FaultSpecError
from recorder.protocol import FAULT_KINDS, FaultSpec, parse_fault, parse_faults, read_faults
from recorder.replay._faults import Shape
from recorder.replay._fleet import Fleet, FleetAgent, fleet_paths, ports_file_problem
from recorder.replay._grpcanswer import GrpcAnswer
from recorder.replay._ids import Provenance
from recorder.replay._journal import Journal, JournalDelivery, JournalRequest, SeenId
from recorder.replay._limits import Limits
from recorder.replay._mint import IdFactory, fresh_id
from recorder.replay._replayer import Replayer
from recorder.replay._report import Report
from recorder.replay._respond import (
    HttpAnswer,
    substitute_body,
    substitute_headers,
    substitute_json_text,
    substitute_text,
)
from recorder.replay._script import (
    CARD_OPERATIONS,
    RecordedSlot,
    Script,
    Step,
    answer_documents,
    answer_succeeded,
    load_script,
    located_ids,
)
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
from recorder.replay._versions import CaptureAs, ServeVersion, capture_as

__all__ = [
    "CARD_OPERATIONS",
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
    "Provenance",
    "RecordedSlot",
    "Refused",
    "ReplayApp",
    "ReplayService",
    "Replayer",
    "Report",
    "Script",
    "SeenId",
    "ServeVersion",
    "Served",
    "Shape",
    "Step",
    "Timing",
    "answer_documents",
    "answer_succeeded",
    "capture_as",
    "fleet_paths",
    "fresh_id",
    "load_script",
    "located_ids",
    "parse_fault",
    "parse_faults",
    "ports_file_problem",
    "read_faults",
    "substitute_body",
    "substitute_headers",
    "substitute_json_text",
    "substitute_text",
]
