"""Build the isolated SDK environments the peer programs run in, under ``<repo>/.peers/``.

Run with any Python >= 3.10 (stdlib only)::

    .venv/bin/python scripts/peers/envs.py            # build every environment
    .venv/bin/python scripts/peers/envs.py --only a2a-js-1.3.x
    .venv/bin/python scripts/peers/envs.py --newest   # show what the registries offer now

Each environment is pinned (``ENVS``) so a corpus recorded today can be re-recorded with the
same SDK versions. A stamp file inside each environment records the exact install spec; a
second run with the same spec does nothing. A failed install (registry refusal, no network,
unknown version) stops with a message naming the command and the tail of its output. A missing
toolchain (``go``, ``mvn``/``java``) skips that environment with a message and does not fail the
run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ENVS", "PEERS_DIR", "REPO", "EnvSpec", "build", "is_built"]

REPO = Path(__file__).resolve().parents[2]
PEERS_DIR = Path(os.environ.get("A2A_PEERS_DIR", REPO / ".peers"))
_STAMP = ".installed.json"
_INSTALL_TIMEOUT = 900  # seconds for one pip/npm install


@dataclass(frozen=True, slots=True)
class EnvSpec:
    """One environment: its SDK family, exact version and what gets installed."""

    key: str  # the SDK name used by run.py (SDKS)
    kind: str  # "python", "node", "go" or "maven"
    version: str  # exact SDK version installed
    dirname: str  # folder under .peers/
    packages: tuple[str, ...]  # pip, npm name@version, Go module@version, maven g:a:version

    @property
    def path(self) -> Path:
        return PEERS_DIR / self.dirname


_PY_EXTRAS = "http-server,grpc"
_GO_MODULE = "github.com/a2aproject/a2a-go/v2"
ENVS: dict[str, EnvSpec] = {
    spec.key: spec
    for spec in (
        EnvSpec(
            "a2a-python-1.3.0",
            "python",
            "1.3.0",
            "py-1.3.0",
            (f"a2a-sdk[{_PY_EXTRAS}]==1.3.0", "uvicorn"),
        ),
        EnvSpec(
            "a2a-python-1.2.x",
            "python",
            "1.2.3",
            "py-1.2.3",
            (f"a2a-sdk[{_PY_EXTRAS}]==1.2.3", "uvicorn"),
        ),
        EnvSpec(
            "a2a-python-0.3.x",
            "python",
            "0.3.26",
            "py-0.3.26",
            (f"a2a-sdk[{_PY_EXTRAS}]==0.3.26", "uvicorn"),
        ),
        EnvSpec(
            "a2a-js-1.3.x",
            "node",
            "1.3.0",
            "js-1.3.0",
            (
                "@a2a-js/sdk@1.3.0",
                "express@5.3.0",
                "@grpc/grpc-js@1.14.7",
                "@bufbuild/protobuf@2.17.0",
            ),
        ),
        # Built from scripts/peers/go_peer (go.mod and go.sum pin every module); see _build_go.
        EnvSpec("a2a-go-2.4.x", "go", "2.4.0", "go-2.4.0", (f"{_GO_MODULE}@v2.4.0",)),
        # The Java SDK's newest release that Maven Central serves: the org.a2aproject.sdk group
        # (1.0.0.Alpha4 onwards) is not served there, so io.github.a2asdk. See java_peer/pom.xml.
        EnvSpec(
            "a2a-java-1.0.x",
            "maven",
            "1.0.0.Alpha3",
            "java-1.0.0.Alpha3",
            (
                "io.github.a2asdk:a2a-java-sdk-bom:1.0.0.Alpha3",
                "io.grpc:grpc-netty-shaded:1.77.0",
                "org.slf4j:slf4j-simple:2.0.17",
            ),
        ),
        # Not an SDK: the editor HTTP client that runs .http files as VS Code and JetBrains
        # do; the tests send captures' requests with it.
        EnvSpec("httpyac", "node", "6.16.7", "httpyac-6.16.7", ("httpyac@6.16.7",)),
    )
}


class BuildError(RuntimeError):
    """An install command failed; the message says which and why."""


class ToolchainMissing(BuildError):
    """The environment needs a toolchain that is not installed; it is skipped, not failed."""


def _stamp(spec: EnvSpec) -> dict[str, object]:
    stamp: dict[str, object] = {
        "key": spec.key,
        "version": spec.version,
        "packages": list(spec.packages),
    }
    if spec.kind == "maven":  # a compiled peer: a changed source means a rebuild
        stamp["source"] = _java_source_digest()
    if spec.kind == "go":
        stamp["source"] = _go_source_digest()
    return stamp


def is_built(spec: EnvSpec) -> bool:
    """True when the environment exists and was installed with exactly this spec."""
    stamp = spec.path / _STAMP
    try:
        return bool(json.loads(stamp.read_text()) == _stamp(spec))
    except (OSError, ValueError):
        return False


def _run(cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    print("  $", " ".join(cmd), flush=True)
    try:
        proc = subprocess.run(
            cmd,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=_INSTALL_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildError(f"could not run {cmd[0]}: {exc}") from exc
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise BuildError(
            f"command failed (exit {proc.returncode}): {' '.join(cmd)}\n"
            f"the registry may have refused the request or the version may not "
            f"exist; last output:\n{tail}"
        )
    return proc.stdout


def python_of(spec: EnvSpec) -> Path:
    return spec.path / "bin" / "python"


def _build_python(spec: EnvSpec) -> None:
    if not python_of(spec).exists():
        print(f"  creating venv {spec.path}", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(spec.path)
    _run(
        [
            str(python_of(spec)),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            *spec.packages,
        ]
    )
    _run([str(python_of(spec)), "-c", "import a2a, uvicorn, grpc"])


def _build_node(spec: EnvSpec) -> None:
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise BuildError("node and npm are needed for the JS peer and were not found on PATH")
    spec.path.mkdir(parents=True, exist_ok=True)
    deps = dict(p.rsplit("@", 1) for p in spec.packages)
    package = {
        "name": f"a2a-peer-{spec.dirname}",
        "private": True,
        "type": "module",
        "dependencies": deps,
    }
    (spec.path / "package.json").write_text(json.dumps(package, indent=2) + "\n")
    _run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=spec.path)


# --- Go ---------------------------------------------------------------------------------------

GO_PEER_DIR = Path(__file__).resolve().parent / "go_peer"
# (binary under <env>/bin, Go package): our peer; the same peer named a2a-cli-peer, which
# drives the SDK's own CLI instead of a2aclient (go_peer/cli.go); and that CLI at the same pin
# (go.mod's `tool` line keeps its modules in go.sum).
GO_BINARIES = (("go-peer", "."), ("a2a-cli-peer", "."), ("a2a", f"{_GO_MODULE}/cmd/a2a"))


def _go_source_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(GO_PEER_DIR.rglob("*")):
        if path.is_file() and (path.suffix == ".go" or path.name in ("go.mod", "go.sum")):
            digest.update(str(path.relative_to(GO_PEER_DIR)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def go_environ() -> dict[str, str]:
    """The environment of every go command: pinned (go.sum must already hold every module),
    no VCS stamping (a fresh clone may be owned by someone else), reproducible paths."""
    env = dict(os.environ)
    env["GOFLAGS"] = "-mod=readonly -buildvcs=false -trimpath"
    return env


def _build_go(spec: EnvSpec) -> None:
    go = shutil.which("go")
    if go is None:
        raise ToolchainMissing(
            "go is not on PATH; the Go peer (a2a-go) is skipped. Install Go >= 1.25 to build it."
        )
    env = go_environ()
    got = _run(
        [go, "list", "-m", "-f", "{{.Version}}", _GO_MODULE], cwd=GO_PEER_DIR, env=env
    ).strip()
    if got != f"v{spec.version}":
        raise BuildError(f"{GO_PEER_DIR}/go.mod pins {_GO_MODULE} {got}, ENVS says v{spec.version}")
    for name, package in GO_BINARIES:
        out = spec.path / "bin" / name
        _run([go, "build", "-o", str(out), package], cwd=GO_PEER_DIR, env=env)


# --- maven (the Java peer) --------------------------------------------------------------------

JAVA_PEER = Path(__file__).resolve().parent / "java_peer"
# The pom property each pinned artifact sets (java_peer/pom.xml has the same values as defaults).
_MAVEN_PROPERTIES = {
    "a2a-java-sdk-bom": "a2a.version",
    "grpc-netty-shaded": "grpc.version",
    "slf4j-simple": "slf4j.version",
}


def _java_source_digest() -> str:
    """A digest of the Java peer's pom and sources: compiled classes go stale when they change."""
    digest = hashlib.sha256()
    files = [JAVA_PEER / "pom.xml", *sorted((JAVA_PEER / "src").rglob("*"))]
    for path in files:
        if path.is_file():
            digest.update(path.relative_to(JAVA_PEER).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def java_tools() -> tuple[str, str]:
    """(mvn, java) on PATH (java from JAVA_HOME first); ToolchainMissing when either is absent."""
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    mvn = shutil.which("mvn")
    if mvn is None or java is None or not Path(java).exists():
        raise ToolchainMissing(
            "mvn and java (17 or newer) are needed for the Java peer and were not found "
            "(PATH, JAVA_HOME); install them (Debian: apt-get install maven) or skip with --only"
        )
    return mvn, java


def _build_maven(spec: EnvSpec) -> None:
    """Compile java_peer into <env>/classes and copy its runtime jars to <env>/lib.

    A2A_MAVEN_REPO_LOCAL, when set, is the Maven local repository (default ~/.m2/repository).
    """
    mvn, _ = java_tools()
    for sub in ("classes", "lib", "maven-status", "generated-sources"):
        shutil.rmtree(spec.path / sub, ignore_errors=True)
    spec.path.mkdir(parents=True, exist_ok=True)
    props = [f"-Dpeer.out={spec.path}"]
    for coordinate in spec.packages:
        _, artifact, version = coordinate.split(":")
        props.append(f"-D{_MAVEN_PROPERTIES[artifact]}={version}")
    repo = os.environ.get("A2A_MAVEN_REPO_LOCAL")
    if repo:
        props.append(f"-Dmaven.repo.local={repo}")
    _run([mvn, "-B", "-q", "-f", str(JAVA_PEER / "pom.xml"), "compile", *props])
    if not (spec.path / "classes" / "peer" / "Main.class").exists():
        raise BuildError(f"mvn compile left no {spec.path}/classes/peer/Main.class")


def build(spec: EnvSpec, force: bool = False) -> bool:
    """Install ``spec`` unless its stamp says it is already there; True if work was done."""
    if is_built(spec) and not force:
        print(f"[{spec.key}] up to date in {spec.path}", flush=True)
        return False
    print(f"[{spec.key}] installing {', '.join(spec.packages)} into {spec.path}", flush=True)
    (spec.path / _STAMP).unlink(missing_ok=True)
    builders = {
        "python": _build_python,
        "node": _build_node,
        "go": _build_go,
        "maven": _build_maven,
    }
    builders[spec.kind](spec)
    (spec.path / _STAMP).write_text(json.dumps(_stamp(spec), indent=2) + "\n")
    print(f"[{spec.key}] done", flush=True)
    return True


def _show_newest() -> None:
    """Print what the registries offer, to decide whether ENVS needs a bump."""
    pip = [sys.executable, "-m", "pip", "index", "versions", "a2a-sdk"]
    subprocess.run(pip, check=False, timeout=120)
    npm = shutil.which("npm")
    if npm:
        subprocess.run([npm, "view", "@a2a-js/sdk", "versions", "--json"], check=False, timeout=120)
    _show_newest_maven()
    go = shutil.which("go")
    if go:  # a proxy that serves no version list answers 404 here; ask for @vX.Y.Z instead
        cmd = [go, "list", "-m", "-versions", _GO_MODULE]
        subprocess.run(cmd, cwd=GO_PEER_DIR, check=False, timeout=120)


# The Java SDK's client artifact under its old and new group ids (1.0.0.Alpha4 moved it).
_MAVEN_METADATA = (
    "https://repo.maven.apache.org/maven2/io/github/a2asdk/a2a-java-sdk-client/maven-metadata.xml",
    "https://repo.maven.apache.org/maven2/org/a2aproject/sdk/a2a-java-sdk-client/maven-metadata.xml",
)


def _show_newest_maven() -> None:
    import re
    import urllib.error
    import urllib.request

    for url in _MAVEN_METADATA:
        try:
            with urllib.request.urlopen(url, timeout=60) as resp:
                versions = re.findall(r"<version>([^<]+)</version>", resp.read().decode())
            print(f"{url}: {' '.join(versions)}")
        except (OSError, urllib.error.URLError) as exc:
            print(f"{url}: not served ({exc})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only",
        action="append",
        choices=sorted(ENVS),
        help="build only this environment (repeatable)",
    )
    parser.add_argument("--force", action="store_true", help="reinstall even if stamped")
    parser.add_argument(
        "--newest", action="store_true", help="show the versions the registries offer and exit"
    )
    args = parser.parse_args(argv)
    if args.newest:
        _show_newest()
        return 0
    PEERS_DIR.mkdir(parents=True, exist_ok=True)
    failed: list[str] = []
    for key in args.only or list(ENVS):
        try:
            build(ENVS[key], force=args.force)
        except ToolchainMissing as exc:
            print(f"[{key}] skipped: {exc}", flush=True)
        except BuildError as exc:
            print(f"[{key}] FAILED: {exc}", file=sys.stderr, flush=True)
            failed.append(key)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
