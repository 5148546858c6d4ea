"""The pytest plugin's options, as pytest-recording's (issue 23): the command line beats the
marker for both upstreams, a marker without a path names the capture after the test, and the
options come from the recorder's option table.  Real inner pytest runs (pytester) against the
real demo agent, over HTTP and gRPC."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import a2a.client  # noqa: F401
import pytest
from _helpers import free_port

import recorder.record  # noqa: F401
from recorder.demo import DemoAgent
from recorder.options import RECORD

pytest_plugins = ["pytester"]
# As test_plugin: mitmproxy and the SDK client are imported once, here, and stay.

NO_OUTPUT = ("-p", "no:cacheprovider")
CARD = """
import httpx, pytest

def card_name(endpoint):
    return httpx.get(endpoint.card_url, timeout=5).json()["name"]
"""


@pytest.fixture(autouse=True)
def _inner_ini(request: pytest.FixtureRequest) -> None:
    if "pytester" in request.fixturenames:
        pester: pytest.Pytester = request.getfixturevalue("pytester")
        pester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")


def dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}"


def test_a_marker_without_a_path_names_the_capture_after_the_test(
    pytester: pytest.Pytester, make_demo_agent: Callable[..., DemoAgent]
) -> None:
    agent = make_demo_agent(enable_grpc=False)
    pytester.makepyfile(
        test_client=CARD
        + """
@pytest.mark.a2a_capture
def test_card(a2a_replay):
    assert card_name(a2a_replay) == "a2a-recorder demo agent"

class TestCards:
    @pytest.mark.a2a_capture()
    def test_card(self, a2a_replay):
        assert card_name(a2a_replay) == "a2a-recorder demo agent"

@pytest.mark.a2a_capture
@pytest.mark.parametrize("kind", ["a/b"])
def test_each(a2a_replay, kind):
    assert card_name(a2a_replay) == "a2a-recorder demo agent"
"""
    )
    recorded = pytester.runpytest(
        *NO_OUTPUT, "--a2a-record=missing", f"--a2a-upstream={agent.base_url}"
    )
    recorded.assert_outcomes(passed=3)
    folder = pytester.path / "captures" / "test_client"
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["TestCards.test_card.http", "test_card.http", "test_each[a-b].http"]
    assert all("### 1 AgentCard HTTP 200" in (folder / n).read_text() for n in names)
    agent.stop()
    pytester.runpytest(*NO_OUTPUT).assert_outcomes(passed=3)  # replayed, the agent gone


def test_the_command_line_beats_the_marker_for_both_upstreams(
    pytester: pytest.Pytester, make_demo_agent: Callable[..., DemoAgent]
) -> None:
    agent = make_demo_agent()
    dead_grpc = f"127.0.0.1:{free_port()}"
    pytester.makepyfile(
        test_client=f"""
import grpc, pytest
from a2a.types import a2a_pb2, a2a_pb2_grpc

@pytest.mark.a2a_capture(upstream="{dead_url()}", grpc_upstream="{dead_grpc}")
def test_both(a2a_replay):
    import httpx
    assert httpx.get(a2a_replay.card_url, timeout=5).status_code == 200
    with grpc.insecure_channel(a2a_replay.grpc_target) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)
        stub.GetTask(a2a_pb2.GetTaskRequest(id="no-such-task"), timeout=5)
"""
    )
    result = pytester.runpytest(
        *NO_OUTPUT,
        "--a2a-record=missing",
        f"--a2a-upstream={agent.base_url}",
        f"--a2a-grpc-upstream={agent.grpc_target}",
    )
    # The test itself fails on the agent's NOT_FOUND, through the recorder to the live agent:
    # both upstreams were the command line's, not the marker's dead ports.
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*StatusCode.NOT_FOUND*"])
    assert "Connection refused" not in result.stdout.str()
    assert "UNAVAILABLE" not in result.stdout.str()


def test_the_marker_gives_the_upstream_when_the_command_line_does_not(
    pytester: pytest.Pytester, make_demo_agent: Callable[..., DemoAgent]
) -> None:
    agent = make_demo_agent(enable_grpc=False)
    pytester.makepyfile(
        test_client=CARD
        + f"""
@pytest.mark.a2a_capture("captures/card.http", upstream="{agent.base_url}")
def test_card(a2a_replay):
    assert card_name(a2a_replay) == "a2a-recorder demo agent"
"""
    )
    pytester.runpytest(*NO_OUTPUT, "--a2a-record=missing").assert_outcomes(passed=1)
    assert Path(pytester.path / "captures" / "card.http").is_file()


def test_the_upstream_options_come_from_the_recorders_table(pytester: pytest.Pytester) -> None:
    shown = pytester.runpytest("--help").stdout.str()
    for name in ("upstream", "grpc_upstream"):
        option = RECORD.by_name[name]
        assert f"{option.pytest_flag}={option.metavar}" in shown
        assert option.help.split("(")[0].strip() in " ".join(shown.split())


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--a2a-upstream=notaurl"], "--a2a-upstream (or the marker's upstream) must be"),
        (
            [f"--a2a-upstream={dead_url()}", "--a2a-grpc-upstream=bad:x"],
            "--a2a-grpc-upstream (or the marker's grpc_upstream): gRPC upstream must be",
        ),
    ],
)
def test_a_bad_option_is_named_as_the_test_run_gives_it(
    pytester: pytest.Pytester, args: list[str], named: str
) -> None:
    """One line naming the pytest option (it named the keyword argument, under a traceback
    of the recorder's internals)."""
    pytester.makepyfile(
        test_client="""
import pytest

@pytest.mark.a2a_capture("captures/x.http")
def test_x(a2a_replay):
    pass
"""
    )
    result = pytester.runpytest(*NO_OUTPUT, "--a2a-record=all", *args)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*a2a-recorder: {named}*"])
    assert "recorder/options/_table.py" not in result.stdout.str()
    assert "recorder/record/_proxy.py" not in result.stdout.str()


SESSION = Path(__file__).resolve().parents[1] / "data" / "sessions" / "demo-session-jsonrpc.http"
SEND_WITHOUT_BEARER = """
import httpx, json, pytest
from pathlib import Path

BODY = json.loads(Path(__file__).with_name("body.json").read_text())

@pytest.mark.a2a_capture("session.http"{keywords})
def test_send(a2a_replay):
    answer = httpx.post(a2a_replay.url + "/a2a/jsonrpc", json=BODY, timeout=5)
    assert answer.status_code == 200
    assert answer.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
"""


def _credentialed_session(pytester: pytest.Pytester) -> None:
    """The demo session, its first SendMessage recorded with a bearer; body.json is that
    request's body, which the inner test sends without one."""
    text = SESSION.read_text()
    head, sep, rest = text.partition("### 2 SendMessage")
    rest = rest.replace("A2A-Version: 1.0\n", "A2A-Version: 1.0\nAuthorization: Bearer t0k3n\n", 1)
    (pytester.path / "session.http").write_text(head + sep + rest)
    request = rest.split("\n\n", 2)[1].split("\n\nHTTP/1.1", 1)[0]
    (pytester.path / "body.json").write_text(request)


@pytest.mark.parametrize(
    ("keywords", "outcome", "said"),
    [
        ("", {"failed": 1}, "*authorization*"),
        (", credentials=False", {"passed": 1}, None),
        (", credentails=False", {"errors": 1}, "*a2a_capture does not take credentails=*"),
    ],
)
def test_the_marker_turns_the_credentials_check_off_and_refuses_a_keyword_it_does_not_take(
    pytester: pytest.Pytester, keywords: str, outcome: dict[str, int], said: str | None
) -> None:
    """credentials=False answers a request that lacks the recorded bearer as if it carried it;
    by default it is a miss naming the credential; a misspelt keyword fails the test instead of
    being a setting silently not applied (it was ignored, and no keyword turned the check off)."""
    _credentialed_session(pytester)
    pytester.makepyfile(test_client=SEND_WITHOUT_BEARER.replace("{keywords}", keywords))
    result = pytester.runpytest(*NO_OUTPUT)
    result.assert_outcomes(**outcome)
    if said is not None:
        result.stdout.fnmatch_lines([said])
