"""Verify's settings files, its result and its reports (pure, no sockets)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

import recorder.verify as verify
from recorder import Exit
from recorder.capture import read_capture
from recorder.diff import diff_captures
from recorder.verify._result import latencies

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = ROOT / "captures" / "a2a-python-1.3.0" / "03-blocking-task.http"


# ---- settings -----------------------------------------------------------------------------


def test_verify_toml_is_found_from_a_folder_upward(tmp_path: Path) -> None:
    (tmp_path / "verify.toml").write_text(
        'ignore = ["header:etag"]\ntimeout = 20\nmax-slowdown = 3\n'
        '[captures."grpc/*.http"]\nignore = ["trailer:grpc-message"]\n'
    )
    deep = tmp_path / "tests" / "grpc"
    deep.mkdir(parents=True)
    config = verify.find_config(deep)
    assert config.path == tmp_path / "verify.toml"
    assert (config.timeout, config.max_slowdown) == (20.0, 3.0)
    assert config.ignores_for(tmp_path / "grpc" / "x.http") == (
        "header:etag",
        "trailer:grpc-message",
    )
    assert config.ignores_for(tmp_path / "x.http") == ("header:etag",)


def test_a_pyproject_section_counts_only_when_it_is_there(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.a2a-recorder.verify]\nignore = ["status"]\n')
    inner = tmp_path / "sub"
    inner.mkdir()
    (inner / "pyproject.toml").write_text('[project]\nname = "x"\n')
    config = verify.find_config(inner)
    assert config.path == tmp_path / "pyproject.toml" and config.ignore == ("status",)
    assert verify.load_config(tmp_path / "pyproject.toml").ignore == ("status",)
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    (empty / "pyproject.toml").write_text("[tool.a2a-recorder.verify]\n")
    assert verify.find_config(empty).ignore == ()


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('ignores = ["status"]', "unknown key 'ignores'"),
        ('ignore = "status"', "ignore must be a list of strings"),
        ('ignore = ["nonsense.path"]', "not a keyword"),
        ("timeout = -1", "timeout must be a positive number"),
        ("max-slowdown = true", "max-slowdown must be a positive number"),
        ('[captures."*.http"]\nfoo = 1', "takes only ignore"),
        ("ignore = [", "verify.toml"),
    ],
)
def test_bad_settings_name_the_file_and_what_is_wrong(
    tmp_path: Path, text: str, error: str
) -> None:
    (tmp_path / "verify.toml").write_text(text)
    with pytest.raises(verify.ConfigError, match="verify.toml") as caught:
        verify.find_config(tmp_path)
    assert error in str(caught.value)


# ---- the result and its reports -----------------------------------------------------------


def _result(**changes: object) -> verify.VerifyResult:
    capture = read_capture(CAPTURE)
    slower = replace(
        capture,
        exchanges=tuple(
            replace(e, duration_us=e.duration_us * 10 + 100_000) for e in capture.exchanges
        ),
    )
    diff = diff_captures(capture, slower, collapse_polls=True, a_name="rec", b_name="live")
    result = verify.VerifyResult("rec", "http://agent", diff, latencies=latencies(diff))
    return replace(result, **changes)  # type: ignore[arg-type]


def test_timing_never_fails_a_run_unless_a_slowdown_is_allowed() -> None:
    result = _result()
    assert [x.operation for x in result.latencies] == ["AgentCard", "SendMessage"]
    assert all(x.ratio is not None and x.ratio > 10 for x in result.latencies)
    assert result.status == Exit.OK and result.slow == ()
    strict = replace(result, max_slowdown=2.0)
    assert strict.status == Exit.FOUND and len(strict.slow) == 2
    assert replace(result, max_slowdown=100.0).status == Exit.OK
    tiny = verify.Latency(1, 1, "GetTask", 1_000, 40_000)
    assert not tiny.slower_than(2.0)  # 40x, but 39 ms is scheduling noise


def test_not_sent_exchanges_are_drift_and_left_out_ones_are_not() -> None:
    item = verify.NotSent(3, "GetTask", "it names t-1, handed out by #2, which was not sent")
    assert _result(not_sent=(item,)).status == Exit.FOUND
    assert _result(skipped=(item,)).status == Exit.OK


def test_every_format_says_the_verdict_and_verify_s_own_facts() -> None:
    item = verify.NotSent(3, "GetTask", "it names t-1, handed out by #2, which was not sent")
    result = _result(not_sent=(item,), notes=("a note",), max_slowdown=2.0)
    text = verify.render_text(result)
    assert "Not sent:\n  #3 GetTask: it names t-1" in text
    assert "Notes:\n  a note" in text
    assert "A#2 ~ B#2  SendMessage" in text and "slower than allowed" in text
    assert text.rstrip().endswith("1 not sent, 2 slower than ×2")
    assert text.splitlines()[-1].startswith("Verify: drift: ")
    document = json.loads(verify.render_json(result))
    assert (document["format"], document["version"], document["status"]) == (
        "a2a-recorder-verify",
        1,
        1,
    )
    assert document["diff"]["same"] is True
    assert document["not_sent"] == [{"number": 3, "operation": "GetTask", "reason": item.reason}]
    assert [t["slow"] for t in document["timing"]] == [True, True]
    markdown = verify.render_markdown(result)
    assert "### Not sent" in markdown and "| A#2 | B#2 | SendMessage |" in markdown
    page = verify.render_html(result)
    assert page.startswith("<!DOCTYPE html>") and "<title>a2a-recorder verify</title>" in page
    assert page.index("<h2>Not sent</h2>") < page.index("</body>")
    assert "<li>#3 GetTask: it names t-1" in page


def test_a_clean_run_reads_no_drift() -> None:
    result = _result()
    assert result.summary().startswith("no drift: 2 exchanges compared, 0 differ")
    assert verify.render_text(result).splitlines()[-1] == f"Verify: {result.summary()}"


def test_the_package_exports_are_complete_and_sorted() -> None:
    names = verify.__all__
    assert names == sorted(names, key=lambda n: (not n[0].isupper(), n))
    assert all(hasattr(verify, name) for name in names)
