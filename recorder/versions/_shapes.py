"""What renaming members cannot do between v0.3 and v1.0: the translator's shapes (pure).

Each shape (`SHAPES`, named by `_tables`) reads one type from a v0.3 dialect into v1.0 and
writes it back, on a copy, saying what it did through the `Walker`: Parts in their three forms
(a2a-wire.md §7), answer wrappers, a status update's `final` (true for a terminal state, as
a2a-sdk's compat writes it), the send configuration (`blocking` is `returnImmediately`
inverted), push configs (v1.0 flat, v0.3 nested), and task and config references.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from recorder.protocol import (
    CONFIGS_SEGMENT,
    STREAM_MEMBERS,
    TASKS_SEGMENT,
    V03_FILE_FIELDS,
    V03_KINDS,
    V03_PROTO_FILE_FIELDS,
    V03_PROTO_SEND_CONFIG_RENAMES,
    V03_PUSH_CONFIG_PARAMS,
    V03_SEND_CONFIG_RENAMES,
    resource_ids,
    task_state_row,
)
from recorder.versions._card import read_card, write_card
from recorder.versions._tables import (
    CONFIG_REF,
    LIST_CONFIGS,
    LIST_OF,
    MEMBER_TYPES,
    PUSH_CONFIG,
    Dialect,
    RenameRule,
    Walker,
    renamed,
)

Json = Any
Obj = dict[str, Json]
_V03, _PROTO = Dialect.V03, Dialect.V03_PROTO
_R = RenameRule
# The send configuration's push config member, per dialect.
_PUSH_MEMBER: Mapping[Dialect, str] = {
    _V03: next(iter(V03_SEND_CONFIG_RENAMES)),
    _PROTO: next(iter(V03_PROTO_SEND_CONFIG_RENAMES)),
}
_V1_PUSH_MEMBER = next(iter(V03_SEND_CONFIG_RENAMES.values()))
_INLINE_KEYS = ("id", "url", "token", "authentication")  # a v0.3 PushNotificationConfig's
_NESTED, _FLAT = "{taskId, pushNotificationConfig:{…}}", "flat {taskId, id, url, …}"

# ---- parts ---------------------------------------------------------------------------------


def _read_part(w: Walker, part: Obj, kind: str, source: Dialect, path: str) -> Json:
    part = _read_kind_part(w, part, path) if source is _V03 else _read_proto_part(w, part, path)
    if "data" in part:
        _unwrap_data(w, part, path)
    return part


def _read_proto_part(w: Walker, part: Obj, path: str) -> Obj:
    file = part.get("file")
    if isinstance(file, dict):
        del part["file"]
        part.update({V03_PROTO_FILE_FIELDS.get(k, k): v for k, v in file.items()})
        w.note(_R.PART_KIND, "file", "raw|url", path)
    data = part.get("data")
    if isinstance(data, dict) and set(data) == {"data"}:
        part["data"] = data["data"]
        w.note(_R.PART_KIND, "data.data", "data", path)
    return part


def _read_kind_part(w: Walker, part: Obj, path: str) -> Obj:
    kind = part.pop("kind", None)
    if isinstance(kind, str):
        w.note(_R.PART_KIND, f'"kind":"{kind}"', "raw|url" if kind == "file" else kind, path)
    file = part.pop("file", None) if kind == "file" else None
    if isinstance(file, dict):
        part.update({V03_FILE_FIELDS.get(k, k): v for k, v in file.items()})
    return part


def _write_part(w: Walker, part: Obj, kind: str, target: Dialect, path: str) -> Json:
    if {"raw", "url"} & set(part):
        return _write_file_part(w, part, target, path)
    member = "text" if "text" in part else "data" if "data" in part else None
    for key in [k for k in ("mediaType", "filename") if k in part]:
        implied = key == "mediaType" and member == "text" and part[key] == "text/plain"
        if not implied:
            w.lose(part, key, path, f"a v0.3 {member or 'part'} part has no {key}")
        part.pop(key, None)
    if member == "data" and not isinstance(part["data"], dict):
        _wrap_data(w, part, path)
    if member == "data" and target is _PROTO:
        part["data"] = {"data": part["data"]}
        w.note(_R.PART_KIND, "data.data", "data", path)
    if member is None or target is not _V03:
        return part
    w.note(_R.PART_KIND, f'"kind":"{member}"', member, path)
    return {"kind": member, **part}


# a2a-sdk's convention for a v1.0 data part that holds no object (v0.3 DataPart.data is one):
# `{"value": X}`, flagged in the part's metadata (a2a/compat/v0_3/conversions.py).
DATA_VALUE, DATA_FLAG = "value", "data_part_compat"


def _wrap_data(w: Walker, part: Obj, path: str) -> None:
    part["data"] = {DATA_VALUE: part["data"]}
    metadata = part.get("metadata")
    part["metadata"] = {**(metadata if isinstance(metadata, dict) else {}), DATA_FLAG: True}
    w.note(_R.PART_KIND, f"data.{DATA_VALUE} + metadata.{DATA_FLAG}", "data (no object)", path)


def _unwrap_data(w: Walker, part: Obj, path: str) -> None:
    metadata, data = part.get("metadata"), part.get("data")
    if not (isinstance(metadata, dict) and metadata.get(DATA_FLAG) is True):
        return
    if not (isinstance(data, dict) and set(data) == {DATA_VALUE}):
        return
    part["data"] = data[DATA_VALUE]
    rest = {k: v for k, v in metadata.items() if k != DATA_FLAG}
    if rest:
        part["metadata"] = rest
    else:
        del part["metadata"]
    w.note(_R.PART_KIND, f"data.{DATA_VALUE} + metadata.{DATA_FLAG}", "data (no object)", path)


def _write_file_part(w: Walker, part: Obj, target: Dialect, path: str) -> Json:
    names = V03_FILE_FIELDS if target is _V03 else V03_PROTO_FILE_FIELDS
    back = {new: old for old, new in names.items()}
    file = {back[k]: part.pop(k) for k in ("raw", "url", "mediaType", "filename") if k in part}
    if target is _PROTO:
        w.note(_R.PART_KIND, "file", "raw|url", path)
        return {"file": file, **part}
    w.note(_R.PART_KIND, '"kind":"file"', "raw|url", path)
    return {"kind": "file", "file": file, **part}


# ---- answers: wrappers and status updates ---------------------------------------------------


def _read_wrapper(w: Walker, obj: Obj, kind: str, source: Dialect, path: str) -> Json:
    """A SendMessageResponse or StreamResponse; in v0.3 JSON-RPC the object with its `kind`."""
    found = obj.get("kind")
    member = V03_KINDS.get(found) if isinstance(found, str) and source is _V03 else None
    if member is not None:
        return {member: w.read(obj, MEMBER_TYPES[member], source, path, wrapped=True)}
    return _members(w.read, obj, source, path)


def _write_wrapper(w: Walker, obj: Obj, kind: str, target: Dialect, path: str) -> Json:
    members = [k for k in obj if k in STREAM_MEMBERS]
    if target is not _V03 or len(members) != 1:
        return _members(w.write, obj, target, path)
    member = members[0]
    for key in [k for k in obj if k != member]:
        w.lose(obj, key, path, "a v0.3 answer is the object itself")
    # paths name the place in the document as it was (`$.task.…`), as reading's do
    return w.write(obj[member], MEMBER_TYPES[member], target, f"{path}.{member}", wrapped=True)


def _members(step: Callable[..., Json], obj: Obj, dialect: Dialect, path: str) -> Obj:
    return {
        k: step(v, MEMBER_TYPES[k], dialect, f"{path}.{k}") if k in MEMBER_TYPES else v
        for k, v in obj.items()
    }


def _read_status_update(w: Walker, obj: Obj, kind: str, source: Dialect, path: str) -> Json:
    out = w.read_members(obj, kind, source, path)
    if "final" in out:
        del out["final"]
        w.note(_R.FINAL_REMOVED, "final", "", f"{path}.final")
    return out


def _write_status_update(w: Walker, obj: Obj, kind: str, target: Dialect, path: str) -> Json:
    status = obj.get("status")
    row = task_state_row(status.get("state")) if isinstance(status, dict) else None
    out = w.write_members(obj, kind, target, path)
    final = bool(row and row.terminal)
    if final or target is _V03:  # proto3 JSON leaves a false out, as a2a-sdk 0.3 writes it
        out["final"] = final
        w.note(_R.FINAL_REMOVED, "final", "", f"{path}.final")
    return out


# ---- the send configuration and push configs ------------------------------------------------


def _read_send_params(w: Walker, params: Obj, kind: str, source: Dialect, path: str) -> Json:
    """No configuration in v0.3 is a send that does not block: v1.0's `returnImmediately`."""
    if not isinstance(params.get("configuration"), dict):
        w.note(_R.SEND_CONFIG, "blocking", "returnImmediately (inverted)", f"{path}.configuration")
        params["configuration"] = {"returnImmediately": True}
        return {
            **w.read_members(
                {k: v for k, v in params.items() if k != "configuration"}, kind, source, path
            ),
            "configuration": params["configuration"],
        }
    return w.read_members(params, kind, source, path)


def _write_send_params(w: Walker, params: Obj, kind: str, target: Dialect, path: str) -> Json:
    """No configuration in v1.0 is a blocking send, which v0.3 says."""
    out = w.write_members(params, kind, target, path)
    if w.defaults and not isinstance(out.get("configuration"), dict):
        w.note(_R.SEND_CONFIG, "blocking", "returnImmediately (inverted)", f"{path}.configuration")
        out["configuration"] = {"blocking": True}
    return out


def _read_send_config(w: Walker, config: Obj, kind: str, source: Dialect, path: str) -> Json:
    # No `blocking` is `blocking: false` in v0.3 (proto3's default; a2a-python reads it as
    # blocking).  A diff reads v1.0 documents this way too: there, no `blocking` says nothing.
    blocking = config.pop("blocking", False if w.defaults or source is not _V03 else None)
    if blocking is not None:
        w.note(_R.SEND_CONFIG, "blocking", "returnImmediately (inverted)", f"{path}.blocking")
        if blocking is False:  # v1.0 leaves out the default `returnImmediately: false`
            config["returnImmediately"] = True
    old = _PUSH_MEMBER[source]
    if isinstance(config.get(old), dict):
        w.note(_R.SEND_CONFIG, old, _V1_PUSH_MEMBER, f"{path}.{old}")
        config = renamed(config, old, _V1_PUSH_MEMBER)
        config[_V1_PUSH_MEMBER] = read_inline(w, config[_V1_PUSH_MEMBER], f"{path}.{old}")
    return config


def _write_send_config(w: Walker, config: Obj, kind: str, target: Dialect, path: str) -> Json:
    immediately = config.pop("returnImmediately", False) is True
    w.note(_R.SEND_CONFIG, "blocking", "returnImmediately (inverted)", f"{path}.returnImmediately")
    if target is _V03 or not immediately:  # v0.3 clients say it; proto-JSON leaves false out
        config["blocking"] = not immediately
    old = _PUSH_MEMBER[target]
    if isinstance(config.get(_V1_PUSH_MEMBER), dict):
        w.note(_R.SEND_CONFIG, old, _V1_PUSH_MEMBER, f"{path}.{_V1_PUSH_MEMBER}")
        inline = write_inline(w, config[_V1_PUSH_MEMBER], f"{path}.{_V1_PUSH_MEMBER}")
        config = renamed(config, _V1_PUSH_MEMBER, old)
        config[old] = inline
    return config


def read_inline(w: Walker, config: Json, path: str) -> Json:
    """A v0.3 PushNotificationConfig as the members of a flat v1.0 config (one scheme)."""
    if not isinstance(config, dict):
        return config
    out = dict(config)
    auth = out.get("authentication")
    if isinstance(auth, dict) and "schemes" in auth:
        auth = dict(auth)
        schemes = auth.pop("schemes")
        if isinstance(schemes, list) and schemes:
            auth = {"scheme": schemes[0], **auth}
            for i, extra in enumerate(schemes[1:], 1):
                w.lose_value(extra, f"{path}.authentication.schemes[{i}]", "v1.0 has one scheme")
        out["authentication"] = auth
    return out


def write_inline(w: Walker, config: Json, path: str) -> Json:
    """The members of a flat v1.0 config as a v0.3 PushNotificationConfig."""
    if not isinstance(config, dict):
        return config
    out = dict(config)
    for key in [k for k in ("taskId", "tenant") if k in out]:
        w.lose(out, key, path, "a v0.3 push config in a send names no task or tenant")
    auth = out.get("authentication")
    if isinstance(auth, dict) and "scheme" in auth:
        rest = {k: v for k, v in auth.items() if k != "scheme"}
        out["authentication"] = {"schemes": [auth["scheme"]], **rest}
    return out


def _read_push_config(w: Walker, obj: Obj, kind: str, source: Dialect, path: str) -> Json:
    """v0.3 `{taskId | name, pushNotificationConfig: {...}}` -> the flat v1.0 config."""
    if source is _PROTO:
        obj = read_names(w, obj, path, ("name",))
    nested = obj.get("pushNotificationConfig")
    if not isinstance(nested, dict):
        return obj
    w.note(_R.PUSH_CONFIG, _NESTED, _FLAT, path)
    flat = read_inline(w, nested, f"{path}.pushNotificationConfig")
    return {**{k: v for k, v in obj.items() if k != "pushNotificationConfig"}, **flat}


def _write_push_config(w: Walker, obj: Obj, kind: str, target: Dialect, path: str) -> Json:
    out = w.write_members(obj, PUSH_CONFIG, target, path)
    inline = {k: out.pop(k) for k in _INLINE_KEYS if k in out}
    w.note(_R.PUSH_CONFIG, _NESTED, _FLAT, path)
    nested = write_inline(w, inline, f"{path}.pushNotificationConfig")
    if target is not _PROTO:
        return {**out, "pushNotificationConfig": nested}
    name = resource(str(out.pop("taskId", "")), str(inline.get("id", "")))
    w.note(_R.RESOURCE_NAME, "name", "taskId, id", f"{path}.name")
    return {"name": name, **out, "pushNotificationConfig": nested}


def _read_create(w: Walker, obj: Obj, kind: str, source: Dialect, path: str) -> Json:
    """v0.3 proto-JSON `{parent, configId, config: {name, pushNotificationConfig}}` -> flat."""
    config = obj.get("config")
    if source is not _PROTO or not isinstance(config, dict):
        return _read_push_config(w, obj, PUSH_CONFIG, source, path)
    out = read_names(w, {k: v for k, v in obj.items() if k != "config"}, path, ("parent",))
    if "configId" in out:
        out = renamed(out, "configId", "id")
    flat = _read_push_config(w, dict(config), PUSH_CONFIG, source, f"{path}.config")
    return {**flat, **out}


def _write_create(w: Walker, obj: Obj, kind: str, target: Dialect, path: str) -> Json:
    config = _write_push_config(w, dict(obj), PUSH_CONFIG, target, path)
    if target is not _PROTO:
        return config
    out: Obj = {"parent": f"{TASKS_SEGMENT}/{obj.get('taskId', '')}"}
    if obj.get("id") is not None:
        out["configId"] = obj["id"]
    w.note(_R.RESOURCE_NAME, "parent", "taskId", f"{path}.parent")
    return {**out, "config": config}


def _read_config_list(w: Walker, obj: Obj, kind: str, source: Dialect, path: str) -> Json:
    if "configs" in obj:
        obj["configs"] = w.read(obj["configs"], PUSH_CONFIG + LIST_OF, source, f"{path}.configs")
    return obj


def read_bare_config_list(w: Walker, configs: list[Json], source: Dialect, path: str) -> Json:
    """v0.3 JSON-RPC's answer to a push-config list: the configs themselves."""
    w.note(_R.PUSH_CONFIG, "[configs]", "{configs: [...]}", path)
    return {"configs": w.read(configs, PUSH_CONFIG + LIST_OF, source, path)}


def _write_config_list(w: Walker, obj: Obj, kind: str, target: Dialect, path: str) -> Json:
    configs = w.write(obj.get("configs", []), PUSH_CONFIG + LIST_OF, target, f"{path}.configs")
    if target is _PROTO:
        return {**obj, "configs": configs}
    for key in [k for k in obj if k != "configs" and obj[k] not in ("", None)]:
        w.lose(obj, key, path, "v0.3 JSON-RPC answers a bare list")
    w.note(_R.PUSH_CONFIG, "[configs]", "{configs: [...]}", path)
    return configs


# ---- requests that name a task or a config ---------------------------------------------------


def _read_task_ref(w: Walker, obj: Obj, kind: str, source: Dialect, path: str) -> Json:
    out = w.read_members(obj, kind, source, path)
    return read_names(w, out, path, ("name",)) if source is _PROTO else out


def _write_task_ref(w: Walker, obj: Obj, kind: str, target: Dialect, path: str) -> Json:
    out = w.write_members(obj, kind, target, path)
    if target is not _PROTO or "id" not in out:
        return out
    w.note(_R.RESOURCE_NAME, "name", "id", f"{path}.name")
    task = out.pop("id")
    for key in [k for k in out if k != "historyLength"]:
        w.lose(out, key, path, "the v0.3 request holds the task's resource name only")
    return {"name": f"{TASKS_SEGMENT}/{task}", **out}


def _read_config_ref(w: Walker, obj: Obj, kind: str, source: Dialect, path: str) -> Json:
    out = w.read_members(obj, kind, source, path)
    names = ("name",) if kind == CONFIG_REF else ("parent",)
    return read_names(w, out, path, names) if source is _PROTO else read_params(w, out, path)


def _write_config_ref(w: Walker, obj: Obj, kind: str, target: Dialect, path: str) -> Json:
    out = w.write_members(obj, kind, target, path)
    task, config = out.pop("taskId", None), out.pop("id", None)
    if target is _PROTO:
        if kind == LIST_CONFIGS:
            w.note(_R.RESOURCE_NAME, "parent", "taskId", f"{path}.parent")
            return {"parent": f"{TASKS_SEGMENT}/{task or ''}", **out}
        w.note(_R.RESOURCE_NAME, "name", "taskId, id", f"{path}.name")
        return {"name": resource(str(task or ""), str(config or "")), **out}
    for key in [k for k in ("pageSize", "pageToken") if k in out]:
        w.lose(out, key, path, "v0.3 JSON-RPC lists push configs in one page")
    params = {"id": task, "pushNotificationConfigId": config}
    found = {k: v for k, v in params.items() if v is not None}
    w.note(_R.PUSH_CONFIG, "{" + ", ".join(found) + "}", _v1_params(found), path)
    return {**found, **out}


def _v1_params(found: Mapping[str, Json]) -> str:
    return "{" + ", ".join(V03_PUSH_CONFIG_PARAMS[k] for k in found) + "}"


def read_params(w: Walker, params: Obj, path: str) -> Obj:
    """v0.3 JSON-RPC `{id, pushNotificationConfigId}` -> v1.0 `{taskId, id}`."""
    if "taskId" in params or "id" not in params:
        return params  # already v1.0
    found = {key: None for key in params if key in V03_PUSH_CONFIG_PARAMS}
    w.note(_R.PUSH_CONFIG, "{" + ", ".join(found) + "}", _v1_params(found), path)
    return {V03_PUSH_CONFIG_PARAMS.get(key, key): value for key, value in params.items()}


def read_names(w: Walker, obj: Obj, path: str, keys: tuple[str, ...]) -> Obj:
    """v0.3 resource names (`tasks/{t}`, `tasks/{t}/pushNotificationConfigs/{c}`) -> ids."""
    for key in keys:
        value = obj.get(key)
        found = resource_ids(value) if isinstance(value, str) else None
        if found is None:
            continue
        task, config = found
        single = "id" if key == "name" else "taskId"
        fields = {"taskId": task, "id": config} if config else {single: task}
        if any(f in obj for f in fields):
            continue
        w.note(_R.RESOURCE_NAME, key, ", ".join(fields), f"{path}.{key}")
        obj = {**{k: v for k, v in obj.items() if k != key}, **fields}
    return obj


def resource(task: str, config: str) -> str:
    return f"{TASKS_SEGMENT}/{task}/{CONFIGS_SEGMENT}/{config}"


def _read_card(w: Walker, card: Obj, kind: str, source: Dialect, path: str) -> Json:
    return read_card(w, card, path)


def _write_card(w: Walker, card: Obj, kind: str, target: Dialect, path: str) -> Json:
    return write_card(w, card, target, path)


Shape = Callable[[Walker, Obj, str, Dialect, str], Json]
# shape name (in `_tables.TYPES`) -> (read into v1.0, write from v1.0)
SHAPES: Mapping[str, tuple[Shape, Shape]] = {
    "part": (_read_part, _write_part),
    "wrapper": (_read_wrapper, _write_wrapper),
    "status-update": (_read_status_update, _write_status_update),
    "send-params": (_read_send_params, _write_send_params),
    "send-config": (_read_send_config, _write_send_config),
    "push-config": (_read_push_config, _write_push_config),
    "create-config": (_read_create, _write_create),
    "config-ref": (_read_config_ref, _write_config_ref),
    "config-list": (_read_config_list, _write_config_list),
    "task-ref": (_read_task_ref, _write_task_ref),
    "card": (_read_card, _write_card),
}
