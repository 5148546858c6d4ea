"""`a2a-recorder demo`: the whole job on one machine, with nothing but this package.

Record a real a2a-sdk session, replay it with the agent stopped while recording the same client
again, check the client saw the same, diff the two captures, and draw the live one as a page.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from recorder._errors import Exit
from recorder.capture import Capture, read_capture
from recorder.demo._agent import DemoAgent
from recorder.demo._session import SessionResult, run_session
from recorder.demo._webhook import WebhookReceiver

Echo = Callable[[str], None]
DEMO_EVENT_DELAY = 0.1


def _session_through_recorder(
    upstream: str, out: Path, binding: str, console: Echo | None = None
) -> SessionResult:
    from recorder.record import RecordingProxy

    # The demo's captures are made again on every run: overwriting them is the point.
    with (
        WebhookReceiver() as hook,
        RecordingProxy(upstream=upstream, out=out, existing="overwrite", console=console) as proxy,
    ):
        return asyncio.run(run_session(proxy.url, binding=binding, webhook=hook))


def _steps_differing(a: SessionResult, b: SessionResult) -> list[str]:
    names = [x.name for x, y in zip(a.steps, b.steps, strict=False) if x != y]
    if len(a.steps) != len(b.steps):
        names.append("(number of steps)")
    if a.deliveries != b.deliveries:
        names.append("(push deliveries)")
    return names


def _write_report(capture: Capture, path: Path, name: str) -> Path:
    from recorder.report import render_report

    path.write_text(render_report(capture, name=name), encoding="utf-8")
    return path


def run_demo(out: Path, binding: str, *, echo: Echo = print) -> Exit:
    """Run the demo; return the exit status (0 when replay and diff agree with the live run)."""
    from recorder.diff import diff_captures, render_text
    from recorder.replay import Replayer

    # The session provokes four errors on purpose; the agent would log a warning for each.
    logging.getLogger("a2a").setLevel(logging.ERROR)
    out.mkdir(parents=True, exist_ok=True)
    live_path, replayed_path = out / "live.http", out / "replayed.http"

    echo(f"1. recording a real a2a-sdk session over {binding} through the recorder")
    with DemoAgent(event_delay=DEMO_EVENT_DELAY, enable_grpc=False) as agent:
        live = _session_through_recorder(
            agent.base_url, live_path, binding, console=lambda line: echo(f"   {line}")
        )
    capture = read_capture(live_path)
    echo(f"   {live_path}: {len(capture.exchanges)} exchanges (the agent is now stopped)\n")

    echo("2. replaying it with no agent, and rerunning the same client against the replayer")
    with Replayer([capture]) as replayer:
        replayed = _session_through_recorder(replayer.url, replayed_path, binding)
        misses = list(replayer.report.misses)
    differing = _steps_differing(live, replayed)
    if differing or misses:
        echo(f"   the client saw different results in: {', '.join(differing) or '-'}")
        for miss in misses:
            echo(f"   unmatched: {miss}")
    else:
        echo(
            f"   the client saw the same results in all {len(live.steps)} steps "
            f"and {live.webhook_deliveries} push deliveries"
        )
    echo(f"   {replayed_path}: the replayed session, recorded\n")

    echo(f"3. a2a-recorder diff {live_path} {replayed_path}")
    result = diff_captures(
        capture, read_capture(replayed_path), a_name=str(live_path), b_name=str(replayed_path)
    )
    echo(render_text([result]))

    report_path = _write_report(capture, out / "report.html", live_path.name)
    echo(f"4. a picture of the live session: {report_path}")
    echo(f"   open it in a browser: {report_path.resolve().as_uri()}")
    return Exit.OK if not differing and not misses and result.same else Exit.FOUND
