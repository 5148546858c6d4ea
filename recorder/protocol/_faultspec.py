"""Fault profiles: what a replay should get wrong, and where (pure).

A spec is `SELECTOR:KIND[=ARG]` (from `--fault`, a `faults.toml` or the pytest marker;
docs/guides/faults.md), where `SELECTOR` is `#N` (the capture's `### N`) or an operation name.
Errors are `FaultSpecError`s naming the spec and listing the kinds.  The grammar lives here,
below the replayer's option table.
"""

from __future__ import annotations

import errno
import re
import stat
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import NoReturn

from recorder._errors import FaultSpecError
from recorder.protocol._errors import GRPC_STATUS_CODES
from recorder.protocol._framings import FRAMINGS
from recorder.protocol._operations import OPERATION_NAMES
from recorder.protocol._statusmap import GRPC_TO_HTTP
from recorder.protocol._types import AGENT_CARD

MAX_DELAY = 3600.0  # seconds
MAX_PROFILE_BYTES = 1 << 20  # a faults.toml
SELECTABLE = (*OPERATION_NAMES, AGENT_CARD)


class FaultTarget(StrEnum):
    """What answers a kind applies to."""

    ANY = "any answer"
    STREAM = "a stream (SSE or gRPC server streaming)"
    SSE = "an SSE stream"
    HTTP = "an HTTP answer (JSON-RPC or HTTP+JSON)"
    JSONRPC = "a JSON-RPC answer"


@dataclass(frozen=True, slots=True)
class FaultStatus:
    """`status=`: an HTTP status or a gRPC code name, and headers (gRPC: trailing metadata)."""

    http: int | None
    grpc: str | None
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def http_status(self) -> int:
        return self.http if self.http is not None else GRPC_TO_HTTP.get(self.grpc or "", 500)


Value = int | float | str | tuple[str, ...] | FaultStatus | None


@dataclass(frozen=True, slots=True)
class Kind:
    usage: str  # `cut-after=N`
    what: str
    parse: Callable[[str | None], Value]
    target: FaultTarget
    once: bool  # a retry of a request it hit is answered as recorded
    carried: bool  # the request is carried out: the client had (some of) its answer


@dataclass(frozen=True, slots=True)
class FaultSpec:
    """One parsed spec; `text` as the user wrote it."""

    text: str
    kind: str
    value: Value = None
    exchange: int | None = None  # `#N`
    operation: str | None = None

    @property
    def row(self) -> Kind:
        return FAULT_KINDS[self.kind]

    @property
    def target(self) -> FaultTarget:
        if self.kind == "envelope" and self.value != "truncated":
            return FaultTarget.JSONRPC
        return self.row.target

    @property
    def carried(self) -> bool:
        if self.kind == "cut-after":
            return self.value != 0  # with no event sent the client has nothing
        return self.row.carried

    def selects(self, exchange: int | None, operation: str | None) -> bool:
        if self.exchange is not None:
            return exchange == self.exchange
        return operation == self.operation


def _number(text: str) -> bool:
    """ASCII digits only: `str.isdigit` takes `２` and `²` too."""
    return text.isascii() and text.isdigit()


def _count(arg: str | None) -> Value:
    if arg is None or not _number(arg):
        raise ValueError("needs a number of events, as in cut-after=2")
    return int(arg)


_SECONDS = re.compile(r"^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ms|s)?$")


def _seconds(arg: str | None) -> Value:
    found = _SECONDS.match(arg or "")
    if found is None:
        raise ValueError("needs seconds, as in delay=1.5, delay=2s or delay=500ms")
    value = float(found[1]) / (1000 if found[2] == "ms" else 1)
    if value > MAX_DELAY:
        raise ValueError(f"at most {MAX_DELAY:g} seconds")
    return value


def _nothing(arg: str | None) -> Value:
    if arg is not None:
        raise ValueError("takes no argument")
    return None


def _status(arg: str | None) -> Value:
    code, *pairs = (arg or "").split(",")
    code = code.strip()
    headers = tuple(_header(pair) for pair in pairs)
    if _number(code) and 400 <= int(code) <= 599:
        status = FaultStatus(int(code), None, headers)
    elif code.upper() in GRPC_STATUS_CODES and code.upper() != "OK":
        status = FaultStatus(None, code.upper(), headers)
    else:
        raise ValueError(
            "needs an HTTP status from 400 to 599 or a gRPC code name (UNAVAILABLE, "
            "RESOURCE_EXHAUSTED, ...), then any headers as NAME=VALUE, as in "
            "status=429,retry-after=5"
        )
    return status


def _header(pair: str) -> tuple[str, str]:
    name, equals, value = pair.partition("=")
    name = name.strip().lower()
    if not equals or not re.fullmatch(r"[a-z0-9!#$%&'*+.^_`|~-]+", name):
        raise ValueError(f"{pair!r} is no header NAME=VALUE")
    return name, value.strip()


def _framings(arg: str | None) -> Value:
    names = tuple((arg or "").split("+"))
    unknown = [name for name in names if name not in FRAMINGS]
    if unknown:
        raise ValueError(
            f"has no variant {unknown[0]!r}; the variants are {', '.join(FRAMINGS)} "
            "(several joined with +, as in framing=crlf+ping)"
        )
    return names


ENVELOPES = {
    "no-jsonrpc": "the `jsonrpc` member left out",
    "wrong-id": "the JSON-RPC `id` changed to one the client did not send",
    "truncated": "the JSON body (a stream: its first event's data) cut in half",
}


def _envelope(arg: str | None) -> Value:
    if arg not in ENVELOPES:
        raise ValueError(f"needs one of {', '.join(ENVELOPES)}")
    return arg


FAULT_KINDS: Mapping[str, Kind] = {
    "cut-after": Kind(
        "cut-after=N",
        "a stream cut after N events: the connection drops (gRPC: the call ends UNAVAILABLE); "
        "a SubscribeToTask then gets the task as it stood at the cut and the rest",
        _count,
        FaultTarget.STREAM,
        once=True,
        carried=True,
    ),
    "delay": Kind(
        "delay=SECONDS", "a pause before the first byte", _seconds, FaultTarget.ANY, False, True
    ),
    "delay-events": Kind(
        "delay-events=SECONDS",
        "a pause between events, besides the recorded pacing",
        _seconds,
        FaultTarget.STREAM,
        once=False,
        carried=True,
    ),
    "status": Kind(
        "status=CODE[,NAME=VALUE...]",
        "an HTTP status (429, 503 come with Retry-After: 1 unless headers are given) or a "
        "gRPC code, instead of the answer; an identical request next is answered as recorded",
        _status,
        FaultTarget.ANY,
        once=True,
        carried=False,
    ),
    "reset": Kind(
        "reset",
        "the connection reset before the answer (gRPC: the call ends UNAVAILABLE)",
        _nothing,
        FaultTarget.ANY,
        once=True,
        carried=False,
    ),
    "framing": Kind(
        "framing=VARIANT[+VARIANT...]",
        "the same events in another framing: " + ", ".join(FRAMINGS),
        _framings,
        FaultTarget.SSE,
        once=False,
        carried=True,
    ),
    "envelope": Kind(
        "envelope=no-jsonrpc|wrong-id|truncated",
        "a malformed answer the client should refuse",
        _envelope,
        FaultTarget.HTTP,
        once=True,
        carried=False,
    ),
}


def fault_kinds_text() -> str:
    return "the kinds are " + ", ".join(kind.usage for kind in FAULT_KINDS.values())


def parse_fault(text: str) -> FaultSpec:
    selector, colon, rest = text.strip().partition(":")
    name, _, arg = rest.partition("=")
    name = name.strip()
    if not colon or not selector or not name:
        _fail(text, "expected SELECTOR:KIND[=ARG], as in SendStreamingMessage:cut-after=2")
    exchange, operation = _selector(text, selector.strip())
    if name not in FAULT_KINDS:
        _fail(text, f"no fault kind {name!r}")
    try:
        value = FAULT_KINDS[name].parse(arg.strip() if "=" in rest else None)
    except ValueError as exc:
        _fail(text, f"{name} {exc}")
    return FaultSpec(text.strip(), name, value, exchange, operation)


def parse_faults(texts: Iterable[str]) -> tuple[FaultSpec, ...]:
    return tuple(parse_fault(text) for text in texts)


def read_faults(path: Path) -> tuple[FaultSpec, ...]:
    """The specs of a `faults.toml`: a regular file of at most `MAX_PROFILE_BYTES` (a FIFO
    would block, `/dev/zero` never ends)."""
    try:
        document = tomllib.loads(_profile_text(path))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise FaultSpecError(f"{path}: cannot read fault profile: {exc}") from None
    faults = document.get("faults")
    other = sorted(set(document) - {"faults"})
    if other or not isinstance(faults, list) or not all(isinstance(f, str) for f in faults):
        raise FaultSpecError(
            f'{path}: a fault profile holds `faults = ["SELECTOR:KIND[=ARG]", ...]` and '
            f"nothing else{f' (not {other[0]!r})' if other else ''}; {fault_kinds_text()}"
        )
    try:
        return parse_faults(faults)
    except FaultSpecError as exc:
        raise FaultSpecError(f"{path}: {exc}") from None


def _profile_text(path: Path) -> str:
    if not stat.S_ISREG(path.stat().st_mode):
        raise OSError(errno.EINVAL, "not a regular file")
    with path.open("rb") as handle:
        data = handle.read(MAX_PROFILE_BYTES + 1)
    if len(data) > MAX_PROFILE_BYTES:
        raise OSError(errno.EFBIG, f"larger than {MAX_PROFILE_BYTES:,} bytes")
    return data.decode("utf-8")


def _selector(text: str, selector: str) -> tuple[int | None, str | None]:
    if selector.startswith("#"):
        if not _number(selector[1:]) or int(selector[1:]) < 1:
            _fail(text, f"{selector!r} is no exchange number (#1, #2, ...)")
        return int(selector[1:]), None
    if selector not in SELECTABLE:
        _fail(text, f"{selector!r} is neither #N nor an operation ({', '.join(SELECTABLE)})")
    return None, selector


def _fail(text: str, problem: str) -> NoReturn:
    raise FaultSpecError(f"fault {text.strip()!r}: {problem}; {fault_kinds_text()}")
