"""Choosing the recorded exchange that answers a live request (pure, but stateful).

Strategy.  Recorded exchanges are indexed by (binding, operation, request shape): the request
with its volatile values made variables (`_ids.shape`).  A live request with the same key is a
candidate match.  Among candidates, those whose recorded ids agree with what this conversation
already knows are preferred, and identical requests are served in recorded order, after which
the last one repeats (a poll must not hang, nor go back to the first answer).

A *conversation* is the set of values one client has been handed.  Each answer to a request
that creates a task (a send, a push-config create) mints fresh ids for the recorded ones, so 50
clients replaying the same session at once get 50 disjoint sets of ids; a later request naming
one of them finds its conversation, and its own cursors, again.  A request that names no id
(ListTasks without a filter) is answered in a *view* of every conversation seen on the same
connection (else in the one active last), so its answer names that client's ids, not the
recorded ones nor another client's.
"""

from __future__ import annotations

import itertools
import json
import re
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from recorder.capture import Exchange, Request, Response
from recorder.protocol import (
    NOT_JSON,
    PUSH_DELIVERY,
    Binding,
    Classification,
    event_data,
    parse_json,
)
from recorder.replay._ids import PAIRED_KEYS, Json, Pair, differences, pairs, shape_key

# Operations whose answer brings new server-side ids into the world.
CREATING_OPERATIONS = frozenset(
    {"SendMessage", "SendStreamingMessage", "CreateTaskPushNotificationConfig"}
)
# Of the paired keys, those a server mints (the rest are the client's: urls, tokens).
MINTED_KEYS = PAIRED_KEYS - {"url", "token", "credentials", "name", "parent"}
_REDACTED = re.compile(r"<redacted:\d+>")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)

Key = tuple[str, str, str]
# A key and the A2A-Version header value its candidates were recorded with (None: any).
Lane = tuple[Key, str | None]


@dataclass(eq=False)  # compared and hashed by identity
class Conversation:
    """What one client has been told: recorded value -> live value, and its cursors."""

    number: int
    to_live: dict[str, str] = field(default_factory=dict)
    to_recorded: dict[str, str] = field(default_factory=dict)
    cursors: dict[Lane, int] = field(default_factory=dict)  # the next candidate to try
    view: bool = False  # a client's view over its conversations (see Engine._client_view)

    def bind(self, live: str, recorded: str) -> None:
        self.to_live.setdefault(recorded, live)
        self.to_recorded.setdefault(live, recorded)

    def agrees(self, live: str, recorded: str) -> bool:
        return (
            self.to_recorded.get(live, recorded) == recorded
            and self.to_live.get(recorded, live) == live
        )


@dataclass(frozen=True, slots=True)
class Recorded:
    """A recorded exchange ready for matching."""

    exchange: Exchange
    value: Json
    key: Key
    deliveries: tuple[Exchange, ...] = ()
    response_ids: tuple[str, ...] = ()  # the ids the recorded answer names, found once


@dataclass(frozen=True, slots=True)
class Match:
    recorded: Recorded
    conversation: Conversation


@dataclass(frozen=True, slots=True)
class Miss:
    """No recorded exchange answers; `nearest` and `differs` say why."""

    classification: Classification
    nearest: Exchange | None
    differs: tuple[str, ...]

    def describe(self) -> str:
        c = self.classification
        what = f"{c.operation or 'unknown operation'} ({c.binding or 'not A2A'})"
        if self.nearest is None:
            return f"no recorded exchange matches {what}; the capture has none of that operation"
        n = self.nearest
        near = f"#{n.number} {n.classification.operation}"
        return f"no recorded exchange matches {what}; nearest is {near}: " + "; ".join(
            self.differs or ("it was already served and does not repeat",)
        )


def request_value(
    request: Request, classification: Classification, secret_params: frozenset[str] = frozenset()
) -> Json:
    """What is compared of a request: its A2A content, not its framing.

    `secret_params` are query parameters the recording redacted (API keys): left out, since a
    live client sends its own key where the capture has a placeholder.
    """
    value: dict[str, Json] = {"tenant": classification.tenant}
    if classification.binding is Binding.HTTP_JSON:
        value["path"] = {"taskId": classification.task_id, "configId": classification.config_id}
        query = _query(request.target)
        value["query"] = {k: v for k, v in query.items() if k not in secret_params}
    value["body"] = _body_value(request, classification)
    return value


def _query(target: str) -> dict[str, list[str]]:
    return {k: sorted(v) for k, v in sorted(parse_qs(urlsplit(target).query).items())}


def redacted_params(requests: Iterable[Request]) -> frozenset[str]:
    """The query parameters that hold a redaction placeholder in any of these requests."""
    return frozenset(
        name for request in requests for name, values in _query(request.target).items()
        if any(_REDACTED.fullmatch(v) for v in values)
    )


def _body_value(request: Request, classification: Classification) -> Json:
    if request.messages:
        return [json.loads(m.json) if m.json else {"raw": m.raw.hex() if m.raw else ""}
                for m in request.messages]
    if not request.body:
        return None
    parsed = parse_json(request.body)
    if parsed is NOT_JSON:
        return {"raw": request.body.hex()}
    if classification.binding is Binding.JSONRPC and isinstance(parsed, dict):
        return parsed.get("params")
    return parsed


def _key(classification: Classification, value: Json) -> Key:
    binding = classification.binding.value if classification.binding else "-"
    return binding, classification.operation or "-", shape_key(value)


class Engine:
    """Matches live requests against one or more captures' exchanges."""

    def __init__(self, exchanges: Iterable[Exchange]) -> None:
        served = [e for e in exchanges if e.response is not None]
        attached = _attach_deliveries(served)
        self._secret_params = redacted_params(e.request for e in served)
        self._recorded = [
            Recorded(e, value, _key(e.classification, value), attached.get(e.number, ()),
                     tuple(dict.fromkeys(_response_ids(e.response))))
            for e in served
            if e.classification.operation != PUSH_DELIVERY
            for value in [request_value(e.request, e.classification, self._secret_params)]
        ]
        self._index: dict[Key, list[Recorded]] = {}
        self._by_version: dict[Lane, list[Recorded]] = {}
        for recorded in self._recorded:
            self._index.setdefault(recorded.key, []).append(recorded)
            lane = (recorded.key, recorded.exchange.request.header("a2a-version"))
            self._by_version.setdefault(lane, []).append(recorded)
        self._conversations = itertools.count(1)
        self._by_live: dict[str, Conversation] = {}
        self._latest: dict[str, str] = {}
        # Recorded ids the replayer minted live values for, with those values.
        self._handed: dict[str, set[str]] = {}
        self._global = Conversation(0)
        # Per connection: the conversations used on it (an ordered set), and the view that
        # requests naming no id are answered in.
        self._by_client: dict[str, dict[Conversation, None]] = {}
        self._views: dict[str, Conversation] = {}
        self._active = self._global  # the conversation that last matched a request
        self.served: set[int] = set()

    @property
    def recorded(self) -> tuple[Recorded, ...]:
        return tuple(self._recorded)

    def match(
        self, request: Request, classification: Classification, *, client: str | None = None
    ) -> Match | Miss:
        """The recorded exchange answering `request`, or a Miss saying why none does.

        `client` names the connection the request came on (`host:port`, a gRPC peer); it lets a
        request that names no id find its client's conversation.
        """
        value = request_value(request, classification, self._secret_params)
        key = _key(classification, value)
        if key not in self._index:
            return self._miss(classification, value)
        # Some agents answer by the A2A-Version header (the JS SDK's card): prefer what was
        # recorded for the same header, and fall back to any version rather than miss.
        lane: Lane = (key, request.header("a2a-version"))
        if lane not in self._by_version:
            lane = (key, None)
        candidates = self._by_version.get(lane) or self._index[key]
        conversation = self._find_conversation(value, candidates)
        if conversation is self._global and not _names_values(value, candidates[0].value):
            conversation = self._client_view(client) or self._active
        chosen = self._next(conversation, lane, value, candidates)
        if conversation is self._global and _names_values(value, chosen.value):
            conversation = Conversation(next(self._conversations))
        for live, recorded in pairs(value, chosen.value):
            self._bind(conversation, live, recorded)
        if conversation is not self._global and not conversation.view:
            self._active = conversation
            if client:
                self._by_client.setdefault(client, {})[conversation] = None
        self.served.add(chosen.exchange.number)
        return Match(chosen, conversation)

    def _client_view(self, client: str | None) -> Conversation | None:
        """What one connection's client has been handed, across its conversations."""
        used = self._by_client.get(client or "")
        if not used:
            return None
        assert client is not None
        view = self._views.get(client)
        if view is None:
            view = self._views[client] = Conversation(next(self._conversations), view=True)
        for conversation in used:
            for recorded, live in conversation.to_live.items():
                view.bind(live, recorded)  # first binding wins: the view only grows
        return view

    def live_value(self, conversation: Conversation, recorded: str, *, mint: bool) -> str:
        """The live value for a recorded one, minting a fresh one when `mint` allows."""
        if recorded in conversation.to_live:
            return conversation.to_live[recorded]
        if not mint:
            return self._latest.get(recorded, recorded)
        fresh = _fresh(recorded)
        self._bind(conversation, fresh, recorded)
        self._handed.setdefault(recorded, set()).add(fresh)
        return fresh

    def _agrees(self, conversation: Conversation, found: Iterable[Pair]) -> bool:
        # A recorded id that was handed out only pairs with a live value it was handed out as:
        # a GetTask for an id nobody was given must not be answered with a recorded task.
        return all(
            conversation.agrees(live, recorded)
            and (recorded not in self._handed or live in self._handed[recorded])
            for live, recorded in found
        )

    def mint_ids(self, match: Match) -> None:
        """Give every server-minted id in the recorded answer a live value of its own."""
        exchange = match.recorded.exchange
        creating = exchange.classification.operation in CREATING_OPERATIONS
        for recorded in match.recorded.response_ids:
            self.live_value(match.conversation, recorded, mint=creating)

    def _bind(self, conversation: Conversation, live: str, recorded: str) -> None:
        conversation.bind(live, recorded)
        if conversation is not self._global:
            self._by_live.setdefault(live, conversation)
        self._latest[recorded] = live

    def _find_conversation(self, value: Json, candidates: list[Recorded]) -> Conversation:
        for live, _ in pairs(value, candidates[0].value):
            found = self._by_live.get(live)
            if found is not None:
                return found
        return self._global

    def _next(
        self, conversation: Conversation, lane: Lane, value: Json, candidates: list[Recorded]
    ) -> Recorded:
        """The next candidate, in recorded order, whose ids agree with the conversation.

        The search starts after the one served last, so a session of N identical requests
        costs N checks, not N squared.  Past the end, the last agreeing one repeats; when none
        agrees, candidates are served in order regardless.
        """
        start = conversation.cursors.get(lane, 0)
        after = range(start, len(candidates))
        before = range(min(start, len(candidates)) - 1, -1, -1)
        index = next((i for i in itertools.chain(after, before)
                      if self._agrees(conversation, pairs(value, candidates[i].value))), None)
        if index is None:
            index = min(start, len(candidates) - 1)
        conversation.cursors[lane] = max(start, index + 1)
        return candidates[index]

    def _miss(self, classification: Classification, value: Json) -> Miss:
        same = [r for r in self._recorded if r.exchange.classification.operation
                == classification.operation] or [
            r for r in self._recorded if r.exchange.classification.binding == classification.binding
        ]
        if not same:
            return Miss(classification, None, ())
        scored = [(len(differences(value, r.value)), r) for r in same]
        _, nearest = min(scored, key=lambda item: item[0])
        found = differences(value, nearest.value)
        if nearest.exchange.classification.operation != classification.operation:
            found.insert(0, f"operation: recorded {nearest.exchange.classification.operation}")
        return Miss(classification, nearest.exchange, tuple(found[:8]))


def _fresh(recorded: str) -> str:
    # Keep the recorded id's look: a UUID for a UUID, a suffixed copy for anything else.
    if _UUID.fullmatch(recorded):
        return str(uuid.uuid4())
    return f"{recorded}-{uuid.uuid4().hex[:8]}"


def _names_values(live: Json, recorded: Json) -> bool:
    # A request that names no id the replayer handed out starts a conversation of its own,
    # unless it names nothing volatile at all (a card fetch, a list): those stay global.
    return any(True for _ in pairs(live, recorded))


def _response_ids(response: Response | None) -> Iterator[str]:
    if response is None:
        return
    for text in _response_texts(response):
        document = parse_json(text)
        if document is not NOT_JSON:
            yield from _ids_in(document, None)


def _response_texts(response: Response) -> Iterator[str | bytes]:
    if response.body:
        yield response.body
    for event in response.events:
        data = event_data(event.lines)
        if data:
            yield data
    for message in response.messages:
        if message.json:
            yield message.json


def _ids_in(value: Json, key: str | None) -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "jsonrpc":
                continue
            if k == "id" and "jsonrpc" in value:
                continue
            yield from _ids_in(v, k)
    elif isinstance(value, list):
        for item in value:
            yield from _ids_in(item, key)
    elif isinstance(value, str) and key in MINTED_KEYS and value:
        yield value


def _attach_deliveries(exchanges: list[Exchange]) -> dict[int, tuple[Exchange, ...]]:
    """Each recorded push delivery, under the exchange that set it off.

    The trigger is the latest exchange started before the delivery that mentions the task the
    delivery is about, or failing that the latest exchange started before it.
    """
    attached: dict[int, list[Exchange]] = {}
    ordinary = [e for e in exchanges if e.classification.operation != PUSH_DELIVERY]
    for delivery in (e for e in exchanges if e.classification.operation == PUSH_DELIVERY):
        before = [e for e in ordinary if e.started_us <= delivery.started_us]
        if not before:
            continue
        task = delivery.classification.task_id
        mentions = [e for e in before if task and _mentions(e, task)]
        trigger = (mentions or before)[-1]
        attached.setdefault(trigger.number, []).append(delivery)
    return {number: tuple(found) for number, found in attached.items()}


def _mentions(exchange: Exchange, text: str) -> bool:
    needle = text.encode()
    response = exchange.response
    blobs = [exchange.request.target.encode(), exchange.request.body]
    if response is not None:
        blobs.append(response.body)
        blobs.extend("\n".join(e.lines).encode() for e in response.events)
        blobs.extend((m.json or "").encode() for m in response.messages)
    return any(needle in blob for blob in blobs)
