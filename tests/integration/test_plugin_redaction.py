"""The pytest plugin takes redaction rules and a before_record hook (issue 20, finding 7): from
`[tool.a2a-recorder]` in pyproject.toml and from the `a2a_recorder_config` fixture, as
pytest-recording's `vcr_config`; the recorder and the replayer's journal both apply them."""

from __future__ import annotations

import pytest

import recorder.record  # noqa: F401  (imported once: see test_plugin.py)
from recorder.capture import read_capture
from recorder.demo import DemoAgent

pytest_plugins = ["pytester"]
NO_OUTPUT = ("-p", "no:cacheprovider")

CLIENT = """
import httpx, pytest

@pytest.mark.a2a_capture("captures/card.http")
def test_card(a2a_replay):
    headers = {"X-Tenant-Seal": "seal-from-pyproject-1", "X-Other-Seal": "seal-from-fixture-2"}
    url = a2a_replay.url + "/.well-known/agent-card.json?sig=signature-value-3"
    card = httpx.get(url, headers=headers, timeout=5)
    assert card.status_code == 200
    journal = httpx.get(a2a_replay.url + "/__a2a_recorder/requests", timeout=5)
    if not a2a_replay.recording:
        assert journal.status_code == 200
        for secret in ("seal-from-pyproject-1", "seal-from-fixture-2", "signature-value-3"):
            assert secret not in journal.text, secret
"""
PYPROJECT = """
[tool.a2a-recorder]
redact-headers = ["X-Tenant-Seal"]

[tool.a2a-recorder.verify]
timeout = 5
"""
CONFTEST = """
import dataclasses, pytest

def tag(exchange):
    return dataclasses.replace(exchange, notes=(*exchange.notes, "seen by before_record"))

@pytest.fixture
def a2a_recorder_config():
    return {"redact_headers": ["X-Other-Seal"], "redact_params": ["sig"], "before_record": tag}
"""


@pytest.fixture(autouse=True)
def inner_project(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyprojecttoml(PYPROJECT)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_client=CLIENT)


def test_rules_and_hook_apply_to_recording_and_replay(pytester: pytest.Pytester) -> None:
    with DemoAgent(enable_grpc=False) as agent:
        recorded = pytester.runpytest(
            *NO_OUTPUT, "--a2a-record=missing", f"--a2a-upstream={agent.base_url}"
        )
    recorded.assert_outcomes(passed=1)
    path = pytester.path / "captures" / "card.http"
    text = path.read_text()
    for secret in ("seal-from-pyproject-1", "seal-from-fixture-2", "signature-value-3"):
        assert secret not in text
    (card,) = read_capture(path).exchanges
    assert card.request.header("X-Tenant-Seal") == "<redacted:1>"
    assert card.request.header("X-Other-Seal") == "<redacted:2>"
    assert card.request.target.endswith("?sig=<redacted:3>")
    assert "seen by before_record" in card.notes
    # Offline now: the replayer's journal redacts with the same rules.
    pytester.runpytest(*NO_OUTPUT).assert_outcomes(passed=1)


def test_an_unknown_setting_fails_the_test_and_names_it(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml('[tool.a2a-recorder]\nredact-header = ["X-Typo"]\n')
    result = pytester.runpytest(*NO_OUTPUT)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*pyproject.toml [[]tool.a2a-recorder[]]: unknown key 'redact-header'*"]
    )


def test_a_hook_named_in_pyproject_is_imported(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(a2a_test_hooks="def drop(exchange):\n    return None\n")
    pytester.makepyprojecttoml('[tool.a2a-recorder]\nbefore-record = "a2a_test_hooks:drop"\n')
    pytester.makeconftest("")
    pytester.syspathinsert()
    with DemoAgent(enable_grpc=False) as agent:
        recorded = pytester.runpytest(
            *NO_OUTPUT, "--a2a-record=missing", f"--a2a-upstream={agent.base_url}", "-W", "ignore"
        )
    recorded.assert_outcomes(passed=1)
    assert not (pytester.path / "captures" / "card.http").exists()  # every exchange dropped
