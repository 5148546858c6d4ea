"""The collector pause (the CLI's): scoped, and what it built skips the young generations;
and the library never touches the collector."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from recorder._gcpause import collector_paused

CAPTURE = Path(__file__).resolve().parents[2] / "captures/a2a-python-1.3.0/08-push-configs.http"


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


def test_library_loads_leave_the_host_s_collector_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading a capture and loading it into a replay service run in the caller's process (a
    user's pytest): neither may switch its collector off, move its objects between
    generations or collect."""
    from recorder.capture import read_capture
    from recorder.replay import ReplayService

    touched: list[str] = []
    for name in ("disable", "enable", "freeze", "unfreeze", "collect", "set_threshold"):
        monkeypatch.setattr(gc, name, lambda *a, _name=name, **k: touched.append(_name))
    capture = read_capture(CAPTURE)
    ReplayService([capture])
    assert touched == []
    assert capture.exchanges
