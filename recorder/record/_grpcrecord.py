"""Recording gRPC: a tap on mitmproxy TCP flows that decodes the HTTP/2 it relays.

gRPC, plaintext or TLS, goes through mitmproxy as TCP (`reverse:tcp://`, `reverse:tls://`),
decoded by our passive `H2Observer`: mitmproxy's HTTP/2 stack kills h2c with prior knowledge
and would re-encode every frame, while as TCP each peer's bytes are forwarded as they were.
In forward mode, `H2cTunnels` turns gRPC clients' CONNECT tunnels into TCP flows for the tap.
In reverse mode the tap's `Reframer`s (`_h2rewrite`) rewrite push-config URLs (the push relay);
the capture holds what the client sent and saw, each rewrite noted.  `call_exchange` (pure)
turns an observed `H2Call` into capture values; a message that does not decode is kept raw.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from mitmproxy.proxy import layers

from recorder._background import host_port
from recorder._errors import GrpcFramingError, H2ProtocolError
from recorder.capture import GrpcMessage, Headers, Request, Response
from recorder.options import grpc_upstream_parts
from recorder.protocol import (
    ENCODING_HEADER,
    NOTE_NO_RESPONSE,
    NOTE_STREAM_TRUNCATED,
    NOTE_TO_REAL,
    NOTE_TO_RELAY,
    Direction,
    canonical_binary_header,
    decode_message,
    grpc_method,
    is_binary_header,
    stream_reset,
    timed_messages,
)
from recorder.record._h2 import H2Call, H2Observer
from recorder.record._h2rewrite import Reframer, Rewrite
from recorder.record._ledger import lost
from recorder.record._state import mode_spec

logger = logging.getLogger(__name__)

# Request pseudo-headers that the request line already says; `:authority` is kept as metadata.
REQUEST_LINE_PSEUDO = frozenset({":method", ":scheme", ":path"})


@dataclass(frozen=True, slots=True)
class GrpcUpstream:
    """Where the recorder's gRPC listener forwards to, and how (`tcp` plaintext or `tls`)."""

    host: str
    port: int
    transport: str  # "tcp" or "tls"

    @property
    def origin(self) -> str:
        """The upstream as the capture header names it: `grpc://h:p` or `grpcs://h:p`."""
        scheme = "grpcs" if self.transport == "tls" else "grpc"
        return f"{scheme}://{host_port(self.host, self.port)}"

    def mode(self, listen: tuple[str, int]) -> str:
        """The mitmproxy mode spec: `reverse:tcp://127.0.0.1:50051@127.0.0.1:6000`."""
        host, port = listen
        return f"reverse:{self.transport}://{host_port(self.host, self.port)}@{host}:{port}"


def parse_grpc_upstream(text: str) -> GrpcUpstream:
    """`HOST:PORT`, `http://`, `grpc://` (plaintext) or `https://`, `grpcs://` (TLS)."""
    return GrpcUpstream(*grpc_upstream_parts(text))


# --- pure: an observed call -> capture values ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class GrpcRecord:
    """One observed gRPC call as capture values; times are epoch seconds."""

    request: Request
    response: Response | None
    started: float
    ended: float
    notes: tuple[str, ...] = ()
    error: str | None = None


def metadata_headers(headers: Iterable[tuple[str, str]], drop: frozenset[str]) -> Headers:
    """HTTP/2 header pairs as capture headers: `drop` names left out, `-bin` values canonical."""
    out: list[tuple[str, str]] = []
    for name, value in headers:
        if name in drop:
            continue
        out.append((name, _binary_text(value) if is_binary_header(name) else value))
    return tuple(out)


def _binary_text(value: str) -> str:
    try:
        return canonical_binary_header(value)
    except ValueError:
        return value if value.isprintable() else value.encode("latin-1", "replace").hex()


def decode_messages(
    path: str,
    timed: Iterable[tuple[int, bool, bytes]],
    direction: Direction,
    encoding: str | None,
) -> tuple[tuple[GrpcMessage, ...], tuple[str, ...]]:
    """Decoded messages (raw where decoding fails) and notes saying what stayed raw."""
    messages: list[GrpcMessage] = []
    raw = 0
    for offset, compressed, data in timed:
        found = decode_message(path, data, direction, compressed=compressed, encoding=encoding)
        if found is None:
            raw += 1
            messages.append(GrpcMessage(offset, raw=data, compressed=compressed))
        else:
            type_name, text = found
            messages.append(
                GrpcMessage(offset, json=text, compressed=compressed, type_name=type_name)
            )
    notes: tuple[str, ...] = ()
    if raw:
        why = "unknown gRPC service" if grpc_method(path) is None else "not decodable"
        notes = (f"{direction} gRPC messages kept raw ({raw}): {why}",)
    return tuple(messages), notes


def _frame(
    path: str, chunks: Iterable[tuple[int, bytes]], direction: Direction, encoding: str | None
) -> tuple[tuple[GrpcMessage, ...], tuple[str, ...]]:
    chunks = list(chunks)
    try:
        timed, pending = timed_messages(chunks)
    except GrpcFramingError as err:
        data = b"".join(chunk for _, chunk in chunks)
        first = chunks[0][0] if chunks else 0
        return (GrpcMessage(first, raw=data),), (f"{direction} body is not gRPC framing: {err}",)
    messages, notes = decode_messages(path, timed, direction, encoding)
    if pending:
        notes = (*notes, f"{direction} stream truncated ({pending} bytes of an unfinished message)")
    return messages, notes


def call_exchange(call: H2Call, epoch_us: int = 0) -> GrpcRecord:
    """Capture values for one observed call; `epoch_us` turns the call's times into epoch ones."""
    path = call.path or ""
    method = call.request_header(":method") or "POST"
    request_messages, notes = _frame(
        path,
        [(0, call.request_data)] if call.request_data else [],
        "request",
        call.request_header(ENCODING_HEADER),
    )
    request = Request(
        method,
        path,
        metadata_headers(call.request_headers, REQUEST_LINE_PSEUDO),
        http_version="HTTP/2",
        messages=request_messages,
    )
    started, ended = (epoch_us + call.started_us) / 1e6, (epoch_us + call.ended_us) / 1e6
    response, more, error = _response(call, path)
    return GrpcRecord(request, response, started, ended, (*notes, *more), error)


def _response(call: H2Call, path: str) -> tuple[Response | None, tuple[str, ...], str | None]:
    notes: list[str] = []
    error = None
    if call.reset:
        notes.append(stream_reset(call.reset_code))
        error = f"HTTP/2 stream reset, error code {call.reset_code}"
    if call.truncated:
        notes.append(NOTE_STREAM_TRUNCATED)
        error = error or "connection closed before the call ended"
    if not call.response_headers:
        return None, tuple(notes), error or NOTE_NO_RESPONSE
    status_text = call.response_header(":status") or "0"
    status = int(status_text) if status_text.isascii() and status_text.isdigit() else 0
    chunks = [(at - call.started_us, data) for at, data in call.response_chunks]
    messages, framing = _frame(path, chunks, "response", call.response_header(ENCODING_HEADER))
    notes.extend(framing)
    drop = frozenset({":status"})
    trailers = metadata_headers(call.trailers, drop)
    headers = () if call.trailers_only else metadata_headers(call.response_headers, drop)
    if call.trailers_only:
        notes.append("trailers-only")
    response = Response(
        status, "", headers, http_version="HTTP/2", messages=messages, trailers=trailers
    )
    return response, tuple(notes), error


# --- the mitmproxy shell --------------------------------------------------------------------


def _now_us() -> int:
    return time.time_ns() // 1000


# The push relay's rewrite of a call's messages: (request headers, request?) -> a Rewrite.
GrpcRelay = Callable[[Mapping[str, str], bool], Rewrite | None]


@dataclass
class _Connection:
    upstream: str
    observer: H2Observer = field(default_factory=H2Observer)
    failed: bool = False
    reframers: dict[bool, Reframer] = field(default_factory=dict)  # by from_client

    def relay(self, relay: GrpcRelay) -> None:
        """Rewrite what `relay` picks, both ways (see `_h2rewrite`)."""

        def pick(request: bool) -> Callable[[int], Rewrite | None]:
            return lambda stream: relay(dict(self.observer.request_headers(stream)), request)

        client, server = Reframer(pick(True), client=True), Reframer(pick(False), client=False)
        client.other, server.other = server, client
        self.reframers = {True: client, False: server}

    def notes(self, stream: int) -> tuple[str, ...]:
        rewritten = [(NOTE_TO_RELAY, True), (NOTE_TO_REAL, False)]
        found = self.reframers
        return tuple(n for n, side in rewritten if found and stream in found[side].rewritten)


# The first line of what an HTTP/2 connection with prior knowledge starts with (RFC 9113
# §3.4, `PRI * HTTP/2.0␍␊␍␊SM␍␊␍␊`): enough to tell h2c from HTTP/1, which never sends `PRI`.
H2_PREFACE_LINE = b"PRI * HTTP/2.0\r\n"


class H2cTunnels:
    """mitmproxy addon: CONNECT tunnels that carry h2c become TCP flows for `GrpcTap` (mitmproxy
    would read `PRI * HTTP/2.0` as HTTP/1 and close the tunnel)."""

    def __init__(self, forward_spec: str) -> None:
        self.forward_spec = forward_spec
        self._origins: dict[str, str] = {}  # client connection id -> grpc://host:port

    def next_layer(self, nextlayer: Any) -> None:
        context = nextlayer.context
        address = context.server.address
        if (
            address is None
            or mode_spec(context.client) != self.forward_spec
            or not nextlayer.data_client().startswith(H2_PREFACE_LINE)
        ):
            return
        nextlayer.layer = layers.TCPLayer(context)  # overrides mitmproxy's HTTP guess
        self._origins[context.client.id] = f"grpc://{host_port(address[0], address[1])}"

    def origin(self, flow: Any) -> str | None:
        """The tunnel's upstream for a TCP flow this addon made, else None."""
        return self._origins.get(flow.client_conn.id)

    def tcp_end(self, flow: Any) -> None:
        self._origins.pop(flow.client_conn.id, None)

    tcp_error = tcp_end


class GrpcTap:
    """mitmproxy addon: decode the TCP flows that carry gRPC and hand each call to `sink`.
    `flow.messages` are dropped once read, so a long connection does not pile up in memory."""

    def __init__(
        self,
        origin: Callable[[Any], str | None],
        sink: Callable[[GrpcRecord, str], None],
        relay: GrpcRelay | None = None,
    ) -> None:
        self.origin = origin
        self.sink = sink
        self.relay = relay  # the push relay's rewrites, for the calls it picks
        self._connections: dict[str, _Connection] = {}

    def tcp_start(self, flow: Any) -> None:
        upstream = self.origin(flow)
        if upstream is not None:
            connection = self._connections[flow.id] = _Connection(upstream=upstream)
            if self.relay is not None:
                connection.relay(self.relay)

    def tcp_message(self, flow: Any) -> None:
        connection = self._connections.get(flow.id)
        if connection is None or not flow.messages:
            return
        messages: Sequence[Any] = list(flow.messages)
        flow.messages.clear()
        for message in messages:
            reframer = connection.reframers.get(message.from_client)
            if connection.failed:  # forwarded as it comes, after anything held
                message.content = (reframer.flush() if reframer else b"") + message.content
                continue
            try:
                self._relay(connection, message, reframer)
            except Exception as exc:  # the relay goes on; the connection is no longer decoded
                self._give_up(connection, exc)
                held = reframer.flush() if reframer else b""  # the client's: from before
                before, after = (held, b"") if message.from_client else (b"", held)
                message.content = before + message.content + after
        self._drain(connection)

    @staticmethod
    def _relay(connection: _Connection, message: Any, reframer: Reframer | None) -> None:
        """Observe the client's bytes as sent and the agent's as the client gets them."""
        observer = connection.observer
        if message.from_client:
            observer.client_data(message.content, _now_us())
        if reframer is not None:
            message.content = reframer.feed(message.content)
        if not message.from_client:
            observer.server_data(message.content, _now_us())

    def _give_up(self, connection: _Connection, exc: Exception) -> None:
        """Stop decoding a connection: the rest of it is forwarded, not recorded."""
        connection.failed = True
        self._drain(connection)
        if isinstance(exc, H2ProtocolError):
            logger.warning("gRPC listener: not HTTP/2, forwarded unrecorded: %s", exc)
        calls = connection.observer.open_streams
        if calls or not isinstance(exc, H2ProtocolError):
            logger.error(
                "gRPC connection to %s no longer decoded (%d calls open): %s",
                connection.upstream,
                calls,
                exc,
                exc_info=not isinstance(exc, H2ProtocolError),
                extra=lost(calls, f"gRPC calls open when decoding failed: {exc!r}"),
            )

    def tcp_end(self, flow: Any) -> None:
        connection = self._connections.pop(flow.id, None)
        if connection is None:
            return
        connection.observer.close(_now_us())
        self._drain(connection)

    tcp_error = tcp_end

    def done(self) -> None:
        for flow_id in list(self._connections):
            connection = self._connections.pop(flow_id)
            connection.observer.close(_now_us())
            self._drain(connection)

    def _drain(self, connection: _Connection) -> None:
        for call in connection.observer.completed():
            try:
                record = call_exchange(call)
                notes = (*record.notes, *connection.notes(call.stream_id))
                self.sink(replace(record, notes=notes), connection.upstream)
            except Exception as exc:  # one call's failure must not cost the relay or the others
                logger.exception(
                    "gRPC call %s on stream %d was not recorded",
                    call.path,
                    call.stream_id,
                    extra=lost(1, f"an error inside the recorder: {exc!r}"),
                )
