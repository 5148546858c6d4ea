"""The card an agent of several A2A versions serves (pure).

For both versions it is the v1.0 card listing every interface in both, with the v0.3 fields
merged in: a2a-sdk 1.3.0's `agent_card_to_dict` hybrid (@a2a-js/sdk picks by `A2A-Version`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from recorder.protocol import V03_CARD_LEGACY_FIELDS, Version
from recorder.versions._card import entries as card_entries
from recorder.versions._card import read_card, write_card
from recorder.versions._tables import Dialect, RenameRule, Translated
from recorder.versions._walk import Walk

Json = Any
Obj = dict[str, Json]
_R = RenameRule


def served_card(card: Json, versions: Collection[Version], *, proto: bool = False) -> Translated:
    """The card to serve for an agent that speaks `versions`; `proto`: v0.3 as proto-JSON."""
    w = Walk()
    if not isinstance(card, dict):
        return w.result(card)
    v1 = read_card(Walk(), dict(card), "card")  # a hybrid's folding is no change served
    if set(versions) == {Version.V0_3}:
        return w.result(write_card(w, v1, Dialect.V03_PROTO if proto else Dialect.V03, "card"))
    if Version.V0_3 in versions:
        return w.result(_dual(w, v1))
    return w.result(_only_v1(w, v1))


def _only_v1(w: Walk, card: Obj) -> Obj:
    entries = card_entries(card, Version.V1_0)
    if not entries:
        entries = [_as(entry, Version.V1_0) for entry in card_entries(card, None)]
        where = "card.supportedInterfaces"
        w.note(_R.CARD_FIELD, "protocolVersion 0.3", "protocolVersion 1.0", where)
    return {**card, "supportedInterfaces": entries}


def _dual(w: Walk, card: Obj) -> Obj:
    plain = list(
        {(e.get("url"), e.get("protocolBinding")): e for e in card_entries(card, None)}.values()
    )
    v1_entries = [_as(e, Version.V1_0) for e in plain]
    v03_entries = [_as(e, Version.V0_3) for e in plain]
    v1 = {**card, "supportedInterfaces": [*v1_entries, *v03_entries]}
    v03 = write_card(Walk(), {**card, "supportedInterfaces": v03_entries}, Dialect.V03, "card")
    w.note(_R.CARD_FIELD, "/".join(V03_CARD_LEGACY_FIELDS), "supportedInterfaces", "card")
    return _merged(v1, v03)


def _as(entry: Obj, version: Version | None) -> Obj:
    out = {k: v for k, v in entry.items() if k != "protocolVersion"}
    return {**out, "protocolVersion": str(version)} if version is not None else out


def _merged(first: Obj, second: Obj) -> Obj:
    """`first` with what only `second` has, member by member (a2a-sdk's merge)."""
    out = dict(first)
    for key, value in second.items():
        if key not in out:
            out[key] = value
        elif isinstance(value, dict) and isinstance(out[key], dict):
            out[key] = _merged(out[key], value)
    return out
