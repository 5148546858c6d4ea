"""`verify` against a noisy (LLM-like) agent: learnt noise, trials, shape comparison, baselines.

The agent is the real a2a-sdk demo agent with `noise_seed`: every artifact's text gets words
sampled anew on each call, its states, part kinds and artifact names stay.  The capture is
the demo session on JSON-RPC, recorded through the real recorder from one such agent and
verified against another (another seed), as a project's CI would against its LLM agent.

The issue's acceptance: `verify --learn 3` writes the ignores; a fourth run then shows no
drift; a real change (an artifact's name, a state event) is still reported; `--trials 5
--min-pass 4` gives the pass rate.  Then: `--compare shape:PATH` without any learning, the
verify baseline's life (accept, then stale), and JUnit output against our schema.
"""

from __future__ import annotations

import asyncio
import json
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result
from lxml import etree

import recorder.record  # noqa: F401 - imported once (see test_plugin.py)
from recorder.cli import main
from recorder.demo import DemoAgent, run_session
from recorder.record import RecordingProxy

ROOT = Path(__file__).resolve().parents[2]
RENAMED = {"echo": "echoed"}
TEXT = "parts[0].text"


def _verify(*args: str) -> Result:
    result = CliRunner().invoke(main, ["verify", *args])
    print(f"$ a2a-recorder verify {' '.join(args)}  (exit {result.exit_code})\n{result.output}")
    return result


def _agent(**options: object) -> DemoAgent:
    return DemoAgent(event_delay=0.02, enable_grpc=False, **options)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with `noisy.http`: the demo session on JSON-RPC from an agent with seed 1."""
    folder = tmp_path_factory.mktemp("noisy")
    with (
        _agent(noise_seed=1) as agent,
        RecordingProxy(upstream=agent.base_url, out=folder / "noisy.http") as proxy,
    ):
        asyncio.run(run_session(proxy.url, binding="JSONRPC"))
    return folder


@pytest.fixture(scope="module")
def noisy() -> Iterator[DemoAgent]:
    with _agent(noise_seed=2) as agent:
        yield agent


def _differences(result: Result) -> list[dict[str, object]]:
    report = json.loads(result.output)
    return [
        d
        for pair in report["diff"]["exchanges"]
        for d in pair["differences"]
        if d["kind"] != "empty-default"
    ]


def test_the_noise_is_in_artifact_text_only(project: Path, noisy: DemoAgent) -> None:
    result = _verify(str(project / "noisy.http"), "--agent", noisy.base_url, "--format", "json")
    assert result.exit_code == 1
    found = _differences(result)
    assert found and all(str(d["path"]).endswith(TEXT) for d in found)
    assert all(d["kind"] == "changed" for d in found)


def test_learn_then_no_drift_but_real_changes_still_show(project: Path, noisy: DemoAgent) -> None:
    capture, config = project / "noisy.http", project / "verify.toml"
    config.write_text("# standing settings, kept as they are\ntimeout = 20\n", encoding="utf-8")
    learnt = _verify(str(capture), "--agent", noisy.base_url, "--learn", "--config", str(config))
    assert learnt.exit_code == 0
    assert learnt.output.startswith("learnt ") and "from 3 runs, written to" in learnt.output
    text = config.read_text(encoding="utf-8")
    assert text.startswith("# standing settings, kept as they are\ntimeout = 20\n")
    assert '[learnt."noisy.http"]' in text and "# differed between runs 1 and 2, 1 and 3" in text
    patterns = tomllib.loads(text)["learnt"]["noisy.http"]["ignore"]
    assert patterns and all(p.endswith(TEXT) for p in patterns)
    # The fourth run: no drift, the settings found beside the capture or named.
    fourth = _verify(str(capture), "--agent", noisy.base_url, "--config", str(config))
    assert fourth.exit_code == 0, fourth.output
    assert "Verify: no drift" in fourth.output
    # A real change is still drift, and only it is reported.
    with _agent(noise_seed=3, artifact_names=RENAMED) as renamed:
        named = _verify(
            str(capture), "--agent", renamed.base_url, "--config", str(config), "--format", "json"
        )
    assert named.exit_code == 1
    assert {(d["old"], d["new"]) for d in _differences(named)} == {("echo", "echoed")}
    with _agent(noise_seed=4, extra_status=True) as extra:
        status = _verify(
            str(capture), "--agent", extra.base_url, "--config", str(config), "--format", "json"
        )
    assert status.exit_code == 1
    (added,) = _differences(status)
    assert added["kind"] == "added" and "TASK_STATE_WORKING" in json.dumps(added["new"])
    # Learning again replaces the table, and nothing else.
    again = _verify(
        str(capture), "--agent", noisy.base_url, "--learn", "2", "--config", str(config)
    )
    assert again.exit_code == 0
    relearnt = config.read_text(encoding="utf-8")
    assert relearnt.count('[learnt."noisy.http"]') == 1 and "--learn 2" in relearnt
    assert relearnt.startswith("# standing settings, kept as they are\ntimeout = 20\n")


def test_trials_give_the_pass_rate_per_exchange(project: Path, noisy: DemoAgent) -> None:
    capture = project / "noisy.http"
    shape = "--compare=shape:$"
    passing = _verify(
        str(capture), "--agent", noisy.base_url, shape, "--trials", "5", "--min-pass", "4",
        "--format", "json",
    )  # fmt: skip
    assert passing.exit_code == 0
    report = json.loads(passing.output)
    assert (report["trials"], report["min_pass"], report["passed"]) == (5, 4, 5)
    assert report["summary"] == "pass: 5 of 5 runs without drift (at least 4 needed)"
    assert all((e["passed"], e["runs"], e["rate"]) == (5, 5, 1.0) for e in report["exchanges"])
    with _agent(noise_seed=5, artifact_names=RENAMED) as renamed:
        failing = _verify(
            str(capture), "--agent", renamed.base_url, shape, "--trials", "2", "--min-pass", "1"
        )
    assert failing.exit_code == 1
    assert "Trials: fail: 0 of 2 runs without drift (at least 1 needed)" in failing.output
    assert "SendMessage: 0/2 passed" in failing.output
    assert '.name: "echo" → "echoed"' in failing.output
    assert "AgentCard: 2/2 passed" in failing.output


def test_shape_comparison_needs_no_learning(project: Path, noisy: DemoAgent) -> None:
    capture = str(project / "noisy.http")
    by_shape = _verify(capture, "--agent", noisy.base_url, "--compare", "shape:$")
    assert by_shape.exit_code == 0, by_shape.output
    with _agent(noise_seed=6, artifact_names=RENAMED) as renamed:
        named = _verify(capture, "--agent", renamed.base_url, "--compare", "shape:$")
    assert named.exit_code == 1 and '.name: "echo" → "echoed"' in named.output


def test_a_verify_baseline_accepts_drift_and_goes_stale(project: Path, noisy: DemoAgent) -> None:
    capture, base = str(project / "noisy.http"), project / "verify-baseline.json"
    shape = "--compare=shape:$"
    with _agent(noise_seed=7, artifact_names=RENAMED) as renamed:
        first = _verify(capture, "--agent", renamed.base_url, shape, "--baseline", str(base))
        assert first.exit_code == 0 and "written with" in first.output
        accepted = _verify(capture, "--agent", renamed.base_url, shape, "--baseline", str(base))
    assert accepted.exit_code == 0 and "Verify: no drift" in accepted.output
    entries = json.loads(base.read_text(encoding="utf-8"))["entries"]
    assert entries and {e["kind"] for e in entries} == {"changed"}
    assert all(e["path"].endswith(".name") and e["reason"] == "" for e in entries)
    stale = _verify(capture, "--agent", noisy.base_url, shape, "--baseline", str(base))
    assert stale.exit_code == 1 and "Stale baseline entries (no longer found):" in stale.output
    updated = _verify(
        capture, "--agent", noisy.base_url, shape, "--baseline", str(base), "--update-baseline"
    )
    assert updated.exit_code == 0
    assert json.loads(base.read_text(encoding="utf-8"))["entries"] == []


def test_junit_validates_and_fails_once_per_difference(project: Path, noisy: DemoAgent) -> None:
    schema = etree.XMLSchema(etree.parse(str(ROOT / "tests" / "data" / "junit.xsd")))
    capture = str(project / "noisy.http")
    result = _verify(capture, "--agent", noisy.base_url, "--format", "junit")
    assert result.exit_code == 1
    document = etree.fromstring(result.output.encode())
    schema.assertValid(document)
    (case,) = document.findall("testsuite/testcase")
    assert case.get("name") == capture
    failures = case.findall("failure")
    assert failures and all(TEXT in f.get("message", "") for f in failures)
    trials = _verify(capture, "--agent", noisy.base_url, "--format", "junit", "--trials", "2")
    assert trials.exit_code == 1
    document = etree.fromstring(trials.output.encode())
    schema.assertValid(document)
    assert [f.get("type") for f in document.findall("testsuite/testcase/failure")] == ["drift"] * 2


@pytest.mark.parametrize(
    "args, message",
    [
        (["--min-pass", "2"], "--min-pass goes with --trials K"),
        (["--trials", "2", "--min-pass", "3"], "--min-pass 3 is more than the 2 trials"),
        (["--learn", "--trials", "2"], "--learn and --trials do not go together"),
        (["--trials", "2", "--baseline", "b.json"], "--trials and --baseline do not go together"),
        (["--learn", "--format", "html"], "--learn reports as text or json"),
        (["--trials", "2", "--format", "html"], "--trials reports as text, markdown, json, junit"),
        (["--learn", "1"], "1 is not in the range x>=2"),
        (["--update-baseline"], "--update-baseline needs --baseline FILE"),
        (["--compare", "size:body"], "expected shape:PATH"),
    ],
)
def test_options_that_do_not_go_together_exit_2(
    project: Path, args: list[str], message: str
) -> None:
    result = _verify(str(project / "noisy.http"), "--agent", "http://127.0.0.1:9", *args)
    assert result.exit_code == 2 and message in result.output


def test_learn_will_not_write_into_pyproject(tmp_path: Path, project: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.a2a-recorder.verify]\ntimeout = 5\n")
    result = _verify(
        str(project / "noisy.http"), "--agent", "http://127.0.0.1:9", "--learn",
        "--config", str(tmp_path / "pyproject.toml"),
    )  # fmt: skip
    assert (
        result.exit_code == 2 and "--learn writes its ignores into a verify.toml" in result.output
    )


def _rpc(url: str, method: str, params: dict[str, object]) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    headers = {"A2A-Version": "1.0"}
    assert httpx.post(f"{url}/a2a/jsonrpc", json=body, headers=headers, timeout=10).is_success


def test_learn_names_a_growing_list_by_pattern(tmp_path: Path) -> None:
    """A stateful agent's ListTasks grows by the tasks each run makes: learning names the list
    (`tasks[*]`), not the positions it saw, so the next verify has no drift (issue 30: it
    learnt `tasks[9]` ... `tasks[14]`, and the next run drifted at `tasks[15]`)."""
    capture, config = tmp_path / "list.http", tmp_path / "verify.toml"
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "echo hi"}]}
    with _agent() as agent:
        with RecordingProxy(upstream=agent.base_url, out=capture) as proxy:
            _rpc(proxy.url, "SendMessage", {"message": message})
            _rpc(proxy.url, "ListTasks", {})
        args = (str(capture), "--agent", agent.base_url, "--config", str(config))
        assert _verify(*args, "--learn", "3").exit_code == 0
        patterns = tomllib.loads(config.read_text(encoding="utf-8"))["learnt"]["list.http"]
        assert "body.result.tasks[*]" in patterns["ignore"]
        assert not [p for p in patterns["ignore"] if re.search(r"tasks\[\d", p)], patterns
        after = _verify(*args)
    assert after.exit_code == 0 and "Verify: no drift" in after.output, after.output
