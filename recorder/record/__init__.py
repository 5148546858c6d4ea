"""Recording real A2A sessions: the mitmproxy addons and the in-process proxy around them.

Pure parts: `rewrite_card` (card interface URLs -> the proxy), `Redactor` (secrets -> stable
placeholders), `exchange_line` (the console's line).  Shells: the addons, one job each
(`recording_addons()`, options `a2a_*`; see `_addons`) and `RecordingProxy` (mitmproxy run
in-process, reverse or forward mode).
"""

from recorder._errors import ProxyStartError
from recorder.protocol._cardrewrite import (
    CardRewrite,
    rewrite_card,
    rewrite_grpc_interfaces,
    rewrite_url,
)
from recorder.record._addons import RecordingAddons, recording_addons
from recorder.record._console import exchange_line
from recorder.record._grpcrecord import (
    GrpcRecord,
    GrpcTap,
    GrpcUpstream,
    call_exchange,
    parse_grpc_upstream,
)
from recorder.record._proxy import Mode, RecordingProxy
from recorder.record._push import RELAY_PREFIX, PushRelay
from recorder.redaction import SECRET_FIELDS, SECRET_HEADERS, Redactor, api_key_headers

__all__ = [
    "RELAY_PREFIX",
    "SECRET_FIELDS",
    "SECRET_HEADERS",
    "CardRewrite",
    "GrpcRecord",
    "GrpcTap",
    "GrpcUpstream",
    "Mode",
    "ProxyStartError",
    "PushRelay",
    "RecordingAddons",
    "RecordingProxy",
    "Redactor",
    "api_key_headers",
    "call_exchange",
    "exchange_line",
    "parse_grpc_upstream",
    "recording_addons",
    "rewrite_card",
    "rewrite_grpc_interfaces",
    "rewrite_url",
]
