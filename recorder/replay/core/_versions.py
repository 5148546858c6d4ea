"""A capture served to clients of the other protocol version (pure).

`--serve-version` names the versions the replay speaks (default: what was recorded).  A live
request in another version is translated into the recorded one before it is matched
(`incoming`), and the answer back before ids are put in (`answer`), by the protocol's
translations (`recorder.versions`); what the other version cannot carry is `Lost`, for the
report.  A version not served is refused as an agent of the other version refuses it.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum

from recorder.capture import Capture, Exchange, GrpcMessage, Request, Response, SseEvent
from recorder.protocol import (
    AGENT_CARD,
    DETAILS_HEADER,
    MESSAGE_HEADER,
    NOT_JSON,
    PUSH_DELIVERY,
    STATUS_HEADER,
    UNKNOWN,
    Binding,
    Classification,
    Version,
    decode_status_details,
    encode_status_details,
    event_data,
    operation,
    parse_json,
)
from recorder.replay.core._answer import standard_reason
from recorder.replay.core._grpcanswer import recorded_status
from recorder.script import dumps_like
from recorder.versions import (
    VERSION_HEADER,
    Dialect,
    Lost,
    Rename,
    body,
    dialect_of,
    encode_grpc_message,
    grpc_error,
    headers,
    rest_error,
    served_card,
    stream,
    target,
    wire_name,
)

SERVED = (Version.V1_0, Version.V0_3)  # the versions a capture can be served in
# Exchanges whose names are the same in every version: the card fetch (its `A2A-Version`
# header says which card the client wants, and the card served says every version served),
# push deliveries, and what names no operation.
_UNVERSIONED = frozenset({AGENT_CARD, PUSH_DELIVERY, UNKNOWN, None})


class ServeVersion(StrEnum):
    """`--serve-version`: the protocol versions the replay speaks."""

    V1_0 = "1.0"
    V0_3 = "0.3"
    BOTH = "both"

    @property
    def versions(self) -> frozenset[Version]:
        if self is ServeVersion.BOTH:
            return frozenset(SERVED)
        return frozenset({Version(self.value)})


@dataclass(frozen=True, slots=True)
class Crossing:
    """A live request of one version, and the same request in the recorded version."""

    request: Request  # in the recorded version: what is matched
    client: Version
    recorded: Version
    changes: tuple[str, ...]
    lost: tuple[Lost, ...] = ()


@dataclass(frozen=True, slots=True)
class Refusal:
    """A request in a version the replay does not serve."""

    version: Version
    served: frozenset[Version]

    def describe(self) -> str:
        served = " and ".join(f"v{v}" for v in sorted(self.served, reverse=True))
        return f"a v{self.version} request; this replay serves {served} (--serve-version)"


@dataclass(frozen=True, slots=True)
class Translation:
    """A recorded answer in the client's version, with what changed and what was lost."""

    response: Response
    changes: tuple[str, ...]
    lost: tuple[Lost, ...]


class Versions:
    """What versions a replay speaks, and the translation into and out of the recorded one."""

    def __init__(self, serve: ServeVersion | None, recorded: Iterable[Version | None]) -> None:
        self.serve = serve
        self.recorded = frozenset(v for v in recorded if v in SERVED)
        self._answers: dict[tuple[int, Version], Translation] = {}

    @property
    def served(self) -> frozenset[Version] | None:
        return self.serve.versions if self.serve is not None else None

    def incoming(self, request: Request, c: Classification) -> Crossing | Refusal | None:
        """The request translated into the recorded version, a refusal, or None (as it is)."""
        served, version, name = self.served, c.version, c.operation
        if served is None or version not in SERVED or name in _UNVERSIONED or name is None:
            return None
        if version not in served:
            return Refusal(version, served)
        if version in self.recorded or not self.recorded:
            return None
        to = Version.V1_0 if Version.V1_0 in self.recorded else Version.V0_3
        if operation(name, to) is None:
            return None  # the recorded version has no such operation: a miss says so
        return _crossed(request, c, version, to)

    def answer(
        self, index: int, response: Response, c: Classification, client: Version
    ) -> Translation:
        """The recorded answer of step `index` in the client's version (built once)."""
        key = (index, client)
        found = self._answers.get(key)
        if found is None:
            source = c.version or Version.V1_0
            found = self._answers[key] = _answer(response, c, source, client)
        return found

    def card(self, document: object) -> tuple[object, tuple[str, ...]]:
        """The card to serve for the versions served, and what was changed to make it."""
        served = self.served
        if served is None:
            return document, ()
        made = served_card(document, served)
        what = "the card for " + " and ".join(f"v{v}" for v in sorted(served, reverse=True))
        return made.value, _words(made.renames, what, reverse=served == {Version.V0_3})

    def card_bytes(self, data: bytes) -> bytes:
        """A served card body (JSON) as `card` makes it, in the recorded JSON style."""
        document = parse_json(data) if self.served is not None else NOT_JSON
        if not isinstance(document, dict):
            return data
        value, _ = self.card(document)
        return dumps_like(data.decode("utf-8", "replace"), value).encode("utf-8")

    def card_changes(self, data: bytes) -> tuple[str, ...]:
        document = parse_json(data) if self.served is not None else NOT_JSON
        return self.card(document)[1] if isinstance(document, dict) else ()

    def delivery(self, exchange: Exchange, client: Version) -> Exchange:
        """A recorded push delivery as an agent sends it to a client of `client`'s version."""
        source = exchange.classification.version or Version.V1_0
        document = parse_json(exchange.request.body)
        if source is client or source not in SERVED or document is NOT_JSON:
            return exchange
        src, dst = dialect_of(source, Binding.HTTP), dialect_of(client, Binding.HTTP)
        found = body(document, PUSH_DELIVERY, "request", src, dst)
        text = exchange.request.body.decode("utf-8", "replace")
        data = dumps_like(text, found.value).encode("utf-8")
        c = replace(exchange.classification, version=client)
        return replace(exchange, classification=c, request=replace(exchange.request, body=data))


# ---- requests ------------------------------------------------------------------------------


def _crossed(request: Request, c: Classification, version: Version, to: Version) -> Crossing:
    assert c.operation is not None and c.binding is not None
    binding = str(c.binding)
    source, into = dialect_of(version, binding), dialect_of(to, binding)
    moved = target(c.operation, request.method, request.target, binding, version, to)
    heads, head_notes = headers(request.headers, "request", version, to)
    renames: list[Rename] = [*moved.renames, *head_notes]
    lost: list[Lost] = []
    new = replace(request, target=moved.target, headers=heads)
    if request.messages:
        messages = [
            _message(m, c.operation, source, into, to, renames, lost) for m in request.messages
        ]
        new = replace(new, messages=tuple(messages))
    elif request.body:
        new = replace(new, body=_body(request.body, c.operation, source, into, renames, lost))
    words = _words(renames, f"request v{version} → v{to}", reverse=to is Version.V0_3)
    return Crossing(new, version, to, words, tuple(lost))


def _body(
    data: bytes, name: str, source: Dialect, into: Dialect, renames: list[Rename], lost: list[Lost]
) -> bytes:
    document = parse_json(data)
    if document is NOT_JSON:
        return data
    found = body(document, name, "request", source, into)
    renames.extend(found.renames)
    lost.extend(found.lost)
    return dumps_like(data.decode("utf-8", "replace"), found.value).encode("utf-8")


def _message(
    message: GrpcMessage,
    name: str,
    source: Dialect,
    into: Dialect,
    to: Version,
    renames: list[Rename],
    lost: list[Lost],
) -> GrpcMessage:
    if message.json is None:
        return message
    found = body(parse_json(message.json), name, "request", source, into)
    renames.extend(found.renames)
    lost.extend(found.lost)
    row = operation(name, to)
    type_name = row.request_type if row is not None else message.type_name
    return replace(message, json=_compact(found.value), type_name=type_name)


# ---- answers -------------------------------------------------------------------------------


def _answer(response: Response, c: Classification, source: Version, client: Version) -> Translation:
    name, binding = c.operation or "", str(c.binding)
    if c.binding is Binding.GRPC:
        return _grpc_answer(response, name, source, client)
    renames: list[Rename] = []
    lost: list[Lost] = []
    heads, notes = headers(response.headers, "response", source, client)
    renames.extend(notes if c.binding is Binding.HTTP_JSON else ())
    if c.binding is not Binding.HTTP_JSON:
        heads = response.headers
    new = replace(response, headers=heads)
    src, dst = dialect_of(source, binding), dialect_of(client, binding)
    if response.events:
        new = replace(new, events=_events(response.events, name, src, dst, renames, lost))
    elif response.body:
        new = _http_body(new, name, c.binding, source, client, renames, lost)
    words = _words(renames, f"answer v{source} → v{client}", reverse=client is Version.V0_3)
    return Translation(new, words, tuple(lost))


def _http_body(
    response: Response,
    name: str,
    binding: Binding | None,
    source: Version,
    client: Version,
    renames: list[Rename],
    lost: list[Lost],
) -> Response:
    text = response.body.decode("utf-8", "replace")
    document = parse_json(response.body)
    if document is NOT_JSON:
        return response
    if binding is Binding.HTTP_JSON and response.status >= 400:
        error = rest_error(response.status, document, source, client)
        renames.extend(error.renames)
        lost.extend(error.lost)
        data = dumps_like(text, error.document).encode("utf-8")
        same = error.status == response.status
        reason = response.reason if same else standard_reason(error.status)
        return replace(response, status=error.status, reason=reason, body=data)
    src, dst = dialect_of(source, binding), dialect_of(client, binding)
    found = body(document, name, "response", src, dst)
    renames.extend(found.renames)
    lost.extend(found.lost)
    return replace(response, body=dumps_like(text, found.value).encode("utf-8"))


def _events(
    events: tuple[SseEvent, ...],
    name: str,
    src: Dialect,
    dst: Dialect,
    renames: list[Rename],
    lost: list[Lost],
) -> tuple[SseEvent, ...]:
    data = [event_data(e.lines) for e in events]
    documents = [parse_json(d) if d else NOT_JSON for d in data]
    indexes = [i for i, d in enumerate(documents) if d is not NOT_JSON]
    found, notes, cut = stream([documents[i] for i in indexes], name, src, dst)
    renames.extend(notes)
    lost.extend(cut)
    out = list(events)
    for i, value in zip(indexes, found, strict=True):
        out[i] = SseEvent(events[i].offset_us, _event_lines(events[i].lines, data[i], value))
    return tuple(out)


def _event_lines(lines: tuple[str, ...], text: str, value: object) -> tuple[str, ...]:
    """The event with its data written again, in one `data:` line, other lines kept."""
    first = next((i for i, line in enumerate(lines) if line.startswith("data:")), len(lines))
    space = " " if first < len(lines) and lines[first].startswith("data: ") else ""
    kept = [line for line in lines if not line.startswith("data:")]
    new = f"data:{space}{dumps_like(text, value)}"
    return (*kept[:first], new, *kept[first:])


def _grpc_answer(response: Response, name: str, source: Version, client: Version) -> Translation:
    renames: list[Rename] = []
    lost: list[Lost] = []
    src, dst = dialect_of(source, "GRPC"), dialect_of(client, "GRPC")
    decoded = [parse_json(m.json) for m in response.messages if m.json is not None]
    found, notes, cut = stream(decoded, name, src, dst)
    renames.extend(notes)
    lost.extend(cut)
    row = operation(name, client)
    values = iter(found)
    messages = tuple(
        m
        if m.json is None
        else replace(
            m, json=_compact(next(values)), type_name=row.response_type if row else m.type_name
        )
        for m in response.messages
    )
    new = _grpc_status(replace(response, messages=messages), source, client, renames)
    words = _words(renames, f"answer v{source} → v{client}", reverse=client is Version.V0_3)
    return Translation(new, words, tuple(lost))


def _grpc_status(
    response: Response, source: Version, client: Version, renames: list[Rename]
) -> Response:
    code, text, blob = recorded_status(response)
    if code == 0:
        return response
    details = decode_status_details(blob) if blob is not None else None
    error = grpc_error(code, text, details, source, client)
    renames.extend(error.renames)
    fields = {
        STATUS_HEADER: str(error.status),
        MESSAGE_HEADER: encode_grpc_message(str(error.document)),
    }
    if error.details is not None:
        fields[DETAILS_HEADER] = encode_status_details({**error.details, "code": error.status})
    return replace(
        response, headers=_set(response.headers, fields), trailers=_set(response.trailers, fields)
    )


def _set(
    found: Iterable[tuple[str, str]], fields: Mapping[str, str]
) -> tuple[tuple[str, str], ...]:
    """Headers with those of `fields` it holds set to the new values (and the details added)."""
    out = list(found)
    names = {k.lower() for k, _ in out}
    if STATUS_HEADER not in names:
        return tuple(out)
    out = [(k, fields.get(k.lower(), v)) for k, v in out]
    if DETAILS_HEADER in fields and DETAILS_HEADER not in names:
        out.append((DETAILS_HEADER, fields[DETAILS_HEADER]))
    return tuple(out)


# ---- small helpers -------------------------------------------------------------------------


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _words(renames: Collection[Rename], what: str, *, reverse: bool) -> tuple[str, ...]:
    """What was renamed, each kind once and counted, for the journal (`reverse`: v1.0 -> v0.3)."""
    if not renames:
        return ()
    counts: dict[str, int] = {}
    for rename in renames:
        text = rename.describe(reverse=reverse).rsplit(" (v", 1)[0]
        counts[text] = counts.get(text, 0) + 1
    listed = [f"{text} (×{n})" if n > 1 else text for text, n in counts.items()]
    return (f"translated {what}: " + "; ".join(listed),)


# ---- a whole capture, for verify ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CaptureAs:
    """A capture as an agent of another version would have been recorded, and what it took."""

    capture: Capture
    changes: tuple[str, ...]
    lost: tuple[str, ...]
    kept: tuple[str, ...]  # exchanges the other version has no form of, left as recorded


def capture_as(capture: Capture, version: Version) -> CaptureAs:
    """Every exchange of `capture` in `version` (what `verify --as-version` sends and compares)."""
    versions = Versions(ServeVersion(version.value), ())
    renames: dict[str, None] = {}
    lost: dict[str, None] = {}
    kept: list[str] = []
    exchanges = []
    for exchange in capture.exchanges:
        found = _exchange_as(exchange, version, versions)
        if found is None:
            kept.append(f"#{exchange.number} {exchange.classification.operation}")
            exchanges.append(exchange)
            continue
        new, changes, cut = found
        exchanges.append(new)
        renames.update(dict.fromkeys(changes))
        lost.update(dict.fromkeys(f"#{exchange.number}: {c.describe()}" for c in cut))
    new_capture = replace(capture, exchanges=tuple(exchanges))
    return CaptureAs(new_capture, tuple(renames), tuple(lost), tuple(kept))


Crossed = tuple[Exchange, tuple[str, ...], tuple[Lost, ...]]


def _exchange_as(exchange: Exchange, version: Version, versions: Versions) -> Crossed | None:
    """`exchange` in `version`; None when that version has no such exchange."""
    c = exchange.classification
    if c.operation == AGENT_CARD and exchange.response is not None:
        data = versions.card_bytes(exchange.response.body)
        changes = versions.card_changes(exchange.response.body)
        response = replace(exchange.response, body=data)
        # The card of `version`: `A2A-Version` says it (v0.3 requests carry none).
        asked = [(k, v) for k, v in exchange.request.headers if k.lower() != VERSION_HEADER.lower()]
        if version is Version.V1_0:
            asked.append((VERSION_HEADER, str(version)))
        request = replace(exchange.request, headers=tuple(asked))
        said = version if version is Version.V1_0 else None  # as the classifier reads it
        new = replace(exchange, classification=replace(c, version=said), request=request)
        return replace(new, response=response), changes, ()
    if c.operation == PUSH_DELIVERY:
        return versions.delivery(exchange, version), (), ()
    if c.version not in SERVED or c.version is version or c.operation in _UNVERSIONED:
        return exchange, (), ()
    assert c.operation is not None and c.binding is not None and c.version is not None
    if operation(c.operation, version) is None:
        return None
    crossing = _crossed(exchange.request, c, c.version, version)
    method = wire_name(c.operation, str(c.binding), exchange.request.method, version)
    named = replace(c, version=version, method=method or c.method)
    out = replace(exchange, classification=named, request=crossing.request)
    if exchange.response is None:
        return out, crossing.changes, crossing.lost
    answer = _answer(exchange.response, c, c.version, version)
    out = replace(out, response=answer.response)
    return out, (*crossing.changes, *answer.changes), (*crossing.lost, *answer.lost)
