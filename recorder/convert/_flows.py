"""mitmproxy flow files (`.mitm` / `.flow`, written by `mitmdump -w`): read their flows.

Each HTTP exchange is as the proxy saw it (raw bodies, timestamps); those flows go to the
recorder's addons as they are.  Non-HTTP flows (TCP, UDP, DNS) are counted, not converted.
`read_flows`, the only I/O, keeps the complete flows of a file that was cut short.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mitmproxy import exceptions, http, io
from mitmproxy.flow import Flow

from recorder._errors import ConvertError
from recorder.capture import check_regular


def http_flows(flows: Iterable[Flow]) -> tuple[list[http.HTTPFlow], int]:
    """The HTTP flows, and how many flows were not HTTP."""
    found = list(flows)
    kept = [f for f in found if isinstance(f, http.HTTPFlow)]
    return kept, len(found) - len(kept)


@dataclass(frozen=True)
class FlowFile:
    """The flows read from a flow file, and what stopped the reading early, if anything."""

    flows: list[Flow]
    damage: str | None = None


def read_flows(path: Path) -> FlowFile:
    """Every complete flow in a mitmproxy flow file (of one cut short, those before the cut,
    and `damage` says where); `ConvertError` when none is whole."""
    flows: list[Flow] = []
    try:
        check_regular(path)
        with path.open("rb") as handle:
            flows.extend(io.FlowReader(handle).stream())
    except OSError as exc:
        raise ConvertError(f"{path}: {exc.strerror or exc}") from exc
    except (exceptions.FlowReadException, KeyError, AttributeError) as exc:
        # KeyError/AttributeError: a well-framed record that is no flow state mitmproxy knows.
        damage = f"{path}: damaged or not a mitmproxy flow file after {len(flows)} flow(s): {exc}"
        if not flows:
            raise ConvertError(damage) from exc
        return FlowFile(flows, damage)
    if not flows:
        raise ConvertError(f"{path}: no flows in it (an empty file?): nothing to convert")
    return FlowFile(flows)
