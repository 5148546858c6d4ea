"""The same SSE events in other framings: the ways real agents write a stream (pure).

The event-stream grammar allows several line endings, multi-line `data`, comments, `id` fields
and any split into writes, and real SDKs differ on each (`reference/sdk-variants.md`).  Every
variant keeps each event's data a JSON text of the same value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from recorder.protocol._sse import SseFramer, render_events

Block = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Framing:
    what: str
    newline: str | None = None
    blocks: Callable[[int, Block], list[Block]] | None = None
    split: bool = False


def _multiline(_: int, block: Block) -> list[Block]:
    lines: list[str] = []
    for line in block:
        name, colon, value = line.partition(":")
        if name != "data" or not colon:
            lines.append(line)
            continue
        space = " " if value.startswith(" ") else ""
        lines.extend(f"data:{space}{piece}" for piece in _after_commas(value[len(space) :]))
    return [tuple(lines)]


def _ping(_: int, block: Block) -> list[Block]:
    return [(": ping",), block]


def _ids(index: int, block: Block) -> list[Block]:
    if all(line.startswith(":") for line in block):
        return [block]  # a comment block is no event
    kept = tuple(line for line in block if line.partition(":")[0] != "id")
    return [(f"id: {index}", *kept)]


FRAMINGS: Mapping[str, Framing] = {
    "lf": Framing("every line ends in LF (@a2a-js/sdk, a2a-go, a2a-java)", newline="\n"),
    "crlf": Framing("every line ends in CRLF (a2a-sdk, through sse-starlette)", newline="\r\n"),
    "cr": Framing("every line ends in a lone CR (the SSE grammar allows it)", newline="\r"),
    "multiline": Framing(
        "each event's data over several `data:` lines, cut after commas outside strings "
        "(a2a-sdk 0.3's HTTP+JSON writes pretty JSON so)",
        blocks=_multiline,
    ),
    "ping": Framing(
        "a `: ping` comment block before each event (sse-starlette's keep-alive; a2a-java's "
        "leading comment)",
        blocks=_ping,
    ),
    "id": Framing(
        "an `id: N` line before each event's data, from 0 (a2a-go, a2a-java)", blocks=_ids
    ),
    "split": Framing(
        "each event written in pieces, cut at awkward bytes: inside `data:`, between CR and "
        "LF, inside a UTF-8 character, in the middle",
        split=True,
    ),
}


def reframe(events: Sequence[bytes], variants: Sequence[str]) -> tuple[tuple[bytes, ...], ...]:
    """Each event's writes (one event's wire bytes each) under `variants`, in order."""
    framings = [FRAMINGS[name] for name in variants]
    split = any(f.split for f in framings)
    out: list[tuple[bytes, ...]] = []
    for index, data in enumerate(events):
        framer = SseFramer()
        blocks = framer.feed(data)
        rest = framer.close()
        newline = framer.newline
        if rest is not None:
            blocks.append(rest)
        for framing in framings:
            newline = framing.newline or newline
            if framing.blocks is not None:
                blocks = [b for block in blocks for b in framing.blocks(index, block)]
        wire = render_events(blocks, newline)
        out.append(awkward_pieces(wire) if split else (wire,))
    return tuple(out)


def awkward_pieces(data: bytes) -> tuple[bytes, ...]:
    """`data` cut where a reader's buffering is tested: after the first byte, in the field
    name, inside the last CRLF, inside a multi-byte UTF-8 character, and in the middle."""
    cuts = {1, 3, len(data) // 2}
    crlf = data.rfind(b"\r\n", 0, max(len(data) - 2, 0))
    cuts.add(crlf + 1 if crlf >= 0 else len(data) - 1)
    lead = next((n for n, byte in enumerate(data) if byte >= 0xC0), None)
    if lead is not None:
        cuts.add(lead + 1)
    points = sorted(c for c in cuts if 0 < c < len(data))
    return tuple(data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True))


def _after_commas(text: str) -> list[str]:
    pieces: list[str] = []
    start, quoted, escaped = 0, False, False
    for n, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = quoted
        elif char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            pieces.append(text[start : n + 1])
            start = n + 1
    pieces.append(text[start:])
    return pieces
