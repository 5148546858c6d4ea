"""A foreign recording's exchanges -> a capture, through the live recorder's addons.

`convert` hands the items (mitmproxy HTTP flows, gRPC calls as `OfflineCall`), in file order,
to the recorder's addon set run offline (`recorder.record.record_offline`): what it
classifies, leaves out, redacts, numbers and writes is what a live recording of the same
traffic gets, by the same code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mitmproxy.exceptions import OptionsError

from recorder._errors import ConvertError, OptionError
from recorder.capture import Capture, read_capture
from recorder.record import Incident, IncidentKind, OfflineItem, record_offline


@dataclass(frozen=True)
class Conversion:
    """What a conversion wrote (`converted`, `capture`), `skipped`, `problems` and `warnings`."""

    out: Path
    converted: int
    skipped: int = 0
    problems: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    capture: Capture | None = None


def convert(
    items: Sequence[OfflineItem],
    out: Path,
    *,
    keep_secrets: bool = False,
    include_all: bool = False,
) -> Conversion:
    """Record `items` into the capture `out` (replaced if it exists), as the recorder would:
    not A2A left out unless `include_all`, secrets redacted unless `keep_secrets`."""
    incidents: list[Incident] = []
    try:
        addons = record_offline(
            items,
            out,
            keep_secrets=keep_secrets,
            record_all=include_all,
            on_incident=incidents.append,
        )
    except OptionError as exc:  # the recorder's addons name their option: `out` here too
        raise OptionError(exc.template) from None
    except OptionsError as exc:
        raise ConvertError(f"{out}: {exc}") from exc
    totals = addons.save.totals
    return Conversion(
        out,
        totals.exchanges,
        sum(totals.left_out.values()),
        tuple(addons.ledger.summary()),
        tuple(f.reason for f in incidents if f.kind is IncidentKind.WARNING),
        read_capture(out) if totals.exchanges else None,
    )
