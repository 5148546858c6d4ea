"""New ids that look like recorded ones, from an injectable source (pure given the source).

`IdFactory` draws from a `random.Random`, so a seeded test replays byte for byte; unseeded, it
is seeded from the OS once (ids must be unlikely to repeat, not secret: a replay mints
thousands a second).
"""

from __future__ import annotations

import random
import re
import uuid

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)


class IdFactory:
    """Mints ids: a UUID for a UUID, else the recorded id with a short random suffix."""

    def __init__(self, seed: int | None = None) -> None:
        self._random = random.Random(seed)  # None: seeded from the operating system

    def fresh(self, recorded: str) -> str:
        bits = self._random.getrandbits(128)
        if _UUID.fullmatch(recorded):
            return str(uuid.UUID(int=bits, version=4))
        return f"{recorded}-{bits & 0xFFFFFFFF:08x}"


_DEFAULT = IdFactory()


def fresh_id(recorded: str) -> str:
    """A new id that looks like `recorded`, from the operating system's randomness."""
    return _DEFAULT.fresh(recorded)
