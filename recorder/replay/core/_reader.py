"""Reading a live request: its classification, value, id slots and JSON-RPC id (pure).

A live request is read as the script reads a recorded one (`recorder.script`), with the ids the
sessions hold in place of what the capture knew.  Where the capture learnt fields fresh, a
request has two readings: those fields compared as they are, then as fresh.  `classify` is the
project's one classifier; its results are cached per form (`FORMS` at most), so a stream of
sends, or a poll of one task over HTTP+JSON, costs one classification.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from recorder.capture import Request
from recorder.protocol import (
    NOT_JSON,
    Classification,
    Interface,
    classify,
    parse_json,
)
from recorder.redaction import Masker
from recorder.replay.core._resolve import LiveRequest
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
)

FORMS = 4096  # request forms whose classification is kept


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
        self._forms: dict[tuple[object, ...], Classification] = {}  # JSON-RPC form -> its own

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
            learnt = script.learnt.get(skeleton(c, value, leaves(value)))
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
        """`classify`, once per form: what of a request its classification depends on.  A
        JSON-RPC request's ids are in its params (left out of the form and of what is kept); a
        request with no body is classified by its method, target and the two headers read."""
        if _is_jsonrpc(request, document):
            params = document.get("params")
            params = params if isinstance(params, Mapping) else {}
            tenant = params.get("tenant")
            named: object = (document["method"], tenant if isinstance(tenant, str) else None)
        elif request.body or request.messages:
            return classify(request, interfaces=self.interfaces)
        else:
            named = None
        form = (
            request.method,
            request.target,
            headers.get("content-type"),
            headers.get("a2a-version"),
            named,
        )
        found = self._forms.get(form)
        if found is None:
            found = classify(request, interfaces=self.interfaces)
            if named is not None:
                found = replace(found, task_id=None, context_id=None, config_id=None)
            if len(self._forms) >= FORMS:
                self._forms.clear()
            self._forms[form] = found
        return found


def _is_jsonrpc(request: Request, document: Json) -> bool:
    return (
        isinstance(document, dict)
        and document.get("jsonrpc") == "2.0"
        and isinstance(document.get("method"), str)
        and not request.messages
    )
