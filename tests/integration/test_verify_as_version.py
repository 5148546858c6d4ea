"""`verify --as-version` (issue 24): a migration checked against a recording of the old version.

The a2a-sdk 0.3.26 corpus (JSON-RPC; A2A_FULL_MATRIX=1 adds HTTP+JSON), sent as v1.0 to a
live a2a-sdk 1.3.0 agent, must drift in exactly what `diff` between the 0.3.26 and 1.3.0
corpus captures of the scenario says the agents answer differently (`agent_side`, as in
test_verify_corpus.py): verify's translation and the diff's renames are the same translator,
so a rename is no drift, and every other difference is the agents'.

Less the card's interface lists: the recorded v0.3 card, translated, names the interfaces the
0.3.26 agent had (gRPC among them) in v1.0 only, the live 1.3.0 agent lists its own in v1.0
and v0.3; the diff of the corpora compares the v0.3 card's own fields.  Those differences are
checked to be about the interfaces and the version said, nothing else.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
from _helpers import load_peers_run
from test_verify_corpus import Key, _keys, agent_side

from recorder.capture import read_capture
from recorder.diff import diff_captures
from recorder.protocol import Version
from recorder.verify import verify_capture

run = load_peers_run()
CORPUS = Path(__file__).resolve().parents[2] / "captures"
OLD, NEW, AGENT = "a2a-python-0.3.26", "a2a-python-1.3.0", "a2a-python-1.3.0"
FOLDERS = ["", "http-json"] if os.environ.get("A2A_FULL_MATRIX") == "1" else [""]
CARDS = ("AgentCard", "GetExtendedAgentCard")
# What a card says of the interfaces and versions it serves (v1.0 and v0.3 fields).
CARD_INTERFACES = (
    "supportedInterfaces",
    "additionalInterfaces",
    "protocolVersion",
    "url",
    "preferredTransport",
    "capabilities.extendedAgentCard",
    "supportsAuthenticatedExtendedCard",
)

# Where the corpus diff shows what verify translates: `diff` reads a v0.3 HTTP+JSON error
# (409 `{message}`) as it is, so the two corpora's errors differ in shape, status and
# members; verify --as-version sends the recording translated (`rest_error`: 400 with
# `error.status` and an ErrorInfo) and the live agent differs from it in its wording only.
DIFF_SHOWS_ERROR_SHAPES = {"http-json/11-errors.http"}

if not run.SDKS[AGENT].built:
    pytest.skip(f"{AGENT} peer not built (scripts/peers/envs.py)", allow_module_level=True)


def _card_interfaces(key: Key) -> bool:
    operation, _, path, _, _ = key
    field = path.removeprefix("body.").removeprefix("result.")
    return operation in CARDS and field.startswith(CARD_INTERFACES)


def _error_wording_only(want: Counter[Key], found: Counter[Key]) -> Counter[Key]:
    """`want` with its error exchanges' differences replaced by verify's wording changes."""
    errors = ("GetTask", "CancelTask")
    kept = Counter({k: n for k, n in want.items() if k[0] not in errors})
    wording = {k: n for k, n in found.items() if k[0] in errors and k[2] == "body.error.message"}
    return kept + Counter(wording)


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda f: f or "JSONRPC")
def test_the_v03_corpus_sent_as_v1_drifts_only_where_the_agents_differ(folder: str) -> None:
    captures = [p for p in sorted((CORPUS / OLD / folder).glob("*.http"))]
    assert len(captures) >= 8
    failures: list[str] = []
    with run.start_agent(AGENT, grpc_port=-1) as agent:
        for path in captures:
            counterpart = CORPUS / NEW / path.relative_to(CORPUS / OLD)
            result = verify_capture(
                read_capture(path), agent.base_url, name=str(path), as_version=Version.V1_0
            )
            assert any("sent and compared as A2A v1.0" in n for n in result.notes), path
            assert not result.not_sent, (path, result.not_sent)
            corpus = diff_captures(
                read_capture(path), read_capture(counterpart), collapse_polls=True
            )
            want = Counter(k for k in agent_side(_keys(corpus)) if not _card_interfaces(k))
            found = Counter(k for k in _keys(result.diff) if not _card_interfaces(k))
            if path.relative_to(CORPUS / OLD).as_posix() in DIFF_SHOWS_ERROR_SHAPES:
                want = _error_wording_only(want, found)
            if found != want:
                failures.append(
                    f"{path.name}: extra {sorted(found - want)} missing {sorted(want - found)}"
                )
    assert not failures, "\n".join(failures)
