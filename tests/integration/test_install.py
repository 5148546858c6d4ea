"""Installing the built wheel into other projects' environments (issue 11's acceptance).

The environments come from `scripts/peers/installs.py` (scripts/test builds them; stamped):
a2a-sdk 0.3.26, 1.2.3 and 1.3.0, one with no SDK (and the newest dependencies), and one with
every runtime dependency at its lower bound.  In each SDK environment:

- installing the wheel leaves the SDK as it was (`pip list`);
- `a2a-recorder record`, `show`, `replay` and `diff` work on a gRPC session between that SDK's
  own agent and client (`scripts/peers/py_peer.py`, `py03_peer.py`);
- a pytest file written against that SDK's client (`install_clients/`) records (`missing`) and
  then replays, agent stopped, on JSON-RPC, HTTP+JSON and gRPC.

The lowest and the newest environments run the SDK-free tests.  Everything runs from a
temporary folder, so nothing is imported from the checkout but the tests themselves.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / "scripts" / "peers"
CLIENTS = Path(__file__).parent / "install_clients"
sys.path.insert(0, str(PEERS))
import installs  # noqa: E402

SDK_ENVS = ["sdk-0.3.26", "sdk-1.2.3", "sdk-1.3.0", "no-sdk"]
TIMEOUT = 120
# What the lowest and newest envs run: the SDK-free tests of the codec, gRPC replay and
# recording, matching, verify and the recorder's pure parts (none imports a2a-sdk or the demo).
SDK_FREE_TESTS = [
    *(
        f"tests/unit/test_{name}.py"
        for name in (
            "cardrewrite",
            "convert_har",
            "lint_jws",
            "push_relay",
            "replay_ids",
            "replay_late",
            "replay_many",
            "replay_service",
            "replay_timing",
            "secret_scan",
            "sse",
            "verify_plan",
            "verify_report",
            "verify_schedule",
        )
    ),
    "tests/integration/test_grpc_without_sdk.py",
    "tests/integration/test_replay_http_face.py",
]


def _env(key: str) -> installs.InstallEnv:
    env = installs.ENVS[key]
    if not installs.is_built(env):
        pytest.skip(f"{env.path} is not built (.venv/bin/python scripts/peers/installs.py)")
    if not installs.wheel_is_current():
        pytest.skip(
            "the wheel is older than the sources: .venv/bin/python "
            "scripts/peers/installs.py (scripts/test does it)"
        )
    return env


def _clean_environ(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PYTHONUNBUFFERED"] = "1"
    # The nested runs must not rebuild or run the SDK peers (test_corpus would re-record).
    env["A2A_PEERS_DIR"] = str(ROOT / ".no-peers-here")
    return {**env, **extra}


def _run(
    cmd: list[str], cwd: Path, timeout: float = TIMEOUT, check: bool = True, **environ: str
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        cmd,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_clean_environ(**environ),
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if check:
        assert proc.returncode == 0, (
            f"{' '.join(cmd)} exited {proc.returncode}\n"
            f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    return proc


def _bin(env: installs.InstallEnv, name: str) -> str:
    return str(env.path / "bin" / name)


# --- long-running processes ---------------------------------------------------------------------


class Process:
    """A child process whose stdout and stderr lines are read as they come."""

    def __init__(self, cmd: list[str], cwd: Path) -> None:
        self.cmd = cmd
        self.proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=_clean_environ(),
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        for stream in (self.proc.stdout, self.proc.stderr):
            threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[str] | None) -> None:
        assert stream is not None
        for line in stream:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def wait_for(self, pattern: str, timeout: float = 60) -> re.Match[str]:
        """The first line matching `pattern`; fails with everything seen when none comes."""
        wanted = re.compile(pattern)
        ended = 0
        while ended < 2:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                break
            if line is None:
                ended += 1
                continue
            self.seen.append(line)
            if found := wanted.search(line):
                return found
        self.stop()
        raise AssertionError(f"{self.cmd[:3]} printed no {pattern!r}:\n" + "\n".join(self.seen))

    def stop(self, sig: int = signal.SIGINT) -> int:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(sig)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return self.proc.returncode

    def __enter__(self) -> Process:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass(frozen=True, slots=True)
class Sdk:
    """Which environment's peer plays the agent and the SDK client for an env."""

    env: installs.InstallEnv
    script: str
    client_file: str


def _sdk_for(env: installs.InstallEnv) -> Sdk:
    if env.sdk is None:  # no SDK here: a 1.3.0 agent and client from the env next door
        return Sdk(_env("sdk-1.3.0"), "py_peer.py", "raw_client.py")
    if env.sdk.startswith("0.3"):
        return Sdk(env, "py03_peer.py", "sdk03_client.py")
    return Sdk(env, "py_peer.py", "sdk1_client.py")


@contextlib.contextmanager
def _agent(sdk: Sdk, cwd: Path) -> Iterator[dict[str, Any]]:
    with Process(
        [
            str(sdk.env.python),
            str(PEERS / sdk.script),
            "agent",
            "--port",
            "0",
            "--grpc-port",
            "0",
            "--delay",
            "0.05",
        ],
        cwd,
    ) as agent:
        yield json.loads(agent.wait_for(r"^READY (\{.*\})$").group(1))
        agent.stop(signal.SIGTERM)


def _client(sdk: Sdk, card_url: str, binding: str, cwd: Path) -> dict[str, Any]:
    proc = _run(
        [
            str(sdk.env.python),
            str(PEERS / sdk.script),
            "client",
            "--card-url",
            card_url,
            "--binding",
            binding,
            "--scenario",
            "03-blocking-task",
        ],
        cwd,
        check=False,
    )
    summary: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary.get("ok") and proc.returncode == 0, summary
    return summary


# --- the tests ----------------------------------------------------------------------------------


def test_the_wheel_works_outside_the_repo_and_carries_its_data() -> None:
    from recorder import __version__

    wheel = installs.wheel_path()
    if wheel is None:
        pytest.skip("no wheel built (.venv/bin/python scripts/peers/installs.py)")
    installs.check_wheel(wheel)
    assert wheel.name.startswith(f"a2a_recorder-{__version__}-")
    assert not any(r.lower().startswith("a2a-sdk") for r in installs.requires_dist(wheel))


@pytest.mark.parametrize("key", SDK_ENVS)
def test_installing_the_wheel_leaves_the_sdk_as_it_was(key: str, tmp_path: Path) -> None:
    """installs.py installed the wheel after the SDK (and stopped had the SDK changed)."""
    env = _env(key)
    wheel = installs.wheel_path()
    assert wheel is not None
    assert installs.installed_wheel(env) == installs.file_hash(wheel)  # this very wheel
    listed = installs.installed(env)
    assert listed.get("a2a-sdk") == env.sdk
    assert listed["a2a-recorder"] == wheel.name.split("-")[1]
    where = _run([str(env.python), "-c", "import recorder; print(recorder.__file__)"], tmp_path)
    assert where.stdout.strip().startswith(str(env.path))
    version = _run([_bin(env, "a2a-recorder"), "--version"], tmp_path).stdout
    assert (
        "A2A descriptors: shipped with a2a-recorder (protos of a2a-sdk 1.3.0; drafts: "
        "a2a_java_draft.proto of io.github.a2asdk:a2a-java-sdk-spec-grpc 1.0.0.Alpha3)"
    ) in version


def test_the_demo_without_its_extra_says_what_to_install(tmp_path: Path) -> None:
    env = _env("no-sdk")
    proc = _run([_bin(env, "a2a-recorder"), "demo", "--out", str(tmp_path)], tmp_path, check=False)
    assert proc.returncode == 2
    wheel = f"pip install '{installs.wheel_path().resolve()}[demo]'"  # no index has it
    assert wheel in proc.stderr, proc.stderr
    module = _run([str(env.python), "-m", "recorder.demo", "agent"], tmp_path, check=False)
    assert module.returncode != 0
    assert "recorder.demo: the demo needs a2a-sdk" in module.stderr
    assert f"(a2a is missing): {wheel}" in module.stderr


def test_the_demo_next_to_another_sdk_never_advises_changing_it(tmp_path: Path) -> None:
    """Issue 23: next to a2a-sdk 0.3.26 it advised `pip install 'a2a-recorder[demo]'`, which
    upgrades the user's SDK; it now says to give the demo an environment of its own."""
    env = _env("sdk-0.3.26")
    proc = _run([_bin(env, "a2a-recorder"), "demo", "--out", str(tmp_path)], tmp_path, check=False)
    assert proc.returncode == 2
    assert "a2a-sdk 0.3.26" in proc.stderr and "python -m venv" in proc.stderr
    assert "): pip install" not in proc.stderr and "/bin/pip install" in proc.stderr
    assert installs.installed(env).get("a2a-sdk") == "0.3.26"


@pytest.mark.parametrize("key", SDK_ENVS)
def test_the_cli_records_replays_shows_and_diffs_grpc(key: str, tmp_path: Path) -> None:
    env = _env(key)
    sdk = _sdk_for(env)
    cli = _bin(env, "a2a-recorder")
    capture = tmp_path / "recorded.http"
    with (
        _agent(sdk, tmp_path) as agent,
        Process(
            [
                cli,
                "record",
                "--upstream",
                agent["base_url"],
                "--grpc-upstream",
                agent["grpc_target"],
                "--listen",
                "127.0.0.1:0",
                "--grpc-listen",
                "127.0.0.1:0",
                "--out",
                str(capture),
            ],
            tmp_path,
        ) as recorder,
    ):
        url = recorder.wait_for(r"point A2A clients at (http://\S+)").group(1)
        recorder.wait_for(r"recording gRPC: point gRPC clients at \S+")
        _client(sdk, url + "/.well-known/agent-card.json", "GRPC", tmp_path)
        assert recorder.stop() == 0
    shown = _run([cli, "show", str(capture)], tmp_path).stdout
    assert re.search(r"GRPC\s+SendMessage", shown), shown
    with Process(
        [
            cli,
            "replay",
            str(capture),
            "--listen",
            "127.0.0.1:0",
            "--grpc-listen",
            "127.0.0.1:0",
            "--strict",
        ],
        tmp_path,
    ) as replayer:
        url = replayer.wait_for(r"replaying \d+ exchanges at (http://\S+)").group(1)
        replayer.wait_for(r"replaying gRPC at \S+")
        summary = _client(sdk, url + "/.well-known/agent-card.json", "GRPC", tmp_path)
        assert summary["texts"] == ["echo hello"] and summary["states"][-1] == "completed"
        assert replayer.stop() == 0  # --strict: every exchange served, no miss
    assert _run([cli, "diff", str(capture), str(capture)], tmp_path).returncode == 0
    # Against the corpus's recording of the same scenario by the same SDK, some days ago.
    corpus = ROOT / "captures" / f"a2a-python-{sdk.env.sdk}" / "grpc" / "03-blocking-task.http"
    other = _run(
        [cli, "diff", str(corpus), str(capture), "--format", "json"], tmp_path, check=False
    )
    assert other.returncode in (0, 1), other.stderr
    assert "SendMessage" in other.stdout


@pytest.mark.parametrize("key", SDK_ENVS)
def test_a_pytest_file_for_the_sdk_records_then_replays(key: str, tmp_path: Path) -> None:
    env = _env(key)
    sdk = _sdk_for(env)
    shutil.copy(CLIENTS / sdk.client_file, tmp_path / "test_client.py")
    pytest_cmd = [str(env.python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_client.py"]
    with _agent(sdk, tmp_path) as agent:
        recorded = _run(
            [
                *pytest_cmd,
                "--a2a-record=missing",
                f"--a2a-upstream={agent['base_url']}",
                f"--a2a-grpc-upstream={agent['grpc_target']}",
            ],
            tmp_path,
        )
    assert "3 passed" in recorded.stdout
    for name, binding in (("jsonrpc", "JSONRPC"), ("rest", "HTTP+JSON"), ("grpc", "GRPC")):
        text = (tmp_path / "captures" / f"{name}.http").read_text()
        assert re.search(rf"^### \d+ SendMessage {re.escape(binding)} ", text, re.M), name
    replayed = _run(pytest_cmd, tmp_path)  # the agent is stopped now
    assert "3 passed" in replayed.stdout


@pytest.mark.parametrize("key", ["lowest", "no-sdk"])
def test_the_sdk_free_tests_pass_at_the_lowest_and_newest_versions(
    key: str, tmp_path: Path
) -> None:
    env = _env(key)
    listed = installs.installed(env)
    assert "a2a-sdk" not in listed
    if env.lowest:
        floors = dict(pin.lower().split("==") for pin in installs.lowest_pins())
        for name in ("protobuf", "grpcio", "mitmproxy", "cryptography", "httptools"):
            assert _same_version(listed[name], floors[name]), (name, listed[name])
    tests = [str(ROOT / path) for path in SDK_FREE_TESTS]
    proc = _run(
        [
            str(env.python),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--rootdir={ROOT}",
            *tests,
        ],
        tmp_path,
        timeout=600,
        check=False,
        A2A_EXPECT_RECORDER_UNDER=str(env.path),
    )
    tail = proc.stdout.strip().splitlines()[-1:]
    versions = {n: listed[n] for n in ("protobuf", "grpcio", "mitmproxy")}
    assert proc.returncode == 0, f"{versions}\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}"
    assert tail and " passed" in tail[0] and not re.search(r"\d+ (failed|errors?)\b", tail[0]), tail


def _same_version(installed: str, floor: str) -> bool:
    def parts(v: str) -> list[int]:
        numbers = [int(p) for p in v.split(".")]
        return numbers + [0] * (4 - len(numbers))

    return parts(installed) == parts(floor)
