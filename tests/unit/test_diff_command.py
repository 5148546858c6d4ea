"""`a2a-recorder diff`: exit codes, formats, --ignore, --output, folders, damaged files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_diff_factory import capture, push_create_exchange, session

from recorder.capture import Capture, write_capture
from recorder.diff import diff_command


def write(path: Path, value: Capture) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_capture(path, value)
    return path


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(diff_command, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    created = capture(
        *session("py", polls=1).exchanges[:4], push_create_exchange(5, "py", 8080, 200)
    )
    return {
        "a": write(tmp_path / "a.http", session("monday", port=8080)),
        "b": write(tmp_path / "b.http", session("tuesday", port=9191)),
        "poll": write(tmp_path / "poll.http", session("wednesday", polls=2)),
        "v03": write(tmp_path / "v03.http", session("old", version="0.3")),
        "py": write(tmp_path / "py.http", created),
        "js": write(
            tmp_path / "js.http",
            capture(
                *session("js", polls=1).exchanges[:4], push_create_exchange(5, "js", 8080, 201)
            ),
        ),
    }


def test_round_trip_through_the_file_keeps_the_diff_clean(files: dict[str, Path]) -> None:
    code, out, _ = run(files["a"], files["b"])
    assert code == 0
    assert "Summary: 5 exchanges compared, 0 differ, 0 inserted, 0 removed, 0 renames" in out


def test_different_captures_exit_1(files: dict[str, Path]) -> None:
    code, out, _ = run(files["py"], files["js"])
    assert code == 1
    assert "status: 200 → 201" in out


def test_version_renames_through_files(files: dict[str, Path]) -> None:
    code, out, _ = run(files["v03"], files["b"])
    assert code == 1
    assert "method renamed: message/send → SendMessage (v0.3 → v1.0)" in out
    assert "enum form: completed → TASK_STATE_COMPLETED (v0.3 → v1.0)" in out
    assert "kind discriminator replaced by wrapper member `task` (v0.3 → v1.0)" in out


def test_ignore_option(files: dict[str, Path]) -> None:
    assert run(files["py"], files["js"])[0] == 1
    code, out, _ = run(files["py"], files["js"], "--ignore", "status")
    assert code == 0, out


def test_unknown_ignore_keyword_is_an_error_listing_the_valid_ones(
    files: dict[str, Path],
) -> None:
    code, out, err = run(files["a"], files["b"], "--ignore", "status", "--ignore", "keyorder")
    assert code == 2 and out == ""
    assert "unknown ignore pattern 'keyorder'" in err
    assert "header:NAME" in err and "key-order" in err and "rename:RULE" in err


def test_strict_order_reports_key_order(tmp_path: Path, files: dict[str, Path]) -> None:
    import json as _json
    from dataclasses import replace

    base = session("monday", port=8080)
    card = base.exchanges[0]
    assert card.response is not None
    document = _json.loads(card.response.body)
    flipped = dict(reversed(list(document.items())))
    moved = replace(card, response=replace(card.response, body=_json.dumps(flipped).encode()))
    other = write(tmp_path / "flipped.http", replace(base, exchanges=(moved, *base.exchanges[1:])))
    code, out, _ = run(files["a"], other)
    assert code == 0 and "key order" not in out
    code, out, _ = run(files["a"], other, "--strict-order")
    assert code == 1 and "~ key order at body: name, " in out


def test_bad_ignore_is_an_error(files: dict[str, Path]) -> None:
    code, _, err = run(files["a"], files["b"], "--ignore", "body..x")
    assert code == 2
    assert "bad ignore pattern" in err


def test_json_to_output_file(files: dict[str, Path], tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    code, out, _ = run(files["py"], files["js"], "--format", "json", "--output", report)
    assert code == 1 and out == ""
    document = json.loads(report.read_text(encoding="utf-8"))
    (one,) = document["diffs"]
    assert one["a"].endswith("py.http") and one["summary"]["differ"] == 1


@pytest.mark.parametrize(
    ("fmt", "needle"),
    [("markdown", "| A#5 | B#5 |"), ("html", '<td><a href="#d0-a5">A#5</a></td>')],
)
def test_other_formats(files: dict[str, Path], fmt: str, needle: str) -> None:
    code, out, _ = run(files["py"], files["js"], "--format", fmt)
    assert code == 1
    assert needle in out


def test_damaged_file_is_reported_with_file_and_line(
    files: dict[str, Path], tmp_path: Path
) -> None:
    damaged = tmp_path / "damaged.http"
    lines = files["a"].read_text(encoding="utf-8").splitlines(keepends=True)
    damaged.write_text(
        "".join(lines[:12]) + "### not an exchange line\n" + "".join(lines[12:]), encoding="utf-8"
    )
    code, out, err = run(files["a"], damaged)
    assert code == 2
    assert f"{damaged}:" in err
    assert err.split(f"{damaged}:", 1)[1].split(":", 1)[0].isdigit()
    assert out == ""


def test_missing_file_is_an_error(tmp_path: Path, files: dict[str, Path]) -> None:
    code, _, err = run(files["a"], tmp_path / "nope.http")
    assert code == 2
    assert "nope.http" in err


def test_folders_pair_by_name_and_report_unpaired(tmp_path: Path) -> None:
    left, right = tmp_path / "sdk-1.2", tmp_path / "sdk-1.3"
    write(left / "send.http", session("l1"))
    write(right / "send.http", session("r1"))
    write(left / "nested" / "poll.http", session("l2"))
    write(right / "nested" / "poll.http", session("r2"))
    write(left / "only-left.http", session("l3"))
    code, out, _ = run(left, right)
    assert code == 1  # everything paired is the same, but a file has no partner
    assert out.count("Summary: 5 exchanges compared, 0 differ") == 2
    assert "unpaired: only in A: only-left.http" in out
    (right / "only-right.http").write_text("garbage\n", encoding="utf-8")
    write(right / "only-left.http", session("r3"))
    code, out, _ = run(left, right)
    assert code == 1
    (left / "only-right.http").write_text("also garbage\n", encoding="utf-8")
    code, _, err = run(left, right)
    assert code == 2
    assert "only-right.http" in err


def test_all_same_folders_exit_0(tmp_path: Path) -> None:
    write(tmp_path / "x" / "a.http", session("1"))
    write(tmp_path / "y" / "a.http", session("2"))
    assert run(tmp_path / "x", tmp_path / "y")[0] == 0


def test_folder_against_file_is_an_error(tmp_path: Path, files: dict[str, Path]) -> None:
    code, _, err = run(tmp_path, files["a"])
    assert code == 2
    assert "folder" in err


def test_timing_flag_is_accepted(files: dict[str, Path]) -> None:
    assert run(files["a"], files["b"], "--timing")[0] == 0


def test_a_different_poll_count_is_a_note_unless_polls_are_kept(files: dict[str, Path]) -> None:
    code, out, _ = run(files["a"], files["poll"])
    assert code == 0, out
    code, out, _ = run(files["a"], files["poll"], "--keep-polls")
    assert code == 1
    assert "A#- ~ B#4  GetTask  inserted" in out
