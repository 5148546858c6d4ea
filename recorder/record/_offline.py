"""Recording traffic captured elsewhere: the live addon set, with no proxy around it.

`record_offline(items, out)` runs `recording_addons()` in a mitmproxy master that listens
nowhere and hands it each item as the live recorder meets it: an HTTP flow gets mitmproxy's
hooks in mitmproxy's order (`_hooks`), a gRPC call (`OfflineCall`) goes to
`RecordingAddons.record_grpc`, the tap's entry.  Then `done` finalises the captures.  So a
capture made from a flow or HAR file is classified, filtered, redacted, numbered and written by
the code that writes a live recording.

What differs offline, all of it:
- flows are seen as through a forward proxy: nothing is rewritten (no card rewrite, no push
  relay), and deliveries are known by the webhooks push configs name;
- no agent card is fetched, no read deadline is armed;
- a flow with neither a response nor an error (a file cut mid-flow) ends with `NO_ANSWER`;
- the captures' time origin is the earliest start among the items;
- a stream body that arrived whole is framed by the classifier (`SseTee.replay`), at the
  offsets the flow's metadata gives (`EVENT_OFFSETS`), else at 0.

One run per process at a time (mitmproxy's one global `ctx`); from a running event loop, the
run takes a thread of its own.
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
    """Record `items` into the capture `out` (replaced if it exists) with the live addon set.

    Returns the set: what it wrote (`save.totals`), what went wrong (`ledger`); `on_incident`
    hears the first of each warning, error and loss.  The console prints nothing.  Raises
    `AddonOptionError` (an `OptionsError` too) for an `out` the recorder refuses.
    """
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
