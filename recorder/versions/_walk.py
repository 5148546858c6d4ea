"""The walk between A2A v0.3 and v1.0 (pure): `_tables`'s type tables driven over a
document, `_shapes`' functions where a type does more than rename.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from recorder.protocol import V03_KINDS
from recorder.versions._shapes import SHAPES, read_bare_config_list
from recorder.versions._tables import (
    CONFIG_LIST,
    ENUM_READS,
    ENUMS,
    KINDS,
    LIST_OF,
    TYPES,
    Dialect,
    Lost,
    Rename,
    RenameRule,
    Translated,
    renamed,
    short,
)

Json = Any


class Walk:
    """One translation's notes: what was renamed, what was lost (`keep`: lost values stay)."""

    def __init__(self, *, keep: bool = False, defaults: bool = False) -> None:
        self.keep = keep
        # Say what a version leaves to defaults where the other's differ (not for a diff).
        self.defaults = defaults
        self.renames: list[Rename] = []
        self.lost: list[Lost] = []

    def note(self, rule: RenameRule, old: str, new: str, path: str) -> None:
        self.renames.append(Rename(rule, old, new, path))

    def lose(self, obj: dict[str, Json], key: str, path: str, why: str) -> None:
        self.lost.append(Lost(f"{path}.{key}", short(obj[key]), why))
        if not self.keep:
            del obj[key]

    def lose_value(self, value: Json, path: str, why: str) -> None:
        self.lost.append(Lost(path, short(value), why))

    def result(self, value: Json) -> Translated:
        return Translated(value, tuple(self.renames), tuple(self.lost))

    # -- reading: a dialect into v1.0 ------------------------------------------------------

    def read(
        self, value: Json, kind: str, source: Dialect, path: str, *, wrapped: bool = False
    ) -> Json:
        if source is Dialect.V1:
            return value
        if kind.endswith(LIST_OF):
            return self._each(value, kind, source, path, self.read)
        if kind in ENUMS:
            return self._read_enum(value, kind, source, path)
        row = TYPES.get(kind)
        if kind == CONFIG_LIST and isinstance(value, list):
            return read_bare_config_list(self, value, source, path)
        if row is None or not isinstance(value, dict):
            return value
        obj = dict(value)
        self._unkind(obj, kind, source, path, wrapped=wrapped)
        if row.shape is not None:
            return SHAPES[row.shape][0](self, obj, kind, source, path)
        return self.read_members(obj, kind, source, path)

    def read_members(
        self, obj: dict[str, Json], kind: str, source: Dialect, path: str
    ) -> dict[str, Json]:
        """The generic read, on a copy (changed in place): members renamed, each read."""
        row = TYPES[kind]
        for name, (old, rule) in row.renamed.get(source, {}).items():
            if old in obj and name not in obj:
                self.note(rule, old, name, f"{path}.{old}")
                obj = renamed(obj, old, name)
        for key in [k for k in obj if k in row.v03_only]:
            self.lose(obj, key, path, "v1.0 has no such member here")
        for key, child in row.members.items():
            if key in obj:
                obj[key] = self.read(obj[key], child, source, f"{path}.{key}")
        return obj

    def _unkind(
        self, obj: dict[str, Json], kind: str, source: Dialect, path: str, *, wrapped: bool
    ) -> None:
        value = obj.get("kind")
        if source is not Dialect.V03 or value is None or value != KINDS.get(kind):
            return
        del obj["kind"]
        new = V03_KINDS[value] if wrapped else ""
        rule = RenameRule.KIND_WRAPPER if wrapped else RenameRule.KIND_REMOVED
        self.note(rule, f'"kind":"{value}"', new, path)

    def _read_enum(self, value: Json, kind: str, source: Dialect, path: str) -> Json:
        new = ENUM_READS.get((kind, source), {}).get(value) if isinstance(value, str) else None
        if new is None or new == value:
            return value
        self.note(RenameRule.ENUM, value, new, path)
        return new

    # -- writing: v1.0 into a dialect ------------------------------------------------------

    def write(
        self, value: Json, kind: str, target: Dialect, path: str, *, wrapped: bool = False
    ) -> Json:
        if target is Dialect.V1:
            return value
        if kind.endswith(LIST_OF):
            return self._each(value, kind, target, path, self.write)
        if kind in ENUMS:
            return self._write_enum(value, kind, target, path)
        row = TYPES.get(kind)
        if row is None or not isinstance(value, dict):
            return value
        obj = dict(value)
        if row.shape is not None:
            out = SHAPES[row.shape][1](self, obj, kind, target, path)
        else:
            out = self.write_members(obj, kind, target, path)
        return self._kinded(out, kind, target, path, wrapped=wrapped)

    def write_members(
        self, obj: dict[str, Json], kind: str, target: Dialect, path: str
    ) -> dict[str, Json]:
        """The generic write, on a copy (changed in place): members written, renamed."""
        row = TYPES[kind]
        for key in [k for k in obj if k in row.v1_only]:
            self.lose(obj, key, path, "v0.3 has no such member")
        for key, child in row.members.items():
            if key in obj:
                obj[key] = self.write(obj[key], child, target, f"{path}.{key}")
        for name, (old, rule) in row.renamed.get(target, {}).items():
            if name in obj and old not in obj:
                self.note(rule, old, name, f"{path}.{name}")
                obj = renamed(obj, name, old)
        return obj

    def _kinded(self, obj: Json, kind: str, target: Dialect, path: str, *, wrapped: bool) -> Json:
        value = KINDS.get(kind)
        if target is not Dialect.V03 or value is None or not isinstance(obj, dict):
            return obj
        rule = RenameRule.KIND_WRAPPER if wrapped else RenameRule.KIND_REMOVED
        self.note(rule, f'"kind":"{value}"', V03_KINDS[value] if wrapped else "", path)
        return {"kind": value, **{k: v for k, v in obj.items() if k != "kind"}}

    def _write_enum(self, value: Json, kind: str, target: Dialect, path: str) -> Json:
        forms = ENUMS[kind].get(value) if isinstance(value, str) else None
        if forms is None:
            return value
        new = forms[0] if target is Dialect.V03 else forms[1]
        if new != value:
            self.note(RenameRule.ENUM, new, value, path)
        return new

    @staticmethod
    def _each(
        value: Json, kind: str, dialect: Dialect, path: str, step: Callable[..., Json]
    ) -> Json:
        if not isinstance(value, list):
            return value
        item = kind.removesuffix(LIST_OF)
        return [step(v, item, dialect, f"{path}[{i}]") for i, v in enumerate(value)]


def read(
    document: Json, kind: str, source: Dialect, *, path: str = "$", keep: bool = False
) -> Translated:
    """`document`, a `kind` written in `source`, in its v1.0 form."""
    walk = Walk(keep=keep)
    return walk.result(walk.read(document, kind, source, path))


def write(document: Json, kind: str, target: Dialect, *, path: str = "$") -> Translated:
    walk = Walk()
    return walk.result(walk.write(document, kind, target, path))
