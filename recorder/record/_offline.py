"""Recording traffic captured elsewhere (flow and HAR files): the live addon set, no proxy.

`record_offline` runs `recording_addons()` in a master that listens nowhere, handing each HTTP
flow mitmproxy's hooks in mitmproxy's order and each gRPC call to `record_grpc`, so offline
captures are classified, redacted and written by the live recorder's code.  Offline, flows are
seen as through a forward proxy (nothing rewritten), no card is fetched, no deadline armed, a
flow without an answer ends `NO_ANSWER`, and time counts from the earliest item.  One run per
process at a time (mitmproxy's one global `ctx`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mitmproxy import flow, hooks, http, options
from mitmproxy.master import Master
from mitmproxy.proxy.mode_specs import ProxyMode

from recorder._background import run_to_end
from recorder.record._addons import RecordingAddons, recording_addons
from recorder.record._grpcrecord import GrpcRecord
from recorder.record._ledger import Incident

NO_ANSWER = "no response in the recording"
FORWARD = ProxyMode.parse("regular")


@dataclass(frozen=True, slots=True)
class OfflineCall:
    """A gRPC call recorded elsewhere, and the upstream it went to (`http://host:port`)."""

    upstream: str
    record: GrpcRecord


OfflineItem = http.HTTPFlow | OfflineCall


def record_offline(
    items: Sequence[OfflineItem],
    out: Path,
    *,
    keep_secrets: bool = False,
    record_all: bool = False,
    on_incident: Callable[[Incident], None] | None = None,
) -> RecordingAddons:
    """Record `items` into the capture `out` (replaced if it exists); the addon set, whose
    `save.totals` and `ledger` say what happened."""
    settings = {
        "a2a_out": str(out),
        "a2a_all": record_all,
        "a2a_keep_secrets": keep_secrets,
        "a2a_existing": "overwrite",
        "a2a_fetch_card": False,
        "a2a_card_rewrite": False,
        "a2a_read_timeout": 0.0,
        "a2a_quiet": True,
    }
    addons = recording_addons(lambda line: None)
    if on_incident is not None:
        addons.ledger.listeners.append(on_incident)
    addons.save.origin = min((_started(item) for item in items), default=None)
    run_to_end(lambda: _record(addons, items, settings))
    return addons


async def _record(
    addons: RecordingAddons, items: Sequence[OfflineItem], settings: dict[str, Any]
) -> None:
    master: Any = Master(options.Options())  # untyped in mitmproxy
    try:
        master.addons.add(addons, addons.audit)
        master.options.update(**settings)
        addons.listen()
        for item in items:
            if isinstance(item, OfflineCall):
                addons.record_grpc(item.record, item.upstream)
                continue
            for hook in _hooks(item):
                await master.addons.handle_lifecycle(hook)
    finally:
        await master.done()  # finalises the captures; takes the master's log handler off
        addons.close()


def _hooks(item: http.HTTPFlow) -> Iterator[Any]:
    """The hooks mitmproxy calls for the flow, in its order (see the module docstring)."""
    item.client_conn.proxy_mode = FORWARD
    if item.response is None and item.error is None:
        item.error = flow.Error(NO_ANSWER, item.request.timestamp_end or _started(item))
    names = ["requestheaders", "request"]
    names += ["responseheaders"] if item.response is not None else []
    names += ["error" if item.error is not None else "response"]
    for name in names:
        yield hooks.all_hooks[name](item)


def _started(item: OfflineItem) -> float:
    if isinstance(item, OfflineCall):
        return item.record.started
    return item.request.timestamp_start
