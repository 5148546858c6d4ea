"""Shared, stdlib-only pieces of the Python peers: the command line, READY, the summary.

Both ``py_peer.py`` (a2a-sdk 1.x) and ``py03_peer.py`` (a2a-sdk 0.3.x) import this; it must not
import the SDK, because each peer runs in its own environment.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

HOST = "127.0.0.1"
CARD_PATH = "/.well-known/agent-card.json"
JSONRPC_PATH = "/a2a/jsonrpc"
REST_PATH = "/a2a/rest"
BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC")
SCENARIOS = (
    "01-agent-card",
    "03-blocking-task",
    "04-polling",
    "05-streaming",
    "06-subscribe",
    "07-cancel",
    "08-push-configs",
    "09-list-tasks",
    "10-extended-card",
    "11-errors",
    "12-tenant",
    "16-rest-binding",
)
DEFAULT_TENANT = "tenant-a"
TERMINAL = frozenset({"completed", "canceled", "cancelled", "failed", "rejected"})
# Where push configs point when the caller runs no webhook receiver (nothing listens there).
NO_WEBHOOK_URL = "http://127.0.0.1:9/no-webhook"
PUSH_TOKEN = "peer-token-1"
PUSH_SCHEME = "Bearer"
PUSH_CREDENTIALS = "peer-credentials-1"

# The executor's commands (first word of the user's text), as on the project's demo agent.
COMMANDS = {
    "echo": "echo X: task completes with the artifact 'echo X'",
    "slow": "slow N: N artifact updates spaced by --delay, then completed",
    "wait": "wait: stays working until canceled",
    "message": "message X: replies with a Message 'X', no task",
}


def parse_command(text: str) -> tuple[str, str]:
    verb, _, arg = text.strip().partition(" ")
    return verb.lower(), arg.strip()


def slow_count(arg: str) -> int:
    return int(arg) if arg.isdigit() else 3


def short_state(raw: object) -> str:
    """'TASK_STATE_COMPLETED', 'TaskState.completed', 'completed' -> 'completed'."""
    text = str(getattr(raw, "value", raw))
    return text.rsplit(".", 1)[-1].removeprefix("TASK_STATE_").lower().replace("_", "-")


# --- command line ---------------------------------------------------------------------------


def parser(prog: str) -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog=prog)
    sub = top.add_subparsers(dest="role", required=True)
    agent = sub.add_parser("agent", help="serve the peer agent on 127.0.0.1")
    agent.add_argument("--port", type=int, default=0, help="HTTP port (0: a free port)")
    agent.add_argument(
        "--grpc-port", type=int, default=0, help="gRPC port (0: a free port, -1: no gRPC)"
    )
    agent.add_argument("--delay", type=float, default=0.05, help="seconds between slow events")
    client = sub.add_parser("client", help="run one scenario with the SDK's own client")
    client.add_argument("--card-url", required=True)
    client.add_argument("--binding", required=True, choices=BINDINGS)
    client.add_argument("--scenario", required=True, choices=SCENARIOS)
    client.add_argument("--webhook-url", default=None)
    client.add_argument("--tenant", default=None)
    client.add_argument("--timeout", type=float, default=30.0, help="seconds for the scenario")
    return top


def bind_http(port: int) -> socket.socket:
    """Bind before building the card, so the card carries the real port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((HOST, port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


def urls(http_port: int, grpc_port: int | None) -> dict[str, Any]:
    base = f"http://{HOST}:{http_port}"
    return {
        "base_url": base,
        "card_url": base + CARD_PATH,
        "jsonrpc_url": base + JSONRPC_PATH,
        "rest_url": base + REST_PATH,
        "grpc_target": None if grpc_port is None else f"{HOST}:{grpc_port}",
    }


def print_ready(info: dict[str, Any]) -> None:
    print("READY " + json.dumps(info, sort_keys=True), flush=True)


def stop_event_on_sigterm() -> asyncio.Event:
    """An event set by SIGTERM or SIGINT (must be called inside the running loop)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    return stop


# --- the summary ----------------------------------------------------------------------------


class ScenarioFailed(Exception):
    """The SDK did something other than the scenario expects."""


class Skip(Exception):
    """The SDK cannot run this scenario; the message says why."""


@dataclass
class Summary:
    """What the client saw, in one SDK-neutral JSON shape (see run.py for the contract)."""

    sdk: str
    sdk_version: str
    scenario: str
    binding: str
    steps: list[dict[str, Any]] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)

    def step(
        self,
        call: str,
        *,
        events: list[str] | None = None,
        state: str | None = None,
        texts: list[str] | None = None,
        error: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        entry: dict[str, Any] = {"call": call}
        if events is not None:
            entry["events"] = events
        if state is not None:
            entry["state"] = state
        if texts is not None:
            entry["texts"] = texts
        if error is not None:
            entry["error"] = error
        entry.update(extra)
        self.steps.append(entry)
        return entry

    def as_dict(self, ok: bool, failure: str | None = None) -> dict[str, Any]:
        states: list[str] = []
        texts: list[str] = []
        for s in self.steps:
            for ev in s.get("events", []):
                kind, _, detail = ev.partition(":")
                (texts if kind in ("artifact", "message") else states).append(detail)
            if "state" in s:
                states.append(s["state"])
            texts.extend(s.get("texts", []))
        out: dict[str, Any] = {
            "sdk": self.sdk,
            "sdk_version": self.sdk_version,
            "scenario": self.scenario,
            "binding": self.binding,
            "ok": ok,
            "steps": self.steps,
            "states": [x for x in states if x],
            "texts": texts,
            "errors": [s["error"] for s in self.steps if "error" in s],
            **self.facts,
        }
        if failure:
            out["failure"] = failure
        return out


def expect(cond: bool, why: str) -> None:
    if not cond:
        raise ScenarioFailed(why)


async def expect_error(
    summary: Summary,
    call: str,
    wanted: str,
    action: Callable[[], Awaitable[Any]],
    naming: Callable[[BaseException], str],
) -> None:
    """Run ``action`` and record the error class; the scenario fails unless ``wanted`` names it."""
    try:
        await action()
    except Exception as exc:  # the class name is what we record
        name = naming(exc)
        summary.step(call, error=name, message=str(exc)[:200])
        expect(wanted in name, f"{call}: wanted {wanted}, got {name}: {exc}")
        return
    summary.step(call, error=None)
    raise ScenarioFailed(f"{call}: no error raised, wanted {wanted}")


def run_client_main(summary: Summary, body: Callable[[], Awaitable[None]], timeout: float) -> int:
    """Run one scenario, print its summary as JSON, return the exit code."""

    async def guarded() -> None:
        async with asyncio.timeout(timeout):
            await body()

    try:
        asyncio.run(guarded())
    except Skip as why:
        print(
            json.dumps(
                {
                    "skipped": str(why),
                    "sdk": summary.sdk,
                    "sdk_version": summary.sdk_version,
                    "scenario": summary.scenario,
                    "binding": summary.binding,
                }
            )
        )
        return 0
    except ScenarioFailed as exc:
        print(json.dumps(summary.as_dict(False, str(exc))))
        return 1
    except BaseException as exc:  # reported in the summary, never a traceback
        if isinstance(exc, KeyboardInterrupt):
            raise
        import traceback

        traceback.print_exc(file=sys.stderr)
        print(json.dumps(summary.as_dict(False, f"{type(exc).__name__}: {exc}"[:500])))
        return 1
    print(json.dumps(summary.as_dict(True)))
    return 0
