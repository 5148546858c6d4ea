"""`recorder._files.replace_file`: the one atomic writer, and the permission bits it gives."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from recorder._files import replace_file


def _bits(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_file_gets_the_umasks_bits_and_a_replaced_one_keeps_its_own(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        target = tmp_path / "a.json"
        replace_file(target, b"one")
        assert _bits(target) == 0o644 and target.read_bytes() == b"one"
        target.chmod(0o640)
        replace_file(target, b"two")
        assert _bits(target) == 0o640 and target.read_bytes() == b"two"
    finally:
        os.umask(old)


@pytest.mark.parametrize("before", [None, 0o644])
def test_bits_asked_for_are_given_whatever_was_there(tmp_path: Path, before: int | None) -> None:
    target = tmp_path / "ports.json"
    if before is not None:
        target.write_bytes(b"{}")
        target.chmod(before)
    replace_file(target, b"[]", mode=0o600)
    assert _bits(target) == 0o600 and target.read_bytes() == b"[]"
    assert [p.name for p in tmp_path.iterdir()] == ["ports.json"]  # no temporary left
