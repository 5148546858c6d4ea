"""Pause the cyclic garbage collector while a big, acyclic structure is built: for the CLI only.

Only `a2a-recorder replay` pauses it, around its load (the collector is the process's, not a
library call's): loading allocates about a hundred containers per exchange and frees almost
none, so each full pass walks everything for no garbage.  The objects then go straight to the
oldest generation (freeze, unfreeze), unless objects were frozen since (a forking server's, kept
frozen); a collector the caller disabled stays disabled.
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
