"""`a2a-recorder show`: a capture as rows of a table (pure)."""

from __future__ import annotations

from typing import Any

from recorder.capture import Capture, Exchange, Response
from recorder.protocol import event_data, parse_json, value_at

COLUMNS = ("#", "time", "binding", "operation", "task", "outcome", "events")


def capture_rows(capture: Capture) -> list[dict[str, Any]]:
    """One JSON-ready row per exchange, in file order."""
    return [_row(exchange) for exchange in capture.exchanges]


def _row(exchange: Exchange) -> dict[str, Any]:
    c = exchange.classification
    response = exchange.response
    return {
        "number": exchange.number,
        "time": round(exchange.started_us / 1_000_000, 3),
        "binding": c.binding.value if c.binding else None,
        "operation": c.operation,
        "method": c.method,
        "version": c.version.value if c.version else None,
        "tenant": c.tenant,
        "task": c.task_id or _answered_task(response),
        "status": response.status if response else None,
        "error": c.error or exchange.error,
        "events": len(response.events) + len(response.messages) if response else 0,
        "notes": list(exchange.notes),
        "reason": c.reason,
    }


# Where an answer names the task it created: v1.0 JSON-RPC, v1.0 REST/stream/gRPC, v0.3 bare
# Task.
TASK_ID_PATHS = (("result", "task", "id"), ("task", "id"), ("result", "id"))
# Notes worth a line under the table, by how they start.
FLAGGED_NOTES = ("possible secret:", "stream truncated", "client closed",
                 "card signature no longer verifies")


def _answered_task(response: Response | None) -> str | None:
    """The task a send created, for rows whose request named none."""
    if response is None:
        return None
    first = (response.body.decode("utf-8", "replace")
             or (event_data(response.events[0].lines) if response.events else "")
             or next((m.json for m in response.messages if m.json), ""))
    document = parse_json(first)
    found = (value_at(document, path) for path in TASK_ID_PATHS)
    return next((value for value in found if isinstance(value, str)), None)


def _outcome(row: dict[str, Any]) -> str:
    if row["error"]:
        return str(row["error"])
    if row["status"] is None:
        return "no response"
    return str(row["status"])


def _cells(row: dict[str, Any]) -> tuple[str, ...]:
    task = row["task"] or ""
    return (
        str(row["number"]),
        f"{row['time']:.3f}",
        row["binding"] or "-",
        row["operation"] or f"(not A2A: {row['reason'] or 'unknown'})",
        task[:8] + ("…" if len(task) > 8 else ""),
        _outcome(row),
        str(row["events"] or ""),
    )


def render_table(rows: list[dict[str, Any]]) -> str:
    """Fixed-width text table; widths follow the widest cell of each column.

    Notes a reader should not miss (possible secrets, cut streams) follow the table.
    """
    table = [COLUMNS, *(_cells(row) for row in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
             for line in table]
    flagged = [f"#{row['number']}: {note}" for row in rows for note in row["notes"]
               if note.startswith(FLAGGED_NOTES)]
    return "\n".join(lines + ([""] + flagged if flagged else []))
