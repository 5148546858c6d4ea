"""Start SDK peer agents and run SDK peer clients in their isolated environments (stdlib only).

The environments come from ``envs.py`` (``.peers/``); the peers are ``py_peer.py`` (a2a-sdk 1.x),
``py03_peer.py`` (a2a-sdk 0.3.x), ``js_peer.mjs`` (@a2a-js/sdk 1.3.x), ``go_peer/`` (a2a-go v2,
compiled by envs.py into ``<env>/bin/go-peer``) and ``java_peer/`` (the Java SDK, a Maven project
that envs.py compiles).

Command-line contract, the same for every peer::

    <runner> agent --port P [--grpc-port G] [--delay 0.05]
        Serves on 127.0.0.1 only (P or G = 0: a free port; G = -1: no gRPC). Prints one line
        ``READY {"base_url", "card_url", "jsonrpc_url", "rest_url", "grpc_target", "sdk",
        "sdk_version"}`` once listening, then runs until SIGTERM.
    <runner> client --card-url URL --binding JSONRPC|HTTP+JSON|GRPC --scenario NAME
             [--webhook-url URL] [--tenant T] [--timeout S]
        Runs one scenario with the SDK's own client; prints one JSON summary on stdout.

Summary (stdout of a client)::

    {"sdk", "sdk_version", "scenario", "binding", "ok": bool,
     "steps": [{"call": <operation>, "events": ["task:submitted", "status:working",
                "artifact:echo hello", "message:hi", ...], "state": <last state>,
                "texts": [...], "error": <error class name>, ...}],
     "states": [every state seen, in order], "texts": [every text seen],
     "errors": [error class names], "failure": <why, only when ok is false>, ...}
    or {"skipped": "<why>", "sdk", "sdk_version", "scenario", "binding"}   (exit 0)

Exit code 0 when the scenario did what it should (or was skipped), 1 otherwise.

Python use::

    with start_agent("a2a-js-1.3.x") as agent:
        summary = run_client("a2a-js-1.3.x", agent.card_url, "GRPC", "05-streaming")

``python scripts/peers/run.py matrix`` runs every scenario of every SDK on every binding,
client and agent of the same SDK, and prints the matrix.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Self

sys.path.insert(0, str(Path(__file__).resolve().parent))
from envs import ENVS, EnvSpec, is_built

__all__ = [
    "BINDINGS",
    "SCENARIOS",
    "SDKS",
    "AgentProcess",
    "PeerError",
    "SdkInfo",
    "WebhookReceiver",
    "available_sdks",
    "run_client",
    "scenarios_between",
    "start_agent",
]

HERE = Path(__file__).resolve().parent
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
STOP_GRACE = 5.0  # seconds between SIGTERM and SIGKILL


class PeerError(RuntimeError):
    """A peer could not be started or its output could not be read."""


@dataclass(frozen=True, slots=True)
class SdkInfo:
    """One SDK under test: where it is installed, how to run it, what it can do."""

    key: str
    env: EnvSpec
    script: str  # file name under scripts/peers/ (for a compiled peer: under <env>/bin/)
    bindings: tuple[str, ...] = BINDINGS
    skips: dict[str, str] = field(default_factory=dict)  # scenario -> why the peer skips it
    agent_bindings: tuple[str, ...] | None = None  # what its agent serves, when not `bindings`
    in_corpus: bool = True  # scripts/record-corpus records it by default
    # Whether its agent's push deliveries for one task reach the webhook in a fixed order.
    # a2a-java's do not: its sender posts them concurrently, and direct runs of one scenario
    # saw (statusUpdate, task, statusUpdate, artifactUpdate) and (task, statusUpdate,
    # artifactUpdate, statusUpdate).  Compare such deliveries as a multiset (`delivery_kinds`).
    ordered_deliveries: bool = True
    # Whether one scenario makes the same deliveries on every run.  a2a-java 1.0.0.Alpha3's do
    # not: four direct runs of 08-push-configs over JSON-RPC, no recorder anywhere, gave none,
    # two, three and four (its sender races the task's end).  Such an agent's deliveries through
    # the recorder are compared with those the capture holds, not with another run's.
    steady_deliveries: bool = True

    @property
    def serves(self) -> tuple[str, ...]:
        """The bindings its agent serves."""
        return self.agent_bindings or self.bindings

    @property
    def own_bindings(self) -> tuple[str, ...]:
        """The bindings on which its client can talk to its own agent."""
        return tuple(b for b in self.bindings if b in self.serves)

    @property
    def version(self) -> str:
        return self.env.version

    @property
    def scenarios(self) -> tuple[str, ...]:
        """Scenarios the peer really runs (the others print {"skipped": ...})."""
        return tuple(s for s in SCENARIOS if s not in self.skips)

    def command(self, *args: str) -> list[str]:
        script = str(HERE / self.script)
        if self.env.kind == "maven":
            return _java_command(self.env, *args)
        if self.env.kind == "node":
            return [shutil.which("node") or "node", script, *args]
        if self.env.kind == "go":
            return [str(self.env.path / "bin" / self.script), *args]
        return [str(self.env.path / "bin" / "python"), script, *args]

    def environ(self) -> dict[str, str]:
        env = dict(os.environ)
        if self.env.kind == "node":
            env["A2A_PEER_NODE_ENV"] = str(self.env.path)
        env.pop("PYTHONPATH", None)  # the peer must see only its own environment
        env["PYTHONUNBUFFERED"] = "1"
        return env

    @property
    def built(self) -> bool:
        return is_built(self.env)


def _java_command(env: EnvSpec, *args: str) -> list[str]:
    """The Java peer compiled by envs.py: classes and runtime jars under the environment.

    C1 only and the serial collector: the peers are short-lived, and start-up is what costs.
    """
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java") or "java"
    classpath = f"{env.path / 'classes'}{os.pathsep}{env.path / 'lib' / '*'}"
    flags = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss512k"]
    return [java, *flags, "-cp", classpath, "peer.Main", *args]


_V03_SKIPS = {
    "09-list-tasks": "a2a-sdk 0.3 has no ListTasks client call (v0.3 has no tasks/list)",
    "12-tenant": "v0.3 has no tenant",
}
SDKS: dict[str, SdkInfo] = {
    "a2a-python-1.3.0": SdkInfo("a2a-python-1.3.0", ENVS["a2a-python-1.3.0"], "py_peer.py"),
    "a2a-python-1.2.x": SdkInfo("a2a-python-1.2.x", ENVS["a2a-python-1.2.x"], "py_peer.py"),
    "a2a-python-0.3.x": SdkInfo(
        "a2a-python-0.3.x", ENVS["a2a-python-0.3.x"], "py03_peer.py", skips=_V03_SKIPS
    ),
    "a2a-js-1.3.x": SdkInfo("a2a-js-1.3.x", ENVS["a2a-js-1.3.x"], "js_peer.mjs"),
    "a2a-go-2.4.x": SdkInfo("a2a-go-2.4.x", ENVS["a2a-go-2.4.x"], "go-peer"),
    # The SDK's own `a2a` CLI as the client, `a2a serve --proxy` in front of go-peer as the
    # agent (go_peer/cli.go says why it serves JSON-RPC only).
    "a2a-go-cli-2.4.x": SdkInfo(
        "a2a-go-cli-2.4.x",
        ENVS["a2a-go-2.4.x"],
        "a2a-cli-peer",
        skips={"08-push-configs": "the a2a CLI has no push-config commands"},
        agent_bindings=("JSONRPC",),
        in_corpus=False,
    ),
    # java_peer/ is a Maven project compiled by envs.py; `script` names its folder.
    "a2a-java-1.0.x": SdkInfo(
        "a2a-java-1.0.x",
        ENVS["a2a-java-1.0.x"],
        "java_peer",
        ordered_deliveries=False,
        steady_deliveries=False,
    ),
}


def scenarios_between(client: str, agent: str) -> tuple[str, ...]:
    """The scenarios ``client`` runs against ``agent``: 16-rest-binding needs HTTP+JSON."""
    serves = SDKS[agent].serves
    return tuple(
        s for s in SDKS[client].scenarios if s != "16-rest-binding" or "HTTP+JSON" in serves
    )


def available_sdks() -> list[str]:
    """The SDKs whose environment envs.py has built."""
    return [key for key, info in SDKS.items() if info.built]


def _sdk(key: str) -> SdkInfo:
    if key not in SDKS:
        raise PeerError(f"unknown SDK {key!r}; known: {', '.join(SDKS)}")
    info = SDKS[key]
    if not info.built:
        raise PeerError(
            f"{key}: environment {info.env.path} is not built; run "
            f"scripts/peers/envs.py --only {key}"
        )
    return info


# --- agent ----------------------------------------------------------------------------------


class AgentProcess:
    """A running peer agent. ``stop()`` sends SIGTERM, then SIGKILL after 5 s."""

    def __init__(
        self, sdk: str, proc: subprocess.Popen[str], info: dict[str, Any], stderr_path: Path
    ) -> None:
        self.sdk = sdk
        self.proc = proc
        self.info = info
        self.stderr_path = stderr_path

    base_url = property(lambda self: str(self.info["base_url"]))
    card_url = property(lambda self: str(self.info["card_url"]))
    jsonrpc_url = property(lambda self: str(self.info["jsonrpc_url"]))
    rest_url = property(lambda self: str(self.info["rest_url"]))
    grpc_target = property(lambda self: self.info.get("grpc_target"))
    pid = property(lambda self: self.proc.pid)

    @property
    def stderr(self) -> str:
        with contextlib.suppress(OSError):
            return self.stderr_path.read_text(errors="replace")
        return ""

    def stop(self) -> int | None:
        """Stop the agent (SIGTERM, then SIGKILL); returns its exit code."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(STOP_GRACE)
        with contextlib.suppress(OSError):
            self.stderr_path.unlink()
        return self.proc.returncode

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<AgentProcess {self.sdk} pid={self.pid} {self.base_url}>"


def _read_lines(stream: Any, lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def start_agent(
    sdk: str, port: int = 0, grpc_port: int = 0, delay: float = 0.05, timeout: float = 30.0
) -> AgentProcess:
    """Spawn ``sdk``'s agent on 127.0.0.1 and wait for its READY line.

    ``port``/``grpc_port`` 0 let the agent bind a free port itself (grpc_port -1: no gRPC).

    Raises:
        PeerError: the environment is missing, or the agent exited or stayed silent for
            ``timeout`` seconds (the message carries its stderr).
    """
    info = _sdk(sdk)
    fd, name = tempfile.mkstemp(prefix=f"peer-{sdk}-", suffix=".stderr")
    stderr_path = Path(name)
    with os.fdopen(fd, "w") as err:
        proc = subprocess.Popen(
            info.command(
                "agent", "--port", str(port), "--grpc-port", str(grpc_port), "--delay", str(delay)
            ),
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            text=True,
            env=info.environ(),
            cwd=HERE,
        )
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_read_lines, args=(proc.stdout, lines), daemon=True).start()
    agent = AgentProcess(sdk, proc, {}, stderr_path)
    try:
        while True:
            line = lines.get(timeout=timeout)
            if line is None:
                raise PeerError(
                    f"{sdk} agent exited ({proc.wait()}) before READY:\n{agent.stderr[-2000:]}"
                )
            if line.startswith("READY "):
                agent.info = json.loads(line[len("READY ") :])
                return agent
    except queue.Empty:
        stderr = agent.stderr
        agent.stop()
        raise PeerError(
            f"{sdk} agent printed no READY within {timeout}s:\n{stderr[-2000:]}"
        ) from None
    except BaseException:
        agent.stop()
        raise


# --- client ---------------------------------------------------------------------------------


def run_client(
    sdk: str,
    card_url: str,
    binding: str,
    scenario: str,
    webhook_url: str | None = None,
    tenant: str | None = None,
    timeout: float = 60,
) -> dict[str, Any]:
    """Run one scenario with ``sdk``'s client; return its JSON summary plus ``exit_code``.

    A client that crashes, prints no JSON or outlives ``timeout`` gives
    ``{"ok": False, "failure": ..., "exit_code": ..., "stderr": <tail>}``.
    """
    info = _sdk(sdk)
    if binding not in BINDINGS:
        raise PeerError(f"unknown binding {binding!r}; known: {', '.join(BINDINGS)}")
    if scenario not in SCENARIOS:
        raise PeerError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    args = [
        "client",
        "--card-url",
        card_url,
        "--binding",
        binding,
        "--scenario",
        scenario,
        "--timeout",
        str(max(timeout - 5, 1)),
    ]
    if webhook_url:
        args += ["--webhook-url", webhook_url]
    if tenant:
        args += ["--tenant", tenant]
    try:
        proc = subprocess.run(
            info.command(*args),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=info.environ(),
            cwd=HERE,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raw = exc.stderr or b""
        err = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
        return {
            "ok": False,
            "failure": f"client timed out after {timeout}s",
            "exit_code": None,
            "stderr": err[-2000:],
            "sdk": sdk,
            "scenario": scenario,
            "binding": binding,
        }
    last = proc.stdout.strip().splitlines()[-1:] or [""]
    try:
        summary = json.loads(last[0])
        if not isinstance(summary, dict):
            raise ValueError("not an object")
    except ValueError:
        summary = {
            "ok": False,
            "failure": "client printed no JSON summary",
            "stdout": proc.stdout[-2000:],
            "sdk": sdk,
            "scenario": scenario,
            "binding": binding,
        }
    summary["exit_code"] = proc.returncode
    if proc.returncode != 0:
        summary["stderr"] = proc.stderr[-2000:]
    return summary


# --- webhook receiver -----------------------------------------------------------------------


class WebhookReceiver:
    """A stdlib webhook on 127.0.0.1 (free port) that records every POST and answers 200."""

    def __init__(self) -> None:
        self.deliveries: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server naming
                size = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(size)
                try:
                    parsed: Any = json.loads(body)
                except ValueError:
                    parsed = None
                with owner._lock:
                    owner.deliveries.append(
                        {
                            "path": self.path,
                            "headers": dict(self.headers),
                            "body": parsed,
                            "raw": body.decode(errors="replace"),
                        }
                    )
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/webhook"

    def wait_for(self, count: int, timeout: float = 10.0) -> list[dict[str, Any]]:
        """Wait until ``count`` deliveries arrived (or ``timeout``); return what there is."""
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.deliveries) >= count:
                    break
            time.sleep(0.05)
        with self._lock:
            return list(self.deliveries)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()


# --- matrix ---------------------------------------------------------------------------------


def _body_kind(body: Any) -> str | None:
    """v1 bodies are a one-key StreamResponse; v0.3 bodies are a bare object with ``kind``."""
    if not isinstance(body, dict):
        return None
    if "kind" in body:
        return f"v0.3 {body['kind']}"
    return next(iter(body), None) if len(body) == 1 else "?"


def delivery_kinds(agent: str, bodies: list[Any]) -> list[str]:
    """The kinds of the push deliveries `agent` made, in the order they came, or sorted when
    that agent's sender keeps no order (`SdkInfo.ordered_deliveries`)."""
    kinds = [_body_kind(body) or "?" for body in bodies]
    return kinds if SDKS[agent].ordered_deliveries else sorted(kinds)


# The header each SDK's push sender carries the config's token in (a2a-go: no X- prefix).
PUSH_TOKEN_HEADERS = ("X-A2A-Notification-Token", "A2A-Notification-Token")


def _push_token(headers: dict[str, str]) -> str | None:
    return next((headers[h] for h in PUSH_TOKEN_HEADERS if h in headers), None)


def _cell(summary: dict[str, Any]) -> str:
    if "skipped" in summary:
        return "skip"
    return "ok" if summary.get("ok") and summary.get("exit_code") == 0 else "FAIL"


def run_matrix(sdks: list[str], out: Path | None) -> int:
    results: dict[str, dict[str, dict[str, Any]]] = {}
    failures = 0
    for sdk in sdks:
        with start_agent(sdk) as agent, WebhookReceiver() as hook:
            for binding in SDKS[sdk].own_bindings:
                for scenario in scenarios_between(sdk, sdk):
                    before = len(hook.deliveries)
                    summary = run_client(
                        sdk, agent.card_url, binding, scenario, webhook_url=hook.url
                    )
                    if scenario == "08-push-configs" and summary.get("ok"):
                        got = hook.wait_for(before + 4, timeout=5)[before:]
                        summary["webhook"] = [
                            {
                                "content_type": d["headers"].get("Content-Type"),
                                "authorization": d["headers"].get("Authorization"),
                                "token": _push_token(d["headers"]),
                                "kind": _body_kind(d["body"]),
                            }
                            for d in got
                        ]
                    results.setdefault(sdk, {}).setdefault(binding, {})[scenario] = summary
                    cell = _cell(summary)
                    failures += cell == "FAIL"
                    print(
                        f"{sdk:18} {binding:9} {scenario:17} {cell}"
                        + (f"  {summary.get('failure')}" if cell == "FAIL" else ""),
                        flush=True,
                    )
    if out is not None:
        out.write_text(json.dumps(results, indent=1) + "\n")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="run the SDK peers")
    sub = parser.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("matrix", help="every scenario x binding, client and agent of one SDK")
    m.add_argument("--sdk", action="append", choices=sorted(SDKS))
    m.add_argument("--json", type=Path, help="write every summary here")
    sub.add_parser("list", help="show the SDKs, versions and whether they are built")
    args = parser.parse_args(argv)
    if args.cmd == "list":
        for key, info in SDKS.items():
            print(
                f"{key:18} {info.version:8} built={info.built} bindings={','.join(info.bindings)}"
                f" skips={','.join(info.skips) or '-'}"
            )
        return 0
    sdks = args.sdk or available_sdks()
    if not sdks:
        print("no SDK environment is built; run scripts/peers/envs.py", file=sys.stderr)
        return 1
    return run_matrix(sdks, args.json)


if __name__ == "__main__":
    sys.exit(main())
