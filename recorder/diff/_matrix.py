"""The SDK matrix: one scenario across a corpus of folders, each cell what differs (pure).

Each folder is diffed with the reference file by file; each counted difference becomes a
*finding* (indexes `[*]`, long values by their shape, so it reads the same in every scenario
and re-record) of a kind (`KINDS`), linked to where it was seen.  A baseline (tool `matrix`)
accepts known findings, each with a reason, for an SDK in every scenario or those it names; a
finding no entry accepts is *new*, an entry that accepts nothing *stale*: both fail the run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from recorder.capture import Exchange
from recorder.diff._report import find_exchange
from recorder.diff._result import ABSENT, CaptureDiff, Difference, DiffKind, ExchangeDiff, PairKind
from recorder.diff._shown import show
from recorder.protocol import OPERATIONS, PUSH_DELIVERY

EXCHANGES = "exchanges"
ROUTES = "routes and verbs"
CONTENT_TYPES = "content types"
ERRORS = "error shapes and codes"
FRAMING = "stream framing"
PUSH = "push headers"
HEADERS = "other headers"
FIELDS = "field presence and spelling"
VALUES = "field values"
KINDS = (EXCHANGES, ROUTES, CONTENT_TYPES, ERRORS, FRAMING, PUSH, HEADERS, FIELDS, VALUES)
ROUTE_RENAMES = frozenset({"version", "method", "route", "grpc-service", "grpc-rpc"})
STREAM_HEADERS = ("header:cache-control", "header:x-accel-buffering")
STREAMING = frozenset(op.name for op in OPERATIONS if op.streaming)
NO_CAPTURE = "no capture"
EVERY = "every scenario"  # the row of findings an SDK shows in every one of its scenarios
GIST = 60  # a value whose JSON is longer is shown by its shape
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f]")
_INDEX = re.compile(r"\[\d+(?:~\d+)?\]")
# What differs between two recordings of one SDK, in a finding's text only (never the wire):
# undecoded bytes, UUIDs the normaliser left (draft messages), the placeholders' numbers.
_VOLATILE = (
    (re.compile(r"<\d+ bytes sha256:[0-9a-f]+>"), "<bytes>"),
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
    (re.compile(r"<([a-z]+(?:-[a-z]+)*)-\d+>"), r"<\1>"),
)


@dataclass(frozen=True, slots=True)
class Seen:
    """Where a finding was seen: an operation, its exchanges in the reference and the SDK."""

    operation: str
    a: int | None
    b: int | None


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    text: str
    seen: tuple[Seen, ...] = field(default=(), compare=False)

    @property
    def operations(self) -> str:
        """The operations it was seen in, as `(SendMessage, GetTask)`."""
        names = dict.fromkeys(s.operation for s in self.seen)
        return f"({', '.join(names)})" if names else ""


@dataclass(frozen=True, slots=True)
class Cell:
    """One scenario of one SDK: its diff against the reference (None: a side has no capture)."""

    sdk: str
    scenario: str
    findings: tuple[Finding, ...]
    diff: CaptureDiff | None = None


@dataclass(frozen=True, slots=True)
class Matrix:
    reference: str
    sdks: tuple[str, ...]
    scenarios: tuple[str, ...]
    cells: Mapping[tuple[str, str], Cell]  # (scenario, sdk)

    def common(self, sdk: str) -> frozenset[Finding]:
        """The findings in every scenario of `sdk` (shown once, in the `EVERY` row)."""
        cells = [self.cells.get((s, sdk)) for s in self.scenarios]
        sets = [set(c.findings) for c in cells if c is not None and c.diff is not None]
        return frozenset(set.intersection(*sets)) if len(sets) > 1 else frozenset()

    def shown(self, scenario: str, sdk: str) -> tuple[Finding, ...]:
        cell = self.cells.get((scenario, sdk))
        common = self.common(sdk)
        return tuple(f for f in cell.findings if f not in common) if cell else ()


def build_matrix(
    reference: str,
    pairs: Mapping[str, Sequence[CaptureDiff]],
    missing: Mapping[str, Sequence[tuple[str, str]]],
) -> Matrix:
    """The matrix from each SDK's diffs (named by scenario) and its unpaired scenarios."""
    cells: dict[tuple[str, str], Cell] = {}
    for sdk, diffs in pairs.items():
        for diff in diffs:
            cells[diff.a_name, sdk] = Cell(sdk, diff.a_name, findings_of(diff), diff)
        for side, scenario in missing.get(sdk, ()):
            where = sdk if side == "A" else "the reference"
            text = f"{NO_CAPTURE} in {where}"
            cells[scenario, sdk] = Cell(sdk, scenario, (Finding(EXCHANGES, text),))
    scenarios = tuple(sorted({s for s, _ in cells}, key=_scenario_order))
    return Matrix(reference, tuple(pairs), scenarios, cells)


def _scenario_order(name: str) -> tuple[int, str]:
    return name.count("/"), name


def findings_of(diff: CaptureDiff) -> tuple[Finding, ...]:
    """A pair's findings, each once (with every place it was seen), in `KINDS` order."""
    seen: dict[tuple[str, str], list[Seen]] = {}
    for pair in diff.exchanges:
        here = Seen(pair.operation, pair.a, pair.b)
        for kind, text in _pair_findings(pair, _failed(diff, pair)):
            seen.setdefault((kind, text), []).append(here)
    found = [Finding(kind, text, tuple(where)) for (kind, text), where in seen.items()]
    return tuple(sorted(found, key=lambda f: (KINDS.index(f.kind), f.text)))


def _pair_findings(pair: ExchangeDiff, failed: bool) -> list[tuple[str, str]]:
    if pair.kind is PairKind.INSERTED:
        return [(EXCHANGES, "only in this SDK")]
    if pair.kind is PairKind.REMOVED:
        return [(EXCHANGES, "only in the reference")]
    out = [(_rename_kind(r.rule), r.text) for r in pair.renames]
    streaming = pair.operation in STREAMING
    out += [
        (_kind(pair, d, failed), gist_describe(d, streaming)) for d in pair.differences if d.counts
    ]
    return out


def _rename_kind(rule: str) -> str:
    return ROUTES if rule in ROUTE_RENAMES else ERRORS if rule == "error" else FIELDS


def _failed(diff: CaptureDiff, pair: ExchangeDiff) -> bool:
    """Whether either side's exchange is an error answer (its body is then an error shape)."""
    found = (find_exchange(diff.a_capture, pair.a), find_exchange(diff.b_capture, pair.b))
    return any(x is not None and (x.classification.error or _status(x) >= 400) for x in found)


def _status(exchange: Exchange) -> int:
    return exchange.response.status if exchange.response is not None else 0


# (kind, test of (pair, difference, failed)): the first that holds names the kind.
_Rule = Callable[[ExchangeDiff, Difference, bool], bool]
_RULES: tuple[tuple[str, _Rule], ...] = (
    (PUSH, lambda p, d, _: p.operation == PUSH_DELIVERY and d.path.startswith("request.header:")),
    (ROUTES, lambda p, d, _: d.path in ("binding", "version", "request.method", "request.target")),
    (CONTENT_TYPES, lambda p, d, _: d.path.endswith(":content-type")),
    (ERRORS, lambda p, d, _: d.path in ("error", "response", "status")),
    (ERRORS, lambda p, d, _: d.path.startswith(("trailer:", "header:grpc-"))),
    (FRAMING, lambda p, d, _: d.kind is DiffKind.FRAMING or d.path.startswith("framing")),
    (FRAMING, lambda p, d, _: d.path.startswith("events") and ".data" not in d.path),
    (FRAMING, lambda p, d, _: d.path in STREAM_HEADERS and p.operation in STREAMING),
    (HEADERS, lambda p, d, _: d.path.startswith(("header:", "request.header:"))),
    (ERRORS, lambda p, d, failed: failed),
    (VALUES, lambda p, d, _: d.kind is DiffKind.CHANGED),
)


def _kind(pair: ExchangeDiff, diff: Difference, failed: bool) -> str:
    return next((kind for kind, holds in _RULES if holds(pair, diff, failed)), FIELDS)


def gist_describe(diff: Difference, streaming: bool = False) -> str:
    """`path: old → new` as a finding reads it: indexes `[*]`, long values by their shape, and
    the binding's envelope left out (`body.result.x`, gRPC `messages[*].x`: `body.x`)."""
    path = finding_path(diff.path, streaming)
    old, new = gist(diff.old), gist(diff.new)
    if diff.old is ABSENT:
        return f"{path}: added {new}"
    if diff.new is ABSENT:
        return f"{path}: removed {old}"
    return f"{path}: {old} → {new}"


# Each binding's envelope -> the same place in every binding (after indexes become `[*]`).
_ENVELOPES = (
    ("request.body.params", "request.body"),
    ("request.messages[*]", "request.body"),
    ("events[*].data.result", "events[*].data"),
    ("body.result", "body"),
)


def finding_path(path: str, streaming: bool) -> str:
    path = _INDEX.sub("[*]", path)
    grpc = ("messages[*]", "events[*].data" if streaming else "body")
    for old, new in (*_ENVELOPES, grpc):
        if path == old or path.startswith((old + ".", old + "[")):
            return new + path[len(old) :]
    return path


def gist(value: Any) -> str:
    """A value shown whole when short, else its shape: `{a, b}`, `[3 items]`, `"<text>"`."""
    if isinstance(value, str) and _CONTROLS.search(value):
        return '"<bytes>"'  # a message kept undecoded, shown as text
    text = show(value)
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    if len(text) <= GIST:
        return text
    if isinstance(value, dict):
        keys = ", ".join(list(value)[:6]) + (", …" if len(value) > 6 else "")
        return "{" + keys + "}"
    if isinstance(value, list):
        return f"[{len(value)} items]"
    return '"<text>"'


Entry = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Verdict:
    """How the matrix stands against the accepted findings."""

    new: tuple[tuple[str, str, Finding], ...]  # (sdk, scenario, finding)
    stale: tuple[Entry, ...]
    unreasoned: tuple[Entry, ...]
    reasons: Mapping[tuple[str, str, str], str]  # (sdk, scenario, finding text) -> reason

    @property
    def clean(self) -> bool:
        return not (self.new or self.stale or self.unreasoned)


def _accepts(entry: Entry, sdk: str, scenario: str, finding: Finding) -> bool:
    scenarios = entry.get("scenarios")
    return (
        entry.get("sdk") == sdk
        and entry.get("kind") == finding.kind
        and entry.get("finding") == finding.text
        and (not scenarios or scenario in scenarios)
    )


def judge(matrix: Matrix, entries: Sequence[Entry]) -> Verdict:
    """Which findings are new, which entries are stale or have no reason."""
    used: set[int] = set()
    new, reasons = [], {}
    for (scenario, sdk), cell in sorted(matrix.cells.items()):
        for finding in cell.findings:
            match = next(
                (i for i, e in enumerate(entries) if _accepts(e, sdk, scenario, finding)), None
            )
            if match is None:
                new.append((sdk, scenario, finding))
            else:
                used.add(match)
                reasons[sdk, scenario, finding.text] = str(entries[match].get("reason") or "")
    stale = tuple(e for i, e in enumerate(entries) if i not in used)
    unreasoned = tuple(e for i, e in enumerate(entries) if not str(e.get("reason") or "").strip())
    return Verdict(tuple(new), stale, unreasoned, reasons)


def accepted_entries(matrix: Matrix, entries: Sequence[Entry]) -> list[dict[str, Any]]:
    """The entries that accept today's findings: those used, and one per new one (no reason)."""
    verdict = judge(matrix, entries)
    kept = [dict(e) for e in entries if not any(e is s for s in verdict.stale)]
    added: dict[tuple[str, str, str], dict[str, Any]] = {}
    for sdk, _, f in verdict.new:
        added.setdefault((sdk, f.kind, f.text), {"sdk": sdk, "kind": f.kind, "finding": f.text})
    out = kept + [{**entry, "reason": ""} for entry in added.values()]
    return sorted(out, key=lambda e: (e["sdk"], KINDS.index(e["kind"]), e["finding"]))


def render_matrix_markdown(matrix: Matrix, verdict: Verdict | None = None) -> str:
    """One Markdown table: a row per scenario (and `EVERY`), a column per SDK."""
    new = {(sdk, s, f.text) for sdk, s, f in verdict.new} if verdict else set()
    head = ["scenario", *matrix.sdks]
    lines = [
        f"Reference: `{matrix.reference}`.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    common = {sdk: sorted(matrix.common(sdk), key=finding_order) for sdk in matrix.sdks}
    every = [_md_cell(common[sdk], new, sdk, None) for sdk in matrix.sdks]
    if any(every):
        lines.append(f"| *{EVERY}* | " + " | ".join(every) + " |")
    for scenario in matrix.scenarios:
        cells = [
            _md_cell(matrix.shown(scenario, sdk), new, sdk, scenario)
            if (scenario, sdk) in matrix.cells
            else "–"
            for sdk in matrix.sdks
        ]
        lines.append(f"| `{scenario}` | " + " | ".join(c or "same" for c in cells) + " |")
    return "\n".join(lines) + "\n"


def finding_order(finding: Finding) -> tuple[int, str]:
    return KINDS.index(finding.kind), finding.text


def _md_cell(
    findings: Sequence[Finding], new: set[tuple[str, str, str]], sdk: str, scenario: str | None
) -> str:
    out: list[str] = []
    for kind in KINDS:
        texts = [
            _md_code(f.text) + f" {f.operations}".rstrip() + _md_new(f, new, sdk, scenario)
            for f in findings
            if f.kind == kind
        ]
        if texts:
            out.append(f"**{kind}**: " + "; ".join(texts))
    return "<br>".join(out)


def _md_new(
    finding: Finding, new: set[tuple[str, str, str]], sdk: str, scenario: str | None
) -> str:
    is_new = any(k[0] == sdk and k[2] == finding.text and scenario in (None, k[1]) for k in new)
    return " **(new)**" if is_new else ""


def _md_code(text: str) -> str:
    return "`` " + text.replace("|", "\\|").replace("\n", " ") + " ``"
