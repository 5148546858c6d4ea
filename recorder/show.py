"""`a2a-recorder show`: a capture as rows of a table, as JSON lines, or one exchange whole (pure).

Each row says what the exchange was (binding, operation, task) and how it came out: the status,
what the answer carried (the task state in v1.0 names whatever the version, or the last one of
a stream), and the A2A error name.  Output is always printable: control characters and lone
surrogates are escaped.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from recorder.capture import Capture, Exchange, Response, render_exchange
from recorder.protocol import (
    AGENT_CARD,
    GRPC_STATUS_NAMES,
    NOTE_CLIENT_CLOSED,
    NOTE_RECORDER_CUT,
    NOTE_STREAM_RESET,
    NOTE_STREAM_TRUNCATED,
    OPERATION_NAMES,
    OPERATIONS,
    PUSH_DELIVERY,
    event_data,
    parse_json,
    task_state_row,
    value_at,
)
from recorder.protocol import carried as carried_by

# Where an answer carries the task's generation: a task (JSON-RPC result, REST, a stream's
# wrapper) or a status or artifact update.
GENERATION_PATHS = tuple(
    (*root, *member, "generation")
    for root in ((), ("result",))
    for member in ((), ("task",), ("statusUpdate",), ("artifactUpdate",))
)
TRACE_CONTEXT = ("traceparent", "tracestate")  # W3C trace context, listed under the table
COLUMNS = ("#", "time", "binding", "operation", "task", "status", "state", "error", "events")

# Where an answer names the task it created: v1.0 JSON-RPC, REST/stream/gRPC, v0.3 bare Task.
TASK_ID_PATHS = (("result", "task", "id"), ("task", "id"), ("result", "id"))
# Notes worth a line under the table, by how they start.
FLAGGED_NOTES = (
    "possible secret:",
    NOTE_STREAM_TRUNCATED,
    NOTE_STREAM_RESET,
    NOTE_RECORDER_CUT,
    NOTE_CLIENT_CLOSED,
    "card signature no longer verifies",
)
# What `--op` accepts, each word with the operation it names: operation names, and every
# version's JSON-RPC methods (`message/send` is SendMessage, whatever version a capture speaks).
_NAMED: dict[str, str] = {
    **{name: name for name in (*OPERATION_NAMES, AGENT_CARD, PUSH_DELIVERY)},
    **{method: op.name for op in OPERATIONS for method in op.jsonrpc_methods},
}
OPERATION_WORDS: tuple[str, ...] = tuple(_NAMED)
_OPERATION_OF = {word.lower(): name.lower() for word, name in _NAMED.items()}


def capture_rows(capture: Capture) -> list[dict[str, Any]]:
    """One JSON-ready row per exchange, in file order."""
    return [_row(exchange) for exchange in capture.exchanges]


def _row(exchange: Exchange) -> dict[str, Any]:
    c = exchange.classification
    response = exchange.response
    documents = _answers(exchange)
    answer = _last_carried(documents)
    first = documents[0] if documents else None  # what names the task a send created
    created = (value_at(first, path) for path in TASK_ID_PATHS)
    tasks = value_at(first, ("result", "tasks")) or value_at(first, ("tasks",))
    return {
        "number": exchange.number,
        "time": round(exchange.started_us / 1_000_000, 3),
        "binding": c.binding_name,
        "operation": c.operation,
        "method": c.method,
        "version": c.version.value if c.version else None,
        "tenant": c.tenant,
        "task": c.task_id or next((v for v in created if isinstance(v, str)), None),
        "status": response.status if response else None,
        "grpc_status": _grpc_status(response),
        "state": answer[1],
        "kind": answer[0],
        "tasks": len(tasks) if isinstance(tasks, list) else None,
        "error": c.error or exchange.error,
        "events": len(response.events) + len(response.messages) if response else 0,
        "notes": list(exchange.notes),
        "reason": c.reason,
        **{name: exchange.request.header(name) for name in TRACE_CONTEXT},
        "generation": _generation(documents),
    }


def outcome_cells(exchange: Exchange) -> tuple[str, str]:
    """The status and state cells of an exchange's row (`404`, `NOT_FOUND`; `COMPLETED`)."""
    row = _row(exchange)
    return _status(row), _state(row)


def _generation(documents: Sequence[Any]) -> int | str | None:
    """The last task generation the answer carried (the v1.1 draft's counter), as sent."""
    found = None
    for document in documents:
        for path in GENERATION_PATHS:
            value = value_at(document, path)
            if isinstance(value, int | str) and not isinstance(value, bool):
                found = value
    return found


def _answers(exchange: Exchange) -> list[Any]:
    """The JSON documents the exchange answered with, in order (a delivery: what it pushed)."""
    if exchange.classification.operation == PUSH_DELIVERY:
        return [parse_json(exchange.request.body)]
    response = exchange.response
    if response is None:
        return []
    texts: list[bytes | str | None] = [response.body]
    texts += [event_data(event.lines) for event in response.events]
    texts += [m.json for m in response.messages]
    return [parse_json(text) for text in texts if text]


def _last_carried(documents: Sequence[Any]) -> tuple[str | None, str | None]:
    """(kind, state) of the answer: the last state carried, else the last kind carried."""
    found = [c for c in map(carried_by, documents) if c is not None]
    with_state = [c for c in found if c.raw_state is not None]
    if with_state:
        last = with_state[-1]
        return last.kind, last.state or last.raw_state
    return (found[-1].kind, None) if found else (None, None)


def _grpc_status(response: Response | None) -> str | None:
    if response is None:
        return None
    fields = {name.lower(): value for name, value in (*response.headers, *response.trailers)}
    raw = fields.get("grpc-status", "").strip()
    if not raw:
        return None
    code = int(raw) if raw.isascii() and raw.isdigit() else None
    return GRPC_STATUS_NAMES.get(code, raw) if code is not None else raw


# -- selecting rows -----------------------------------------------------------------------------


def check_operations(words: Iterable[str]) -> None:
    """Raise ValueError, naming the valid ones, for a word `--op` does not know."""
    known = {w.lower() for w in OPERATION_WORDS}
    unknown = [w for w in words if w.lower() not in known]
    if unknown:
        raise ValueError(
            f"unknown operation {unknown[0]!r}; expected one of: " + ", ".join(OPERATION_WORDS)
        )


def select(
    rows: Iterable[dict[str, Any]],
    *,
    operations: Sequence[str] = (),
    bindings: Sequence[str] = (),
    task: str | None = None,
) -> list[dict[str, Any]]:
    """The rows of any of `operations` (names, or any version's JSON-RPC methods, any case), any of
    `bindings`, and whose task id starts with `task` (as the table shows it)."""
    ops = {_OPERATION_OF.get(w.lower(), w.lower()) for w in operations}
    kinds = {b.upper() for b in bindings}
    prefix = task.lower() if task else None
    return [
        row for row in rows
        if (not ops or str(row["operation"]).lower() in ops)
        and (not kinds or _kind(row["binding"]) in kinds)
        and (prefix is None or str(row["task"] or "").lower().startswith(prefix))
    ]  # fmt: skip


def _kind(binding: object) -> str:
    """A row's binding as `--binding` names it (a custom binding's URI is `CUSTOM`)."""
    return "CUSTOM" if ":" in str(binding) else str(binding).upper()


# -- output -------------------------------------------------------------------------------------


# Unicode's control characters (category Cc) and surrogates (Cs): a regular expression finds
# them at C speed (a 100 MB body took 70 s character by character).
CONTROLS = (*range(0x20), *range(0x7F, 0xA0))
SURROGATES = "\ud800-\udfff"


def printable(text: str, keep: str = "") -> str:
    """`text` with control characters (but `keep`) and lone surrogates escaped, for any terminal."""
    return _unprintable(keep).sub(_escaped, text)


@functools.cache
def _unprintable(keep: str) -> re.Pattern[str]:
    controls = "".join(re.escape(chr(c)) for c in CONTROLS if chr(c) not in keep)
    return re.compile(f"[{controls}{SURROGATES}]")


def _escaped(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def json_lines(rows: Iterable[dict[str, Any]]) -> str:
    """One compact JSON object per row and line (JSON Lines: `jq`, `jq -s` for an array)."""
    text = "".join(
        json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n" for row in rows
    )
    # Lone surrogates only occur inside JSON strings, where `\udXXX` is their escape.
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _status(row: dict[str, Any]) -> str:
    if row["status"] is None:
        return "no response"
    return str(row["grpc_status"] or row["status"])


def _state(row: dict[str, Any]) -> str:
    if row["tasks"] is not None:
        said = f"{row['tasks']} task" + ("" if row["tasks"] == 1 else "s")
    elif row["state"]:
        found = task_state_row(row["state"])
        said = found.short if found is not None else str(row["state"])
    else:
        said = str(row["kind"] or "")
    generation = row.get("generation")
    return f"{said} gen {generation}".strip() if generation is not None else said


def _cells(row: dict[str, Any]) -> tuple[str, ...]:
    task = str(row["task"] or "")
    cells = (
        str(row["number"]),
        f"{row['time']:.3f}",
        row["binding"] or "-",
        row["operation"] or f"(not A2A: {row['reason'] or 'unknown'})",
        task[:8] + ("…" if len(task) > 8 else ""),
        _status(row),
        _state(row),
        str(row["error"] or ""),
        str(row["events"] or ""),
    )
    return tuple(printable(cell) for cell in cells)


def render_table(rows: list[dict[str, Any]]) -> str:
    """Fixed-width text table, then the notes a reader should not miss (possible secrets, cut
    streams, a request's W3C trace context)."""
    table = [COLUMNS, *(_cells(row) for row in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(COLUMNS))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
        for line in table
    ]
    flagged = [
        printable(f"#{row['number']}: {note}")
        for row in rows
        for note in row["notes"]
        if note.startswith(FLAGGED_NOTES)
    ]
    flagged += [
        printable(f"#{row['number']}: {name} {row[name]}")
        for row in rows
        for name in TRACE_CONTEXT
        if row.get(name)
    ]
    return "\n".join(lines + ([""] + flagged if flagged else []))


def learnt_fields(capture: Capture) -> dict[int, list[str]]:
    """Exchange number -> the fields of its request the capture shows fresh (`recorder.script`)."""
    from recorder.script import load_script

    found: dict[int, list[str]] = {}
    for step in load_script([capture]).steps:
        places = [
            ".".join(str(part) for part in r.slot.location) for r in step.slots if r.slot.learnt
        ]
        if places:
            found[step.number] = places
    return found


def learnt_lines(learnt: dict[int, list[str]]) -> str:
    """The table's note of the fields learnt fresh (empty when there are none)."""
    if not learnt:
        return ""
    by_field: dict[str, list[int]] = {}
    for number, places in learnt.items():
        for place in places:
            by_field.setdefault(place, []).append(number)
    lines = [
        f"  {place}: #{', #'.join(map(str, numbers[:8]))}{' ...' if len(numbers) > 8 else ''}"
        for place, numbers in by_field.items()
    ]
    return "\nfresh in every request of their shape (replay reads them as fresh):\n" + "\n".join(
        lines
    )


def render_one(capture: Capture, number: int) -> str:
    """Exchange `number` whole: row, request, response; LookupError naming the numbers there are."""
    exchange = next((x for x in capture.exchanges if x.number == number), None)
    if exchange is None:
        numbers = [x.number for x in capture.exchanges]
        there = f"{min(numbers)}..{max(numbers)}" if numbers else "none"
        raise LookupError(f"no exchange {number} (the capture has {there})")
    try:
        text = render_exchange(exchange)
    except ValueError as exc:  # a value the file format cannot hold: say so, never crash
        text = f"(exchange {number} cannot be shown as capture text: {exc})\n"
    body = printable(text, keep="\n\t").rstrip("\n")
    return render_table([_row(exchange)]) + "\n\n" + body + "\n"
