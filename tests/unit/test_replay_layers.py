"""Replay's three places and which way they import (see `recorder/replay/__init__.py`).

The core decides without I/O, so it imports neither the faces nor the fleet; the faces run
the core and import no fleet; the fleet runs faces.  Modules outside a place import what its
`__init__` exports, never its private modules.
"""

from __future__ import annotations

from test_import_graph import PACKAGE, Graph

PLACES = ("core", "faces", "fleet")
MAY_IMPORT = {"core": set(), "faces": {"core"}, "fleet": {"core", "faces"}}
# (`threading` is not here: the journal and report hold a lock, read from other threads.)
NO_IO = ("asyncio", "socket", "selectors", "grpc", "httptools", "httpx", "subprocess", "os")


def _place(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["recorder", "replay"] else None


def test_each_place_imports_only_the_places_beneath_it() -> None:
    graph = Graph.of(PACKAGE)
    wrong = [
        str(edge)
        for edge in graph.edges
        if (source := _place(edge.source)) in PLACES
        and (target := _place(edge.target)) in PLACES
        and target != source
        and target not in MAY_IMPORT[source]
    ]
    assert wrong == []


def test_other_places_import_a_place_by_its_exports() -> None:
    graph = Graph.of(PACKAGE)
    wrong = [
        str(edge)
        for edge in graph.edges
        if (target := _place(edge.target)) in PLACES
        and _place(edge.source) != target
        and len(edge.target.split(".")) > 3
        and edge.source != f"recorder.replay.{target}"
    ]
    assert wrong == []


def test_the_core_does_no_io() -> None:
    graph = Graph.of(PACKAGE)
    found = [
        str(edge)
        for edge in graph.external
        if _place(edge.source) == "core" and edge.target.split(".")[0] in NO_IO
    ]
    assert found == []
