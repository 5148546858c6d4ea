"""Recording real A2A sessions: the mitmproxy addon and the in-process proxy around it.

Pure parts: `rewrite_card` (card interface URLs -> the proxy) and `Redactor` (secrets ->
stable placeholders).  Shells: `Recorder` (the mitmproxy addon, options `a2a_*`) and
`RecordingProxy` (mitmproxy run in-process, reverse or forward mode).
"""

from recorder.protocol._cardrewrite import (
    CardRewrite,
    rewrite_card,
    rewrite_grpc_interfaces,
    rewrite_url,
)
from recorder.record._addon import Recorder
from recorder.record._grpcrecord import (
    GrpcRecord,
    GrpcTap,
    GrpcUpstream,
    call_exchange,
    parse_grpc_upstream,
)
from recorder.record._proxy import Mode, ProxyStartError, RecordingProxy
from recorder.record._push import RELAY_PREFIX, PushRelay
from recorder.record._redact import SECRET_FIELDS, SECRET_HEADERS, Redactor, api_key_headers

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
    "Recorder",
    "RecordingProxy",
    "Redactor",
    "api_key_headers",
    "call_exchange",
    "parse_grpc_upstream",
    "rewrite_card",
    "rewrite_grpc_interfaces",
    "rewrite_url",
]
