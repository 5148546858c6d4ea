"""The replay's faces: the transports around the core, and the server that runs them.

A `Runner` does what goes around one decision of the core (a miss forwarded, push deliveries
made before or after the answer, pacing: `_runner`, `_deliver`, `_timing`); the HTTP face
(`ReplayHttp` on connections of our own over httptools: `_server`, `_http`) and the gRPC
handler (`_grpcserver`) only translate bytes; `Replayer` runs both on a thread of its own
within `Limits` (`_replayer`, `_limits`).

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
