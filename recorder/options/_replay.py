"""The replayer's options: `Replayer`'s keyword arguments and `a2a-recorder replay`'s flags.

`Replayer` takes `listen` and `grpc_listen` as `host`, `port` and `grpc_port` (a free port by
default there, the fixed one below on the command line).  `strict`, `forward`, `ports_file`
and `faults_file` are the command's; the bounds without a flag are for programs and tests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recorder.options._shared import address
from recorder.options._table import NAMES, Option, Table
from recorder.options._values import READ_TIMEOUT, parse_on_miss, parse_timing


def parse_fault(text: str) -> str:
    """A fault spec `SELECTOR:KIND[=ARG]`, stripped; FaultSpecError (a ValueError) says why not."""
    from recorder.protocol import parse_fault

    return parse_fault(text).text


def _row(*args: Any, **settings: Any) -> Option:
    """A row of the replayer's table: no mitmproxy option (the replayer runs no mitmproxy)."""
    return Option(*args, **{"mitm": None, **settings})


REPLAY = Table(
    [
        address(
            "listen", ("127.0.0.1", 8490),
            "Where to serve HTTP: JSON-RPC, HTTP+JSON and the agent card (a fleet, DIR: its "
            "agents on PORT, PORT+1 ..., or with --forward its proxy).",
            keyword=False,
        ),
        address(
            "grpc_listen", None,
            "Where to serve gRPC, on the host of --listen (default: a free port when the "
            "captures hold gRPC).",
            keyword=False,
        ),
        _row(
            "forward", bool, False,
            "A fleet (DIR) behind one forward proxy at --listen: clients set HTTP_PROXY (gRPC: "
            "grpc_proxy) to it and call the recorded URLs.",
            keyword=False,
        ),
        _row(
            "ports_file", str, None,
            "A fleet (DIR): write where each agent is served to this file, as JSON.",
            metavar="FILE", parse=Path, keyword=False,
        ),
        _row(
            "timing", str, "none",
            "How fast to answer: none (at once), recorded (as recorded), or xN (N times faster "
            "than recorded).",
            metavar="none|recorded|xN", parse=parse_timing,
        ),
        _row(
            "on_miss", str, None,
            "Answer a request the captures cannot answer with an error in its binding's shape "
            "(error, the default), or forward it to the agent at URL (forward URL, or "
            "forward=URL).",
            metavar="error|forward URL", parse=parse_on_miss,
        ),
        _row(
            "strict", bool, False,
            "At exit, report what was not replayed: exchanges never served, requests never "
            "matched, answers the replayer wrote itself (synthesized), faults that never "
            "fired, push configs whose deliveries the capture does not hold, a capture cut "
            "short; exit 1 if there are any.",
            keyword=False,
        ),
        _row(
            "read_timeout", float, READ_TIMEOUT,
            "Seconds a client has to send a request, head and body; a slower one gets 408.",
            metavar="SECONDS", minimum=0.1,
        ),
        _row(
            "max_request_bytes", int, 16 * 1024 * 1024,
            "Largest request body; a larger one gets 413.",
            metavar="BYTES", minimum=1024,
        ),
        _row(
            "max_head_bytes", int, 64 * 1024, "Largest request head (request line and headers).",
            minimum=1024, flag=None,
        ),
        _row(
            "idle_timeout", float, 60.0,
            "gRPC: seconds an HTTP/2 connection may stay open with no call.",
            minimum=0.1, flag=None,
        ),
        _row(
            "max_sessions", int, 4096,
            "Client sessions remembered; the least recently used are forgotten.",
            metavar="N", minimum=1,
        ),
        _row(
            "journal_bytes", int, 64 * 1024 * 1024,
            "Bytes the request journal keeps; beyond, the oldest bodies are cut to 1 KiB.",
            metavar="BYTES", minimum=0,
        ),
        _row(
            "keep_secrets", bool, False,
            "Serve the journal and report with credentials as received (redacted by default).",
        ),
        _row(
            "faults", NAMES, (),
            "Answer as a real network would: SELECTOR is #N (an exchange) or an operation; KIND "
            "is cut-after=N, delay=SECONDS, delay-events=SECONDS, status=CODE[,NAME=VALUE], "
            "reset, framing=VARIANT[+...] or envelope=no-jsonrpc|wrong-id|truncated.  Repeatable.",
            metavar="SELECTOR:KIND[=ARG]", flag="--fault", parse=parse_fault,
        ),
        _row(
            "faults_file", str, None,
            "A faults.toml, faults = [\"SendStreamingMessage:cut-after=2\", ...], its specs taken "
            "before --fault's.",
            metavar="FILE", flag="--faults", parse=Path, keyword=False,
        ),
        _row(
            "serve_version", str, None,
            "The A2A versions to speak, translating a capture of the other one (default: as "
            "recorded); both serves a dual card and answers each request in its own version.",
            choices=("1.0", "0.3", "both"),
        ),
        _row(
            "credentials", bool, True,
            "Answer a request lacking a credential the recorded request carried as if it "
            "carried it (by default it gets the agent's recorded refusal, or is a miss naming "
            "the credential).",
        ),
    ]
)  # fmt: skip
