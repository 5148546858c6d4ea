"""``python -m recorder.demo``: run the demo agent standalone, or one scripted session.

python -m recorder.demo agent [--port N] [--grpc-port N] [--no-grpc] [--event-delay S]
python -m recorder.demo session URL [--binding JSONRPC|HTTP+JSON|GRPC] [--webhook]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import threading

from recorder.demo._agent import DemoAgent
from recorder.demo._executor import DEFAULT_EVENT_DELAY
from recorder.demo._session import run_session
from recorder.demo._webhook import WebhookReceiver

_BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m recorder.demo")
    sub = parser.add_subparsers(dest="command", required=True)
    agent = sub.add_parser("agent", help="run the demo agent until Ctrl-C")
    agent.add_argument("--port", type=int, default=0, help="HTTP port (0: a free port)")
    agent.add_argument("--grpc-port", type=int, default=0, help="gRPC port (0: a free port)")
    agent.add_argument("--no-grpc", action="store_true", help="serve JSON-RPC and REST only")
    agent.add_argument(
        "--event-delay",
        type=float,
        default=DEFAULT_EVENT_DELAY,
        help="seconds between 'slow N' artifact updates",
    )
    session = sub.add_parser("session", help="run the scripted client session, print JSON")
    session.add_argument("url", help="agent base URL (where the agent card is served)")
    session.add_argument("--binding", choices=_BINDINGS, default="JSONRPC")
    session.add_argument(
        "--webhook",
        action="store_true",
        help="start a local webhook receiver and count push deliveries",
    )
    return parser


def _run_agent(args: argparse.Namespace) -> int:
    agent = DemoAgent(
        event_delay=args.event_delay,
        enable_grpc=not args.no_grpc,
        http_port=args.port,
        grpc_port=args.grpc_port,
    )
    with agent:
        print(
            json.dumps(
                {
                    "base_url": agent.base_url,
                    "card_url": agent.card_url,
                    "jsonrpc_url": agent.jsonrpc_url,
                    "rest_url": agent.rest_url,
                    "grpc_target": agent.grpc_target,
                }
            ),
            flush=True,
        )
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


def _run_session(args: argparse.Namespace) -> int:
    async def go() -> dict[str, object]:
        if not args.webhook:
            return (await run_session(args.url, binding=args.binding)).as_dict()
        with WebhookReceiver() as hook:
            return (await run_session(args.url, binding=args.binding, webhook=hook)).as_dict()

    print(json.dumps(asyncio.run(go()), indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return _run_agent(args) if args.command == "agent" else _run_session(args)


if __name__ == "__main__":
    sys.exit(main())
