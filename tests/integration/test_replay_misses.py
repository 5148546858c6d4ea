"""A miss reaches the SDK client's exception text, on every binding, for every SDK client.

A capture holding only the agent card is replayed to each SDK's own client running a blocking
send: the send misses, and the text the client raises must carry the replayer's description
("no recorded exchange matches SendMessage ..."), not a bare "HTTP Error 500".  The error
shapes are chosen per binding in recorder/replay/core/_misses.py.
"""

from __future__ import annotations

import pytest
from _helpers import load_peers_run

from recorder.capture import Capture, read_capture
from recorder.record import RecordingProxy
from recorder.replay import Replayer

run = load_peers_run()
SDKS = ("a2a-python-1.3.0", "a2a-python-0.3.x", "a2a-js-1.3.x")
BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC")
if not any(run.SDKS[s].built for s in SDKS):
    pytest.skip("no SDK peer environment under .peers/ is built", allow_module_level=True)


@pytest.fixture(scope="module")
def card_only(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Capture, str]]:
    """Per SDK: a capture of its client fetching its agent's card, and the card's path."""
    found = {}
    for sdk in SDKS:
        if not run.SDKS[sdk].built:
            continue
        out = tmp_path_factory.mktemp("card") / f"{sdk}.http"
        with (
            run.start_agent(sdk, grpc_port=0, timeout=60) as agent,
            RecordingProxy(
                upstream=agent.base_url, out=out, grpc_upstream=agent.grpc_target
            ) as proxy,
        ):
            card_path = agent.card_url[len(agent.base_url) :]
            summary = run.run_client(
                sdk, proxy.url + card_path, "JSONRPC", "01-agent-card", timeout=60
            )
            assert summary.get("ok"), summary
        found[sdk] = (read_capture(out), card_path)
    return found


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("sdk", SDKS)
def test_the_miss_text_reaches_the_client(
    sdk: str, binding: str, card_only: dict[str, tuple[Capture, str]]
) -> None:
    if sdk not in card_only:
        pytest.skip(f"{sdk} is not built")
    capture, card_path = card_only[sdk]
    with Replayer([capture], grpc_port=0) as replayer:
        summary = run.run_client(
            sdk, replayer.url + card_path, binding, "03-blocking-task", timeout=60
        )
        misses = replayer.report.misses
    assert summary["ok"] is False
    failure = summary["failure"]
    assert "no recorded exchange matches SendMessage" in failure, failure
    assert f"({binding})" in failure, failure
    assert len(misses) >= 1
