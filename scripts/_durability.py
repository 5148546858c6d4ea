"""The 10,000-exchange check (`scripts/bench-record --ten-thousand`).

Both runs send 10,000 exchanges at concurrency 16 through `a2a-recorder record` (the CLI, as
the benchmark runs it) to the demo agent.  Each worker cycles through the benchmark's loads:
SendMessage, GetTask, HTTP+JSON GET task, three times over, then one SSE stream; reads are of
tasks created earlier in the run.  An exchange is known by its key: its JSON-RPC id (fresh on
every request), or `GET <path>` (counted, as a task may be read twice).

1. Whole session: then SIGTERM.  The recorder must exit 0, and its capture parse, hold
   10,000 exchanges numbered 1..10,000, and hold every request sent (key for key).
2. kill -9: once a random share (30 to 70 %) of the exchanges has been answered, the keys
   answered so far are noted and the recorder is killed with SIGKILL in the same step (every
   client runs on this one event loop, so no answer can come in between).  The capture must
   parse, be numbered without gaps, and hold every one of those exchanges.  What it holds
   beyond them (in flight at the kill) is counted, not judged.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from _children import Child, ChildFailed, demo_agent, recorder
from _loads import LOADS, Sample, TaskPool, WrongAnswer, clients, run

from recorder.capture import Capture, CaptureParseError, Exchange, read_capture

EXCHANGES = 10_000
CONCURRENCY = 16
EVENT_DELAY = 0.01
MIX = [LOADS[name] for name in ("SendMessage", "GetTask", "REST-GetTask") * 3]
MIX.append(LOADS["SendStreamingMessage"])


def key(exchange: Exchange) -> str:
    """An exchange's key, as `_loads.Sample.key` names it."""
    if exchange.request.method == "GET":
        return f"GET {exchange.request.target}"
    rid: str = json.loads(exchange.request.body)["id"]
    return rid


def missing(answered: Iterable[str], capture: Capture) -> Counter[str]:
    return Counter(answered) - Counter(key(e) for e in capture.exchanges)


async def session(url: str, on_sample: Callable[[Sample], None] | None = None) -> list[Sample]:
    workers = clients(url, CONCURRENCY)
    try:
        return await run(MIX, workers, TaskPool(), EXCHANGES, on_sample)
    finally:
        for worker in workers:
            await worker.aclose()


def read(path: Path) -> Capture:
    try:
        capture = read_capture(path)
    except CaptureParseError as exc:
        raise AssertionError(f"the capture does not parse: {exc}") from exc
    numbers = [e.number for e in capture.exchanges]
    if numbers != list(range(1, len(numbers) + 1)):
        raise AssertionError("the capture's exchanges are renumbered or have a gap")
    return capture


def whole_session(tmp: Path, agent: Child) -> str:
    out = tmp / "whole.http"
    with recorder(tmp, agent.url, out, "recorder-whole") as child:
        started = time.monotonic()
        samples = asyncio.run(session(child.url))
        elapsed = time.monotonic() - started
    if child.process.returncode != 0:
        raise AssertionError(f"the recorder exited with {child.process.returncode}")
    capture = read(out)
    lost = missing((s.key for s in samples), capture)
    if len(capture.exchanges) != EXCHANGES or lost:
        raise AssertionError(
            f"the capture holds {len(capture.exchanges)} exchanges; "
            f"{sum(lost.values())} sent are not in it"
        )
    return (
        f"whole session: {EXCHANGES} exchanges at concurrency {CONCURRENCY} in "
        f"{elapsed:.0f} s; the capture ({out.stat().st_size / 1e6:.1f} MB) parses, holds "
        f"{EXCHANGES} exchanges numbered 1..{EXCHANGES}, every one sent"
    )


def killed_session(tmp: Path, agent: Child) -> str:
    out = tmp / "killed.http"
    kill_at = int(EXCHANGES * random.uniform(0.3, 0.7))
    before: list[str] = []
    with recorder(tmp, agent.url, out, "recorder-killed") as child:
        answered: list[str] = []

        def on_sample(sample: Sample) -> None:
            answered.append(sample.key)
            if len(answered) == kill_at:
                before.extend(answered)
                os.kill(child.pid, signal.SIGKILL)

        try:
            asyncio.run(session(child.url, on_sample))
        except WrongAnswer:
            if not before:
                raise
        child.process.wait()
    if not before:
        raise AssertionError("the session ended before the kill")
    capture = read(out)
    lost = missing(before, capture)
    if lost:
        raise AssertionError(
            f"{sum(lost.values())} of the {len(before)} exchanges answered "
            f"before the kill are not in the capture, e.g. {list(lost)[:3]}"
        )
    extra = len(capture.exchanges) - len(before)
    return (
        f"kill -9 after {len(before)} answers: the capture parses, is numbered without "
        f"gaps and holds all {len(before)}, plus {extra} in flight at the kill"
    )


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="bench-record-10k-") as name:
        tmp = Path(name)
        try:
            with demo_agent(tmp, EVENT_DELAY) as agent:
                for check in (whole_session, killed_session):
                    print(check(tmp, agent), flush=True)
        except (AssertionError, WrongAnswer, ChildFailed) as exc:
            print(f"bench-record --ten-thousand: FAILED: {exc}", file=sys.stderr)
            return 1
    return 0
