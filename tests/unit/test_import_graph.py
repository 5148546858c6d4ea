"""The package's import graph: no cycles, no reaching into another package's private modules,
and no third-party import that pyproject.toml does not declare.

Every `import` counts, at module level or inside a function (a lazy import still ties the two
modules together; it only hides the cycle until the function runs), except those under
`if TYPE_CHECKING:`, which never run.  A package is `recorder/<name>/`, or a top-level module
(`recorder.cli`); `recorder/_x.py` modules are the root package's own, shared by all.

Rules:
- no cycle among modules, where importing `recorder.p` (or a name from it) is an edge to
  `recorder/p/__init__.py`, which imports its private modules;
- a module outside package `p` imports only `recorder.p` (what its `__init__` exports), never
  `recorder.p._x`;
- a module inside `p` imports its siblings directly, never its own `recorder.p` (that is a
  cycle through `__init__`);
- each third-party top-level module is a runtime dependency, or, for the modules that are
  an extra's (`recorder/demo/` needs `demo`), that extra's, or the host's that loads the
  module (pytest, for the plugin);
- a dependency whose undocumented internals we build on (`BUILT_ON_INTERNALS`) is bounded
  above, so that a new release cannot break us before the install tests ran it.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "recorder"
# Modules that may import an optional extra's packages (they are only used with it installed).
EXTRA_USERS = {"demo": ("recorder.demo",), "otlp": ("recorder.export._otlp",)}
# Modules that a host program loads, which brings what they import from it.
HOSTED = {f"recorder.pytest_{job}": {"pytest"} for job in ("plugin", "fleet", "replay", "record")}
# Dependencies whose undocumented internals a module builds on, and the module: each must be
# bounded above in pyproject.toml, at a version the install tests ran (lowest and newest).
BUILT_ON_INTERNALS = {
    "mitmproxy": "recorder/record/_proxy.py",  # the master, its addons and hooks, embedded
}


@dataclass(frozen=True, slots=True)
class Edge:
    source: str  # the importing module (`recorder.cli`, `recorder.protocol._grpc`)
    target: str  # the imported module as written (`recorder.protocol._grpc`)
    line: int

    def __str__(self) -> str:
        return f"{self.source}:{self.line} imports {self.target}"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, name: str, top: str) -> Iterator[Edge]:
    """Every import in one file, as absolute module names (relative ones resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            yield from (Edge(name, alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            if base.split(".")[0] != top:
                yield Edge(name, base, node.lineno)
                continue
            for alias in node.names:  # `from recorder.p import _x` names a module, maybe
                yield Edge(name, f"{base}.{alias.name}", node.lineno)


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = parts[: len(parts) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node, skipping the bodies of `if TYPE_CHECKING:`."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


@dataclass(frozen=True)
class Graph:
    modules: frozenset[str]
    packages: frozenset[str]  # modules that are packages (have an __init__)
    edges: tuple[Edge, ...]  # imports of our own modules only
    external: tuple[Edge, ...]  # imports of anything else

    @classmethod
    def of(cls, root: Path) -> Graph:
        top = root.name
        files = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
        packages = frozenset(n for n, p in files.items() if p.name == "__init__.py")
        edges: list[Edge] = []
        external: list[Edge] = []
        for name, path in files.items():
            for edge in imports_of(path, name, top):
                mine = edge.target.split(".")[0] == top
                (edges if mine else external).append(edge)
        resolved = dict.fromkeys(_resolve(e, frozenset(files)) for e in edges)
        return cls(frozenset(files), packages, tuple(resolved), tuple(external))

    def package_of(self, module: str) -> str:
        """The package that owns `module`: `recorder.p` for anything under it, else itself
        (`recorder.cli`); the root package's own `recorder._x` belong to `recorder`."""
        parts = module.split(".")
        if len(parts) >= 2 and ".".join(parts[:2]) in self.packages:
            return ".".join(parts[:2])
        return parts[0] if len(parts) == 2 and parts[1].startswith("_") else module

    def cycles(self) -> list[list[str]]:
        """Strongly connected groups of more than one module (or a module importing itself)."""
        follows: dict[str, set[str]] = {m: set() for m in self.modules}
        for edge in self.edges:
            follows[edge.source].add(edge.target)
            parent = edge.target.rpartition(".")[0]
            while parent:  # importing `a.b.c` runs `a/__init__` and `a/b/__init__` first
                if parent in self.packages and not edge.source.startswith(parent + "."):
                    follows[edge.source].add(parent)  # (unless it is running already)
                parent = parent.rpartition(".")[0]
        for package in self.packages:
            follows[package].discard(package)
        return _strongly_connected(follows)

    def private_reaches(self) -> list[Edge]:
        """Imports of another package's private module."""
        found = []
        for edge in self.edges:
            parts = edge.target.split(".")
            private = [i for i, part in enumerate(parts) if part.startswith("_") and i > 0]
            if not private or parts[private[0]] == "__init__":
                continue
            owner = ".".join(parts[: private[0]])
            if self.package_of(edge.source) != self.package_of(owner) and owner != parts[0]:
                found.append(edge)
        return found

    def own_package_imports(self) -> list[Edge]:
        """A package's module importing its own package's `__init__`."""
        return [
            e
            for e in self.edges
            if e.target in self.packages
            and e.target != e.source
            and self.package_of(e.source) == e.target
            and e.target != e.target.split(".")[0]
        ]


def _resolve(edge: Edge, modules: frozenset[str]) -> Edge:
    """`from recorder.p import name`: the module `recorder.p.name` if there is one, else the
    package `recorder.p`."""
    target = edge.target
    while target not in modules and "." in target:
        target = target.rpartition(".")[0]
    return Edge(edge.source, target, edge.line)


def _strongly_connected(follows: Mapping[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; groups of two or more, or one that follows itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for start in sorted(follows):
        if start in index:
            continue
        work = [(start, iter(sorted(follows[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(follows.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1 or node in follows.get(node, ()):
                    groups.append(sorted(group))
    return groups


# -- the package ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def graph() -> Graph:
    return Graph.of(PACKAGE)


def test_no_import_cycles(graph: Graph) -> None:
    assert graph.cycles() == []


def test_no_package_reaches_into_another_ones_private_modules(graph: Graph) -> None:
    assert [str(e) for e in graph.private_reaches()] == []


def test_no_module_imports_its_own_package(graph: Graph) -> None:
    assert [str(e) for e in graph.own_package_imports()] == []


def test_every_third_party_import_is_declared(graph: Graph) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = _names(project["dependencies"])
    extras = {k: _names(v) for k, v in project["optional-dependencies"].items()}
    providers = importlib.metadata.packages_distributions()
    undeclared = []
    for edge in graph.external:
        top = edge.target.split(".")[0]
        if not top or top in sys.stdlib_module_names or top == "__future__":
            continue
        distributions = {_canonical(d) for d in providers.get(top, [top])}
        allowed = set(runtime) | HOSTED.get(edge.source, set())
        for extra, users in EXTRA_USERS.items():
            if edge.source.startswith(users):
                allowed |= extras[extra]
        if not distributions & allowed:
            undeclared.append(f"{edge} (from {', '.join(sorted(distributions))})")
    assert undeclared == []


def test_what_we_build_on_internals_of_is_bounded_above() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    found = {
        _canonical(re.split(r"[\s\[<>=!~;]", r, maxsplit=1)[0]): r for r in project["dependencies"]
    }
    for name, module in BUILT_ON_INTERNALS.items():
        assert name in (ROOT / module).read_text(encoding="utf-8"), module
        assert "<" in found[name].split(";")[0], f"{found[name]} has no upper bound ({module})"


def _names(requirements: list[str]) -> set[str]:
    return {_canonical(re.split(r"[\s\[<>=!~;]", r, maxsplit=1)[0]) for r in requirements}


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# -- the check itself, on packages made for it ------------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_check_sees_a_cycle_through_a_lazy_import(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "cli.py": "from pkg.report import page\n",
            "report/__init__.py": "from pkg.report._command import page\n",
            "report/_command.py": "def page():\n    from pkg.cli import main\n",
        },
    )
    assert Graph.of(root).cycles() == [["pkg.cli", "pkg.report", "pkg.report._command"]]


def test_the_check_skips_type_checking_imports(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "import pkg.b\n",
            "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n",
        },
    )
    assert Graph.of(root).cycles() == []


def test_the_check_sees_private_reaches_and_own_package_imports(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "_shared.py": "",
            "p/__init__.py": "from pkg.p._x import f\nfrom pkg.p._y import g\n",
            "p/_x.py": "from pkg._shared import *\ndef f(): ...\n",
            "p/_y.py": "from pkg.p import f\ng = 1\n",
            "q/__init__.py": "",
            "q/_z.py": "from pkg.p._x import f\nfrom pkg.p import f\nfrom . import _w\n",
            "q/_w.py": "",
        },
    )
    graph = Graph.of(root)
    assert [str(e) for e in graph.private_reaches()] == ["pkg.q._z:1 imports pkg.p._x"]
    assert [str(e) for e in graph.own_package_imports()] == ["pkg.p._y:1 imports pkg.p"]
    assert graph.cycles() == [["pkg.p", "pkg.p._y"]]
