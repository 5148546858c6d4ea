"""`a2a-recorder demo` where the demo cannot run never advises an install that would change the
user's a2a-sdk (issue 23: next to a2a-sdk 0.3.26 it advised `pip install
'a2a-recorder[demo]'`, which upgrades the SDK to 1.3).

The real case: the CLI run with the a2a-sdk 0.3.26 peer's packages first on its path (built by
scripts/peers/envs.py); the advice itself for each kind of environment."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PEERS = Path(os.environ.get("A2A_PEERS_DIR", ROOT / ".peers"))
OLD_SDK = PEERS / "py-0.3.26"
# What the extra holds, by name: a2a-recorder itself is on no package index (issue 30).
EXTRA = "pip install 'a2a-sdk[grpc,http-server]~=1.3.0' 'starlette>=0.37'"


def installs_into_this_environment(text: str) -> bool:
    """Whether `text` advises a `pip install` that is not into an environment of its own."""
    return any(not text[: m.start()].endswith("/bin/") for m in re.finditer("pip install", text))


def test_the_demo_next_to_a2a_sdk_0_3_never_advises_changing_it(tmp_path: Path) -> None:
    packages = sorted(OLD_SDK.glob("lib/python3*/site-packages"))
    if not packages:
        pytest.skip(f"{OLD_SDK} is not built (scripts/peers/envs.py)")
    path = os.pathsep.join([str(packages[0]), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "recorder", "demo", "--out", str(tmp_path / "demo")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": path},
    )
    assert done.returncode == 2, done.stderr
    assert "a2a-sdk 0.3.26" in done.stderr  # it says what it found
    assert not installs_into_this_environment(done.stderr), done.stderr
    assert "python -m venv" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "demo").exists()


def test_the_extra_is_advised_only_where_it_leaves_the_sdk_as_it_is() -> None:
    from recorder._demo_needs import demo_advice

    # No SDK at all: the extra brings one and changes nothing the user had.
    assert _extra() in demo_advice("a2a", None, "~=1.3.0")
    # The SDK the demo wants, without the extras it needs (starlette): the extra adds them.
    assert _extra() in demo_advice("starlette", "1.3.0", "~=1.3.0")
    # Any other SDK: an environment of its own, whatever the metadata says.
    for installed, requirement in (("1.2.3", "~=1.3.0"), ("0.3.26", "~=1.3.0"), ("2.0", None)):
        advice = demo_advice("a2a.compat", installed, requirement)
        assert f"a2a-sdk {installed}" in advice
        assert not installs_into_this_environment(advice), advice
        # What the new environment needs: the extra of the checkout or wheel this one was
        # installed from (an editable checkout here), else one the user names.
        assert _own_source() in advice, advice


def test_no_advice_names_a_package_index_the_package_is_not_on() -> None:
    from recorder._demo_needs import demo_advice

    for installed in (None, "1.3.0", "0.3.26"):
        advice = demo_advice("a2a", installed, "~=1.3.0")
        assert "'a2a-recorder[demo]'" not in advice and "pip install a2a-recorder" not in advice


def _installed_from() -> str:
    """The checkout or wheel a2a-recorder was installed from (PEP 610), or ''."""
    import importlib.metadata
    import json
    import urllib.parse

    try:
        dist = importlib.metadata.distribution("a2a-recorder")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout, not installed
        return ""
    url = json.loads(dist.read_text("direct_url.json") or "{}").get("url", "")
    return urllib.parse.unquote(url.removeprefix("file://")) if url.startswith("file://") else ""


def _extra() -> str:
    """The install that adds the extra here: from where a2a-recorder came, else by name."""
    where = _installed_from()
    return f"pip install '{where}[demo]'" if where else EXTRA


def _own_source() -> str:
    """What a new environment installs: the extra of where a2a-recorder came from, else of a
    checkout or wheel the user names."""
    return f"'{_installed_from() or '<your a2a-recorder checkout or wheel>'}[demo]'"
