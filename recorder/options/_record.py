"""The recorder's options: `RecordingProxy`'s keyword arguments, `a2a-recorder record`'s flags,
the plugin's upstream options, and the `a2a_*` options the addons declare to mitmproxy.

`RecordingProxy` takes `mode`, `upstream`, `listen` and `out` as its first arguments (`listen`
defaulting to a free port there, to the fixed port below on the command line).
"""

from __future__ import annotations

from recorder.options._shared import ADDRESS, address
from recorder.options._table import NAMES, Option, Table
from recorder.options._values import READ_TIMEOUT, parse_grpc_upstream, parse_size, parse_url

LATEST = "latest"


def parse_spec(text: str) -> str:
    """An A2A spec version lint knows (`recorder.protocol.SpecVersion`), or `latest`."""
    from recorder.protocol import LATEST_SPEC, SpecVersion

    if text == LATEST:
        return LATEST_SPEC.value
    known = ", ".join(v.value for v in SpecVersion)
    if text not in {v.value for v in SpecVersion}:
        raise ValueError(f"expected an A2A spec version lint knows ({known}), got {text!r}")
    return text


def split_for(*, forward: bool) -> str:
    """`split`'s default: one capture in reverse mode, one per upstream in forward mode (mitmdump's
    addon always writes one: its `a2a_out` is documented to be a file)."""
    return "upstream" if forward else "none"


RECORD = Table(
    [
        Option(
            "upstream", str, None,
            "Reverse mode: the agent's base URL (clients talk to the recorder as to the agent).",
            metavar="URL", parse=parse_url, mitm=None, keyword=False, pytest=True,
        ),
        Option(
            "forward", bool, False,
            "Forward mode: clients use the recorder as HTTP_PROXY (gRPC clients: "
            "grpc.http_proxy).",
            mitm=None, keyword=False,
        ),
        address("listen", ("127.0.0.1", 8480), "Where the recorder listens.", keyword=False),
        Option(
            "out", str, None, "Capture file (reverse mode), or folder of captures (forward mode).",
            metavar="PATH", required=True, keyword=False,
        ),
        Option(
            "split", str, None,
            "One capture (none), one per upstream host:port (upstream), or one per A2A context "
            "(default: none; upstream in forward mode, except under mitmdump).",
            choices=("none", "upstream", "context"),
        ),
        Option(
            "card_rewrite", bool, True,
            "Reverse mode: point the agent card's interface URLs at the recorder, so that "
            "clients stay on it (on by default; off, the card is served as it is).",
            no_help="Serve the agent card as the agent sent it: its interface URLs keep "
                "pointing at the agent, so SDK clients leave the recorder (use --forward "
                "instead).",
        ),
        Option(
            "keep_secrets", bool, False,
            "Write credentials and tokens as they are instead of redacting them.",
        ),
        Option(
            "record_all", bool, False, "Record non-A2A traffic too.",
            flag="--all", mitm="a2a_all",
        ),
        Option(
            "webhook_paths", NAMES, (),
            "A request path that receives push deliveries (deliveries not sent through the "
            "recorder's relay; forward mode).  Repeatable.",
            metavar="PATH", flag="--webhook-path",
        ),
        Option(
            "grpc_upstream", str, None,
            "Also record gRPC to this agent (tls://HOST:PORT for TLS gRPC).",
            metavar=ADDRESS, parse=parse_grpc_upstream, mitm=None, pytest=True,
        ),
        address("grpc_listen", None, "Where to take gRPC (default: a free port)."),
        address(
            "push_proxy", None,
            "Also listen here as a forward proxy for the agent's push deliveries (start the "
            "agent with HTTP_PROXY/HTTPS_PROXY set to it; for gRPC push configs in forward mode).",
        ),
        Option(
            "existing", str, "refuse",
            "A capture that already holds exchanges: refuse to start, append to it (numbering "
            "goes on), or overwrite it.",
            choices=("refuse", "append", "overwrite"),
            switches={
                "append": ("--append", "Add to a capture that already holds exchanges."),
                "overwrite": ("--force", "Overwrite a capture that already holds exchanges."),
            },
        ),
        Option(
            "redact_headers", NAMES, (),
            "Also redact this header (known credentials and names with token, secret, password, "
            "api-key, key, *-key, x-auth are redacted anyway).  Repeatable.",
            metavar="NAME", flag="--redact-header",
        ),
        Option(
            "redact_params", NAMES, (), "Also redact this query parameter.  Repeatable.",
            metavar="NAME", flag="--redact-param",
        ),
        Option(
            "card", str, None,
            "An agent card (file or URL) whose security schemes name the API keys to redact, for "
            "clients that never fetch the card through the recorder.",
            metavar="FILE|URL",
        ),
        Option(
            "fetch_card", bool, True,
            "At start, fetch the upstream's agent card (directly, unrecorded) to learn its API "
            "keys (on by default).",
            no_help="Do not fetch the upstream's agent card at start: API keys it declares "
                "are redacted once a client fetches the card through the recorder (or "
                "give --card).",
        ),
        Option(
            "read_timeout", float, READ_TIMEOUT,
            "Seconds a client has to send a request's head, and then its body; a slower "
            "connection is closed (0: no limit).",
            metavar="SECONDS", minimum=0,
        ),
        Option(
            "max_body_size", str, "100m",
            "Largest request or response body (k, m, g suffixes; streams are not bounded): a "
            "larger request gets 413, a larger response 502.",
            metavar="SIZE", parse=parse_size, mitm="body_size_limit",
        ),
        Option(
            "quiet", bool, False, "Print no line per recorded exchange.",
            short="-q", keyword=False,
        ),
        Option(
            "lint", str, None,
            "Lint each exchange as it is recorded, against this A2A spec (the latest when SPEC "
            "is left out), and print what breaks a rule under its line.",
            metavar="[SPEC]", optional_value=LATEST, parse=parse_spec,
        ),
    ]
)  # fmt: skip
