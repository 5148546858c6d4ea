"""Which recorded exchanges answer a live request: decided as late as the requests allow (pure).

1. *Senses.*  Each id in the live request is read every way it can be: ISSUED in each family
   that holds it (`_state`), kept (served as recorded: a page token), FIXED (it existed before
   the capture), UNKNOWN (a reference to nothing: a probe), the client's OWN (new at a chosen
   position; a chosen id already known may also be new again, for another session), or FRESH.
   A *hypothesis* picks one sense per id; those whose families share a session come first,
   then those that read a known chosen id as known.
2. *Steps.*  A hypothesis gives a key (`_ids`), hence recorded steps.  A step fits when every
   issued id it names is what the live id stands for in some branch of its family; an
   *option* is a step with the branch it fits in each family named.  A read keeps, per
   branch, the first fitting step after that branch's frontier, else the latest before it (a
   poll follows the recorded story, then repeats its end).  A creating request keeps every
   fitting creating step.
3. *Groups.*  Options whose answers a client cannot tell apart (`Script.shape_of`) form a
   group; the group answered is the first by: live ids equal to the recorded ones (a capture
   sent back as written), ids never handed out yet, a step ahead of its frontier, the earliest
   step.  Answering keeps exactly the branches of the group: that is how a live id is
   narrowed.  Nothing is guessed that a later request cannot still decide.
4. *Placement.*  A group must keep every session matched (Hall's condition, `_state`): a
   narrowing that breaks it, or a create that does not fit the session its ids name, is taken
   only when nothing else fits (the family then goes to a session of its own).

A request no hypothesis finds a fitting step for is unanswered (`Unanswered`): a miss.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum

from recorder.protocol import Classification, IdRole
from recorder.replay._ids import Json, Key, Provenance, Slot, make_key, shape, token
from recorder.replay._script import Script, Step
from recorder.replay._state import Family, LiveState, Session

MAX_HYPOTHESES = 32
MAX_TUPLES = 256  # branch combinations looked at per step


@dataclass(frozen=True, slots=True)
class Sense:
    """One reading of one id of a live request."""

    provenance: Provenance
    family: Family | None = None  # ISSUED: the family that holds it
    value: str | None = None  # FIXED, or ISSUED and kept: the recorded id it is


Hypothesis = tuple[Sense, ...]
Branches = tuple[tuple[Family, int], ...]  # per family named: the root of the branch used


@dataclass(frozen=True, slots=True)
class Option:
    step: Step
    branches: Branches
    ahead: bool = True  # the step lies after the branch's frontier (not a repeat)


class Kind(StrEnum):
    STATELESS = "stateless"
    READ = "read"
    CREATE = "create"
    LIST = "list"


@dataclass(frozen=True, slots=True)
class Decision:
    kind: Kind
    hypothesis: Hypothesis
    key: Key
    step: Step  # the step answered from (a listing picks its own, see `_listing`)
    options: tuple[Option, ...] = ()  # the group kept (reads and creates)
    session: Session | None = None  # a create: the session it joins (None: a new one)
    fits: bool = True  # every session stays matched


@dataclass(frozen=True, slots=True)
class Unanswered:
    key: Key  # the key of the most likely reading
    fitting: tuple[Step, ...]  # steps of that key, which named other recorded ids


@dataclass(frozen=True, slots=True)
class LiveRequest:
    parsed: object  # what the reader shares between requests that say the same (cache key)
    classification: Classification
    value: Json
    slots: tuple[Slot, ...]
    version: str | None  # the A2A-Version header
    small: bool = True  # whether its key may be kept (the reader's `Parsed.small`)


class Resolver:
    """Resolves live requests against one script and one live state."""

    def __init__(self, script: Script, state: LiveState) -> None:
        self.script = script
        self.state = state
        self.keys = KeyCache()

    def resolve(self, live: LiveRequest) -> Decision | Unanswered:
        fallback: Decision | None = None
        missed: Unanswered | None = None
        for hypothesis in self.hypotheses(live.slots):
            key = self.keys.key(live, hypothesis)
            steps = self.script.candidates(key, live.version)
            if missed is None or (steps and not missed.fitting):
                missed = Unanswered(key, tuple(steps[:8]))
            if not steps:
                continue
            if steps[0].stateless or steps[0].listing:
                return self._direct(hypothesis, key, steps, live)
            for decision in self._decisions(hypothesis, key, steps, live):
                if decision.fits:
                    return decision
                fallback = fallback or decision
        if fallback is not None:
            return fallback
        return missed or Unanswered(self.keys.key(live, ()), ())

    # -- senses and hypotheses ------------------------------------------------------------

    def senses(self, slot: Slot) -> list[Sense]:
        if slot.role is IdRole.FRESH:
            return [Sense(Provenance.FRESH)]
        found = [Sense(Provenance.ISSUED, f) for f in self.state.families_of(slot.value)]
        if self.state.kept(slot.value):
            found.append(Sense(Provenance.ISSUED, value=slot.value))
        if not found:
            if slot.value in self.script.fixed:
                return [Sense(Provenance.FIXED, value=slot.value)]
            role = Provenance.UNKNOWN if slot.role is IdRole.REFERENCE else Provenance.OWN
            return [Sense(role)]
        if slot.role is IdRole.CHOSEN:
            found.append(Sense(Provenance.OWN))
        return found

    def hypotheses(self, slots: Sequence[Slot]) -> list[Hypothesis]:
        choices = [self.senses(s) for s in slots]
        if all(len(found) == 1 for found in choices):  # most requests: one reading
            return [tuple(found[0] for found in choices)]
        found = list(itertools.islice(itertools.product(*choices), MAX_HYPOTHESES))

        def rank(hypothesis: Hypothesis) -> tuple[bool, int]:
            sessions = {s.family.session for s in hypothesis if s.family is not None}
            own = sum(
                1
                for sense, options in zip(hypothesis, choices, strict=True)
                if sense.provenance is Provenance.OWN and len(options) > 1
            )
            return len(sessions) > 1, own

        return sorted(found, key=rank)

    # -- stateless steps and listings ------------------------------------------------------

    def _direct(
        self, hypothesis: Hypothesis, key: Key, steps: list[Step], live: LiveRequest
    ) -> Decision:
        """A stateless step (the first that fits the ids named, else the first), or a listing
        (`_listing` chooses among the key's steps)."""
        if steps[0].listing:
            return Decision(Kind.LIST, hypothesis, key, steps[0])
        for step in steps:
            branches = self._fit(hypothesis, step, live)
            if branches is not None:
                first = next(_tuples(branches))
                return Decision(Kind.STATELESS, hypothesis, key, step, (Option(step, first),))
        return Decision(Kind.STATELESS, hypothesis, key, steps[0])

    # -- reads and creates ------------------------------------------------------------------

    def _decisions(
        self, hypothesis: Hypothesis, key: Key, steps: list[Step], live: LiveRequest
    ) -> Iterator[Decision]:
        options = self._options(hypothesis, steps, live)
        for group in self._groups(options, hypothesis, live):
            yield self._placed(hypothesis, key, group, live)

    def _options(
        self, hypothesis: Hypothesis, steps: list[Step], live: LiveRequest
    ) -> list[Option]:
        """Every creating step that fits, with its branches; for the other steps, the one each
        combination of branches serves next (`_along`)."""
        fitting: dict[Branches, list[Step]] = {}
        options: list[Option] = []
        for step in self._named_steps(hypothesis, steps, live):
            branches = self._fit(hypothesis, step, live)
            for combination in _tuples(branches) if branches is not None else ():
                if step.creating:
                    options.append(Option(step, combination))
                else:
                    fitting.setdefault(combination, []).append(step)
        options += [self._along(t, found, hypothesis, live) for t, found in fitting.items()]
        return options

    def _named_steps(
        self, hypothesis: Hypothesis, steps: list[Step], live: LiveRequest
    ) -> Sequence[Step]:
        """The steps worth fitting: looked up by the recorded ids they name when the live ids
        can stand for few, else all of them."""
        values: list[list[str | None]] = []
        for sense, slot in zip(hypothesis, live.slots, strict=True):
            if sense.provenance is Provenance.OWN:
                return steps  # the client's own recorded id can be anything
            if sense.family is not None:
                values.append(list(self._recorded_values(sense.family, slot.value)))
            else:
                values.append([sense.value])
        if _product_size(values) > len(steps):
            return steps
        index = self.script.naming(steps)
        found = [s for named in itertools.product(*values) for s in index.get(named, ())]
        return sorted(found, key=lambda s: s.index)

    def _recorded_values(self, family: Family, live: str) -> dict[str, None]:
        return dict.fromkeys(self.state.recorded(family, r, live) for r in family.branches)

    def _fit(
        self, hypothesis: Hypothesis, step: Step, live: LiveRequest
    ) -> dict[Family, list[int]] | None:
        """For each family named, the roots of its branches in which `step` names what the
        live ids stand for; None when some family has none."""
        found: dict[Family, list[int]] = {}
        for sense, slot, named in zip(hypothesis, live.slots, step.named, strict=True):
            family = sense.family
            if family is None:
                kept = sense.provenance is Provenance.ISSUED and sense.value is not None
                if kept and named != sense.value:
                    return None
                continue
            roots = found.get(family, list(family.branches))
            roots = [r for r in roots if self.state.recorded(family, r, slot.value) == named]
            if not roots:
                return None
            found[family] = roots
        return found

    def _along(
        self, branches: Branches, steps: list[Step], hypothesis: Hypothesis, live: LiveRequest
    ) -> Option:
        """The step a read serves in these branches: the first after their frontier, else the
        latest before it."""
        frontier = max(
            (
                family.branches[root].frontier.get(
                    self.state.recorded(family, root, slot.value), root
                )
                for family, root in branches
                for sense, slot in zip(hypothesis, live.slots, strict=True)
                if sense.family is family
            ),
            default=-1,
        )
        ahead = next((s for s in steps if s.index > frontier), None)
        return Option(ahead or steps[-1], branches, ahead is not None)

    def _groups(
        self, options: list[Option], hypothesis: Hypothesis, live: LiveRequest
    ) -> list[list[Option]]:
        if len(options) <= 1:
            return [options] if options else []
        ranked = sorted(options, key=lambda o: self._preference(o, hypothesis, live))
        if len({o.step.index for o in ranked}) <= 1:
            return [ranked]
        groups: dict[tuple[bool, str], list[Option]] = {}
        for option in ranked:
            shaped = (option.step.creating, self.script.shape_of(option.step))
            groups.setdefault(shaped, []).append(option)
        return list(groups.values())  # in the order of their best option

    def _preference(
        self, option: Option, hypothesis: Hypothesis, live: LiveRequest
    ) -> tuple[bool, bool, bool, int]:
        literal = all(
            self.state.recorded(family, root, slot.value) == slot.value
            for family, root in option.branches
            for sense, slot in zip(hypothesis, live.slots, strict=True)
            if sense.family is family
        )
        handed = any(self.state.handed(v) for v in option.step.introduced)
        return not literal, handed, not option.ahead, option.step.index

    def _placed(
        self, hypothesis: Hypothesis, key: Key, group: list[Option], live: LiveRequest
    ) -> Decision:
        """The decision for a group, and whether it keeps every session matched."""
        fits = all(
            self.state.fits_narrowed(family, roots) for family, roots in _kept(group).items()
        )
        step = group[0].step
        if not step.creating:
            return Decision(Kind.READ, hypothesis, key, step, tuple(group), None, fits)
        sessions = {s.family.session for s in hypothesis if s.family is not None}
        session = next(iter(sessions)) if len(sessions) == 1 else None
        if session is not None:
            own = {
                slot.value
                for sense, slot in zip(hypothesis, live.slots, strict=True)
                if sense.provenance is Provenance.OWN
            }
            taken = {v for f in session.families for v in f.live}
            roots = dict.fromkeys(o.step.index for o in group)
            fits = fits and not (own & taken) and self.state.fits(session, roots)
        elif sessions:
            fits = False
        return Decision(Kind.CREATE, hypothesis, key, step, tuple(group), session, fits)


def _kept(group: list[Option]) -> dict[Family, list[int]]:
    kept: dict[Family, list[int]] = {}
    for option in group:
        for family, root in option.branches:
            roots = kept.setdefault(family, [])
            if root not in roots:
                roots.append(root)
    return kept


def _tuples(branches: dict[Family, list[int]]) -> Iterator[Branches]:
    families = list(branches)
    combos = itertools.product(*(branches[f] for f in families))
    for combination in itertools.islice(combos, MAX_TUPLES):
        yield tuple(zip(families, combination, strict=True))


def _product_size(values: list[list[str | None]]) -> int:
    size = 1
    for found in values:
        size *= len(found)
    return size


class KeyCache:
    """The key of a live request under a hypothesis, cached (a poll says the same again)."""

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._keys: dict[tuple[object, ...], Key] = {}

    def key(self, live: LiveRequest, hypothesis: Hypothesis) -> Key:
        tokens = tuple(_token(s) for s in hypothesis)
        cache_key = (live.parsed, tokens)
        found = self._keys.get(cache_key)
        if found is None:
            shaped = shape(live.value, live.slots, [_token_json(t) for t in tokens])
            found = make_key(live.classification, shaped)
            if not live.small:
                return found  # a large request is no poll: keeping its key would only cost
            if len(self._keys) >= self._size:
                self._keys.clear()
            self._keys[cache_key] = found
        return found


def _token(sense: Sense) -> tuple[str, str | None]:
    if sense.provenance is Provenance.FIXED:
        return sense.provenance.value, sense.value
    return sense.provenance.value, None


def _token_json(found: tuple[str, str | None]) -> Json:
    return token(Provenance(found[0]), found[1])
