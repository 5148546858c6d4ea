"""The @a2a-js/sdk 1.3.0 client lists its own tasks from a replay, on every binding.

Its fetch pool puts a stream on a connection of its own, and its messages here name no
context.  Recorded live against the real a2a-sdk demo agent through the recorder, then
replayed to two clients one after the other: the first lists exactly its own two tasks, as
recorded; the second its own two and the first's, as the agent's store would.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from recorder.capture import read_capture
from recorder.demo import DemoAgent
from recorder.record import RecordingProxy
from recorder.replay import Replayer

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "scripts" / "peers"))
from envs import ENVS, is_built  # noqa: E402

ENV = ENVS["a2a-js-1.3.x"]
CARD = "/.well-known/agent-card.json"
pytestmark = pytest.mark.skipif(
    not is_built(ENV) or not shutil.which("node"),
    reason="the @a2a-js/sdk environment under .peers/ is not built",
)


def js_client(base_url: str, binding: str) -> dict[str, list[str]]:
    env = {**os.environ, "A2A_PEER_NODE_ENV": str(ENV.path)}
    done = subprocess.run(
        ["node", str(HERE / "js" / "send_stream_get_list.mjs"), base_url + CARD, binding],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, list[str]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
def test_the_js_client_lists_both_of_its_tasks(binding: str, tmp_path: Path) -> None:
    out = tmp_path / "js.http"
    with (
        DemoAgent(event_delay=0.05) as agent,
        RecordingProxy(upstream=agent.base_url, out=out, grpc_upstream=agent.grpc_target) as proxy,
    ):
        live = js_client(proxy.url, binding)
    assert len(live["sent"]) == 2 and sorted(live["listed"]) == sorted(live["sent"])
    with Replayer([read_capture(out)]) as replayer:
        first = js_client(replayer.url, binding)
        second = js_client(replayer.url, binding)
        assert replayer.report.misses == []
    assert len(first["sent"]) == 2 and sorted(first["listed"]) == sorted(first["sent"])
    both = sorted(first["sent"] + second["sent"])
    assert len(second["sent"]) == 2 and sorted(second["listed"]) == both
    assert not set(first["sent"]) & set(second["sent"])
    # The first run got the recorded ids (the replay issues them once), the second fresh ones.
    assert set(first["sent"]) == set(live["sent"])
