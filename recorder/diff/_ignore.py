"""`--ignore` patterns: the path syntax that names a difference, and what a pattern drops.

A pattern is one of `KEYWORDS` (an unknown one is an error that lists them), then names and
`[N]` indexes; `*` matches any one name, `[*]` any index, `$.PATH` inside every JSON document.
A compared pair of events or messages is `events[3~4]` when its indexes differ, which `[N]`
matches when either is N; `KEYED_LISTS` members are named (`skills[id=echo]`).  A pattern drops
its path and all under it, on both sides unless it starts with `request.` or `response.`.
`--compare shape:PATH` drops less: only one non-empty text changed for another inside a JSON
document, outside `recorder.protocol.SHAPE_FIELDS`, so sampled text counts only by being there.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from recorder.diff._renames import Rule
from recorder.diff._result import Difference, DiffKind, RenameSummary
from recorder.protocol import SHAPE_FIELDS

_SEGMENT = re.compile(r'\.?([^.\[\]]+)|\[(\d+~\d+|\d+|\*|"[^"]*"|[\w-]+=[^\]]*)\]')
_PAIRED = re.compile(r"\[(\d+)~(\d+)\]")


def pair_index(a: int, b: int) -> str:
    """`[3]`, or `[3~4]` when A's 3rd event is paired with B's 4th."""
    return f"[{a}]" if a == b else f"[{a}~{b}]"


def side_path(path: str, side: str) -> str:
    """`path` in one side's own indexes: `events[3~4].data` is `events[3].data` in A."""
    group = 1 if side == "A" else 2
    return _PAIRED.sub(lambda m: f"[{m.group(group)}]", path)


def segments(path: str) -> list[str]:
    """Split `a.b[3].c` into ["a", "b", "[3]", "c"]; header names are case-insensitive."""
    out = []
    for name, index in _SEGMENT.findall(path):
        seg = f"[{index}]" if index else name
        out.append(seg.lower() if seg.startswith(("header:", "trailer:")) else seg)
    return out


@dataclass(frozen=True, slots=True)
class Keyword:
    """A pattern's first segment: what it names, and what may follow it (`children` None: any
    path; empty: nothing; else the names allowed next, after an index when `indexed`)."""

    shown: str
    meaning: str
    children: frozenset[str] | None = frozenset()
    indexed: bool = False


_EVENT_FIELDS = frozenset({"data", "event", "id", "comments", "offset_us"})
KEYWORDS: dict[str, Keyword] = {
    "status": Keyword("status", "the response status code"),
    "method": Keyword("request.method", "the request method"),
    "target": Keyword("request.target", "the request path and query"),
    "binding": Keyword("binding", "the binding (JSONRPC, HTTP+JSON, GRPC)"),
    "version": Keyword("version", "the protocol version"),
    "error": Keyword("error", "the exchange's transport error"),
    "response": Keyword("response", "a response on one side only"),
    "header:": Keyword("header:NAME", "a header (request.header:NAME, response.header:NAME)"),
    "trailer:": Keyword("trailer:NAME", "a gRPC trailer"),
    "body": Keyword("body[.PATH]", "the JSON body (request.body.PATH)", None),
    "events": Keyword("events[N][.data.PATH]", "SSE events", _EVENT_FIELDS, indexed=True),
    "messages": Keyword("messages[N][.PATH]", "gRPC messages", None, indexed=True),
    "framing": Keyword(
        "framing[.newline|.comments]", "SSE framing", frozenset({"newline", "comments"})
    ),
    "timing": Keyword(
        "timing[.duration_us]", "durations (with timing)", frozenset({"duration_us"})
    ),
    "polls": Keyword("polls", "a different number of identical polls (a note)"),
    "empty-defaults": Keyword("empty-defaults", "empty defaults one side sends (a note)"),
    "key-order": Keyword("key-order", "object key order (with strict_order)"),
    "rename:": Keyword("rename:RULE", "a v0.3 -> v1.0 rename: " + ", ".join(Rule) + ", *"),
    "$": Keyword("$.PATH", "PATH in every JSON document", None),
}


# Keywords that name a kind of difference wherever it is, not a path.
KIND_KEYWORDS: dict[tuple[str, ...], DiffKind] = {
    ("key-order",): DiffKind.KEY_ORDER,
    ("empty-defaults",): DiffKind.EMPTY_DEFAULT,
    ("polls",): DiffKind.POLLS,
}


def keyword_help() -> str:
    """The valid pattern starts, one per line, for an error message or `--help`."""
    width = max(len(k.shown) for k in KEYWORDS.values())
    indent = " " * (width + 4)
    return "\n".join(
        textwrap.fill(
            k.meaning,
            96,
            initial_indent=f"  {k.shown.ljust(width)}  ",
            subsequent_indent=indent,
            break_on_hyphens=False,
        )
        for k in KEYWORDS.values()
    )


def _unknown(text: str, why: str) -> ValueError:
    return ValueError(
        f"unknown ignore pattern {text!r}: {why}; expected a path starting "
        f"with one of:\n{keyword_help()}"
    )


def _check(text: str, parts: Sequence[str]) -> None:
    """Raise ValueError unless `parts` start with a keyword and follow its shape."""
    root = parts[0]
    prefix = next((p for p in ("header:", "trailer:", "rename:") if root.startswith(p)), None)
    name = prefix or root
    keyword = KEYWORDS.get(name)
    if keyword is None:
        raise _unknown(text, f"{root!r} is not a keyword")
    if prefix == "rename:" and root[len(prefix) :] not in {*Rule, "*"}:
        raise _unknown(text, f"no rename rule {root[len(prefix) :]!r}")
    if prefix is not None and root == prefix:
        raise _unknown(text, f"{root!r} needs a name after the colon")
    rest = list(parts[1:])
    if keyword.indexed and rest and rest[0].startswith("["):
        rest = rest[1:]
    if keyword.children is not None and not keyword.children and rest:
        raise _unknown(text, f"{root!r} has nothing under it")
    if keyword.children is not None and rest and rest[0] not in keyword.children:
        raise _unknown(text, f"{root!r} has no {rest[0]!r}")


@dataclass(frozen=True, slots=True)
class IgnorePattern:
    """A parsed `--ignore` pattern (syntax in the module docstring)."""

    text: str
    segments: tuple[str, ...]
    side: str | None  # "request", "response" or None for both
    json_only: bool  # a `$.` pattern
    shape: bool = False  # `--compare shape:PATH`: drops only sampled text (`sampled`)

    @classmethod
    def parse(cls, text: str) -> IgnorePattern:
        """Parse a pattern; raise ValueError with a hint when it cannot be one."""
        raw = text.strip()
        if not raw or raw.count("[") != raw.count("]") or ".." in raw:
            raise ValueError(
                f"bad ignore pattern {text!r}: expected e.g. body.result.metadata, "
                "header:etag, $.result.task.metadata, events[*].data"
            )
        json_only = raw == "$" or raw.startswith(("$.", "$["))
        if json_only:
            raw = raw[1:]
        parts = segments(raw)
        side = None
        if not json_only and len(parts) > 1 and parts[0] in ("request", "response"):
            side, parts = parts[0], parts[1:]
        if not json_only:
            _check(text, parts)
        return cls(text, tuple(parts), side, json_only)

    def matches(self, diff: Difference) -> bool:
        if self.shape and not sampled(diff):
            return False
        kind = KIND_KEYWORDS.get(self.segments) if self.side is None else None
        if kind is not None:
            return diff.kind is kind
        if self.json_only:
            return diff.json_path is not None and _prefix(self.segments, segments(diff.json_path))
        parts = segments(diff.path)
        on_request = bool(parts) and parts[0] == "request"
        if on_request:
            parts = parts[1:]
        if (self.side == "request" and not on_request) or (self.side == "response" and on_request):
            return False
        return _prefix(self.segments, parts)

    def matches_rename(self, summary: RenameSummary) -> bool:
        return self.segments in ((f"rename:{summary.rule}",), ("rename:*",))


def _prefix(pattern: Sequence[str], segments: Sequence[str]) -> bool:
    if len(pattern) > len(segments):
        return False
    return all(_segment_match(p, s) for p, s in zip(pattern, segments, strict=False))


def _segment_match(pattern: str, segment: str) -> bool:
    if pattern == segment:
        return True
    if pattern == "[*]":
        return segment.startswith("[")
    paired = _PAIRED.fullmatch(segment)
    if paired and pattern.startswith("["):  # `[3]` names A's 3rd and B's 3rd event
        return pattern[1:-1] in paired.groups()
    return pattern == "*" and not segment.startswith("[")


def sampled(diff: Difference) -> bool:
    """Whether `diff` is sampled text, which `shape:` drops (see the module docstring)."""
    old, new = diff.old, diff.new
    if diff.kind is not DiffKind.CHANGED or diff.json_path is None:
        return False
    if not (isinstance(old, str) and isinstance(new, str) and old and new):
        return False
    parts = segments(diff.json_path)
    return not parts or parts[-1] not in SHAPE_FIELDS


COMPARE_MODES = ("shape",)


def parse_compare(texts: Iterable[str]) -> tuple[IgnorePattern, ...]:
    """Parse `--compare MODE:PATH` settings into patterns; ValueError for a bad one."""
    out = []
    for text in texts:
        mode, sep, path = text.partition(":")
        if mode not in COMPARE_MODES or not sep or not path.strip():
            raise ValueError(
                f"bad --compare {text!r}: expected shape:PATH, e.g. shape:$.result.artifacts "
                "or shape:events[*].data (PATH as for --ignore)"
            )
        pattern = IgnorePattern.parse(path)
        out.append(IgnorePattern(text, pattern.segments, pattern.side, pattern.json_only, True))
    return tuple(out)


def parse_ignores(patterns: Iterable[str]) -> tuple[IgnorePattern, ...]:
    """Parse `--ignore` patterns; raise ValueError (listing the keywords) for a bad one."""
    return tuple(IgnorePattern.parse(p) for p in patterns)


def kept(diffs: Iterable[Difference], ignores: Sequence[IgnorePattern]) -> tuple[Difference, ...]:
    return tuple(d for d in diffs if not any(p.matches(d) for p in ignores))
