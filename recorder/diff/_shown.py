"""How differences read: values, excerpts of long changes, one-line descriptions, table rows.

What changed is never cut: a long changed string is shown around the span where the two sides
differ, that span whole (`excerpts`).  A file's content inside a part (base64 on the wire) is
shown decoded, and its path says so (`readable`); the JSON report keeps the values as they
are.  `printable` makes any text writable as UTF-8 (lone surrogates are valid JSON text).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recorder.diff._result import (
    ABSENT,
    NOTES,
    CaptureDiff,
    Difference,
    DiffKind,
    ExchangeDiff,
    PairKind,
)
from recorder.protocol import FILE_CONTENT_KEYS

MAX_SHOWN = 160  # a changed string longer than this is shown around its differing span
CONTEXT = 40  # characters kept on each side of that span

Unpaired = Sequence[tuple[str, str]]  # (side "A" or "B", file name)


def show(value: Any) -> str:
    """A value as one line, whole: strings and JSON quoted compactly, `(absent)` for nothing."""
    if value is ABSENT:
        return "(absent)"
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


DECODED = " (file content, base64 decoded)"
_FILE_CONTENT = re.compile(
    r"\.parts\[\d+\]\.(?:" + "|".join(re.escape(".".join(k)) for k in FILE_CONTENT_KEYS) + r")$"
)
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def readable(path: str, old: Any, new: Any) -> tuple[str, Any, Any]:
    """A difference's path and values as shown: file contents in parts decoded."""
    shown = (_readable(path, old), _readable(path, new))
    if _FILE_CONTENT.search(path) and shown != (old, new):
        path += DECODED
    return path, *shown


def _readable(path: str, value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _readable(f"{path}.{k}", v) for k, v in value.items()}
    if isinstance(value, list):
        return [_readable(f"{path}[{i}]", v) for i, v in enumerate(value)]
    if isinstance(value, str) and _FILE_CONTENT.search(path):
        return file_content(value)
    return value


def file_content(text: str) -> str:
    """Base64 file content as shown: its text, else `<N bytes sha256:...>`; else `text` as is."""
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        try:
            data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        except (binascii.Error, ValueError):
            return text
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        decoded = None
    if decoded is not None and not _CONTROLS.search(decoded):
        return decoded
    return f"<{len(data)} bytes sha256:{hashlib.sha256(data).hexdigest()[:12]}>"


def printable(text: str) -> str:
    """`text` with each lone surrogate as a `\\udXXX` escape (the same inside a JSON string)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def json_text(document: object) -> str:
    """A JSON report as written: indented, UTF-8 (`printable`), other values as their `str`."""
    return printable(json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n")


@dataclass(frozen=True, slots=True)
class Excerpt:
    """One side of a change: `changed`, the differing span, whole; `before`, `after` around it."""

    before: str
    changed: str
    after: str

    @property
    def text(self) -> str:
        return self.before + self.changed + self.after


NOTHING = Excerpt("", "", "")


def excerpts(old: Any, new: Any) -> tuple[Excerpt, Excerpt]:
    """The two sides of a change: strings by the span where they differ, with only CONTEXT
    characters around it when either is longer than MAX_SHOWN; anything else whole."""
    if not (isinstance(old, str) and isinstance(new, str)):
        return whole(old), whole(new)
    long = len(show(old)) > MAX_SHOWN or len(show(new)) > MAX_SHOWN
    context = CONTEXT if long else None
    start = _common_prefix(old, new)
    tail = _common_prefix(old[start:][::-1], new[start:][::-1])
    return (
        _excerpt(old, start, len(old) - tail, context),
        _excerpt(new, start, len(new) - tail, context),
    )


def whole(value: Any) -> Excerpt:
    return NOTHING if value is ABSENT else Excerpt("", show(value), "")


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _excerpt(text: str, start: int, end: int, context: int | None) -> Excerpt:
    lo = 0 if context is None else max(0, start - context)
    hi = len(text) if context is None else min(len(text), end + context)
    before = '"' + ("…" if lo > 0 else "") + _inner(text[lo:start])
    after = _inner(text[end:hi]) + ("…" if hi < len(text) else "") + '"'
    return Excerpt(before, _inner(text[start:end]), after)


def _inner(text: str) -> str:
    """`text` escaped as inside a JSON string, without the quotes."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def describe(diff: Difference) -> str:
    """`path: old → new`, `path: added new`, `path: removed old`, or a note."""
    if diff.kind is DiffKind.KEY_ORDER:
        keys_a, keys_b = ", ".join(map(str, diff.old)), ", ".join(map(str, diff.new))
        return f"key order at {diff.path or '(root)'}: {keys_a} → {keys_b}"
    if diff.kind is DiffKind.EMPTY_DEFAULT:
        return _describe_empty(diff)
    if diff.kind is DiffKind.POLLS:
        return f"polls: {diff.old} → {diff.new} identical polls in a row (only the last compared)"
    path, old_value, new_value = readable(diff.path, diff.old, diff.new)
    if diff.kind is DiffKind.ADDED:
        return f"{path}: added {show(new_value)}"
    if diff.kind is DiffKind.REMOVED:
        return f"{path}: removed {show(old_value)}"
    suffix = f" ({diff.kind.value})" if diff.kind in (DiffKind.FRAMING, DiffKind.TIMING) else ""
    old, new = excerpts(old_value, new_value)
    return f"{path}: {old.text} → {new.text}{suffix}"


def _describe_empty(diff: Difference) -> str:
    if not isinstance(diff.old, dict) or not isinstance(diff.new, dict):  # one ungrouped field
        side = "A" if diff.new is ABSENT else "B"
        value = diff.old if diff.new is ABSENT else diff.new
        return f"{diff.path}: empty default {show(value)} sent only by {side}"
    parts = [
        f"only {side} sends {_counted(names)}"
        for side, names in (("A", diff.old), ("B", diff.new))
        if names
    ]
    return "empty defaults (proto-JSON reads them as absent): " + "; ".join(parts)


def _counted(names: Mapping[str, int]) -> str:
    return ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in names.items())


MARKS: Mapping[DiffKind, str] = {
    DiffKind.CHANGED: "~", DiffKind.ADDED: "+", DiffKind.REMOVED: "-", DiffKind.FRAMING: "~",
    DiffKind.TIMING: "~", DiffKind.KEY_ORDER: "~", DiffKind.EMPTY_DEFAULT: "·", DiffKind.POLLS: "·",
}  # fmt: skip


def listed(diff: CaptureDiff) -> list[ExchangeDiff]:
    """The pairs a report lists: all but the same ones without notes."""
    return [e for e in diff.exchanges if e.kind is not PairKind.SAME or e.differences]


Row = tuple[str, str, Excerpt, Excerpt]  # what, path, A value, B value


def rows(pair: ExchangeDiff) -> list[Row]:
    """(what, path, A value, B value) rows for one listed pair (markdown and HTML)."""
    if pair.kind in (PairKind.INSERTED, PairKind.REMOVED):
        return [(pair.kind.value, "", NOTHING, NOTHING)]
    out = [("rename", r.text, Excerpt("", r.old, ""), Excerpt("", r.new, "")) for r in pair.renames]
    for d in pair.differences:
        if d.kind in NOTES:
            out.append((d.kind.value, describe(d), NOTHING, NOTHING))
        else:
            path, old_value, new_value = readable(d.path, d.old, d.new)
            old, new = excerpts(old_value, new_value)
            out.append((d.kind.value, path, old, new))
    return out


def side_label(pair: ExchangeDiff, side: str) -> str:
    """`A#3` or `B#4`: the pair's exchange on `side` ("A" or "B"), "" when it has none there."""
    number = pair.a if side == "A" else pair.b
    return f"{side}#{number}" if number is not None else ""


@dataclass(frozen=True, slots=True)
class FileRow:
    name: str
    outcome: str  # "same", "differ", "only in A", "only in B"
    summary: str = ""


FILE_OUTCOMES = ("same", "differ", "only in A", "only in B")


def file_rows(diffs: Sequence[CaptureDiff], unpaired: Unpaired) -> list[FileRow]:
    """The files of a folder diff, named relative to their folders where that can be told."""
    names = _relative([d.a_name for d in diffs])
    out = [
        FileRow(name, "same" if d.same else "differ", d.summary())
        for name, d in zip(names, diffs, strict=True)
    ]
    out += [FileRow(name, f"only in {side}") for side, name in unpaired]
    return out


def file_counts(rows: Sequence[FileRow]) -> dict[str, int]:
    return {outcome: sum(1 for r in rows if r.outcome == outcome) for outcome in FILE_OUTCOMES}


def is_folder_report(diffs: Sequence[CaptureDiff], unpaired: Unpaired) -> bool:
    """More than one file pair (or any unpaired file): the report ends with a files table."""
    return len(diffs) + len(unpaired) > 1


def _relative(names: list[str]) -> list[str]:
    """Names with their common leading folder left out."""
    if len(names) < 2:
        return names
    split = [n.split("/") for n in names]
    common = 0
    while all(len(p) > common + 1 and p[common] == split[0][common] for p in split):
        common += 1
    return ["/".join(p[common:]) for p in split]
