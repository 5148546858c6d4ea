"""`replay DIR` as a user mistypes it: which files of a folder are the fleet, and the options
that make no sense for a fleet (or without one), refused with exit 2 before anything listens."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from recorder.cli import main
from recorder.replay import fleet_paths


def replay(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["replay", *map(str, args)])
    return result.exit_code, result.stderr


def test_a_fleet_is_the_folder_s_captures_without_hidden_files_and_by_products(
    tmp_path: Path,
) -> None:
    for name in ("b.http", "a.http", ".a.http", "a.rejected.http", "a.drift.http", "notes.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "folder.http").mkdir()
    assert [p.name for p in fleet_paths(tmp_path)] == ["a.http", "b.http"]


def test_options_of_one_agent_are_refused_for_a_fleet(tmp_path: Path) -> None:
    code, said = replay(tmp_path, "--grpc-listen", "127.0.0.1:0")
    assert code == 2 and "a fleet (DIR) takes neither --grpc-listen nor --on-miss" in said
    code, said = replay(tmp_path, "--on-miss", "forward", "http://127.0.0.1:9")
    assert code == 2 and "a fleet (DIR)" in said


def test_options_of_a_fleet_are_refused_for_one_agent(tmp_path: Path) -> None:
    for option in (["--forward"], ["--ports-file", tmp_path / "ports.json"]):
        code, said = replay(tmp_path / "echo.http", *option)
        assert code == 2 and "serve a fleet: give a folder DIR" in said
    assert not (tmp_path / "ports.json").exists()


def test_one_folder_with_captures_in_it_or_exit_2(tmp_path: Path) -> None:
    code, said = replay(tmp_path, tmp_path)
    assert code == 2 and "give one folder DIR" in said
    code, said = replay(tmp_path)
    assert code == 2 and f"error: {tmp_path}: no capture (*.http) in it" in said
    (tmp_path / "echo.http").write_bytes(b"\xff\xfe not a capture\n")
    code, said = replay(tmp_path)
    assert code == 2 and "echo.http" in said and "Traceback" not in said
