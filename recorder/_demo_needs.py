"""What the demo needs, and what to say when it is not there (`a2a-recorder demo`,
`python -m recorder.demo`): never an install that would change the user's own a2a-sdk."""

from __future__ import annotations

import importlib.metadata
import json
import re
import urllib.parse

# What the `demo` extra brings; an ImportError naming one of these means the extra is missing.
DEMO_MODULES = frozenset({"a2a", "starlette", "sse_starlette", "grpc"})
DEMO_SDK = "a2a-sdk"
DEMO_ENV = "/tmp/a2a-recorder-demo"  # the demo's own environment, when the user's SDK differs
MISSING = "?"  # an argument not given: read from this environment
_DEMO_REQUIRES = re.compile(r"([^;]+);.*extra\s*==\s*.demo.")  # a requirement of the extra


def demo_advice(
    missing: str, installed: str | None = MISSING, requirement: str | None = MISSING
) -> str:
    """What to do when the demo cannot import `missing`: install the extra where that leaves
    the user's a2a-sdk as it is, else run the demo in an environment of its own.  The extra
    comes from where a2a-recorder was installed from (no package index has it)."""
    installed = installed_version(DEMO_SDK) if installed == MISSING else installed
    requirement = _demo_requirement() if requirement == MISSING else requirement
    needs = f"a2a-sdk {requirement}" if requirement else "a2a-sdk 1.3"
    if installed is None or (requirement and _compatible(installed, requirement)):
        return f"the demo needs {needs} ({missing} is missing): pip install {_extra()}"
    return (
        f"the demo is written against {needs}, and this environment has a2a-sdk {installed} "
        f"(no {missing}); installing the demo's SDK here would change yours, so run the demo "
        f"in an environment of its own: python -m venv {DEMO_ENV} && "
        f"{DEMO_ENV}/bin/pip install {_extra(own=True)} && {DEMO_ENV}/bin/a2a-recorder demo"
    )


def _extra(own: bool = False) -> str:
    """The `demo` extra of the checkout or wheel a2a-recorder was installed from (PEP 610);
    else its requirements by name, or (`own`: a new environment) a placeholder to fill."""
    try:
        source = json.loads(importlib.metadata.distribution("a2a-recorder").read_text(
            "direct_url.json") or "{}").get("url", "")  # fmt: skip
    except (importlib.metadata.PackageNotFoundError, ValueError):
        source = ""
    if source.startswith("file://") or own:
        where = urllib.parse.unquote(source.removeprefix("file://"))
        return f"'{where or '<your a2a-recorder checkout or wheel>'}[demo]'"
    return " ".join(f"'{found.group(1)}'" for found in map(_DEMO_REQUIRES.match, _requires())
                    if found)  # fmt: skip


def _requires() -> list[str]:
    try:
        return importlib.metadata.requires("a2a-recorder") or []
    except importlib.metadata.PackageNotFoundError:
        return []


def _demo_requirement() -> str | None:
    """The a2a-sdk version the `demo` extra asks for (`~=1.3.0`); None when not installed."""
    for found in map(_DEMO_REQUIRES.match, _requires()):
        if found and found.group(1).startswith(DEMO_SDK + "["):
            return found.group(1).partition("]")[2].strip()
    return None


def _compatible(installed: str, requirement: str) -> bool:
    """Whether `installed` meets a `~=X.Y.Z` requirement (its X.Y series, at least X.Y.Z)."""
    found = re.fullmatch(r"~=\s*([0-9]+)\.([0-9]+)(?:\.([0-9]+))?", requirement)
    have = re.match(r"([0-9]+)\.([0-9]+)(?:\.([0-9]+))?", installed)
    if found is None or have is None:
        return False
    wanted = [int(part or 0) for part in found.groups()]
    got = [int(part or 0) for part in have.groups()]
    return got[:2] == wanted[:2] and got >= wanted


def installed_version(distribution: str) -> str | None:
    """The version of `distribution` installed here, or None."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
