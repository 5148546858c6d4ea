"""A listing (ListTasks) answered as the agent's store would answer it (pure).

A live agent lists every task in its store.  The replay's store is the recorded listing with
each recorded task shown for the live families that stand for it (`_state`), so:

- a task that existed before the recording (no step of the capture created it) stays, under
  its recorded id;
- a task the capture created is shown once for each live family in scope whose branches hold
  it, with that family's ids: families and tasks are paired by a maximum matching, and a
  family left over (more live clients than recorded ones, which cannot be told apart) is
  shown with a task it could be, beside it;
- a task the capture created and no live client did is left out, as the agent would.

The scope is the whole store, or, for a listing filtered by an id (a context), the sessions
that id belongs to.  One client replaying its own capture therefore gets exactly the recorded
answer; five identical clients each see their own task (and each other's, as live).

Among the recorded listings of the same request, the one answered is the one that leaves out
and leaves over the fewest tasks, then the first after the families' frontiers (the store as
it stood when the recording listed it).  `totalSize` follows the items shown.  What changed
is said (`Listing.changes`), live tasks in scope that no item of the listing stands for too.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from recorder.capture import Response
from recorder.protocol import LISTINGS, Binding
from recorder.replay._ids import Json
from recorder.replay._respond import Swapper, dumps_like, form_of, wire_bytes
from recorder.replay._script import Script, Step
from recorder.replay._state import Family, LiveState, Session

Shown = tuple[int, Family | None, int]  # (item index, the family shown, its root; None: as is)


@dataclass(frozen=True, slots=True)
class _Items:
    """The items of one recorded listing: their ids and where the capture created them."""

    ids: tuple[str, ...]
    origins: tuple[tuple[int, int] | None, ...]  # (root step, position) or None: existed


@dataclass(slots=True)
class Plan:
    step: Step
    shown: list[Shown] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # recorded ids no live family holds
    extra: int = 0  # families shown beside the item they were matched after
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
        self._items: dict[int, _Items] = {}

    def answer(
        self,
        steps: Sequence[Step],
        scope: frozenset[Session] | None,
        mapping: dict[str, str],
        binding: Binding | None,
    ) -> Listing:
        """The listing to serve for a request whose key's steps are `steps`."""
        plans = [self._plan(step, scope) for step in steps]
        tasks = {f for f in self.state.families(scope) if self._holds_task(f)}
        for plan in plans:
            plan.unshown = len(tasks - {f for _, f, _ in plan.shown})
        plan = self._best(plans)
        response, changed = self._render(plan, mapping, binding)
        return Listing(response, plan.step, _changes(plan, changed))

    # -- planning -------------------------------------------------------------------------

    def items(self, step: Step) -> _Items:
        found = self._items.get(step.index)
        if found is None:
            ids = tuple(_item_ids(step))
            origins = tuple(self.script.origin.get(i) for i in ids)
            found = self._items[step.index] = _Items(ids, origins)
        return found

    def _plan(self, step: Step, scope: frozenset[Session] | None) -> Plan:
        items = self.items(step)
        candidates: dict[int, list[tuple[Family, int]]] = {}
        for n, origin in enumerate(items.origins):
            if origin is not None:
                candidates[n] = [
                    (f, origin[0])
                    for f in self.state.by_root(origin[0])
                    if scope is None or f.session in scope
                ]
        matched = _match(candidates)
        plan = Plan(step)
        for n, (recorded, origin) in enumerate(zip(items.ids, items.origins, strict=True)):
            if origin is None:
                plan.shown.append((n, None, -1))
            elif n in matched:
                plan.shown.append((n, *matched[n]))
            else:
                plan.left_out.append(recorded)
        taken = {f for f, _ in matched.values()}
        for n, found in candidates.items():
            for family, root in found:
                if family not in taken:
                    taken.add(family)
                    plan.shown.append((n, family, root))
                    plan.extra += 1
        plan.shown.sort(key=lambda s: s[0])
        return plan

    def _holds_task(self, family: Family) -> bool:
        """Whether a family holds a task (a live agent would list it)."""
        root = next(iter(family.branches))
        return any(r in self.script.task_ids for r in self.script.steps[root].introduced)

    def _best(self, plans: list[Plan]) -> Plan:
        least = min(p.cost for p in plans)
        fitting = [p for p in plans if p.cost == least]
        frontier = max((self._frontier(p) for p in fitting), default=-1)
        return next((p for p in fitting if p.step.index > frontier), fitting[-1])

    def _frontier(self, plan: Plan) -> int:
        found = -1
        for _, family, root in plan.shown:
            branch = family.branches.get(root) if family is not None else None
            if branch is not None:
                found = max(found, root, *branch.frontier.values())
        return found

    # -- rendering ------------------------------------------------------------------------

    def _render(
        self, plan: Plan, mapping: dict[str, str], binding: Binding | None
    ) -> tuple[Response, bool]:
        response = plan.step.exchange.response
        assert response is not None
        if binding is Binding.GRPC:
            messages = []
            changed = False
            for message in response.messages:
                text, moved = self._document(message.json, plan, mapping, False)
                changed = changed or moved
                messages.append(replace(message, json=text) if text is not None else message)
            return replace(response, messages=tuple(messages)), changed
        body = response.body.decode("utf-8", "surrogateescape") if response.body else None
        text, changed = self._document(body, plan, mapping, binding is Binding.JSONRPC)
        if text is None:
            return response, False
        return replace(response, body=wire_bytes(text)), changed

    def _document(
        self, text: str | None, plan: Plan, mapping: dict[str, str], enveloped: bool
    ) -> tuple[str | None, bool]:
        form = form_of(text) if text else None
        if text is None or form is None:
            return None, False
        document = json.loads(text)
        list_key, _ = LISTINGS[plan.step.exchange.classification.operation or "ListTasks"]
        holder = document.get("result") if enveloped and isinstance(document, dict) else document
        if not isinstance(holder, dict) or not isinstance(holder.get(list_key), list):
            return None, False
        recorded: list[Json] = holder[list_key]
        outer = Swapper(mapping)
        shown = [self._item(recorded[n], family, root) for n, family, root in plan.shown]
        mapped = any(self._agent_ids(family, root) for _, family, root in plan.shown)
        holder[list_key] = []
        document = outer.walk(document)
        swapped: dict[str, Json] = document["result"] if enveloped else document
        swapped[list_key] = shown
        if isinstance(swapped.get("totalSize"), int):
            swapped["totalSize"] += len(shown) - len(recorded)
        rendered = dumps_like(form, document)
        return rendered, mapped

    def _item(self, item: Json, family: Family | None, root: int) -> Json:
        if family is None:
            return item
        branch = family.branches[root]
        pairs = {
            **self.state.session_mapping(family.session),
            **branch.echoes,
            **branch.aliases,
            **dict(self.state.mapping(family, root)),
        }
        return Swapper(pairs).walk(item)

    def _agent_ids(self, family: Family | None, root: int) -> bool:
        """Whether showing `family` maps ids the agent handed out (not the client's own)."""
        if family is None:
            return False
        owned = self.script.steps[root].owned
        pairs = list(self.state.mapping(family, root))[owned:]
        return bool(family.branches[root].aliases) or any(r != v for r, v in pairs)


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


def _match(
    candidates: dict[int, list[tuple[Family, int]]],
) -> dict[int, tuple[Family, int]]:
    """A maximum matching of items to families (augmenting paths, breadth first)."""
    item_of: dict[Family, int] = {}
    matched: dict[int, tuple[Family, int]] = {}
    for start in candidates:
        parent: dict[int, tuple[int, Family, int] | None] = {start: None}
        queue = deque([start])
        end: tuple[int, Family, int] | None = None
        while queue and end is None:
            item = queue.popleft()
            for family, root in candidates[item]:
                holder = item_of.get(family)
                if holder is None:
                    end = (item, family, root)
                    break
                if holder not in parent:
                    parent[holder] = (item, family, root)
                    queue.append(holder)
        while end is not None:
            item, family, root = end
            matched[item] = (family, root)
            item_of[family] = item
            end = parent[item]
    return matched


def _item_ids(step: Step) -> Iterable[str]:
    from recorder.replay._script import answer_documents

    operation = step.exchange.classification.operation or ""
    list_key, id_key = LISTINGS[operation]
    for document in answer_documents(step.exchange.response):
        holder = document.get("result", document) if isinstance(document, dict) else None
        items = holder.get(list_key) if isinstance(holder, dict) else None
        for item in items if isinstance(items, list) else ():
            yield str(item.get(id_key, "")) if isinstance(item, dict) else ""
