"""The v0.3 -> v1.0 wire renames, applied to normalised exchanges.

When two aligned exchanges differ, the diff translates both to v1.0 and compares again: what
one side's translation explains is a *rename*, what still differs a difference (two v0.3
captures cancel out).  Each rule applied leaves a `RenameNote` with the path it touched, in its
side's indexes.  The translation is `recorder.versions`'s, which replay and verify use too.
"""

from __future__ import annotations

from dataclasses import replace

from recorder.diff._normal import (
    Body,
    NormalEvent,
    NormalExchange,
    NormalGrpc,
    NormalRequest,
    NormalResponse,
)
from recorder.protocol import V03_HEADER_RENAMES, Version
from recorder.versions import Dialect, Side, dialect_of, read_body
from recorder.versions import Rename as RenameNote
from recorder.versions import RenameRule as Rule
from recorder.versions import target as translate_target

__all__ = ["RenameNote", "Rule", "to_v1"]  # the aliases are what the diff names them

V0_3, V1_0 = "0.3", "1.0"


def to_v1(exchange: NormalExchange) -> tuple[NormalExchange, tuple[RenameNote, ...]]:
    """A normalised exchange in the v1.0 wire shape (a v1.0 one comes back equal), and renames."""
    t = _Translator(exchange.key, dialect_of(exchange.version, exchange.binding))
    request = t.request(exchange.request, exchange.binding, exchange.version)
    response = t.response(exchange.response) if exchange.response is not None else None
    version = exchange.version
    if version == V0_3:
        t.note(Rule.VERSION, V0_3, V1_0, "version")
        version = V1_0
    out = replace(exchange, request=request, response=response, version=version)
    return out, tuple(t.notes)


Headers = tuple[tuple[str, str], ...]


class _Translator:
    def __init__(self, operation: str, dialect: Dialect) -> None:
        self.operation = operation
        # Every document is read as v0.3 JSON (no change to a v1.0 one; it explains the v0.3
        # shapes v1.0 drafts and hybrid cards kept); proto-JSON as its own v0.3 dialect.
        self.dialect = dialect if dialect is Dialect.V03_PROTO else Dialect.V03
        self.notes: list[RenameNote] = []

    def note(self, rule: Rule, old: str, new: str, path: str) -> None:
        self.notes.append(RenameNote(rule, old, new, path))

    def request(
        self, request: NormalRequest, binding: str | None, version: str | None
    ) -> NormalRequest:
        target = request.target
        if version == Version.V0_3:
            target = self.target(request.method, target, binding)
        return replace(
            request,
            target=target,
            headers=self.headers(request.headers, "request.header"),
            body=self.body(request.body, "request.body", "request"),
            messages=self.messages(request.messages, "request.messages", "request"),
        )

    def response(self, response: NormalResponse) -> NormalResponse:
        return replace(
            response,
            headers=self.headers(response.headers, "response.header"),
            body=self.body(response.body, "body", "response"),
            events=tuple(self.event(e, i) for i, e in enumerate(response.events)),
            messages=self.messages(response.messages, "messages", "response"),
        )

    def event(self, event: NormalEvent, index: int) -> NormalEvent:
        return replace(event, data=self.body(event.data, f"events[{index}].data", "response"))

    def messages(
        self, messages: tuple[NormalGrpc, ...], path: str, side: Side
    ) -> tuple[NormalGrpc, ...]:
        return tuple(
            replace(m, body=self.body(m.body, f"{path}[{i}]", side)) for i, m in enumerate(messages)
        )

    def target(self, verb: str, target: str, binding: str | None) -> str:
        moved = translate_target(
            self.operation, verb, target, binding or "", Version.V0_3, Version.V1_0
        )
        self.notes.extend(moved.renames)
        return moved.target

    def headers(self, headers: Headers, path: str) -> Headers:
        out = []
        for name, value in headers:
            if name in V03_HEADER_RENAMES:
                self.note(Rule.HEADER, name, V03_HEADER_RENAMES[name], f"{path}:{name}")
                name = V03_HEADER_RENAMES[name]
            out.append((name, value))
        return tuple(out)

    def body(self, body: Body, path: str, side: Side) -> Body:
        if body.kind != "json":
            return body
        found = read_body(body.value, self.operation, side, self.dialect, path=path, keep=True)
        self.notes.extend(found.renames)
        return Body("json", found.value)
