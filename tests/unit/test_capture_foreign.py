"""Files that are not captures, given to every command that reads one: a HAR file and a
mitmproxy flow file say what they are and how to convert them, a text file is told the
current format's first line (issue 23)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from mitmproxy import io as mitm_io
from mitmproxy.test import tflow

from recorder.capture import FORMAT_VERSION, CaptureParseError, read_capture
from recorder.cli import main
from recorder.export import capture_to_har

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "jsonrpc-send.http"
CONVERT = "a2a-recorder convert"


def har_file(folder: Path) -> Path:
    """A real capture exported as HAR 1.2."""
    path = folder / "session.har"
    path.write_text(json.dumps(capture_to_har(read_capture(SAMPLE)), indent=2))
    return path


def flow_file(folder: Path) -> Path:
    """A flow file as `mitmdump -w` writes it (mitmproxy's own writer and test flows)."""
    buffer = io.BytesIO()
    writer = mitm_io.FlowWriter(buffer)
    for _ in range(2):
        flow = tflow.tflow(resp=True)
        flow.response.content = bytes(range(256))  # not UTF-8
        writer.add(flow)
    path = folder / "session.mitm"
    path.write_bytes(buffer.getvalue())
    return path


@pytest.mark.parametrize(("make", "kind"), [(har_file, "a HAR file"), (flow_file, "flow file")])
def test_a_foreign_file_says_what_it_is_and_how_to_convert_it(
    tmp_path: Path, make: object, kind: str
) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    with pytest.raises(CaptureParseError) as info:
        read_capture(path)
    message = str(info.value)
    assert message.startswith(f"{path}:1: this is ") and kind in message
    assert CONVERT in message


COMMANDS = {
    "show": ["show", "{}"],
    "show one": ["show", "{}", "1"],
    "lint": ["lint", "{}"],
    "diff": ["diff", "{}", str(SAMPLE)],
    "export": ["export", "{}", "--to", "har"],
    "report": ["report", "{}", "-o", "{out}"],
    "migrate": ["migrate", "{}"],
    "replay": ["replay", "{}", "--listen", "127.0.0.1:0"],
}


@pytest.mark.parametrize("make", [har_file, flow_file])
@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_that_reads_captures_suggests_convert(
    tmp_path: Path, make: object, command: str
) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    args = [a.format(path, out=tmp_path / "out.html") for a in COMMANDS[command]]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert CONVERT in result.output and "Traceback" not in result.output


def test_a_text_file_is_told_the_current_format(tmp_path: Path) -> None:
    path = tmp_path / "notes.http"
    path.write_text("GET http://example.com/ HTTP/1.1\n")
    with pytest.raises(CaptureParseError) as info:
        read_capture(path)
    assert f"'# a2a-recorder capture format {FORMAT_VERSION}'" in str(info.value)
    assert FORMAT_VERSION != 1 and "format 1'" not in str(info.value)


def test_a_capture_checked_out_with_crlf_endings_is_read(tmp_path: Path) -> None:
    crlf = tmp_path / "windows.http"
    crlf.write_bytes(SAMPLE.read_bytes().replace(b"\n", b"\r\n"))
    assert read_capture(crlf) == read_capture(SAMPLE)
    result = CliRunner().invoke(main, ["show", str(crlf)])
    assert result.exit_code == 0, result.output
    assert result.output == CliRunner().invoke(main, ["show", str(SAMPLE)]).output
