"""Build the wheel and the environments that check installing it, under ``<repo>/.installs/``.

Run with the project's Python (``.venv/bin/python``, which has ``build``)::

    .venv/bin/python scripts/peers/installs.py          # build the wheel and every env
    .venv/bin/python scripts/peers/installs.py --only lowest

Environments (``ENVS``), each a venv where the project's own stack is installed first and the
wheel after it, the way a user adds a2a-recorder to their test environment:

- ``sdk-0.3.26``, ``sdk-1.2.3``, ``sdk-1.3.0``: a2a-sdk at that version (and pytest); installing
  the wheel must leave it as it was, or the build stops and says what changed;
- ``no-sdk``: no a2a-sdk, and the newest protobuf, grpcio and the rest (re-resolved weekly);
- ``lowest``: every runtime dependency at the lower bound pyproject.toml gives it.

Stamps: the wheel is rebuilt when a source file changed (``wheel/source.sha256``); an env is
reinstalled when its spec or the wheel's dependencies changed, and only gets the new wheel
(``--no-deps``) when just the code changed.  So a second run takes seconds.
``A2A_INSTALLS_DIR`` moves the folder (default ``<repo>/.installs``).
"""

from __future__ import annotations

import argparse
import datetime
import fnmatch
import hashlib
import json
import os
import re
import subprocess
import sys
import tomllib
import venv
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from envs import REPO, BuildError, _run

INSTALLS_DIR = Path(os.environ.get("A2A_INSTALLS_DIR", REPO / ".installs"))
WHEEL_DIR = INSTALLS_DIR / "wheel"
_STAMP = ".installed.json"
_SDK = "a2a-sdk"
PARALLEL = 2  # environments built at once
_PY_TOOLS = ("pytest>=8", "pytest-asyncio>=0.23", "hypothesis>=6.100")  # for the SDK-free tests
# The files a wheel is built from (their hash decides a rebuild).
_SOURCES = ("pyproject.toml", "README.md", "recorder")
# Files the wheel must carry besides the modules, or it does not work outside the repo.
DESCRIPTOR_FILES = (
    "recorder/protocol/descriptors/a2a.binpb",
    "recorder/protocol/descriptors/a2a.json",
)


@dataclass(frozen=True, slots=True)
class InstallEnv:
    """One environment: what is there before the wheel, and how the wheel goes in."""

    key: str
    sdk: str | None  # the a2a-sdk version it holds, or None
    packages: tuple[str, ...]  # the "project's" packages, installed before the wheel
    lowest: bool = False  # install the wheel's dependencies at their lower bounds
    newest: bool = False  # re-resolve to the newest versions every week

    @property
    def path(self) -> Path:
        return INSTALLS_DIR / self.key

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"


def _sdk_env(version: str) -> InstallEnv:
    return InstallEnv(
        f"sdk-{version}", version, (f"{_SDK}[http-server,grpc]=={version}", "uvicorn", "pytest>=8")
    )


ENVS: dict[str, InstallEnv] = {
    env.key: env
    for env in (
        _sdk_env("0.3.26"),
        _sdk_env("1.2.3"),
        _sdk_env("1.3.0"),
        InstallEnv("no-sdk", None, _PY_TOOLS, newest=True),
        InstallEnv("lowest", None, _PY_TOOLS, lowest=True),
    )
}


# --- the wheel ----------------------------------------------------------------------------------


def source_hash() -> str:
    digest = hashlib.sha256()
    for top in _SOURCES:
        root = REPO / top
        files = (
            [root]
            if root.is_file()
            else sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        )
        for path in files:
            digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def wheel_path() -> Path | None:
    found = sorted(WHEEL_DIR.glob("a2a_recorder-*.whl"))
    return found[-1] if found else None


_SOURCE_STAMP = WHEEL_DIR / "source.sha256"


def wheel_is_current() -> bool:
    """True when the built wheel was made from the sources as they are now."""
    try:
        return wheel_path() is not None and _SOURCE_STAMP.read_text() == source_hash()
    except OSError:
        return False


def build_wheel() -> Path:
    """`python -m build --wheel` unless the sources are those of the wheel already built."""
    stamp = _SOURCE_STAMP
    wanted = source_hash()
    built = wheel_path()
    if built is not None and stamp.exists() and stamp.read_text() == wanted:
        print(f"[wheel] up to date: {built}", flush=True)
        return built
    for old in WHEEL_DIR.glob("*.whl"):
        old.unlink()
    WHEEL_DIR.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(WHEEL_DIR), str(REPO)])
    built = wheel_path()
    if built is None:
        raise BuildError(f"python -m build wrote no wheel to {WHEEL_DIR}")
    check_wheel(built)
    stamp.write_text(wanted)
    print(f"[wheel] built {built}", flush=True)
    return built


def package_data() -> list[str]:
    """pyproject.toml's package-data patterns, as paths in the wheel (`recorder/py.typed`)."""
    tool = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    return [
        f"{package}/{pattern}"
        for package, patterns in tool["package-data"].items()
        for pattern in patterns
    ]


def check_wheel(path: Path) -> None:
    """The wheel carries its package data: each pattern matches a file, and the descriptors."""
    with zipfile.ZipFile(path) as wheel:
        names = wheel.namelist()
    wanted = [*package_data(), *DESCRIPTOR_FILES]
    missing = [p for p in wanted if not any(fnmatch.fnmatch(n, p) for n in names)]
    if missing:
        raise BuildError(f"{path.name} lacks {', '.join(missing)}")


def requires_dist(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as wheel:
        meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        text = wheel.read(meta).decode()
    return [
        line.split(":", 1)[1].strip()
        for line in text.splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]


# --- lower bounds -------------------------------------------------------------------------------

_FLOOR = re.compile(r"^\s*([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?\s*(?:[^;]*?)>=\s*([0-9][^,;\s]*)")


def lowest_pins() -> list[str]:
    """`name==floor` for each runtime dependency of pyproject.toml (each must have a `>=`)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pins = []
    for requirement in project["dependencies"]:
        found = _FLOOR.match(requirement)
        if found is None:
            raise BuildError(f"dependency {requirement!r} has no lower bound (>=)")
        pins.append(f"{found.group(1)}=={found.group(2)}")
    return pins


# --- the environments ---------------------------------------------------------------------------


def _pip(env: InstallEnv, *args: str) -> None:
    _run([str(env.python), "-m", "pip", "--disable-pip-version-check", "--quiet", *args])


def installed(env: InstallEnv) -> dict[str, str]:
    """`pip list` of the environment: distribution name (lower case) -> version."""
    proc = subprocess.run(
        [str(env.python), "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return {d["name"].lower(): d["version"] for d in json.loads(proc.stdout)}


def _spec(env: InstallEnv, wheel: Path) -> dict[str, object]:
    spec: dict[str, object] = {
        "packages": list(env.packages),
        "requires": requires_dist(wheel),
        "lowest": lowest_pins() if env.lowest else [],
    }
    if env.newest:
        year, week, _ = datetime.date.today().isocalendar()
        spec["week"] = f"{year}-W{week:02d}"
    return spec


def _read_stamp(env: InstallEnv) -> dict[str, object]:
    try:
        found: dict[str, object] = json.loads((env.path / _STAMP).read_text())
        return found
    except (OSError, ValueError):
        return {}


def is_built(env: InstallEnv) -> bool:
    return bool(_read_stamp(env).get("wheel")) and env.python.exists()


def installed_wheel(env: InstallEnv) -> str | None:
    """The sha256 of the wheel last installed into `env`."""
    found = _read_stamp(env).get("wheel")
    return str(found) if found else None


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_env(env: InstallEnv, wheel: Path) -> None:
    stamp = _read_stamp(env)
    spec = _spec(env, wheel)
    wheel_hash = file_hash(wheel)
    if stamp.get("spec") == spec and stamp.get("wheel") == wheel_hash:
        print(f"[{env.key}] up to date in {env.path}", flush=True)
        return
    if stamp.get("spec") == spec:
        print(f"[{env.key}] new wheel only", flush=True)
        _pip(env, "install", "--no-deps", "--force-reinstall", str(wheel))
    else:
        _install_all(env, wheel)
    stamp = {"spec": spec, "wheel": wheel_hash, "sdk": installed(env).get(_SDK)}
    (env.path / _STAMP).write_text(json.dumps(stamp, indent=2) + "\n")
    print(f"[{env.key}] done", flush=True)


def _install_all(env: InstallEnv, wheel: Path) -> None:
    print(f"[{env.key}] installing {', '.join(env.packages)}, then {wheel.name}", flush=True)
    (env.path / _STAMP).unlink(missing_ok=True)
    if not env.python.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(env.path)
    upgrade = ["--upgrade", "--upgrade-strategy", "eager"] if env.newest else []
    _pip(env, "install", *upgrade, *env.packages)
    before = installed(env).get(_SDK)
    if before != env.sdk:
        raise BuildError(f"[{env.key}] expected {_SDK} {env.sdk}, found {before}")
    constraints: list[str] = []
    if env.lowest:
        pins = env.path / "lowest-constraints.txt"
        pins.write_text("\n".join(lowest_pins()) + "\n")
        constraints = ["--constraint", str(pins)]
    _pip(env, "install", *upgrade, "--force-reinstall", "--no-deps", str(wheel))
    _pip(env, "install", *upgrade, *constraints, str(wheel))
    after = installed(env).get(_SDK)
    if after != before:
        raise BuildError(
            f"[{env.key}] installing {wheel.name} changed {_SDK} from {before} to {after}"
        )


def _build_reporting(key: str, wheel: Path) -> bool:
    try:
        build_env(ENVS[key], wheel)
    except BuildError as exc:
        print(f"[{key}] FAILED: {exc}", file=sys.stderr, flush=True)
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only",
        action="append",
        choices=sorted(ENVS),
        help="build only this environment (repeatable)",
    )
    args = parser.parse_args(argv)
    try:
        wheel = build_wheel()
    except BuildError as exc:
        print(f"[wheel] FAILED: {exc}", file=sys.stderr, flush=True)
        return 1
    keys = args.only or list(ENVS)
    # Two at a time: installing is half downloads and unpacking, half CPU.
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        results = list(pool.map(lambda key: _build_reporting(key, wheel), keys))
    failed = [key for key, ok in zip(keys, results, strict=True) if not ok]
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
