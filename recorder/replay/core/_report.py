"""What `--strict` checks: recorded exchanges never served, requests never matched, and answers
the replayer wrote itself.

Exchanges with the same key count as one.  Unclean: an exchange or delivery never served, a
*synthesized* answer, a fault spec that never hit.  Listed but clean: values the client's
version cannot carry, answers a fault shaped.  Lists are bounded (`MAX_NOTES`) and redacted
when read.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from recorder.capture import Exchange
from recorder.script import Key, Script

MAX_NOTES = 1000


class Report:
    """Served keys, delivered pushes, misses and synthesized answers of one replayer."""

    def __init__(
        self,
        script: Script,
        shown: Callable[[Iterable[str]], list[str]] = list,
        faults: Iterable[str] = (),  # the fault profile's specs, each to hit a request once
    ) -> None:
        self._shown = shown
        self._first: dict[Key, Exchange] = {}
        for step in script.steps:
            self._first.setdefault(step.key, step.exchange)
        self._deliveries = sorted(
            (d for found in script.deliveries.values() for d in found), key=lambda e: e.number
        )
        self._served: set[Key] = set()
        self._delivered: set[int] = set()
        self._misses: deque[str] = deque(maxlen=MAX_NOTES)
        self._synthesized: deque[str] = deque(maxlen=MAX_NOTES)
        self._not_carried: dict[str, None] = {}
        self.miss_count = 0
        self.synthesized_count = 0
        self._faulted: deque[str] = deque(maxlen=MAX_NOTES)
        self._fault_hits = dict.fromkeys(faults, 0)  # spec as written -> answers it shaped
        self._expected: list[Callable[[], list[str]]] = []  # what else was not replayed
        self._lock = threading.Lock()

    # -- recording ----------------------------------------------------------------------

    def served(self, key: Key) -> None:
        self._served.add(key)

    def delivered(self, number: int) -> None:
        self._delivered.add(number)

    def missed(self, text: str) -> None:
        with self._lock:
            self._misses.append(text)
            self.miss_count += 1

    def synthesized(self, text: str) -> None:
        """An answer the replayer wrote itself (`text` names the request and why)."""
        with self._lock:
            self._synthesized.append(text)
            self.synthesized_count += 1

    def expect(self, source: Callable[[], list[str]]) -> None:
        """Something else that may go unreplayed: `source()` names each such thing."""
        self._expected.append(source)

    def faulted(self, text: str, specs: Iterable[str]) -> None:
        """An answer a fault profile shaped, as asked (`text` names the request and how)."""
        with self._lock:
            self._faulted.append(text)
            for spec in specs:
                self._fault_hits[spec] = self._fault_hits.get(spec, 0) + 1

    def not_carried(self, text: str) -> None:
        """A value the client's protocol version cannot carry (`text` names it), once."""
        with self._lock:
            if text not in self._not_carried and len(self._not_carried) < MAX_NOTES:
                self._not_carried[text] = None

    # -- reading ------------------------------------------------------------------------

    @property
    def unserved(self) -> list[Exchange]:
        """The first exchange of each key never matched, and deliveries never made."""
        served = set(self._served)
        keys = [e for k, e in self._first.items() if k not in served]
        pushes = [d for d in self._deliveries if d.number not in self._delivered]
        return sorted([*keys, *pushes], key=lambda e: e.number)

    @property
    def misses(self) -> list[str]:
        return self._lines()[0]

    @property
    def synthesized_answers(self) -> list[str]:
        return self._lines()[1]

    @property
    def faults_unused(self) -> list[str]:
        """The fault specs that never hit a request."""
        with self._lock:
            return [spec for spec, hits in self._fault_hits.items() if not hits]

    @property
    def not_carried_values(self) -> list[str]:
        return self._lines()[3]

    def _lines(self) -> list[list[str]]:
        """The misses, synthesized and faulted answers, and values not carried, as read."""
        with self._lock:
            kept = [[*self._misses], [*self._synthesized], [*self._faulted], [*self._not_carried]]
        shown = iter(self._shown([line for lines in kept for line in lines]))
        return [[next(shown) for _ in lines] for lines in kept]

    @property
    def not_replayed(self) -> list[str]:
        """What the recording could not give this replay (a webhook no delivery reached)."""
        return [text for source in self._expected for text in source()][:MAX_NOTES]

    @property
    def clean(self) -> bool:
        return (
            not self.unserved
            and not self.miss_count
            and not self.synthesized_count
            and not self.faults_unused
            and not self.not_replayed
        )

    def as_json(self) -> dict[str, Any]:
        misses, synthesized, faulted, not_carried = self._lines()
        return {
            "unserved": [f"#{e.number} {e.classification.operation}" for e in self.unserved],
            "unmatched": misses,
            "synthesized": synthesized,
            "faulted": faulted,
            "faults_unused": self.faults_unused,
            "not_carried": not_carried,
            "not_replayed": self.not_replayed,
            "clean": self.clean,
        }
