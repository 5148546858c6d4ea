"""Which replayed agent answers a request in a fleet (pure).

Captures are one *agent* when they share an authority (`host:port`): the upstreams their
headers name or their cards list, so an agent's HTTP and gRPC captures share one session
state.  A push delivery recorded in the webhook host's capture is *adopted* by the capture
whose requests registered that webhook (`AgentPlan.adopted`).  Loopback names are folded
together and a missing port is the scheme's default; the fleet does not terminate TLS.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Literal

from hpack import Decoder, HPACKError
from hyperframe.exceptions import HyperframeError
from hyperframe.frame import ContinuationFrame, Frame, HeadersFrame

from recorder._background import host_port, url_key
from recorder.capture import Capture, Exchange
from recorder.protocol import (
    PUSH_DELIVERY,
    WEBHOOK_PATHS,
    Binding,
    interfaces_from_card,
    parse_json,
    url_origin,
    value_at,
)
from recorder.script import delivery_url, recorded_cards

DEFAULT_PORTS = {"http": 80, "https": 443, "grpc": 80, "grpcs": 443}
H2_PREFACE = b"PRI * HTTP/2.0\r\n"
H2_CLIENT_PREFACE = H2_PREFACE + b"\r\nSM\r\n\r\n"
FRAME_HEADER_SIZE = 9
CONNECT = b"CONNECT "
TLS_HANDSHAKE = 0x16  # the first byte of a TLS record carrying a ClientHello
MAX_UNROUTED = 1000

TunnelKind = Literal["grpc", "tls", "http"]


def authority(text: str, scheme: str = "http") -> tuple[str, str] | None:
    """(scheme, `host:port`) of a URL or a bare `host:port`, loopback folded (None: no host)."""
    found = url_origin(text if "://" in text else f"{scheme}://{text}")
    if found is None:
        return None
    scheme, host, port = found
    return scheme, host_port(host, port if port is not None else DEFAULT_PORTS.get(scheme, 80))


@dataclass(frozen=True, slots=True)
class AgentPlan:
    """One agent of a fleet: its captures, and the authorities it was recorded under."""

    name: str  # the first capture's file name without `.http`
    paths: tuple[Path, ...]
    captures: tuple[Capture, ...]
    authorities: tuple[tuple[str, str], ...]  # (scheme, host:port), upstreams first
    card_name: str | None  # the `name` of the first card recorded
    adopted: tuple[str, ...] = ()  # what deliveries it makes that another capture holds

    @property
    def upstreams(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(u for c in self.captures for u in c.upstreams))

    @property
    def notes(self) -> tuple[str, ...]:
        """What to say at start: deliveries adopted, differently named cards served as one."""
        named: dict[str, str] = {}
        for path, capture in zip(self.paths, self.captures, strict=True):
            for card in recorded_cards(capture.exchanges):
                if isinstance(name := card.get("name"), str):
                    named.setdefault(name, path.name)
        if len(named) < 2:
            return self.adopted
        cards = ", ".join(f"{name!r} ({path})" for name, path in named.items())
        said = f"its captures hold the cards of {len(named)} agents, {cards}, recorded under "
        return (*self.adopted, said + "one authority: they are replayed as one agent")


def plan_agents(found: Sequence[tuple[Path, Capture]]) -> list[AgentPlan]:
    """A fleet's agents in file order, deliveries with the capture that registered the webhook."""
    adopted, notes = adopt_deliveries(found)
    kept = [i for i, (_, capture) in enumerate(adopted) if capture.exchanges]
    said = {adopted[i][0]: notes[i] for i in kept if i in notes}
    return [
        replace(plan, adopted=tuple(n for path in plan.paths for n in said.get(path, ())))
        for plan in _grouped([adopted[i] for i in kept])
    ]


def _grouped(found: Sequence[tuple[Path, Capture]]) -> list[AgentPlan]:
    owner = list(range(len(found)))

    def root(i: int) -> int:
        while owner[i] != i:
            owner[i] = owner[owner[i]]
            i = owner[i]
        return i

    first: dict[str, int] = {}
    for index, (_, capture) in enumerate(found):
        for _, where in _authorities(capture):
            other = first.setdefault(where, index)
            owner[root(index)] = root(other)
    groups: dict[int, list[int]] = {}
    for index in range(len(found)):
        groups.setdefault(root(index), []).append(index)
    return [_plan([found[i] for i in members]) for members in groups.values()]


def _plan(members: list[tuple[Path, Capture]]) -> AgentPlan:
    captures = tuple(c for _, c in members)
    found = (a for c in captures for a in _authorities(c))
    names = (card.get("name") for c in captures for card in recorded_cards(c.exchanges))
    return AgentPlan(
        name=members[0][0].name.removesuffix(".http"),
        paths=tuple(p for p, _ in members),
        captures=captures,
        authorities=tuple(dict.fromkeys(found)),
        card_name=next((n for n in names if isinstance(n, str)), None),
    )


def _authorities(capture: Capture) -> Iterator[tuple[str, str]]:
    """Where a capture was recorded: its upstreams, then the interfaces its cards list."""
    for upstream in capture.upstreams:
        if (found := authority(upstream)) is not None:
            yield found
    for card in recorded_cards(capture.exchanges):
        for interface in interfaces_from_card(card):
            if (found := authority(interface.url, "grpc")) is not None:
                yield found


# --- deliveries go with the agent that makes them -------------------------------------------

PUSH_CONFIG_OPERATIONS = frozenset(
    {"CreateTaskPushNotificationConfig", "SendMessage", "SendStreamingMessage"}
)


def adopt_deliveries(
    found: Sequence[tuple[Path, Capture]],
) -> tuple[list[tuple[Path, Capture]], dict[int, list[str]]]:
    """The captures, each delivery moved to its webhook's capture, and what each capture adopted."""
    registered: dict[str, int] = {}
    for index, (_, capture) in enumerate(found):
        for url in webhooks(capture):
            registered.setdefault(url_key(url), index)
    moving: dict[int, list[tuple[int, Exchange]]] = {}
    for index, (_, capture) in enumerate(found):
        for exchange in capture.exchanges:
            target = registered.get(url_key(delivery_url(exchange.request)), index)
            if exchange.classification.operation == PUSH_DELIVERY and target != index:
                moving.setdefault(target, []).append((index, exchange))
    if not moving:
        return list(found), {}
    moved = {id(e) for found_here in moving.values() for _, e in found_here}
    result = []
    notes: dict[int, list[str]] = {}
    for index, (path, capture) in enumerate(found):
        left = tuple(e for e in capture.exchanges if id(e) not in moved)
        taken = moving.get(index, [])
        added = _rebased(capture, [(found[i][0], found[i][1], e) for i, e in taken])
        if taken:
            sources = sorted({found[i][0].name for i, _ in taken})
            notes[index] = [
                f"{len(taken)} push deliveries recorded in {', '.join(sources)} are made by "
                f"this agent (its requests registered their webhook)"
            ]
        result.append((path, replace(capture, exchanges=left + added)))
    return result, notes


def webhooks(capture: Capture) -> Iterator[str]:
    """The webhook URLs the push configs in a capture's requests name."""
    for exchange in capture.exchanges:
        c = exchange.classification
        if c.operation not in PUSH_CONFIG_OPERATIONS:
            continue
        root = ("params",) if c.binding is Binding.JSONRPC else ()
        bodies: list[str | bytes | None] = [m.json for m in exchange.request.messages]
        bodies = bodies or [exchange.request.body]
        for body in bodies:
            base = value_at(parse_json(body), root)
            for path in WEBHOOK_PATHS:
                url = value_at(base, path)
                if isinstance(url, str) and url.startswith(("http://", "https://")):
                    yield url


def _rebased(target: Capture, taken: list[tuple[Path, Capture, Exchange]]) -> tuple[Exchange, ...]:
    """Adopted deliveries, timed from `target`'s start and numbered after its exchanges."""
    last = max((e.number for e in target.exchanges), default=0)
    start = _epoch_us(target.started)
    return tuple(
        replace(
            e,
            number=last + n,
            started_us=e.started_us + _epoch_us(source.started) - start,
            notes=(*e.notes, f"recorded in {path.name} as #{e.number}"),
        )
        for n, (path, source, e) in enumerate(taken, start=1)
    )


def _epoch_us(started: str) -> int:
    try:
        return int(datetime.fromisoformat(started).timestamp() * 1_000_000)
    except ValueError:
        return 0


@dataclass(frozen=True, slots=True)
class Route:
    agent: int  # the index of the agent in the fleet
    scheme: str  # as recorded: http, https, grpc


class Routes:
    """Authority -> agent, for every authority some agent was recorded under."""

    def __init__(self, plans: Iterable[AgentPlan]) -> None:
        self._routes: dict[str, Route] = {}
        for index, plan in enumerate(plans):
            for scheme, where in plan.authorities:
                self._routes.setdefault(where, Route(index, scheme))

    def find(self, where: str) -> Route | None:
        """The route for an authority as a client names it (`Host`, a CONNECT target)."""
        found = authority(where)
        return self._routes.get(found[1]) if found is not None else None

    def known(self) -> list[str]:
        return sorted(self._routes)


def same_authority(a: str, b: str) -> bool:
    """Do two `host:port` name the same place (loopback names folded, as routes are)?"""
    one, two = authority(a), authority(b)
    return one is not None and two is not None and one[1] == two[1]


def request_authority(target: bytes, host: str | None) -> str | None:
    """The authority a proxied HTTP request names: its absolute-form target's, else `Host`."""
    text = target.decode("latin-1")
    if "://" in text:
        found = authority(text)
        return found[1] if found is not None else None
    return host


def connect_target(head: bytes) -> str | None:
    """The `host:port` of a CONNECT request's head; None when it is not one."""
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    words = line.split(" ")
    if len(words) != 3 or words[0].upper() != "CONNECT" or not words[2].startswith("HTTP/"):
        return None
    return words[1] if authority(words[1]) is not None else None


def tunnel_kind(first: bytes) -> TunnelKind | None:
    """What a tunnel carries, from its first bytes (None: too few yet to tell)."""
    if not first:
        return None
    if first[0] == TLS_HANDSHAKE:
        return "tls"
    if H2_PREFACE.startswith(first[: len(H2_PREFACE)]):
        return "grpc" if len(first) >= len(H2_PREFACE) else None
    return "http"


Opening = Literal["connect", "h2", "http"]
OPENINGS: tuple[tuple[bytes, Opening], ...] = ((CONNECT, "connect"), (H2_PREFACE, "h2"))


def opening(first: bytes) -> Opening | None:
    """What a request to the proxy is, from its first bytes: a CONNECT, HTTP/2 with prior knowledge,
    or HTTP/1 (None: too few yet to tell)."""
    for prefix, kind in OPENINGS:
        head = first[: len(prefix)]
        if head.upper() == prefix[: len(head)].upper():
            return kind if len(head) == len(prefix) else None
    return "http"


def h2_authority(data: bytes) -> str | None:
    """The `:authority` of the first request of an HTTP/2 connection, from its first bytes:
    None while its header block is incomplete, "" when the bytes are not HTTP/2 or the request
    names none.  The first header block is the connection's first, so HPACK starts empty."""
    preface = H2_CLIENT_PREFACE
    if not data.startswith(preface):
        return None if preface.startswith(data) else ""
    at, block = len(preface), b""
    try:
        while at + FRAME_HEADER_SIZE <= len(data):
            frame, length = Frame.parse_frame_header(memoryview(data[at : at + 9]))
            end = at + FRAME_HEADER_SIZE + length
            if end > len(data):
                return None
            frame.parse_body(memoryview(data[at + FRAME_HEADER_SIZE : end]))
            at = end
            if isinstance(frame, HeadersFrame) or (block and isinstance(frame, ContinuationFrame)):
                block += frame.data
                if "END_HEADERS" in frame.flags:
                    headers = Decoder().decode(block, raw=True)
                    return next((v.decode("latin-1") for k, v in headers if k == b":authority"), "")
    except (HyperframeError, HPACKError, ValueError):
        return ""
    return None


# A gRPC client sends its first call only once the server's SETTINGS came: the proxy sends an
# empty one itself, and takes the client's ACK of it out of what goes on to the agent, which
# sends (and has ACKed) SETTINGS of its own.
EMPTY_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
SETTINGS_ACK = b"\x00\x00\x00\x04\x01\x00\x00\x00\x00"


class AckFilter:
    """An HTTP/2 client's bytes less its first SETTINGS ACK (of the proxy's `EMPTY_SETTINGS`)."""

    def __init__(self) -> None:
        self._left = len(H2_CLIENT_PREFACE)  # bytes to pass before the next frame header
        self._head = bytearray()  # a frame header read in part
        self.done = False

    def feed(self, data: bytes) -> bytes:
        out, at = bytearray(), 0
        while at < len(data) and not self.done:
            if self._left:
                n = min(self._left, len(data) - at)
                out += data[at : at + n]
                at, self._left = at + n, self._left - n
                continue
            taken = data[at : at + FRAME_HEADER_SIZE - len(self._head)]
            self._head += taken
            at += len(taken)
            if len(self._head) < FRAME_HEADER_SIZE:
                break
            if self._head == SETTINGS_ACK:
                self.done = True
            else:
                out += self._head
                self._left = int.from_bytes(self._head[:3], "big")
            self._head.clear()
        return bytes(out + data[at:])


# --- what no agent answers -----------------------------------------------------------------


def unknown_text(where: str, routes: Routes) -> str:
    known = ", ".join(routes.known()) or "none"
    return f"no capture of this fleet was recorded against {where} (it holds {known})"


def tls_text(where: str) -> str:
    return (
        f"{where}: the fleet's forward proxy does not terminate TLS; replay this agent in "
        "reverse mode (replay DIR without --forward gives it a plain-HTTP port)"
    )


@dataclass(frozen=True, slots=True)
class UnroutedRequest:
    method: str
    where: str  # the authority the client named (or what it sent instead)
    why: str

    def line(self) -> str:
        return f"{self.method} {self.where}: {self.why}"


class Unrouted:
    """The requests no agent of the fleet answered (bounded), with a count."""

    def __init__(self, limit: int = MAX_UNROUTED) -> None:
        self._kept: deque[UnroutedRequest] = deque(maxlen=limit)
        self.count = 0
        self._lock = threading.Lock()

    def add(self, method: str, where: str, why: str) -> None:
        with self._lock:
            self._kept.append(UnroutedRequest(method, where, why))
            self.count += 1

    @property
    def requests(self) -> list[UnroutedRequest]:
        with self._lock:
            return list(self._kept)
