"""A foreign recording's exchanges -> a capture, through the live recorder's addons.

Each input format is read into items the recorder knows: mitmproxy HTTP flows, and gRPC calls
as capture values (`recorder.record.OfflineCall`).  `convert` hands them, in file order, to the
recorder's own addon set run offline (`recorder.record.record_offline`): what it classifies,
leaves out, redacts, numbers and writes is what a live recording of the same traffic gets, by
the same code.  Nothing here re-does any of it.
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
    """What a conversion wrote: `converted` exchanges to `out` (no file when none), `skipped`
    ones left out as not A2A, `problems` (errors inside the recorder, exchanges lost) and the
    recorder's `warnings`.  `capture` is the capture as written (None when nothing was)."""

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
    """Record `items` into the capture `out` (replaced if it exists), as the recorder would.

    Exchanges that are not A2A are left out (counted in `skipped`) unless `include_all`;
    secrets are redacted unless `keep_secrets`.  Raises `OptionError` naming `out` for an
    `out` the recorder refuses (a directory, a folder that does not exist).  Example::

        conversion = convert(har_items(json.loads(text)), Path("session.http"))
    """
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
