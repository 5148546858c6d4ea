"""The bundled demo: a real a2a-sdk agent, a webhook receiver and a scripted client session.

Used by ``a2a-recorder demo``, the integration tests and the benchmarks; everything binds
127.0.0.1 on free ports in background threads.  Needs the ``demo`` extra (a2a-sdk 1.3.x).

May import any package below the shells; only the command line and the tests use it.
"""

from __future__ import annotations

try:
    from recorder.demo._agent import DemoAgent
    from recorder.demo._run import run_demo
    from recorder.demo._session import SCRIPT, SessionResult, Step, run_session
except ImportError as exc:  # no a2a-sdk, or one the demo is not written against
    from recorder._demo_needs import demo_advice

    raise ImportError(f"recorder.demo: {demo_advice(exc.name or 'a2a')}", name=exc.name) from exc
from recorder.demo._webhook import Delivery, WebhookReceiver

__all__ = [
    "Delivery",
    "DemoAgent",
    "SCRIPT",
    "SessionResult",
    "Step",
    "WebhookReceiver",
    "run_demo",
    "run_session",
]
