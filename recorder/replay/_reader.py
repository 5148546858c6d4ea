"""Reading a live request: its classification, value, id slots and JSON-RPC id (pure).

A live request is read as the script reads a recorded one (`recorder.script`): the same value,
the same slots, found the same four ways, with what the live side knows in place of what the
capture knew (`known`: the ids the sessions hold and the values kept).  Where the capture
learnt fields fresh for the request's skeleton, the request has two readings, those fields
compared as they are first, then read as fresh (`LiveRequest.readings`).

`classify` is the one classifier of the project.  A JSON-RPC request's classification depends
only on its endpoint, its headers that matter, its method and tenant; the reader keeps a table
of those it has seen (`FORMS` at most) and reads the ids from the params again, as `classify`
does, so that a stream of sends costs one classification.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from recorder.capture import Request
from recorder.protocol import (
    NOT_JSON,
    Classification,
    Interface,
    Version,
    classify,
    operation,
    parse_json,
)
from recorder.redaction import Masker
from recorder.replay._resolve import LiveRequest
from recorder.script import (
    Json,
    Known,
    Script,
    Slot,
    credential_names,
    find_slots,
    leaves,
    positions_of,
    request_value,
    skeleton,
    snake_case,
)

FORMS = 4096  # JSON-RPC request forms whose classification is kept
_ID_KINDS = ("task_id", "context_id", "config_id")
IdPaths = tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]


@dataclass(slots=True)  # made per request: not frozen, which costs
class Reading:
    live: LiveRequest
    jsonrpc_id: Json
    headers: Mapping[str, str]  # lower-cased names, the first value of each

    @property
    def classification(self) -> Classification:
        return self.live.classification


class RequestReader:
    def __init__(
        self,
        interfaces: Sequence[Interface],
        script: Script,
        masker: Masker | None = None,
        credentials: bool = True,
    ) -> None:
        self.interfaces = tuple(interfaces)
        self.script = script
        self.masker = masker  # see `Script.masker`
        self.credentials = credentials
        # JSON-RPC form -> its classification, and where its operation names ids
        self._forms: dict[tuple[object, ...], tuple[Classification, IdPaths]] = {}

    def read(self, request: Request, known: Known) -> Reading:
        if self.masker is not None:
            self.masker.learn(request)
        headers: dict[str, str] = {}
        for name, value in request.headers:
            headers.setdefault(name.lower(), value)
        document = parse_json(request.body) if request.body else NOT_JSON
        c = self._classify(request, headers, document)
        script = self.script
        names = (
            credential_names(request, script.credential_headers, script.credential_params)
            if self.credentials
            else None
        )
        value = request_value(
            request, c, script.secret_params, None if document is NOT_JSON else document, names
        )
        positions = positions_of(c)
        slots = tuple(find_slots(value, positions, known))
        readings: tuple[tuple[Slot, ...], ...] = (slots,)
        learnt = None
        if script.learnt:
            learnt = script.learnt.get(skeleton(c, value, (where for where, _ in leaves(value))))
        if learnt:
            readings = (slots, tuple(find_slots(value, positions, known, learnt)))
        if self.masker is not None:  # after the slots: they keep the live values
            value = self.masker.value(value)
        jsonrpc_id = document.get("id") if isinstance(document, dict) else None
        live = LiveRequest(c, value, readings, headers.get("a2a-version"))
        return Reading(live, jsonrpc_id, headers)

    def _classify(
        self, request: Request, headers: Mapping[str, str], document: Json
    ) -> Classification:
        if not _is_jsonrpc(request, document):
            return classify(request, interfaces=self.interfaces)
        params = document.get("params")
        params = params if isinstance(params, Mapping) else {}
        tenant = params.get("tenant")
        form = (
            request.method,
            request.target,
            headers.get("content-type"),
            headers.get("a2a-version"),
            document["method"],
            tenant if isinstance(tenant, str) else None,
        )
        found = self._forms.get(form)
        if found is None:
            c = classify(request, interfaces=self.interfaces)
            row = operation(c.operation, c.version or Version.V1_0) if c.operation else None
            found = (c, tuple((kind, row.id_paths(kind)) for kind in _ID_KINDS) if row else ())
            if len(self._forms) >= FORMS:
                self._forms.clear()
            self._forms[form] = found
        return _with_ids(*found, params)


def _is_jsonrpc(request: Request, document: Json) -> bool:
    return (
        isinstance(document, dict)
        and document.get("jsonrpc") == "2.0"
        and isinstance(document.get("method"), str)
        and not request.messages
    )


def _with_ids(c: Classification, paths: IdPaths, params: Mapping[str, Json]) -> Classification:
    """`c` with the ids this request's params name (the classifier's own rule: the first of the
    operation's id paths that holds a non-empty string or number)."""
    if not paths:
        return c
    ids = {
        kind: next((found for path in where if (found := _text(_at(params, path)))), None)
        for kind, where in paths
    }
    if ids == {"task_id": c.task_id, "context_id": c.context_id, "config_id": c.config_id}:
        return c
    return replace(c, **ids)  # type: ignore[arg-type]


def _at(document: Json, path: Sequence[str]) -> Json:
    for key in path:
        if not isinstance(document, Mapping):
            return None
        found = document.get(key)
        document = found if found is not None else document.get(snake_case(key))
    return document


def _text(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return str(value) or None
