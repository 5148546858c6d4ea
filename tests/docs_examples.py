"""The examples of README.md and docs/ run as tests, with Sybil (https://sybil.readthedocs.io);
the repository's conftest.py hands pytest `pytest_collect_file` from here.

Each page is one Sybil document: its examples run in order, in a folder of their own (a
temporary one, holding a copy of the corpus `captures/` as a checkout does), with this
environment's `a2a-recorder` and `python` first on PATH, as a reader would run them one
after another:

- a ```sh block runs in bash (`-e -o pipefail`) and must exit 0;
- a ```python block runs in the page's namespace, in the page's folder;
- a block of another language (toml, json, text, ...) is not run.

What a page cannot say in its blocks alone, it says in an HTML comment before the block,
which a reader's browser does not show (the prose beside it says the same in words):

- `<!-- docs: file PATH -->`: the next block is a file the reader saves as PATH (written
  there, not run): a test module, a faults.toml, a verify.toml;
- `<!-- docs: background PORT|FILE -->`: the next ```sh block is a server the reader leaves
  running in a terminal of its own (an agent, the recorder, the replayer); the page goes on
  once 127.0.0.1:PORT takes connections, or once FILE exists (a `--ports-file`);
- `<!-- docs: stop [STATUS] -->`: Ctrl-C to the last of them; it must end with STATUS (0);
- `<!-- docs: exit STATUS -->`: the next ```sh block must end with STATUS, not 0 (a diff that
  finds differences exits 1);
- Sybil's own `<!-- skip: next "why" -->`: an example that cannot run here (it installs from
  a network, or runs this test suite itself); the page says why, and pytest shows it skipped.

The examples use the fixed ports a reader would (the demo agent on 9999, the recorder on
8480, the replayer on 8490), so pages never run at the same time: a lock held while a page
runs keeps two test runs on one machine (two checkouts) from meeting on a port.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sybil import Example, Region, Sybil
from sybil.evaluators.python import PythonEvaluator
from sybil.parsers.markdown import CodeBlockParser, SkipParser
from sybil.parsers.markdown.lexers import DirectiveInHTMLCommentLexer

ROOT = Path(__file__).resolve().parents[1]
LOCK = Path(tempfile.gettempdir()) / "a2a-recorder-docs.lock"
TIMEOUT = 180  # seconds for one block; a server gets as long to start listening
SHELLS = ("sh", "bash")
FILES = ("toml", "json", "yaml", "text", "http")


class Page:
    """One page's run: its folder, its servers, and what the last directive said."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="a2a-docs-"))
        shutil.copytree(ROOT / "captures", self.folder / "captures")  # the corpus, as in a checkout
        bin_dir = str(Path(sys.executable).parent)
        self.env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
        self.env.update(PYTHONUNBUFFERED="1", NO_COLOR="1")
        self.directive: list[str] = []
        self.servers: list[tuple[subprocess.Popen[bytes], Path]] = []
        self._lock = LOCK.open("w")
        fcntl.flock(self._lock, fcntl.LOCK_EX)

    def take(self) -> list[str]:
        directive, self.directive = self.directive, []
        return directive

    def run(self, text: str, status: int = 0) -> None:
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", text],
            cwd=self.folder,
            env=self.env,
            capture_output=True,
            timeout=TIMEOUT,
        )
        if done.returncode != status:
            raise AssertionError(
                f"exit {done.returncode}, expected {status}\n{text}\n--- stdout\n"
                f"{done.stdout.decode(errors='replace')}--- stderr\n"
                f"{done.stderr.decode(errors='replace')}"
            )

    def serve(self, text: str, until: str) -> None:
        ready = (
            (lambda: _listening(int(until))) if until.isdigit() else (self.folder / until).exists
        )
        if ready():
            raise AssertionError(f"{until} is taken before the page starts its server")
        log = self.folder / f".server-{len(self.servers)}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                ["bash", "-c", f"exec {text.strip()}"],
                cwd=self.folder,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.servers.append((process, log))
        deadline = time.monotonic() + TIMEOUT
        while not ready():
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"{text}\nnever made {until} ready:\n{log.read_text()}")
            time.sleep(0.1)

    def stop(self, status: int = 0) -> None:
        """Ctrl-C to the last server started, as the reader does in its terminal."""
        process, log = self.servers.pop()
        code = _interrupt(process)
        if code != status:
            raise AssertionError(f"the server ended with {code}, not {status}:\n{log.read_text()}")

    def close(self) -> None:
        while self.servers:
            _interrupt(self.servers.pop()[0])
        shutil.rmtree(self.folder, ignore_errors=True)
        self._lock.close()

    def write(self, name: str, text: str) -> None:
        path = self.folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    @contextmanager
    def inside(self) -> Iterator[None]:
        """The page's folder as the working directory, and its PATH, for its Python blocks (a
        block that runs `a2a-recorder` finds this environment's, as a shell block does)."""
        before, path = Path.cwd(), os.environ.get("PATH")
        os.chdir(self.folder)
        os.environ["PATH"] = self.env["PATH"]
        try:
            yield
        finally:
            os.chdir(before)
            if path is None:
                os.environ.pop("PATH", None)
            else:
                os.environ["PATH"] = path


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.2)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _interrupt(process: subprocess.Popen[bytes]) -> int:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)
        try:
            return process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
    return process.wait()


# -- the evaluators ----------------------------------------------------------------------------


def _page(example: Example) -> Page:
    page: Page = example.namespace["_page"]
    return page


def _directive(example: Example) -> None:
    _page(example).directive = str(example.parsed).split()


def _shell(example: Example) -> None:
    page, text = _page(example), str(example.parsed)
    match page.take():
        case ["file", name]:
            page.write(name, text)
        case ["background", until]:
            page.serve(text, until)
        case ["exit", status]:
            page.run(text, int(status))
        case []:
            page.run(text)
        case other:
            raise ValueError(f"a docs directive this block cannot take: {other}")


_PYTHON = PythonEvaluator()


def _python(example: Example) -> None:
    page = _page(example)
    match page.take():
        case ["file", name]:
            page.write(name, str(example.parsed))
        case []:
            with page.inside():
                _PYTHON(example)
        case other:
            raise ValueError(f"a docs directive a Python block cannot take: {other}")


def _other(example: Example) -> None:
    page = _page(example)
    match page.take():
        case ["file", name]:
            page.write(name, str(example.parsed))
        case []:
            pass  # shown, not run
        case other:
            raise ValueError(f"a docs directive this block cannot take: {other}")


def _stop(example: Example) -> None:
    _page(example).stop(*map(int, str(example.parsed).split()[1:]))


class DirectiveParser:
    """`<!-- docs: ... -->`: `stop` acts at once, the others on the next block."""

    def __init__(self) -> None:
        self.lexer = DirectiveInHTMLCommentLexer(directive="docs", arguments=r"[^\n]+?")

    def __call__(self, document: Any) -> Iterator[Region]:
        for lexed in self.lexer(document):
            words = lexed.lexemes["arguments"]
            evaluator = _stop if words.split()[0] == "stop" else _directive
            yield Region(lexed.start, lexed.end, words, evaluator)


def _setup(namespace: dict[str, Any]) -> None:
    namespace["_page"] = Page()


def _teardown(namespace: dict[str, Any]) -> None:
    namespace["_page"].close()


pytest_collect_file = Sybil(
    parsers=[
        DirectiveParser(),
        SkipParser(),
        *(CodeBlockParser(language, _shell) for language in SHELLS),
        CodeBlockParser("python", _python),
        *(CodeBlockParser(language, _other) for language in FILES),
    ],
    path=str(ROOT),
    patterns=["README.md", "docs/*.md", "docs/**/*.md"],
    setup=_setup,
    teardown=_teardown,
).pytest()
