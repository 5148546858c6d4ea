"""The task a stream's events leave behind: what `SubscribeToTask` sends first (pure).

A subscription to a task in progress starts with the Task as it stands (spec §3.1.6);
`fold_task` applies events to the first Task as a2a-sdk 1.3.0's `TaskManager` does.  Events
are read in any wire form, and `with_task` writes a task back in the same form.  Values are
copied, never changed in place.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from recorder.protocol._states import STREAM_MEMBERS, V03_KINDS

Json = Any


def stream_payload(document: Json) -> tuple[str, dict[str, Json]] | None:
    """(member name, object) of one stream event, `("task", {...})`; None for anything else."""
    inner = _unwrapped(document)
    if not isinstance(inner, dict):
        return None
    for member in STREAM_MEMBERS:
        if isinstance(inner.get(member), dict):
            return member, inner[member]
    kind = inner.get("kind")
    if isinstance(kind, str) and kind in V03_KINDS:
        return V03_KINDS[kind], inner
    return None


def fold_task(events: Iterable[Json]) -> dict[str, Json] | None:
    """The task the events leave, from the first Task on; None if no event is a Task."""
    task: dict[str, Json] | None = None
    for event in events:
        found = stream_payload(event)
        if found is None:
            continue
        member, value = found
        if member == "task":
            task = copy.deepcopy(value)
        elif task is not None and member in _APPLY:
            _APPLY[member](task, value)
    return task


def with_task(event: Json, task: Mapping[str, Json]) -> Json:
    """`event` (one that holds a Task) with `task` in its place, in the same form."""
    document = copy.deepcopy(event)
    holder = document
    if isinstance(document, dict) and "jsonrpc" in document:
        if not isinstance(document.get("result"), dict):
            return document
        holder = document["result"]
    if isinstance(holder.get("task"), dict):
        holder["task"] = dict(task)
        return document
    if "jsonrpc" in document:  # v0.3: the result is the Task itself
        document["result"] = dict(task)
        return document
    return dict(task)


def _unwrapped(document: Json) -> Json:
    if isinstance(document, dict) and "jsonrpc" in document:
        return document.get("result")
    return document


def _status(task: dict[str, Json], update: Mapping[str, Json]) -> None:
    old = task.get("status")
    if isinstance(old, dict) and isinstance(old.get("message"), dict):
        task.setdefault("history", []).append(old["message"])
    if isinstance(update.get("metadata"), dict):
        task.setdefault("metadata", {}).update(copy.deepcopy(update["metadata"]))
    if isinstance(update.get("status"), dict):
        task["status"] = copy.deepcopy(update["status"])


def _artifact(task: dict[str, Json], update: Mapping[str, Json]) -> None:
    artifact = update.get("artifact")
    if not isinstance(artifact, dict):
        return
    artifacts: list[Json] = task.setdefault("artifacts", [])
    key = artifact.get("artifactId")
    at = next(
        (n for n, a in enumerate(artifacts) if isinstance(a, dict) and a.get("artifactId") == key),
        None,
    )
    if at is None:
        artifacts.append(copy.deepcopy(artifact))
    elif update.get("append") is True:
        same = artifacts[at]
        same.setdefault("parts", []).extend(copy.deepcopy(artifact.get("parts") or []))
        if isinstance(artifact.get("metadata"), dict):
            same.setdefault("metadata", {}).update(copy.deepcopy(artifact["metadata"]))
    else:
        artifacts[at] = copy.deepcopy(artifact)


_APPLY = {"statusUpdate": _status, "artifactUpdate": _artifact}
