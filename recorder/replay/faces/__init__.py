"""The replay's faces: the transports around the core, and the server that runs them.

A `Runner` does what goes around one decision (forwarding, deliveries, pacing); the HTTP face
(on httptools) and the gRPC handler only translate bytes; `Replayer` runs both on a thread.

Imports the core (`recorder.replay.core`), never the fleet.
"""

from recorder.replay.faces._http import LINGER, Connection, Output, serve_http
from recorder.replay.faces._limits import Limits
from recorder.replay.faces._replayer import Replayer
from recorder.replay.faces._server import REPORT_PATH, ReplayHttp
from recorder.replay.faces._timing import Timing

__all__ = [
    "LINGER",
    "REPORT_PATH",
    "Connection",
    "Limits",
    "Output",
    "ReplayHttp",
    "Replayer",
    "Timing",
    "serve_http",
]
