"""Reliability under faults (issue 20): nothing a client got an answer to is lost without a word.

Each case runs the real recorder (`python -m recorder record`) between real clients (httpx, a
new connection per request) and a real agent: the demo agent (a2a-sdk), or, for a data line
that is not UTF-8, a small agent written here.  The capture goes to a tiny tmpfs, a full one,
or a read-only mount.  Then the invariant: every exchange a client got an answer to is in the
capture, or counted as lost with a reason in the recorder's summary, and the exit status is 1
exactly when something was lost.  The capture on disk always parses.

Mounting needs root (CAP_SYS_ADMIN): those cases skip, saying why, where it is refused.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from _helpers import exchanges, wait_for

from recorder.capture import Capture, read_capture
from recorder.demo import DemoAgent

ROOT = Path(__file__).resolve().parents[2]
PAGE = 4096
LOST_LINE = re.compile(r"^(\d+) exchanges? lost: (.+)$", re.MULTILINE)
# A message text long enough that a few dozen exchanges fill a tmpfs of a few pages.
PADDING = "x" * 600


@pytest.fixture(scope="module")
def agent() -> Iterator[DemoAgent]:
    with DemoAgent(event_delay=0.01, enable_grpc=False) as running:
        yield running


Mount = Callable[..., Path]


@pytest.fixture
def mount(tmp_path: Path) -> Iterator[Mount]:
    """`mount(size_kib, read_only=False)`: a fresh tmpfs under tmp_path, unmounted after."""
    mounted: list[Path] = []

    def make(size_kib: int = 64, *, read_only: bool = False, name: str = "disk") -> Path:
        where = tmp_path / name
        where.mkdir()
        options = f"size={size_kib}k" + (",ro" if read_only else "")
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
        mounted.append(where)
        return where

    yield make
    for where in reversed(mounted):
        subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


def remount_read_only(where: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True, capture_output=True)


def fill(where: Path, leave: int = 0) -> Path:
    """Fill the file system at `where` up to `leave` bytes free; the filler file."""
    filler = where / "filler"
    with filler.open("wb", buffering=0) as handle:
        while os.statvfs(where).f_bavail * os.statvfs(where).f_frsize > leave:
            try:
                handle.write(b"\0" * PAGE)
            except OSError:
                break
    return filler


@dataclass
class Recorder:
    """`python -m recorder record` in a child process; its console kept as it comes."""

    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    url: str = ""
    _process: subprocess.Popen[str] | None = None
    _reader: threading.Thread | None = None
    _started: threading.Event = field(default_factory=threading.Event)

    def start(self) -> Recorder:
        command = [sys.executable, "-m", "recorder", "record", "--listen", "127.0.0.1:0"]
        self._process = subprocess.Popen(
            [*command, *self.args],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            cwd=ROOT,
            env={**os.environ, **self.env},
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._started.wait(30)
        return self

    def _read(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        for line in self._process.stderr:
            self.lines.append(line.rstrip("\n"))
            if found := re.search(r"point A2A clients at (\S+)", line):
                self.url = found.group(1)
                self._started.set()
        self._started.set()

    @property
    def pid(self) -> int:
        assert self._process is not None
        return self._process.pid

    def kill(self) -> None:
        """kill -9: nothing of the recorder's own runs."""
        assert self._process is not None
        self._process.kill()
        self._process.wait(30)

    def stop(self) -> tuple[int, str]:
        """SIGTERM, then the exit status and the whole console."""
        assert self._process is not None and self._reader is not None
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
        code = self._process.wait(60)
        self._reader.join(10)
        return code, "\n".join(self.lines)


def send(url: str, text: str = "echo hello") -> str | None:
    """One SendMessage on a new connection; its message id when answered with 200."""
    message_id = str(uuid.uuid4())
    body = {
        "jsonrpc": "2.0",
        "id": str(uuid.uuid4()),
        "method": "SendMessage",
        "params": {
            "message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}
        },
    }
    try:
        answer = httpx.post(f"{url}/a2a/jsonrpc", json=body, headers={"A2A-Version": "1.0"})
    except httpx.HTTPError:
        return None
    return message_id if answer.status_code == 200 else None


def sends(url: str, count: int, text: str = f"echo {PADDING}") -> set[str]:
    return {found for _ in range(count) if (found := send(url, text)) is not None}


def recorded_ids(capture: Capture) -> set[str]:
    return {
        json.loads(e.request.body)["params"]["message"]["messageId"]
        for e in capture.exchanges
        if e.classification.operation == "SendMessage"
    }


def lost_count(console: str) -> int:
    return sum(int(count) for count, _ in LOST_LINE.findall(console))


def check_accounted(path: Path, answered: set[str], code: int, console: str) -> Capture | None:
    """The invariant; the capture, when there is one (it must parse)."""
    capture = read_capture(path) if path.exists() else None
    recorded = recorded_ids(capture) if capture is not None else set()
    assert recorded <= answered, "the capture holds exchanges no client sent"
    missing = answered - recorded
    assert len(missing) == lost_count(console), console
    assert code == (1 if missing else 0), console
    assert "Traceback" not in console or "error inside the recorder" in console, console
    if capture is not None:
        numbers = [e.number for e in capture.exchanges]
        assert numbers == list(range(1, len(numbers) + 1)), "a gap or a renumbering"
    return capture


# -- a full disk --------------------------------------------------------------------------------


def test_a_full_disk_loses_nothing_without_a_word(agent: DemoAgent, mount: Mount) -> None:
    disk = mount(48)
    out = disk / "cap.http"
    recorder = Recorder(["--upstream", agent.base_url, "--out", str(out)]).start()
    answered = sends(recorder.url, 40)
    code, console = recorder.stop()
    assert len(answered) == 40, console
    capture = check_accounted(out, answered, code, console)
    assert capture is not None and 0 < len(capture.exchanges) < 40
    assert "No space left on device" in console
    assert f"capture written: {out}" in console


def test_exchanges_held_while_the_disk_is_full_are_written_once_it_has_room(
    agent: DemoAgent, mount: Mount
) -> None:
    disk = mount(256)
    filler = fill(disk, leave=16 * 1024)
    out = disk / "cap.http"
    recorder = Recorder(["--upstream", agent.base_url, "--out", str(out)]).start()
    answered = sends(recorder.url, 20)
    filler.unlink()
    answered |= sends(recorder.url, 3)
    code, console = recorder.stop()
    assert "exchanges are held in memory" in console  # the disk did refuse some
    capture = check_accounted(out, answered, code, console)
    assert code == 0 and capture is not None and recorded_ids(capture) == answered


def test_append_on_a_full_disk_leaves_the_capture_as_it_was(agent: DemoAgent, mount: Mount) -> None:
    disk = mount(64)
    out = disk / "cap.http"
    first = Recorder(["--upstream", agent.base_url, "--out", str(out)]).start()
    earlier = sends(first.url, 4)
    assert first.stop()[0] == 0
    before = out.read_bytes()
    fill(disk)
    recorder = Recorder(["--upstream", agent.base_url, "--out", str(out), "--append"]).start()
    answered = sends(recorder.url, 6)
    code, console = recorder.stop()
    assert out.read_bytes() == before, "the good capture was changed"
    capture = check_accounted(out, earlier | answered, code, console)
    assert capture is not None and recorded_ids(capture) == earlier
    assert lost_count(console) == 6 and code == 1


def test_migrate_on_a_full_disk_says_so_and_keeps_the_original(mount: Mount) -> None:
    disk = mount(64)
    old = disk / "old.http"
    old.write_bytes((ROOT / "tests" / "data" / "v1" / "jsonrpc-stream.http").read_bytes())
    before = old.read_bytes()
    fill(disk)
    done = subprocess.run(
        [sys.executable, "-m", "recorder", "migrate", str(old)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 2, done.stderr
    assert "No space left on device" in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1
    assert old.read_bytes() == before
    assert not [p.name for p in disk.iterdir() if p.name.startswith(".old.http")]


# -- read-only output ---------------------------------------------------------------------------


def test_read_only_output_is_refused_up_front(agent: DemoAgent, mount: Mount) -> None:
    disk = mount(64, read_only=True)
    recorder = Recorder(["--upstream", agent.base_url, "--out", str(disk / "cap.http")]).start()
    code, console = recorder.stop()
    assert code == 2 and "read-only file system" in console and not recorder.url
    assert "Traceback" not in console


def test_output_that_turns_read_only_is_counted_lost(agent: DemoAgent, mount: Mount) -> None:
    disk = mount(64)
    out = disk / "cap.http"
    recorder = Recorder(["--upstream", agent.base_url, "--out", str(out)]).start()
    remount_read_only(disk)  # nothing is open there yet: the capture is made on first use
    answered = sends(recorder.url, 5)
    code, console = recorder.stop()
    assert len(answered) == 5 and not out.exists()
    check_accounted(out, answered, code, console)
    assert "Read-only file system" in console
    assert "capture written:" not in console and "no capture written" in console


# -- two writers on one capture (issue 29) -----------------------------------------------------


def a2a_recorder(*args: str) -> subprocess.CompletedProcess[str]:
    """One a2a-recorder command run to its end (a refused start ends at once)."""
    command = [sys.executable, "-m", "recorder", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=60)


@pytest.mark.parametrize("flag", ["--append", "--force"])
def test_a_second_recorder_on_a_capture_being_written_is_refused(
    agent: DemoAgent, tmp_path: Path, flag: str
) -> None:
    out = tmp_path / "shared.http"
    first = Recorder(["--upstream", agent.base_url, "--out", str(out)]).start()
    answered = sends(first.url, 3)
    second = a2a_recorder("record", "--upstream", agent.base_url, "--out", str(out), flag)
    assert second.returncode == 2, second.stderr
    assert f"{out} is being written by process {first.pid} (a2a-recorder record" in second.stderr
    assert "capture written" not in second.stderr
    answered |= sends(first.url, 3)
    code, console = first.stop()
    assert code == 0, console
    capture = check_accounted(out, answered, code, console)
    assert capture is not None and recorded_ids(capture) == answered


def test_the_capture_is_free_again_when_its_recorder_stops_however_it_stops(
    agent: DemoAgent, tmp_path: Path
) -> None:
    out = tmp_path / "shared.http"
    first = Recorder(["--upstream", agent.base_url, "--out", str(out)]).start()
    earlier = sends(first.url, 2)
    assert wait_for(lambda: len(exchanges(out)) == 2)
    first.kill()  # kill -9: its lock file stays, and holds nobody
    second = Recorder(["--upstream", agent.base_url, "--out", str(out), "--append"]).start()
    later = sends(second.url, 2)
    code, console = second.stop()
    capture = check_accounted(out, earlier | later, code, console)
    assert code == 0 and capture is not None and recorded_ids(capture) == earlier | later
    third = Recorder(["--upstream", agent.base_url, "--out", str(out), "--append"]).start()
    assert third.stop()[0] == 0  # after a clean stop too
    assert not list(tmp_path.glob(".*.lock"))  # a clean stop takes its lock file away


def test_other_writers_of_a_capture_being_recorded_are_refused(
    agent: DemoAgent, tmp_path: Path
) -> None:
    out = tmp_path / "shared.http"
    first = Recorder(["--upstream", agent.base_url, "--out", str(out)]).start()
    answered = sends(first.url, 2)
    assert wait_for(lambda: len(exchanges(out)) == 2)
    before = out.read_bytes()
    har = tmp_path / "shared.har"
    assert a2a_recorder("export", str(out), "--to", "har", "-o", str(har)).returncode == 0
    refused = a2a_recorder("convert", str(har), "--out", str(out))
    assert refused.returncode == 2, refused.stderr
    assert f"is being written by process {first.pid}" in refused.stderr
    assert out.read_bytes() == before
    code, console = first.stop()
    capture = check_accounted(out, answered, code, console)
    assert capture is not None and recorded_ids(capture) == answered


def test_a_capture_another_program_made_meanwhile_is_lost_with_its_reason(
    agent: DemoAgent, tmp_path: Path
) -> None:
    """Issue 29: the loss was reported with the reason `None`."""
    out = tmp_path / "cap.http"
    recorder = Recorder(["--upstream", agent.base_url, "--out", str(out)]).start()
    other = (ROOT / "tests" / "data" / "jsonrpc-send.http").read_bytes()
    out.write_bytes(other)  # not a recorder: it takes no lock
    answered = sends(recorder.url, 2)
    code, console = recorder.stop()
    assert out.read_bytes() == other  # not overwritten
    assert len(answered) == 2 and code == 1
    assert f"2 exchanges lost: could not be written to {out}: " in console
    assert "already holds a capture with exchanges" in console and "None" not in console


# -- left out on purpose ------------------------------------------------------------------------


def test_what_is_left_out_is_counted_with_its_reason(agent: DemoAgent, tmp_path: Path) -> None:
    out = tmp_path / "cap.http"
    recorder = Recorder(["--upstream", agent.base_url, "--out", str(out)]).start()
    answered = sends(recorder.url, 2)
    for path in ("/favicon.ico", "/robots.txt", "/favicon.ico"):
        assert httpx.get(f"{recorder.url}{path}").status_code == 404
    code, console = recorder.stop()
    check_accounted(out, answered, code, console)
    assert code == 0
    said = "left out (not A2A; --all records it): no A2A route for GET /favicon.ico"
    assert console.count(said) == 1  # said as it happens, once
    assert (
        "left out 3 exchanges that are not A2A (--all records them): "
        "2× no A2A route for GET /favicon.ico; 1× no A2A route for GET /robots.txt"
    ) in console  # and counted in the summary


# -- errors inside the recorder -----------------------------------------------------------------

INJECTED = """
from recorder.record import _cards

_response = _cards.CardRewrite.response


def response(self, flow):
    if b"boom" in (flow.request.content or b""):
        raise RuntimeError("a bug injected by the reliability test")
    return _response(self, flow)


_cards.CardRewrite.response = response
"""


@pytest.mark.parametrize("quiet", [False, True], ids=["", "quiet"])
def test_an_error_inside_the_recorder_is_counted_shown_and_fails_the_run(
    agent: DemoAgent, tmp_path: Path, quiet: bool
) -> None:
    """A hook that raises stops mitmproxy's visit of the set for that event, so the save addon
    never sees the exchange: it must be counted lost, its traceback shown once (`--quiet`
    silences the line per exchange, not this)."""
    (tmp_path / "sitecustomize.py").write_text(INJECTED)
    out = tmp_path / "cap.http"
    recorder = Recorder(
        ["--upstream", agent.base_url, "--out", str(out), *(["--quiet"] if quiet else [])],
        env={"PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])},
    ).start()
    answered = sends(recorder.url, 3) | sends(recorder.url, 2, "echo boom") | sends(recorder.url, 3)
    code, console = recorder.stop()
    assert len(answered) == 8, console
    capture = check_accounted(out, answered, code, console)
    assert capture is not None and len(capture.exchanges) == 6
    assert lost_count(console) == 2 and code == 1
    assert console.count("Traceback") == 1  # shown once, however often it happens
    assert "a bug injected by the reliability test" in console


# -- a data line that is not UTF-8 ------------------------------------------------------------

ODD_EVENTS = (
    b'data: {"jsonrpc":"2.0","id":"1","result":{"task":{"id":"t1","contextId":"c1",'
    b'"status":{"state":"TASK_STATE_WORKING"}}}}\n\n'
    b'data: {"jsonrpc":"2.0","id":"1","result":{"note":"\xff\xfe not UTF-8"}}\n\n'
    b'data: {"jsonrpc":"2.0","id":"1","result":{"statusUpdate":{"taskId":"t1",'
    b'"contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}}\n\n'
)


class _OddAgent(BaseHTTPRequestHandler):
    """Answers any POST with an SSE stream whose second data line is not UTF-8."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(ODD_EVENTS)))
        self.end_headers()
        self.wfile.write(ODD_EVENTS)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def odd_agent() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _OddAgent)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_data_line_that_is_not_utf8_is_recorded_or_counted(
    odd_agent: str, tmp_path: Path
) -> None:
    out = tmp_path / "cap.http"
    recorder = Recorder(["--upstream", odd_agent, "--out", str(out), "--all"]).start()
    body = {"jsonrpc": "2.0", "id": "1", "method": "SendStreamingMessage", "params": {}}
    with httpx.stream("POST", f"{recorder.url}/a2a/jsonrpc", json=body) as answer:
        received = b"".join(answer.iter_bytes())
    assert received == ODD_EVENTS
    code, console = recorder.stop()
    capture = read_capture(out) if out.exists() else None
    held = len(capture.exchanges) if capture is not None else 0
    assert held + lost_count(console) == 1, console
    assert code == (0 if held else 1), console
    if capture is not None:
        response = capture.exchanges[0].response
        assert response is not None and len(response.events) == 3
