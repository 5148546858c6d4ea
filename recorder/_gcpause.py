"""Pause the cyclic garbage collector while a big, acyclic structure is built: for the CLI only.

The collector belongs to the process: a library call (`read_capture`, `ReplayService`) runs in
someone else's and leaves it alone; only `a2a-recorder replay` pauses it, around its load.
Reading a long capture and loading it allocate about a hundred containers per exchange and free
almost none: each full pass finds no garbage, yet walks everything built so far.  Nothing built
there holds a cycle, so pausing loses nothing (a cycle made meanwhile waits for a later pass).

Resuming would still cost passes (everything built is in the youngest generation), so the
objects go straight to the oldest, where those passes would have put them: freezing and
unfreezing moves every tracked object there without walking any.  On a 10,000-exchange capture
(`scripts/bench-replay --only-load`) file to serving takes about a fifth less CPU (1.13 s
against 1.42 s, medians of 8).  That is skipped when objects were frozen since this module
last looked (a forking server freezes its heap on purpose): unfreezing would release them.
The pause restores the previous state: a collector the caller disabled stays disabled.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# How many objects may be frozen without anyone having frozen them since: at first, those the
# interpreter froze before this import; after an unfreeze, none.
_frozen_before = gc.get_freeze_count()


@contextmanager
def collector_paused() -> Iterator[None]:
    """Disable the cyclic collector for the block (reference counting still frees memory)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            _to_oldest_generation()
            gc.enable()


def _to_oldest_generation() -> None:
    global _frozen_before
    if gc.get_freeze_count() <= _frozen_before:
        gc.freeze()  # every tracked object to the permanent generation (a list splice)...
        gc.unfreeze()  # ...and all of it back into the oldest one
        _frozen_before = 0
