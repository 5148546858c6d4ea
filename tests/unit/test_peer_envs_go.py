"""scripts/peers/envs.py for the Go peer: skipped without go, rebuilt when its source changes."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

ENVS_PY = Path(__file__).resolve().parents[2] / "scripts" / "peers" / "envs.py"
GO_KEY = "a2a-go-2.4.x"


@pytest.fixture
def envs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("peer_envs_under_test", ENVS_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while loading
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "PEERS_DIR", tmp_path / "peers")
    source = tmp_path / "go_peer"
    shutil.copytree(module.GO_PEER_DIR, source)
    monkeypatch.setattr(module, "GO_PEER_DIR", source)
    return module


def test_without_go_the_environment_is_skipped_and_the_run_succeeds(
    envs: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real_which = shutil.which
    monkeypatch.setattr(
        envs.shutil, "which", lambda name, *a, **k: None if name == "go" else real_which(name)
    )
    assert envs.main(["--only", GO_KEY]) == 0
    out = capsys.readouterr().out
    assert f"[{GO_KEY}] skipped: go is not on PATH" in out
    assert not envs.is_built(envs.ENVS[GO_KEY])


def test_a_changed_go_source_makes_the_stamp_stale(envs: ModuleType) -> None:
    spec = envs.ENVS[GO_KEY]
    spec.path.mkdir(parents=True)
    (spec.path / ".installed.json").write_text(json.dumps(envs._stamp(spec)))
    assert envs.is_built(spec)
    main_go = envs.GO_PEER_DIR / "main.go"
    main_go.write_text(main_go.read_text() + "\n// changed\n")
    assert not envs.is_built(spec)


def test_the_go_module_pin_matches_the_environment(envs: ModuleType) -> None:
    go_mod = (envs.GO_PEER_DIR / "go.mod").read_text()
    spec = envs.ENVS[GO_KEY]
    assert f"github.com/a2aproject/a2a-go/v2 v{spec.version}\n" in go_mod
    assert (envs.GO_PEER_DIR / "go.sum").read_text().count(f"v2 v{spec.version}") == 2
