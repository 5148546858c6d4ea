"""The collector pause: scoped, and what it built skips the young generations."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from recorder._gcpause import collector_paused


@pytest.fixture(autouse=True)
def _collector_enabled() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    gc.unfreeze()
    if not was:
        gc.disable()


def _in_generation(obj: object, generation: int) -> bool:
    return any(o is obj for o in gc.get_objects(generation))


def test_the_collector_is_off_inside_and_back_on_after() -> None:
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_caller_that_disabled_the_collector_keeps_it_disabled() -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_the_collector_comes_back_when_the_block_raises() -> None:
    with pytest.raises(KeyError), collector_paused():
        raise KeyError("x")
    assert gc.isenabled()


def test_what_the_block_built_is_in_the_oldest_generation_after() -> None:
    with collector_paused():
        built = [{"n": [i]} for i in range(5000)]
    assert gc.get_count()[0] < 100  # no young backlog for the next allocation to walk
    assert _in_generation(built, 2)
    assert not _in_generation(built, 0)


def test_objects_someone_else_froze_stay_frozen() -> None:
    with collector_paused():  # first, so that the module has looked once
        pass
    kept = [{"frozen": True}]
    gc.freeze()
    with collector_paused():
        built = [[i] for i in range(1000)]
    # Still frozen: in no generation.  (The frozen count itself may drop meanwhile: a frozen
    # object that reference counting frees leaves it.)
    assert gc.get_freeze_count() > 0
    assert not any(_in_generation(kept, generation) for generation in range(3))
    assert built
