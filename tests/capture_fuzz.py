"""A seeded mutation fuzzer for capture files, shared by the test and `scripts/fuzz-captures`.

Each mutant is a real capture (from `captures/` and `tests/data/`) with one to three damages:
truncation, a flipped byte, a deleted, duplicated or swapped line, inserted garbage, CRLF line
endings, bytes that are not UTF-8, lone surrogates written as JSON escapes, a huge line.  The
contract (docs/capture-format.md, "Errors"):
- every mutant either parses or raises `CaptureParseError` naming `file:line`;
- whatever parses survives the readers: `show` (its table and its JSON, encoded as they would
  be printed), building the replay service and answering the capture's own requests from it,
  and `diff` against the original.
`check(mutant)` returns None when the contract holds, else what broke.
"""

from __future__ import annotations

import random
import re
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from recorder.capture import Capture, CaptureParseError
from recorder.capture._parse import parse_bytes

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT / "captures", ROOT / "tests" / "data")
_STRING = re.compile(rb'"[^"\\\n]{1,40}"')
_NUMBER = re.compile(rb"[0-9]+")


@dataclass(frozen=True, slots=True)
class Mutant:
    source: Path
    steps: tuple[str, ...]  # what was done, to reproduce it
    data: bytes


def corpus() -> list[tuple[Path, bytes]]:
    """Every capture the fuzzer starts from, smallest first (they are the fastest to check)."""
    paths = sorted(
        (p for root in SOURCES for p in root.rglob("*.http")),
        key=lambda p: (p.stat().st_size, str(p)),
    )
    return [(path, path.read_bytes()) for path in paths]


# -- mutations: each takes the bytes and a random source, and returns new bytes -------------


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def _flip(data: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(len(data))
    return data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1 :]


def _delete_line(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    del lines[rng.randrange(len(lines))]
    return b"\n".join(lines)


def _duplicate_line(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    at = rng.randrange(len(lines))
    lines.insert(at, lines[at])
    return b"\n".join(lines)


def _swap_lines(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[a], lines[b] = lines[b], lines[a]
    return b"\n".join(lines)


def _garbage(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    junk = rng.choice(
        [
            bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40))),
            b"### 999 SendMessage JSONRPC 200",
            b"HTTP/1.1 200 OK",
            b"# note:",
            b'# exact: target "\\udcff"',
            b"# wire-header: request 0 A: b",
            b": +1.000000s quoted",
            b"data: {",
            b"# message +0.1s - json compact",
        ]
    )
    lines.insert(rng.randrange(len(lines) + 1), junk)
    return b"\n".join(lines)


def _crlf(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    for _ in range(rng.randrange(1, 4)):
        at = rng.randrange(len(lines))
        lines[at] += b"\r"
    return b"\n".join(lines)


def _not_utf8(data: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(len(data) + 1)
    bad = rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"])
    return data[:at] + bad + data[at:]


def _surrogate(data: bytes, rng: random.Random) -> bytes:
    """A lone surrogate as a JSON escape inside a string: valid JSON, a lone code point."""
    found = list(_STRING.finditer(data))
    if not found:
        return _not_utf8(data, rng)
    match = rng.choice(found)
    escape = rng.choice([b"\\ud800", b"\\udfff", b"\\udcff", b"\\ud83d"])
    inside = rng.randrange(match.start() + 1, match.end())
    return data[:inside] + escape + data[inside:]


def _huge_line(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    big = rng.choice(
        [
            b"A" * 1_000_000,
            b"data: " + b"[" * 50_000 + b"]" * 50_000,
            b'  "text": "' + b"x" * 500_000 + b'",',
        ]
    )
    lines.insert(rng.randrange(len(lines) + 1), big)
    return b"\n".join(lines)


def _number(data: bytes, rng: random.Random) -> bytes:
    found = list(_NUMBER.finditer(data))
    if not found:
        return _flip(data, rng)
    match = rng.choice(found)
    new = rng.choice(
        [b"0", b"-1", b"99999999999999999999", b"007", str(rng.randrange(1000)).encode()]
    )
    return data[: match.start()] + new + data[match.end() :]


MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "truncate": _truncate,
    "flip": _flip,
    "delete-line": _delete_line,
    "duplicate-line": _duplicate_line,
    "swap-lines": _swap_lines,
    "garbage": _garbage,
    "crlf": _crlf,
    "not-utf8": _not_utf8,
    "surrogate": _surrogate,
    "huge-line": _huge_line,
    "number": _number,
}
# Cheap mutations are drawn more often than the huge line, which costs a megabyte to check.
WEIGHTS = {name: (1 if name == "huge-line" else 6) for name in MUTATIONS}


def mutants(count: int, seed: int) -> Iterator[Mutant]:
    """`count` mutants, the same ones for the same seed."""
    rng = random.Random(seed)
    sources = corpus()
    names, weights = list(WEIGHTS), list(WEIGHTS.values())
    for _ in range(count):
        path, data = sources[min(int(rng.expovariate(1 / 25)), len(sources) - 1)]
        steps = tuple(rng.choices(names, weights, k=rng.choice([1, 1, 1, 2, 3])))
        for step in steps:
            if data:
                data = MUTATIONS[step](data, rng)
        yield Mutant(path, steps, data)


# -- the contract --------------------------------------------------------------------------


def check(mutant: Mutant) -> str | None:
    """None when the contract holds for this mutant, else a description of what broke."""
    name = str(mutant.source)
    try:
        capture = parse_bytes(mutant.data, name)
    except CaptureParseError as error:
        if not str(error).startswith(f"{name}:{error.line}: ") or error.line < 1:
            return f"error without file:line: {error}"
        return None
    except Exception:  # any other exception is what the fuzzer looks for
        return "parse crashed:\n" + traceback.format_exc()
    for reader in (_show, _replay, _diff):
        try:
            reader(capture, mutant.source)
        except Exception:
            return f"{reader.__name__.strip('_')} crashed:\n" + traceback.format_exc()
    return None


def _show(capture: Capture, source: Path) -> None:
    from recorder.show import capture_rows, json_lines, render_one, render_table

    rows = capture_rows(capture)
    # What the command prints must be printable: encoded as stdout would encode it.
    render_table(rows).encode("utf-8")
    json_lines(rows).encode("utf-8")
    for exchange in capture.exchanges[:3]:
        render_one(capture, exchange.number).encode("utf-8")


def _replay(capture: Capture, source: Path) -> None:
    from recorder.replay import ReplayService

    service = ReplayService([capture])
    # ...and answer its own requests from it: the answer's bytes are built here too.
    for exchange in capture.exchanges[:20]:
        service.handle(exchange.request)


_ORIGINALS: dict[Path, Capture] = {}


def _diff(capture: Capture, source: Path) -> None:
    from recorder.capture import read_capture
    from recorder.diff import diff_captures, render_text

    original = _ORIGINALS.get(source)
    if original is None:
        original = _ORIGINALS[source] = read_capture(source)
    result = diff_captures(original, capture, a_name="original", b_name="mutant")
    render_text([result]).encode("utf-8")
