"""Real processes on 127.0.0.1: the agent, `a2a-recorder record`, `a2a-recorder replay --strict`.

One batch of programs costs one agent, one recorder and one replayer:

1. the agent (`replay_fuzz.agent`, a real a2a-sdk 1.3.0 agent) starts with its push
   deliveries sent through the recorder's push proxy, then `a2a-recorder record` in front of
   it on every binding;
2. the programs run one after the other through the recorder (ids from `<name>/live`), each
   waiting for its push deliveries; after each, the capture says which exchanges are its own;
3. the recorder stops (SIGINT) and must exit 0; `a2a-recorder replay --strict` of the capture
   starts; the programs run again in the same order (ids from `<name>/replay`); after each,
   the replayer's journal (`GET /__a2a_recorder/requests`) says what answered each of its
   requests;
4. the replayer stops (SIGINT): its exit status and its report (`GET /__a2a_recorder/report`)
   count.  Every synthesized answer, unmatched request and recorded exchange never served is
   a failure of the program it belongs to.

Programs are independent of each other: each uses contexts of its own, so a listing filtered
by one shows only the program's own tasks.  A program whose listing shows the whole store
(`Program.lists_the_store`) gets a batch, and so an agent, of its own (`plan`): otherwise
what it sees would depend on how the programs before it fared.  (A listing shows a task no
step of the program was handed as `<other>`, `run.Run._projected`.)

`self_test` runs a batch live twice instead (two agents, two recorders): the judge must find
no difference between them.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from replay_fuzz.judge import Difference, compare
from replay_fuzz.program import Program
from replay_fuzz.run import Run, RunResult, Webhook
from replay_fuzz.wire import Endpoints

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
START_TIMEOUT = 30.0
STOP_TIMEOUT = 30.0
Log = Callable[[str], None]


class HarnessError(RuntimeError):
    """A process would not start or stop: no judgement is possible."""


# Started through this, a child gets SIGTERM when the fuzzer dies, however it dies (Linux's
# PR_SET_PDEATHSIG, kept across exec): a fuzzer killed on a CI timeout leaves no agent,
# recorder or replayer behind.
_ORPHAN_GUARD = (
    "import ctypes, os, signal, sys; "
    "ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


def _guarded(argv: list[str]) -> list[str]:
    if not sys.platform.startswith("linux"):
        return argv
    return [sys.executable, "-c", _ORPHAN_GUARD, *argv]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Child:
    """A child process whose stdout and stderr lines are collected as they come."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.name = name
        self.lines: list[str] = []
        self.out: list[str] = []
        self._changed = threading.Condition()
        self.process = subprocess.Popen(
            _guarded(argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
            cwd=ROOT,
        )
        for stream, into in ((self.process.stderr, self.lines), (self.process.stdout, self.out)):
            threading.Thread(target=self._read, args=(stream, into), daemon=True).start()

    def _read(self, stream: Any, into: list[str]) -> None:
        for line in stream:
            with self._changed:
                into.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_for(self, predicate: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        with self._changed:
            while not predicate():
                if self.process.poll() is not None:
                    self._changed.wait(0.5)  # the last lines
                    raise HarnessError(
                        f"{self.name} exited {self.process.returncode}: {self.tail()}"
                    )
                left = deadline - time.monotonic()
                if left <= 0:
                    raise HarnessError(
                        f"{self.name}: no {what} in {START_TIMEOUT} s: {self.tail()}"
                    )
                self._changed.wait(min(left, 0.2))

    def stop(self, sig: int = signal.SIGINT) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        time.sleep(0.05)  # the readers' last lines
        return self.process.returncode

    def tail(self, lines: int = 12) -> str:
        return "\n".join(self.lines[-lines:])


@dataclass
class Agent:
    base_url: str
    grpc_target: str


@contextmanager
def agent(push_proxy: str | None) -> Iterator[Agent]:
    env = {"PYTHONPATH": os.pathsep.join([str(TESTS), str(ROOT)])}
    argv = [sys.executable, "-m", "replay_fuzz.agent"]
    if push_proxy is not None:
        argv += ["--push-proxy", push_proxy]
    child = Child("the agent", argv, env)
    try:
        child.wait_for(lambda: bool(child.out), "address")
        found = json.loads(child.out[0])
        yield Agent(found["base_url"], found["grpc_target"])
    finally:
        child.stop(signal.SIGTERM)


def started[T](start: Callable[[], T], attempts: int = 3) -> T:
    """`start()`, again on a HarnessError (a port taken between choosing and binding it)."""
    for attempt in range(attempts):
        try:
            return start()
        except HarnessError:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


class Recorder:
    """`a2a-recorder record` in front of the agent: HTTP, gRPC and the push proxy."""

    def __init__(self, upstream: Agent, out: Path, push_port: int) -> None:
        self.http_port, self.grpc_port = free_port(), free_port()
        self.upstream = upstream
        self.out = out
        argv = [sys.executable, "-m", "recorder", "record", "--upstream", upstream.base_url,
                "--grpc-upstream", upstream.grpc_target,
                "--listen", f"127.0.0.1:{self.http_port}",
                "--grpc-listen", f"127.0.0.1:{self.grpc_port}",
                "--push-proxy", f"127.0.0.1:{push_port}", "--out", str(out)]  # fmt: skip
        self.child = Child("a2a-recorder record", argv)
        try:
            self.child.wait_for(
                lambda: any("recording push deliveries" in line for line in self.child.lines),
                "start-up lines",
            )
        except HarnessError:
            self.child.stop()
            raise

    @property
    def endpoints(self) -> Endpoints:
        return Endpoints(
            f"http://127.0.0.1:{self.http_port}",
            f"127.0.0.1:{self.grpc_port}",
            (self.upstream.base_url,),
            (self.upstream.grpc_target,),
        )

    def exchanges(self) -> int:
        """The number of the last exchange written so far, once the file stops growing (the
        recorder writes as exchanges complete: a read mid-write may not parse, and is tried
        again)."""
        from recorder.capture import CaptureParseError, read_capture

        size = -1
        for _ in range(100):
            time.sleep(0.1)
            now = self.out.stat().st_size if self.out.exists() else 0
            if now != size:
                size = now
                continue
            if not now:
                return 0
            try:
                return max((e.number for e in read_capture(self.out).exchanges), default=0)
            except CaptureParseError:
                size = -1
        raise HarnessError(f"{self.out} did not settle into a capture that parses")


class Replayer:
    """`a2a-recorder replay --strict` of one capture, HTTP and gRPC."""

    def __init__(self, capture: Path) -> None:
        self.http_port, self.grpc_port = free_port(), free_port()
        argv = [sys.executable, "-m", "recorder", "replay", "--strict", str(capture),
                "--listen", f"127.0.0.1:{self.http_port}",
                "--grpc-listen", f"127.0.0.1:{self.grpc_port}"]  # fmt: skip
        self.child = Child("a2a-recorder replay", argv)
        try:
            self.child.wait_for(
                lambda: any("replaying gRPC at" in line for line in self.child.lines),
                "start-up lines",
            )
        except HarnessError:
            self.child.stop()
            raise
        self.seen = 0  # journal entries already handed out

    @property
    def endpoints(self) -> Endpoints:
        return Endpoints(f"http://127.0.0.1:{self.http_port}", f"127.0.0.1:{self.grpc_port}")

    def _admin(self, what: str) -> Any:
        url = f"{self.endpoints.http}/__a2a_recorder/{what}"
        return httpx.get(url, timeout=30).json()

    def new_requests(self) -> list[dict[str, Any]]:
        """The journal's requests received since the last call."""
        requests = self._admin("requests")["requests"]
        fresh = [r for r in requests if r["number"] > self.seen]
        if requests:
            self.seen = max(r["number"] for r in requests)
        return fresh

    def report(self) -> dict[str, Any]:
        return self._admin("report")  # type: ignore[no-any-return]

    def journal(self) -> dict[str, Any]:
        return self._admin("requests")  # type: ignore[no-any-return]


# --- judging a batch ---------------------------------------------------------------------


@dataclass
class ProgramReport:
    program: Program
    live: RunResult
    replay: RunResult | None = None
    differences: list[Difference] = field(default_factory=list)
    problems: dict[int, list[str]] = field(default_factory=dict)  # step -> what the replayer did
    problem_kinds: dict[int, list[str]] = field(default_factory=dict)  # the same, ids left out
    unserved: list[str] = field(default_factory=list)  # its recorded exchanges never served
    exchanges: tuple[int, int] = (0, 0)  # its exchanges in the capture: (first, last)

    @property
    def failed(self) -> bool:
        return bool(self.differences or self.problems or self.unserved)

    def first_failing_step(self) -> int | None:
        steps = [d.step for d in self.differences] + list(self.problems)
        return min(steps) if steps else None

    def summary(self) -> str:
        if not self.failed:
            return "same"
        parts = []
        if self.differences:
            first = self.differences[0].step
            where = "the deliveries" if first == len(self.program.steps) else f"step {first}"
            parts.append(f"differs at {where} ({len(self.differences)} outcome(s))")
        if self.problems:
            count = sum(len(p) for p in self.problems.values())
            parts.append(f"{count} answer(s) not from the capture")
        if self.unserved:
            parts.append(f"{len(self.unserved)} recorded exchange(s) never served")
        return "; ".join(parts)


@dataclass
class Batch:
    reports: list[ProgramReport]
    recorder_status: int = 0
    recorder_tail: str = ""
    replay_status: int | None = None
    replay_report: dict[str, Any] | None = None
    replay_tail: str = ""

    @property
    def failed(self) -> bool:
        return (
            any(r.failed for r in self.reports)
            or self.recorder_status != 0
            or (self.replay_status not in (None, 0))
        )


Lived = tuple[list[RunResult], list[tuple[int, int]], int, str]


def _live(programs: list[Program], workdir: Path, label: str, log: Log) -> Lived:
    """Every program through a recorder in front of a fresh agent: results, the exchanges of
    each, the recorder's exit status and its last lines."""
    push_port = free_port()
    capture = workdir / f"{label}.http"
    results: list[RunResult] = []
    spans: list[tuple[int, int]] = []
    with agent(f"http://127.0.0.1:{push_port}") as upstream, Webhook() as hook:
        recorder = started(lambda: Recorder(upstream, capture, push_port))
        try:
            last = 0
            for program in programs:
                results.append(_run(program, recorder.endpoints, label, hook, log))
                now = recorder.exchanges()
                spans.append((last + 1, now))
                last = now
        finally:
            status = recorder.child.stop()
    return results, spans, status, recorder.child.tail()


def _direct(programs: list[Program], log: Log) -> list[RunResult]:
    """Every program straight against a fresh agent, no recorder between."""
    with agent(None) as upstream, Webhook() as hook:
        where = Endpoints(upstream.base_url, upstream.grpc_target)
        return [_run(program, where, "direct", hook, log) for program in programs]


def _run(program: Program, where: Endpoints, label: str, hook: Webhook, log: Log) -> RunResult:
    run = Run(program, where, _ids(program, label), hook)
    result = run.execute()
    run.collect_deliveries(result, expect=None)
    log(f"  {label:>6} {program.name}: {len(program.steps)} steps")
    return result


def plan(programs: list[Program]) -> list[list[int]]:
    """Batches, by index: one for the programs that filter every listing, one each for the
    others."""
    shared = [n for n, p in enumerate(programs) if not p.lists_the_store]
    alone = [[n] for n, p in enumerate(programs) if p.lists_the_store]
    return ([shared] if shared else []) + alone


Judged = tuple[list[ProgramReport], list[Batch]]


def run_all(
    programs: list[Program],
    workdir: Path,
    log: Log = print,
    judge: Callable[..., Batch] | None = None,
) -> Judged:
    """Every program judged by `judge` (`run_batch`, `self_test_batch`, `direct_batch`),
    batched by `plan`: the reports in the programs' order, and the batches."""
    reports: list[ProgramReport | None] = [None] * len(programs)
    batches = []
    for number, indexes in enumerate(plan(programs)):
        folder = workdir / f"batch-{number}"
        folder.mkdir(parents=True, exist_ok=True)
        chosen = [programs[n] for n in indexes]
        batch = (judge or run_batch)(chosen, folder, log)
        batches.append(batch)
        for n, report in zip(indexes, batch.reports, strict=True):
            reports[n] = report
    return [r for r in reports if r is not None], batches


def _ids(program: Program, label: str) -> random.Random:
    return random.Random(f"{program.name}/{label}")


def run_batch(programs: list[Program], workdir: Path, log: Log = print) -> Batch:
    """Record every program live, then replay each against `replay --strict`; judge."""
    live, spans, recorder_status, recorder_tail = _live(programs, workdir, "live", log)
    reports = [
        ProgramReport(p, result, exchanges=span)
        for p, result, span in zip(programs, live, spans, strict=True)
    ]
    batch = Batch(reports, recorder_status, recorder_tail)
    if recorder_status != 0:
        return batch
    replayer = started(lambda: Replayer(workdir / "live.http"))
    try:
        with Webhook() as hook:
            for report in reports:
                run = Run(report.program, replayer.endpoints, _ids(report.program, "replay"), hook)
                result = run.execute()
                expected = sum(len(d["received"]) for d in report.live.deliveries)
                run.collect_deliveries(result, expect=expected)
                report.replay = result
                report.problems, report.problem_kinds = _attribute(replayer.new_requests(), result)
                report.differences = compare(report.live.normalised(), result.normalised())
                log(f"  replay {report.program.name}: {report.summary()}")
        batch.replay_report = replayer.report()
        # Beside the capture, for reading a failure afterwards (`--keep`): what answered what.
        journal = replayer.journal()
        (workdir / "replay-journal.json").write_text(json.dumps(journal, indent=1) + "\n")
    finally:
        batch.replay_status = replayer.child.stop()
        batch.replay_tail = replayer.child.tail(40)
    for name in (batch.replay_report or {}).get("unserved", []):
        number = int(name.split()[0].lstrip("#"))
        for report in reports:
            first, last = report.exchanges
            if first <= number <= last:
                report.unserved.append(name)
    return batch


def direct_batch(programs: list[Program], workdir: Path, log: Log = print) -> Batch:
    """Every program straight against the agent, then through the recorder: the client must
    see the same (the recorder alters nothing but what it announces)."""
    direct = _direct(programs, log)
    recorded, spans, status, tail = _live(programs, workdir, "live", log)
    reports = []
    for program, a, b, span in zip(programs, direct, recorded, spans, strict=True):
        report = ProgramReport(program, a, b, exchanges=span)
        report.differences = compare(a.normalised(), b.normalised())
        reports.append(report)
    return Batch(reports, status, tail)


def self_test_batch(programs: list[Program], workdir: Path, log: Log = print) -> Batch:
    """Every program live twice (two agents, two recorders, fresh ids): no difference."""
    first, spans, status_a, tail_a = _live(programs, workdir, "live", log)
    second, _, status_b, tail_b = _live(programs, workdir, "again", log)
    reports = []
    for program, a, b, span in zip(programs, first, second, spans, strict=True):
        report = ProgramReport(program, a, b, exchanges=span)
        report.differences = compare(a.normalised(), b.normalised())
        reports.append(report)
    return Batch(reports, status_a or status_b, tail_a + "\n" + tail_b)


def _attribute(
    requests: list[dict[str, Any]], result: RunResult
) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    """What the replayer did not answer from the capture, by the step that asked it (the
    step whose time window holds the request's arrival): as said, and as a kind (the same
    words without exchange numbers and ids, for counting)."""
    problems: dict[int, list[str]] = {}
    kinds: dict[int, list[str]] = {}
    for entry in requests:
        if entry.get("answer") != "synthesized" and entry.get("outcome") not in ("miss", "refused"):
            continue
        step = _step_at(entry["received"], result)
        asked = f"{entry.get('binding')} {entry.get('operation') or entry.get('method')}"
        what = f"{asked} {entry.get('target')}: {entry.get('outcome')}, {entry.get('answer')}"
        detail = str(entry.get("detail") or "")
        if detail:
            what += f": {detail}"
        problems.setdefault(step, []).append(what)
        reason = detail.partition(": ")[2] if "nearest is" in detail else detail
        kinds.setdefault(step, []).append(f"{asked} {entry.get('outcome')}: {_ids_out(reason)}")
    return problems, kinds


def _ids_out(text: str) -> str:
    text = re.sub(r"#\d+", "#N", text)
    return re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27}", "<id>", text)


def primary_kind(report: ProgramReport) -> str | None:
    """What a failing program's first failing step is, in words that several programs share:
    the replayer's reason for a miss, or where the outcomes first differ."""
    step = report.first_failing_step()
    if step is None:
        if not report.unserved:
            return None
        ops = sorted({name.split(" ", 1)[1] for name in report.unserved})
        return "recorded, never served: " + ", ".join(ops)
    if step in report.problem_kinds:
        return report.problem_kinds[step][0]
    difference = next(d for d in report.differences if d.step == step)
    where = _first_path(difference.live, difference.replay)
    if step >= len(report.program.steps):
        return f"push deliveries differ at {where}"
    shown = report.program.steps[step]
    return f"{shown.binding} {shown.op} answered otherwise (no miss): at {where}"


def _first_path(a: Any, b: Any, path: str = "") -> str:
    """Where two values first differ: `body.result.tasks[].history[].messageId`."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key, "<none>") != b.get(key, "<none>"):
                return _first_path(a.get(key), b.get(key), f"{path}.{key}" if path else key)
        return path
    if isinstance(a, list) and isinstance(b, list):
        for x, y in zip(a, b, strict=False):
            if x != y:
                return _first_path(x, y, path + "[]")
        return f"{path}[] (length {len(a)} vs {len(b)})"
    return path or "the whole outcome"


def _step_at(received: float, result: RunResult) -> int:
    """The step whose time window holds `received`, else the nearest one (-1: none)."""
    for step in result.steps:
        if step.started <= received <= step.ended:
            return step.step
    distance = [
        (min(abs(s.started - received), abs(received - s.ended)), s.step) for s in result.steps
    ]
    return min(distance)[1] if distance else -1
