"""Recording real A2A sessions: the mitmproxy addons and the in-process proxy around them.

The addons, one job each (`recording_addons()`, options `a2a_*`; see `_addons`);
`RecordingProxy` (mitmproxy run in-process, reverse or forward mode); `record_offline` (the
same addons, fed flows and gRPC calls recorded elsewhere: `a2a-recorder convert`).

May import `recorder.capture`, `recorder.protocol`, `recorder.redaction`, `recorder.lint`
(the live console), `recorder.options` and the root's shared modules; never replay or diff.
"""

import warnings

# mitmproxy's addons import ldap3, which warns (DeprecationWarning) about pyasn1 names it
# uses: nothing a user of ours can act on, and it would land in their own pytest run.
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", category=DeprecationWarning, module="ldap3")
    import mitmproxy.addons  # noqa: F401

from recorder._errors import ProxyStartError  # after the quiet import above
from recorder.record._addons import RecordingAddons, recording_addons
from recorder.record._flows import EVENT_OFFSETS
from recorder.record._grpcrecord import GrpcRecord
from recorder.record._ledger import Incident, Ledger
from recorder.record._ledger import Kind as IncidentKind
from recorder.record._offline import OfflineCall, OfflineItem, record_offline
from recorder.record._proxy import Mode, RecordingProxy
from recorder.record._push import RELAY_PREFIX, PushRelay

__all__ = [
    "EVENT_OFFSETS",
    "RELAY_PREFIX",
    "GrpcRecord",
    "Incident",
    "IncidentKind",
    "Ledger",
    "Mode",
    "OfflineCall",
    "OfflineItem",
    "ProxyStartError",
    "PushRelay",
    "RecordingAddons",
    "RecordingProxy",
    "record_offline",
    "recording_addons",
]
