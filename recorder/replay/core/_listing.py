"""A listing (ListTasks) answered as the agent's store would answer it (pure).

The store is the recorded listing with each task the capture created shown once for each live
family in scope that created it, with that family's ids; a task from before the recording
stays, and one no live client created is left out.  So one client replaying its own capture
gets exactly the recorded answer, and five identical clients each see their own task.  Only
the recorded listings around the store's frontier are looked at (`WINDOW`).
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from recorder.capture import Response
from recorder.protocol import LISTINGS, Binding
from recorder.replay.core._state import Family, LiveState, Session, World
from recorder.script import (
    Json,
    Lookup,
    Script,
    Step,
    Swap,
    answer_documents,
    dumps_like,
    form_of,
    wire_bytes,
)

WINDOW = 4  # recorded listings looked at per request, at and after the store's frontier

Shown = tuple[int, Family | None]  # (item index, the family shown; None: the item as it is)


@dataclass(slots=True)
class Plan:
    step: Step
    shown: list[Shown] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # recorded ids no live family holds
    extra: int = 0  # families shown beside the item their member created
    unshown: int = 0  # families in scope this listing cannot show

    @property
    def cost(self) -> int:
        return len(self.left_out) + self.unshown


@dataclass(frozen=True, slots=True)
class Listing:
    response: Response
    step: Step
    changes: tuple[str, ...]


class Lister:
    def __init__(self, script: Script, state: LiveState) -> None:
        self.script = script
        self.state = state
        self._items: dict[int, tuple[str, ...]] = {}  # step -> its items' ids (derived once)
        self._filtered: dict[int, bool] = {}  # step -> whether its named ids filtered it

    def answer(
        self,
        steps: Sequence[Step],
        scope: Sequence[Session] | None,
        lookup: Lookup,
        binding: Binding | None,
    ) -> Listing:
        """The listing to serve for a request whose key's steps are `steps`."""
        store = self._store(scope)
        frontier = max((max([m, *w.frontier.values()]) for _, w, m in store), default=-1)
        at = bisect.bisect_right(steps, frontier, key=lambda s: s.index)
        window = steps[max(0, at - 1) : at + WINDOW] or steps[-1:]
        plans = [self._plan(step, store) for step in window]
        plan = min(plans, key=lambda p: (p.cost, p.step.index <= frontier, p.step.index))
        response, changed = self._render(plan, lookup, binding)
        return Listing(response, plan.step, _changes(plan, changed))

    def _store(self, scope: Sequence[Session] | None) -> list[tuple[Family, World, int]]:
        """(family, its session's first world, its member) per family in scope holding a task."""
        found = []
        for family in self.state.families(scope):
            world = family.session.worlds[0]
            member = world.steps[family]
            if any(r in self.script.task_ids for r in self.script.steps[member].introduced):
                found.append((family, world, member))
        return found

    def filtered(self, step: Step) -> bool:
        """Whether the agent filtered `step`'s listing by the ids its request names."""
        found = self._filtered.get(step.index)
        if found is None:
            found = self._filtered[step.index] = _filtered(step)
        return found

    def items(self, step: Step) -> tuple[str, ...]:
        found = self._items.get(step.index)
        if found is None:
            _, id_key = LISTINGS[step.exchange.classification.operation or ""]
            found = self._items[step.index] = tuple(
                str(item.get(id_key, "")) if isinstance(item, dict) else "" for item in _items(step)
            )
        return found

    def _plan(self, step: Step, store: list[tuple[Family, World, int]]) -> Plan:
        by_member: dict[int, list[Family]] = {}
        for family, _, member in store:
            by_member.setdefault(member, []).append(family)
        plan = Plan(step)
        named: set[int] = set()
        for n, recorded in enumerate(self.items(step)):
            origin = self.script.origin.get(recorded)
            if origin is None or recorded in self.script.fixed:
                plan.shown.append((n, None))
                continue
            families = by_member.get(origin[0], [])
            named.add(origin[0])
            if not families:
                plan.left_out.append(recorded)
            plan.shown += [(n, f) for f in families]
            plan.extra += max(0, len(families) - 1)
        # A task the agent held when it listed and did not show, it filtered out (a status
        # timestamp filter, a context): only one created after the recorded listing is unshown.
        plan.unshown = sum(
            1 for _, _, member in store if member not in named and member > step.index
        )
        return plan

    # -- rendering ------------------------------------------------------------------------

    def _render(self, plan: Plan, lookup: Lookup, binding: Binding | None) -> tuple[Response, bool]:
        response = plan.step.exchange.response
        assert response is not None
        if binding is Binding.GRPC:
            messages = []
            changed = False
            for message in response.messages:
                text, moved = self._document(message.json, plan, lookup, False)
                changed = changed or moved
                messages.append(replace(message, json=text) if text is not None else message)
            return replace(response, messages=tuple(messages)), changed
        body = response.body.decode("utf-8", "surrogateescape") if response.body else None
        text, changed = self._document(body, plan, lookup, binding is Binding.JSONRPC)
        if text is None:
            return response, False
        return replace(response, body=wire_bytes(text)), changed

    def _document(
        self, text: str | None, plan: Plan, lookup: Lookup, enveloped: bool
    ) -> tuple[str | None, bool]:
        if text is None or form_of(text) is None:
            return None, False
        document = json.loads(text)
        list_key, _ = LISTINGS[plan.step.exchange.classification.operation or "ListTasks"]
        holder = document.get("result") if enveloped and isinstance(document, dict) else document
        if not isinstance(holder, dict) or not isinstance(holder.get(list_key), list):
            return None, False
        recorded: list[Json] = holder[list_key]
        shown = [self._item(recorded[n], family) for n, family in plan.shown]
        mapped = any(self._maps(family) for _, family in plan.shown)
        holder[list_key] = []
        document = Swap(lookup).walk(document)
        swapped: dict[str, Json] = document["result"] if enveloped else document
        swapped[list_key] = shown
        if isinstance(swapped.get("totalSize"), int):
            swapped["totalSize"] += len(shown) - len(recorded)
        return dumps_like(text, document), mapped

    def _item(self, item: Json, family: Family | None) -> Json:
        if family is None:
            return item
        return Swap(family.session.worlds[0].values.get).walk(item)

    def _maps(self, family: Family | None) -> bool:
        """Whether showing `family` maps ids the agent handed out (not the client's own)."""
        if family is None:
            return False
        world = family.session.worlds[0]
        member = self.script.steps[world.steps[family]]
        pairs = zip(member.introduced[member.owned :], family.live[member.owned :], strict=True)
        return any(r != v for r, v in pairs)


def _changes(plan: Plan, changed: bool) -> tuple[str, ...]:
    found = []
    if plan.extra:
        found.append(
            f"listing merged: {plan.extra} task(s) of live clients the recording had fewer of "
            "shown beside the recorded task they stand for"
        )
    if plan.left_out:
        shown = ", ".join(plan.left_out[:4]) + (" ..." if len(plan.left_out) > 4 else "")
        found.append(
            f"listing: {len(plan.left_out)} recorded task(s) no live client created left out "
            f"({shown})"
        )
    if plan.unshown:
        found.append(
            f"listing: {plan.unshown} live task(s) this recorded listing has no item for left "
            "out (the recording listed before they existed)"
        )
    if changed and not found:
        found.append("listing: ids mapped to the live ones")
    return tuple(found)


def _items(step: Step) -> Iterable[Json]:
    list_key, _ = LISTINGS[step.exchange.classification.operation or ""]
    for document in answer_documents(step.exchange.response):
        holder = document.get("result", document) if isinstance(document, dict) else None
        items = holder.get(list_key) if isinstance(holder, dict) else None
        yield from items if isinstance(items, list) else ()


def _filtered(step: Step) -> bool:
    """Whether the agent filtered this listing by the ids its request names; an agent that ignores a
    field (a2a-sdk reads no `context_id` query parameter) lists its whole store."""
    named = {r.slot.value for r in step.slots}
    return all(
        not isinstance(item, dict) or item.get("contextId", item.get("context_id")) in named
        for item in _items(step)
    )
