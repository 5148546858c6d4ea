"""Request and response heads: the sendable lines a capture shows, and what it keeps aside.

A capture's request can be sent again as written, so two kinds of head values are kept aside as
metadata, keeping the file lossless (docs/capture-format.md, "Heads"): framing headers that no
longer describe the body shown (`# wire-header:`), and values a line cannot hold, shown as a
sendable stand-in (`# exact:`).  Pure: `set_aside_*` go from values to lines plus an `Aside`,
`restore_headers` back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from recorder._errors import FormError
from recorder.capture._bodies import quoted

Header = tuple[str, str]

# Characters no head line may hold as they are.
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f\x85\u2028\u2029\ud800-\udfff]")
# A target is one word: no white space (Unicode's included), no controls at all.
_UNSAFE_IN_TARGET = re.compile("[\\s\x00-\x20\x7f-\x9f\u2028\u2029\ud800-\udfff]")
ALWAYS_ASIDE = frozenset({"transfer-encoding"})
ASIDE_WITH_BODY = frozenset({"content-length", "content-encoding"})

KEY_WIRE_HEADER = "wire-header"
KEY_EXACT = "exact"
TARGET, REASON, TRAILER = "target", "reason", "trailer"
HEADER_OF = {"request": "request-header", "response": "response-header"}
_WIRE_HEADER = re.compile(r"(request|response) ([0-9]+) ([^:\s]+):(?: (.*))?", re.DOTALL)
_EXACT = re.compile(
    r"(target|reason|request-header|response-header|trailer)(?: ([0-9]+))? (\".*)", re.DOTALL
)
_INDEXED = frozenset({*HEADER_OF.values(), TRAILER})


@dataclass(slots=True)
class Aside:
    """One exchange's framing headers and exact values, as its metadata holds them."""

    wire_headers: list[tuple[str, int, str, str]] = field(default_factory=list)
    exact: dict[tuple[str, int | None], str] = field(default_factory=dict)

    def pairs(self) -> list[tuple[str, str]]:
        """The metadata `(key, value)` pairs, in file order."""
        found = [
            (KEY_WIRE_HEADER, f"{side} {index} {name}:" + (f" {value}" if value else ""))
            for side, index, name, value in self.wire_headers
        ]
        for (where, index), value in sorted(self.exact.items(), key=_exact_order):
            place = where if index is None else f"{where} {index}"
            found.append((KEY_EXACT, f"{place} {json.dumps(value, ensure_ascii=True)}"))
        return found

    def add_wire_header(self, text: str) -> None:
        """Add one `wire-header` metadata value; FormError when it is malformed."""
        match = _WIRE_HEADER.fullmatch(text)
        if match is None:
            raise FormError(
                f"bad wire-header {quoted(text)}: expected '<side> <index> Name: value'"
            )
        side, index, name, value = match.groups()
        self.wire_headers.append((side, int(index), name, value or ""))

    def add_exact(self, text: str) -> None:
        """Add one `exact` metadata value; FormError when it is malformed or repeated."""
        where, index, value = _exact(text)
        if (where, index) in self.exact:
            raise FormError(f"exact value for {where} {'' if index is None else index} twice")
        self.exact[where, index] = value

    def value(self, where: str, shown: str) -> str:
        return self.exact.get((where, None), shown)

    def headers(self, side: str, shown: Sequence[Header]) -> tuple[Header, ...]:
        """A side's full header list: its shown lines, exact values, framing headers."""
        aside = [(index, name, value) for s, index, name, value in self.wire_headers if s == side]
        return restore_headers(shown, aside, self._exact_at(HEADER_OF[side]))

    def trailers(self, shown: Sequence[Header]) -> tuple[Header, ...]:
        return restore_headers(shown, (), self._exact_at(TRAILER))

    def _exact_at(self, where: str) -> dict[int, str]:
        if not self.exact:  # the usual case: a capture reads one of these per header list
            return {}
        return {
            index: value
            for (w, index), value in self.exact.items()
            if w == where and index is not None
        }


_PLACES = (TARGET, "request-header", REASON, "response-header", TRAILER)


def _exact_order(item: tuple[tuple[str, int | None], str]) -> tuple[int, int]:
    (where, index), _ = item
    return _PLACES.index(where), -1 if index is None else index


def _exact(text: str) -> tuple[str, int | None, str]:
    match = _EXACT.fullmatch(text)
    if match is None:
        raise FormError(f"bad exact value {quoted(text)}: expected '<where> [<index>] \"...\"'")
    where, index, literal = match.groups()
    if (index is None) == (where in _INDEXED):
        raise FormError(
            f"exact value for {quoted(where)} {'needs' if index is None else 'takes no'} index"
        )
    try:
        value: str = json.loads(literal)  # `_EXACT` takes one that starts with `"`: a string
    except ValueError as exc:
        raise FormError(f"bad exact value {quoted(literal)}: {exc}") from exc
    return where, None if index is None else int(index), value


def set_aside_value(aside: Aside, where: str, value: str, index: int | None = None) -> str:
    """The stand-in a line shows for `value`, noting the value in `aside` when it differs."""
    shown = _UNSAFE.sub("?", value)
    if shown != value:
        aside.exact[where, index] = value
    return shown


def set_aside_target(aside: Aside, target: str) -> str:
    """A target as its request line shows it: percent-escaped where it cannot be a word."""
    shown = _UNSAFE_IN_TARGET.sub(_percent, target) if target else "/"
    if shown != target:
        aside.exact[TARGET, None] = target
    return shown


def _percent(match: re.Match[str]) -> str:
    char = match.group(0)
    # A surrogate from surrogateescape stands for one byte that was not UTF-8: send the byte.
    errors = "surrogateescape" if 0xDC80 <= ord(char) <= 0xDCFF else "replace"
    return "".join(f"%{byte:02X}" for byte in char.encode("utf-8", errors))


def set_aside_headers(
    aside: Aside, side: str, headers: Sequence[Header], *, has_body: bool
) -> list[Header]:
    """The headers a head shows; framing headers and exact values go to `aside`."""
    shown: list[Header] = []
    # Values a line cannot hold are rare: one search over them all says whether to look.
    unsafe = _UNSAFE.search("".join(value for _, value in headers)) is not None
    for index, (name, value) in enumerate(headers):
        lower = name.lower()
        if lower in ALWAYS_ASIDE or (has_body and lower in ASIDE_WITH_BODY):
            aside.wire_headers.append((side, index, name, value))
            continue
        if unsafe:
            value = set_aside_value(aside, HEADER_OF[side], value, len(shown))
        shown.append((name, value))
    return shown


def restore_headers(
    shown: Sequence[Header], aside: Sequence[tuple[int, str, str]], exact: dict[int, str]
) -> tuple[Header, ...]:
    """The full list from shown lines, exact values and set-aside headers; FormError if unfit."""
    if not aside and not exact:
        return tuple(shown)
    headers = list(shown)
    for index, value in exact.items():
        if index >= len(headers):
            raise FormError(f"exact value for header {index}, but {len(headers)} are shown")
        headers[index] = (headers[index][0], value)
    for index, name, value in sorted(aside):
        if index > len(headers):
            raise FormError(f"wire-header index {index} is past the end of the headers")
        headers.insert(index, (name, value))
    return tuple(headers)
