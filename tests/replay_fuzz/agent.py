"""The agent the fuzzer records: the bundled real a2a-sdk 1.3.0 demo agent, in a process of its
own, its push deliveries sent through the recorder's push proxy (so that those of configs
created over gRPC are recorded too).

    python -m replay_fuzz.agent --push-proxy http://127.0.0.1:PORT [--event-delay S]

prints one JSON line (`base_url`, `grpc_target`) once it serves, and runs until SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import signal
import threading

from recorder.demo import DemoAgent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--push-proxy", default=None)
    parser.add_argument("--event-delay", type=float, default=0.05)
    args = parser.parse_args()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with DemoAgent(event_delay=args.event_delay, push_proxy=args.push_proxy) as agent:
        print(
            json.dumps({"base_url": agent.base_url, "grpc_target": agent.grpc_target}), flush=True
        )
        stop.wait()


if __name__ == "__main__":
    main()
