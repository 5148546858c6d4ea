"""Compare two captures exchange by exchange, event by event, JSON-aware.

Normalise each capture, align the exchanges on their operations, compare each pair, and where
a pair differs translate both sides to v1.0 (`_renames`) so renames are summarised and only
what remains is a difference.  Object key order means nothing in (proto-)JSON, so it is
compared only with `strict_order`; a field one side sends as an empty default ({}, [], "") and
the other omits is a note, folded into one per exchange.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from recorder.capture import Capture
from recorder.diff._align import StepKind
from recorder.diff._correspondence import Correspondence
from recorder.diff._ignore import (
    IgnorePattern,
    kept,
    pair_index,
    parse_compare,
    parse_ignores,
    segments,
    side_path,
)
from recorder.diff._normal import (
    Body,
    NormalEvent,
    NormalExchange,
    NormalGrpc,
    NormalRequest,
    NormalResponse,
    normalise_capture,
)
from recorder.diff._polls import last_polls, with_polls
from recorder.diff._renames import RenameNote, to_v1
from recorder.diff._result import (
    ABSENT,
    EMPTY_DEFAULTS_PATH,
    CaptureDiff,
    Difference,
    DiffKind,
    ExchangeDiff,
    PairKind,
    RenameSummary,
)
from recorder.diff._sequences import align_events, align_exchanges, align_messages

# Headers that carry A2A meaning; everything else (and the volatile ones) is not compared.
REQUEST_HEADERS = (
    "content-type", "accept", "a2a-version", "a2a-extensions", "x-a2a-extensions",
    "authorization", "x-a2a-notification-token", "content-encoding", "te", "grpc-encoding",
)  # fmt: skip
RESPONSE_HEADERS = (
    "content-type", "a2a-version", "a2a-extensions", "x-a2a-extensions", "cache-control", "vary",
    "location", "www-authenticate", "content-encoding", "x-accel-buffering", "grpc-status",
    "grpc-message", "grpc-encoding",
)  # fmt: skip
TRAILERS = ("grpc-status", "grpc-message", "grpc-status-details")
# Lists whose members name themselves by one field and whose order means nothing: compared
# member by member under that name (`additionalInterfaces[transport=GRPC]`), so one member
# more on one side does not shift every later index.  Their order is only a note.
KEYED_LISTS = {"additionalInterfaces": "transport", "skills": "id"}
# Timing differences below this are scheduling noise, not behaviour.
TIMING_TOLERANCE_US = 50_000
NEWLINES = {"\n": "LF", "\r\n": "CRLF", "\r": "CR"}

_NAME = re.compile(r"[A-Za-z_@$][\w\-@$]*\Z")


def _join(path: str, key: str) -> str:
    if _NAME.match(key):
        return f"{path}.{key}" if path else key
    return f'{path}["{key}"]'


class _Collector:
    """Accumulates differences for one pair, in document order."""

    def __init__(self, timing: bool, ids: Correspondence, strict_order: bool = False) -> None:
        self.timing = timing
        self.strict_order = strict_order
        self.ids = ids
        self.out: list[Difference] = []

    def same(self, a: Any, b: Any) -> bool:
        if isinstance(a, str) and isinstance(b, str):
            return self.ids.same(a, b)
        if isinstance(a, bool) or isinstance(b, bool):
            return a is b
        if isinstance(a, int | float) and isinstance(b, int | float):
            return a == b
        return type(a) is type(b) and a == b

    def add(
        self,
        kind: DiffKind,
        path: str,
        old: Any = ABSENT,
        new: Any = ABSENT,
        json_path: str | None = None,
    ) -> None:
        self.out.append(Difference(kind, path, old, new, json_path))

    def value(self, path: str, old: Any, new: Any) -> None:
        if not self.same(old, new):
            self.add(_value_kind(old, new), path, old, new)

    def json(self, a: Any, b: Any, path: str, inner: str) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            self._object(a, b, path, inner)
        elif isinstance(a, list) and isinstance(b, list):
            self._array(a, b, path, inner)
        elif not self.same(a, b):
            self.add(DiffKind.CHANGED, path, a, b, inner)

    def _object(self, a: dict[str, Any], b: dict[str, Any], path: str, inner: str) -> None:
        for key, value in a.items():
            if key in b:
                self.json(value, b[key], _join(path, key), _join(inner, key))
            else:
                kind = DiffKind.EMPTY_DEFAULT if _is_empty(value) else DiffKind.REMOVED
                self.add(kind, _join(path, key), value, ABSENT, _join(inner, key))
        for key, value in b.items():
            if key not in a:
                kind = DiffKind.EMPTY_DEFAULT if _is_empty(value) else DiffKind.ADDED
                self.add(kind, _join(path, key), ABSENT, value, _join(inner, key))
        if self.strict_order and a.keys() == b.keys() and list(a) != list(b):
            self.add(DiffKind.KEY_ORDER, path, list(a), list(b), inner)

    def _array(self, a: list[Any], b: list[Any], path: str, inner: str) -> None:
        field = KEYED_LISTS.get(_leaf(path))
        if field and _names(a, field) is not None and _names(b, field) is not None:
            self._keyed(a, b, field, path, inner)
            return
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            self.json(x, y, f"{path}[{i}]", f"{inner}[{i}]")
        for i in range(len(b), len(a)):
            self.add(DiffKind.REMOVED, f"{path}[{i}]", a[i], ABSENT, f"{inner}[{i}]")
        for i in range(len(a), len(b)):
            self.add(DiffKind.ADDED, f"{path}[{i}]", ABSENT, b[i], f"{inner}[{i}]")

    def _keyed(self, a: list[Any], b: list[Any], field: str, path: str, inner: str) -> None:
        old = {x[field]: x for x in a}
        new = {y[field]: y for y in b}
        for name, x in old.items():
            here = f"[{field}={name}]"
            if name in new:
                self.json(x, new[name], path + here, inner + here)
            else:
                self.add(DiffKind.REMOVED, path + here, x, ABSENT, inner + here)
        for name, y in new.items():
            if name not in old:
                here = f"[{field}={name}]"
                self.add(DiffKind.ADDED, path + here, ABSENT, y, inner + here)
        shared_old = [name for name in old if name in new]
        shared_new = [name for name in new if name in old]
        if self.strict_order and shared_old != shared_new:
            self.add(DiffKind.KEY_ORDER, path, shared_old, shared_new, inner)

    def body(self, a: Body, b: Body, path: str) -> None:
        if a.kind == "json" and b.kind == "json":
            self.json(a.value, b.value, path, "")
        elif a.kind != b.kind or not self.same(a.value, b.value):
            self.add(_value_kind(_shown(a), _shown(b)), path, _shown(a), _shown(b))

    def headers(
        self,
        a: Sequence[tuple[str, str]],
        b: Sequence[tuple[str, str]],
        names: Sequence[str],
        prefix: str,
    ) -> None:
        ha, hb = _header_map(a), _header_map(b)
        for name in names:
            self.value(f"{prefix}:{name}", ha.get(name, ABSENT), hb.get(name, ABSENT))

    def timing_value(self, path: str, old: int, new: int) -> None:
        if self.timing and abs(old - new) > TIMING_TOLERANCE_US:
            self.add(DiffKind.TIMING, path, old, new)


def _is_empty(value: Any) -> bool:
    """An empty default that proto-JSON may omit: {}, [] or "" (not false or 0, which some
    v0.3 fields such as `blocking` give a meaning different from absent)."""
    return isinstance(value, dict | list | str) and not value


def _leaf(path: str) -> str:
    return segments(path)[-1] if path else "(root)"


def _names(members: list[Any], field: str) -> list[str] | None:
    """Each member's name under `field`, or None unless every member has a distinct one."""
    names = [m.get(field) if isinstance(m, dict) else None for m in members]
    if all(isinstance(n, str) and "]" not in n for n in names) and len(set(names)) == len(names):
        return names  # type: ignore[return-value]
    return None


def group_empty_defaults(diffs: Sequence[Difference]) -> tuple[Difference, ...]:
    """Fold the per-field EMPTY_DEFAULT notes into one (see `DiffKind`), at the first's place."""
    empties = [d for d in diffs if d.kind is DiffKind.EMPTY_DEFAULT]
    if not empties:
        return tuple(diffs)
    only_a = Counter(_leaf(d.path) for d in empties if d.new is ABSENT)
    only_b = Counter(_leaf(d.path) for d in empties if d.old is ABSENT)
    note = Difference(
        DiffKind.EMPTY_DEFAULT,
        EMPTY_DEFAULTS_PATH,
        dict(sorted(only_a.items())),
        dict(sorted(only_b.items())),
    )
    out: list[Difference] = []
    for d in diffs:
        if d.kind is not DiffKind.EMPTY_DEFAULT:
            out.append(d)
        elif d is empties[0]:
            out.append(note)
    return tuple(out)


def _value_kind(old: Any, new: Any) -> DiffKind:
    if old is ABSENT:
        return DiffKind.ADDED
    return DiffKind.REMOVED if new is ABSENT else DiffKind.CHANGED


def _shown(body: Body) -> Any:
    return ABSENT if body.kind == "empty" else body.value


def _header_map(headers: Sequence[tuple[str, str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in headers:
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out


def compare_exchanges(
    a: NormalExchange,
    b: NormalExchange,
    *,
    timing: bool = False,
    ids: Correspondence | None = None,
    strict_order: bool = False,
) -> tuple[Difference, ...]:
    """Every raw difference between two normalised exchanges (notes included)."""
    c = _Collector(timing, ids if ids is not None else Correspondence(), strict_order)
    c.value("binding", a.binding, b.binding)
    c.value("version", a.version, b.version)
    _compare_request(c, a.request, b.request)
    c.value("error", a.error or ABSENT, b.error or ABSENT)
    if a.response is None or b.response is None:
        c.value("response", _status(a.response), _status(b.response))
    else:
        _compare_response(c, a.response, b.response)
    c.timing_value("timing.duration_us", a.duration_us, b.duration_us)
    return tuple(c.out)


def _status(response: NormalResponse | None) -> Any:
    return ABSENT if response is None else response.status


def _compare_request(c: _Collector, a: NormalRequest, b: NormalRequest) -> None:
    c.value("request.method", a.method, b.method)
    c.value("request.target", a.target, b.target)
    c.headers(a.headers, b.headers, REQUEST_HEADERS, "request.header")
    c.body(a.body, b.body, "request.body")
    _compare_messages(c, a.messages, b.messages, "request.messages")


def _compare_response(c: _Collector, a: NormalResponse, b: NormalResponse) -> None:
    c.value("status", a.status, b.status)
    c.headers(a.headers, b.headers, RESPONSE_HEADERS, "header")
    c.body(a.body, b.body, "body")
    _compare_events(c, a.events, b.events)
    _compare_messages(c, a.messages, b.messages, "messages")
    c.headers(a.trailers, b.trailers, TRAILERS, "trailer")
    _compare_framing(c, a, b)


def _compare_events(c: _Collector, a: Sequence[NormalEvent], b: Sequence[NormalEvent]) -> None:
    for step in align_events(a, b).steps:
        i, j = step.a, step.b
        if i is not None and j is not None:
            _compare_event(c, a[i], b[j], f"events{pair_index(i, j)}")
        elif j is not None:
            c.add(DiffKind.ADDED, f"events[{j}]", ABSENT, _event_shown(b[j]))
        elif i is not None:
            c.add(DiffKind.REMOVED, f"events[{i}]", _event_shown(a[i]), ABSENT)


def _compare_event(c: _Collector, x: NormalEvent, y: NormalEvent, path: str) -> None:
    c.value(f"{path}.event", x.event, y.event)
    c.value(f"{path}.id", x.id, y.id)
    c.body(x.data, y.data, f"{path}.data")
    if x.comments != y.comments:
        c.add(DiffKind.FRAMING, f"{path}.comments", list(x.comments), list(y.comments))
    c.timing_value(f"{path}.offset_us", x.offset_us, y.offset_us)


def _event_shown(event: NormalEvent) -> dict[str, Any]:
    return {"event": event.event, "data": _shown(event.data)}


def _compare_messages(
    c: _Collector, a: Sequence[NormalGrpc], b: Sequence[NormalGrpc], path: str
) -> None:
    for step in align_messages(a, b).steps:
        i, j = step.a, step.b
        if i is not None and j is not None:
            here = path + pair_index(i, j)
            c.body(a[i].body, b[j].body, here)
            c.timing_value(f"{here}.offset_us", a[i].offset_us, b[j].offset_us)
        elif j is not None:
            c.add(DiffKind.ADDED, f"{path}[{j}]", ABSENT, _shown(b[j].body))
        elif i is not None:
            c.add(DiffKind.REMOVED, f"{path}[{i}]", _shown(a[i].body), ABSENT)


def _compare_framing(c: _Collector, a: NormalResponse, b: NormalResponse) -> None:
    if (a.events or a.comment_blocks) and (b.events or b.comment_blocks) and a.newline != b.newline:
        c.add(
            DiffKind.FRAMING,
            "framing.newline",
            NEWLINES.get(a.newline, a.newline),
            NEWLINES.get(b.newline, b.newline),
        )
    if a.comment_blocks != b.comment_blocks:
        c.add(DiffKind.FRAMING, "framing.comments", a.comment_blocks, b.comment_blocks)


def diff_exchanges(
    a: NormalExchange,
    b: NormalExchange,
    *,
    ignores: Sequence[IgnorePattern] = (),
    timing: bool = False,
    ids: Correspondence | None = None,
    strict_order: bool = False,
) -> ExchangeDiff:
    """Compare one aligned pair; summarise version renames when the two sides differ in them."""
    ids = ids if ids is not None else Correspondence()
    raw = kept(compare_exchanges(a, b, timing=timing, ids=ids, strict_order=strict_order), ignores)
    pair = ExchangeDiff(
        PairKind.SAME, a.key, a.number, b.number, group_empty_defaults(raw), (), raw, _binding(a, b)
    )
    if not any(d.counts for d in raw):
        return pair
    ta, notes_a = to_v1(a)
    tb, notes_b = to_v1(b)
    renames = _summaries(notes_a, notes_b, raw)
    if not renames:  # no version renames, or the same ones on both sides
        return replace(pair, kind=PairKind.CHANGED)
    residual = group_empty_defaults(
        kept(compare_exchanges(ta, tb, timing=timing, ids=ids, strict_order=strict_order), ignores)
    )
    renames = tuple(r for r in renames if not any(p.matches_rename(r) for p in ignores))
    changed = bool(renames) or any(d.counts for d in residual)
    kind = PairKind.CHANGED if changed else PairKind.SAME
    return replace(pair, kind=kind, differences=residual, renames=renames)


def _binding(a: NormalExchange, b: NormalExchange) -> str | None:
    if a.binding == b.binding:
        return a.binding
    return f"{a.binding or '-'} / {b.binding or '-'}"


def _summaries(
    notes_a: Sequence[RenameNote],
    notes_b: Sequence[RenameNote],
    raw: Sequence[Difference],
) -> tuple[RenameSummary, ...]:
    """Renames applied on one side only (the same rule at the same place on both is none),
    grouped by (rule, old, new)."""
    only_a, only_b = _one_sided_notes(notes_a, notes_b), _one_sided_notes(notes_b, notes_a)
    out = []
    for notes, reverse in ((only_a, False), (only_b, True)):
        groups: dict[tuple[str, str, str], list[RenameNote]] = {}
        for note in notes:
            groups.setdefault((note.rule.value, note.old, note.new), []).append(note)
        for (rule, old, new), same in groups.items():
            paths = [n.path for n in same]
            side = "B" if reverse else "A"  # note paths are in that side's own indexes
            related = tuple(d for d in raw if _related(side_path(d.path, side), paths))
            text = same[0].describe(reverse=reverse)
            out.append(RenameSummary(rule, text, old, new, len(same), reverse, related))
    return tuple(out)


def _one_sided_notes(notes: Sequence[RenameNote], others: Sequence[RenameNote]) -> list[RenameNote]:
    available = Counter((n.rule, n.path) for n in others)
    out = []
    for note in notes:
        if available[(note.rule, note.path)] > 0:
            available[(note.rule, note.path)] -= 1
        else:
            out.append(note)
    return out


def _related(path: str, note_paths: Sequence[str]) -> bool:
    return any(_under(path, p) or _under(p, path) for p in note_paths)


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith((prefix + ".", prefix + "[", prefix + ":"))


def diff_captures(
    a: Capture,
    b: Capture,
    *,
    ignore: Iterable[str] = (),
    timing: bool = False,
    collapse_polls: bool = False,
    strict_order: bool = False,
    a_name: str = "A",
    b_name: str = "B",
    compare: Iterable[str] = (),
) -> CaptureDiff:
    """Diff two captures of the same scenario (pure).  The options are the `diff` command's;
    a bad `ignore` or `compare` pattern raises ValueError naming the valid ones."""
    ignores = (*parse_ignores(ignore), *parse_compare(compare))
    xs: Sequence[NormalExchange] = normalise_capture(a)
    ys: Sequence[NormalExchange] = normalise_capture(b)
    runs_a: dict[int, int] = {}
    runs_b: dict[int, int] = {}
    if collapse_polls:
        (xs, runs_a), (ys, runs_b) = last_polls(xs), last_polls(ys)
    alignment = align_exchanges(xs, ys)
    ids = Correspondence()
    out = []
    for step in alignment.steps:
        if step.kind is StepKind.PAIR:
            assert step.a is not None and step.b is not None
            x, y = xs[step.a], ys[step.b]
            pair = diff_exchanges(
                x, y, ignores=ignores, timing=timing, ids=ids, strict_order=strict_order
            )
            polls = runs_a.get(x.number, 1), runs_b.get(y.number, 1)
            out.append(with_polls(pair, *polls, ignores))
        elif step.kind is StepKind.REMOVED:
            assert step.a is not None
            x = xs[step.a]
            out.append(ExchangeDiff(PairKind.REMOVED, x.key, x.number, None, binding=x.binding))
        else:
            assert step.b is not None
            y = ys[step.b]
            out.append(ExchangeDiff(PairKind.INSERTED, y.key, None, y.number, binding=y.binding))
    return CaptureDiff(a_name, b_name, tuple(out), alignment.approximate, a, b)
