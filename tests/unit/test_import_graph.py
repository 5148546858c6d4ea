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
  above, so that a new release cannot break us before the install tests ran it;
- the packages stand in layers (`LAYERS`, drawn in docs/architecture.md): a module imports
  only its own package's modules and those of lower layers, never a package beside or above;
- nothing of a third-party package whose name is private (`_x`) is imported or touched: no
  `from mitmproxy.x import _y`, no `master._legacy_log_events` (an attribute `_y` that is no
  name of ours), no `setattr` on an imported module or object.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from collections.abc import Iterator, Mapping, Sequence
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
# The layers, lowest first (docs/architecture.md draws them).  A name is a package as
# `Graph.package_of` names it (`recorder` is the root's shared modules), or a module of the
# root that is no package's (`SHELLS`).  The last layer, the shells over the packages, is one
# group: its modules may import each other.
SHELLS = frozenset({"recorder._shell", "recorder._unanswered", "recorder.__main__"})
LAYERS: tuple[tuple[str, ...], ...] = (
    ("recorder",),  # errors, atomic files, the thread-and-loop shell, the webhook server
    ("recorder.protocol", "recorder.ci"),  # A2A knowledge; CI baselines and JUnit
    ("recorder.capture", "recorder.options", "recorder.versions"),  # format, options, v0.3
    ("recorder._shell",),  # what every command shares: errors end it, flags from its table
    ("recorder.redaction", "recorder.lint"),  # secrets, rules
    ("recorder.record", "recorder.diff", "recorder.script"),  # the proxy, comparing, the script
    ("recorder.replay", "recorder.convert", "recorder.show"),  # the fake agent, imports, show
    ("recorder.export",),  # HAR, JSON Lines, OTLP traces: a session read as a fleet, show's rows
    ("recorder.verify", "recorder.report"),  # a live agent against a capture; the picture
    ("recorder.demo",),  # a real agent and session, for the demo and the tests
    (
        "recorder.cli",
        "recorder.cli_replay",
        "recorder.__main__",
        "recorder.pytest_plugin",
        "recorder.pytest_replay",
        "recorder.pytest_record",
        "recorder.pytest_fleet",
        "recorder._unanswered",
    ),
)
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

    def layer_of(self, module: str, layers: Sequence[Sequence[str]]) -> tuple[int, str]:
        """(the layer, the package or shell) of a module; KeyError when no layer names it."""
        name = module if module in SHELLS else self.package_of(module)
        for number, names in enumerate(layers):
            if name in names:
                return number, name
        raise KeyError(name)

    def layer_breaches(self, layers: Sequence[Sequence[str]]) -> list[str]:
        """Imports of a package beside or above the importer's own (or of one no layer has)."""
        found = []
        for edge in self.edges:
            try:
                (below, source), (above, target) = (
                    self.layer_of(m, layers) for m in (edge.source, edge.target)
                )
            except KeyError as exc:
                found.append(f"{edge}: {exc.args[0]} is in no layer")
                continue
            shells = below == above == len(layers) - 1
            if source != target and below <= above and not shells:
                found.append(f"{edge}: layer {below} ({source}) on layer {above} ({target})")
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


def private_touches(root: Path) -> list[str]:
    """Private names of other packages that modules under `root` import or touch (see the
    module docstring): an attribute `_y` counts unless some module of ours defines `_y`."""
    top = root.name
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in root.rglob("*.py")}
    ours = {name for tree in trees.values() for name in _defined(tree)}
    found: list[tuple[Path, int, str]] = []
    for path, tree in sorted(trees.items()):
        where = path.relative_to(root.parent)
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and not _own(node, top):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                if any(_private(part) for name in names for part in name.split(".")):
                    found.append((where, node.lineno, f"imports {ast.unparse(node)}"))
                imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in ours:
                found.append((where, node.lineno, f"touches {ast.unparse(node)}"))
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("setattr", "delattr")
                and node.args
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id in imported
            ):
                found.append((where, node.lineno, f"sets {ast.unparse(node)}"))
    return [f"{where}:{line} {what}" for where, line, what in sorted(found)]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _own(node: ast.Import | ast.ImportFrom, top: str) -> bool:
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        return (
            bool(node.level)
            or module.split(".")[0] in (top, "__future__")
            or (module.split(".")[0] in sys.stdlib_module_names)
        )
    return all(a.name.split(".")[0] in (top, *sys.stdlib_module_names) for a in node.names)


def _defined(tree: ast.AST) -> Iterator[str]:
    """Every name a module defines: functions, classes, their arguments, what it assigns."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name
        elif isinstance(node, ast.arg):
            yield node.arg
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            yield node.attr
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            yield node.id
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            yield node.target.id


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


def test_every_package_stands_on_lower_layers_only(graph: Graph) -> None:
    assert graph.layer_breaches(LAYERS) == []


def test_the_architecture_page_draws_these_layers() -> None:
    """docs/architecture.md's table of layers: `N  word  names...`, top first."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = page.split("## The layers", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    drawn = {int(row.split()[0]): row.split()[2:] for row in table.splitlines()}
    assert drawn == {
        number: [name.removeprefix("recorder.") for name in names]
        for number, names in enumerate(LAYERS)
    }


def test_every_module_the_architecture_page_names_exists() -> None:
    """The page walks a request through modules by path: a move leaves none of them stale."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:recorder/)?(?:[a-z_]+/)+_?[a-z_]+\.py)`", page))
    assert named, "the page names no module"
    missing = sorted(
        path for path in named if not (ROOT / path).exists() and not (PACKAGE / path).exists()
    )
    assert not missing, f"docs/architecture.md names modules that are not there: {missing}"


def test_no_private_name_of_a_third_party_package_is_imported_or_touched() -> None:
    assert private_touches(PACKAGE) == []


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


def test_the_check_sees_a_package_on_one_beside_or_above_it(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "low/__init__.py": "",
            "low/_a.py": "from pkg.high import x\n",
            "high/__init__.py": "from pkg.low import y\nfrom pkg.side import z\n",
            "side/__init__.py": "",
            "cli.py": "import pkg.main\nimport pkg.high\n",
            "main.py": "import pkg.cli\n",
        },
    )
    layers = (("pkg.low",), ("pkg.high", "pkg.side"), ("pkg.cli", "pkg.main"))  # shells: a group
    assert Graph.of(root).layer_breaches(layers) == [
        "pkg.high:2 imports pkg.side: layer 1 (pkg.high) on layer 1 (pkg.side)",
        "pkg.low._a:1 imports pkg.high: layer 0 (pkg.low) on layer 1 (pkg.high)",
    ]


def test_the_check_sees_private_names_of_other_packages(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": (
                "from mitmproxy import ctx\nfrom mitmproxy.log import _Handler\nimport os._x\n"
                "def f(master):\n    master._legacy.uninstall()\n    setattr(ctx, 'log', 1)\n"
            ),
            "b.py": "class C:\n    def __init__(self):\n        self._mine = 1\nC()._mine\n",
        },
    )
    assert private_touches(root) == [
        "pkg/a.py:2 imports from mitmproxy.log import _Handler",
        "pkg/a.py:5 touches master._legacy",
        "pkg/a.py:6 sets setattr(ctx, 'log', 1)",
    ]
