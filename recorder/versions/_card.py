"""The agent card between v0.3 and v1.0 (pure; a card of the wrong shape is returned as is).

v0.3's `url`, `preferredTransport`, `additionalInterfaces` and `protocolVersion` are v1.0's
`supportedInterfaces`, its `security` lists are `securityRequirements`, and its schemes are
discriminated by `type` where v1.0 wraps each in a oneof member (a2a-wire.md §2).  `read_card`
also takes a2a-sdk's hybrid card.
"""

from __future__ import annotations

from typing import Any

from recorder.protocol import (
    V03_CARD_EXTENDED_FLAG,
    V03_CARD_LEGACY_FIELDS,
    V03_SECURITY_SCHEME_FIELDS,
    V03_SECURITY_SCHEME_MEMBERS,
    Version,
)
from recorder.versions._tables import Dialect, RenameRule, Walker

Json = Any
Obj = dict[str, Json]
_R = RenameRule
V03_CARD_VERSION = "0.3.0"  # what a v0.3 card says when nothing tells the patch
_FLAG, _CAPABILITY = V03_CARD_EXTENDED_FLAG[0], V03_CARD_EXTENDED_FLAG[1].split(".")[1]


def read_card(w: Walker, card: Obj, path: str) -> Obj:
    legacy = {key: card.pop(key) for key in V03_CARD_LEGACY_FIELDS if key in card}
    if legacy:
        w.note(_R.CARD_FIELD, "/".join(legacy), "supportedInterfaces", path)
        card.setdefault("supportedInterfaces", _legacy_interfaces(legacy))
    if _FLAG in card:
        flag = card.pop(_FLAG)
        w.note(_R.CARD_FIELD, *V03_CARD_EXTENDED_FLAG, path)
        capabilities = dict(card.get("capabilities") or {})
        if flag:
            capabilities.setdefault(_CAPABILITY, flag)
        card["capabilities"] = capabilities
    schemes = card.get("securitySchemes")
    if isinstance(schemes, dict):
        card["securitySchemes"] = {
            name: _read_scheme(w, scheme, f"{path}.securitySchemes.{name}")
            for name, scheme in schemes.items()
        }
    _read_requirements(w, card, path)
    if isinstance(card.get("skills"), list):
        card["skills"] = [
            _read_requirements(w, dict(skill), f"{path}.skills[{i}]")
            if isinstance(skill, dict)
            else skill
            for i, skill in enumerate(card["skills"])
        ]
    return card


def _legacy_interfaces(legacy: Obj) -> list[Obj]:
    version = legacy.get("protocolVersion")
    binding = legacy.get("preferredTransport", "JSONRPC")
    found = [{"url": legacy.get("url"), "protocolBinding": binding}]
    for extra in legacy.get("additionalInterfaces") or []:
        if isinstance(extra, dict):
            entry = {"url": extra.get("url"), "protocolBinding": extra.get("transport")}
            if entry not in found:
                found.append(entry)
    return [{**entry, "protocolVersion": version} if version else entry for entry in found]


def _read_scheme(w: Walker, scheme: Json, path: str) -> Json:
    kind = scheme.get("type") if isinstance(scheme, dict) else None
    if not isinstance(kind, str) or kind not in V03_SECURITY_SCHEME_MEMBERS:
        return scheme
    member = V03_SECURITY_SCHEME_MEMBERS[kind]
    w.note(_R.CARD_FIELD, f'"type":"{kind}"', member, path)
    fields = {V03_SECURITY_SCHEME_FIELDS.get(k, k): v for k, v in scheme.items() if k != "type"}
    return {member: fields}


def _read_requirements(w: Walker, holder: Obj, path: str) -> Obj:
    legacy = holder.get("security")
    if not isinstance(legacy, list) or "securityRequirements" in holder:
        return holder
    del holder["security"]
    w.note(_R.CARD_FIELD, "security", "securityRequirements", f"{path}.security")
    holder["securityRequirements"] = [
        entry
        if not isinstance(entry, dict) or "schemes" in entry
        else {"schemes": {name: {"list": scopes} for name, scopes in entry.items()}}
        for entry in legacy
    ]
    return holder


def write_card(w: Walker, card: Obj, target: Dialect, path: str) -> Obj:
    out = {k: v for k, v in card.items() if k != "supportedInterfaces"}
    interfaces = entries(card, Version.V0_3) or entries(card, None)
    if interfaces:
        w.note(_R.CARD_FIELD, "/".join(V03_CARD_LEGACY_FIELDS), "supportedInterfaces", path)
        out = {**_legacy_fields(w, interfaces, path), **out}
    capabilities = out.get("capabilities")
    if isinstance(capabilities, dict) and _CAPABILITY in capabilities:
        out["capabilities"] = {k: v for k, v in capabilities.items() if k != _CAPABILITY}
        out[_FLAG] = capabilities[_CAPABILITY]
        w.note(_R.CARD_FIELD, *V03_CARD_EXTENDED_FLAG, path)
    _write_security(w, out, target, path)
    return out


def entries(card: Obj, version: Version | None) -> list[Obj]:
    """The card's interface entries of `version` (None: all), one per URL and binding."""
    found: dict[tuple[str, str], Obj] = {}
    for entry in card.get("supportedInterfaces") or []:
        if not isinstance(entry, dict):
            continue
        said = str(entry.get("protocolVersion") or "")
        if version is None or said.startswith(version):
            key = (str(entry.get("url")), str(entry.get("protocolBinding")))
            found.setdefault(key, entry)
    return list(found.values())


def _legacy_fields(w: Walker, interfaces: list[Obj], path: str) -> Obj:
    first = interfaces[0]
    for i, entry in enumerate(interfaces):
        if entry.get("tenant"):
            where = f"{path}.supportedInterfaces[{i}].tenant"
            w.lose_value(entry["tenant"], where, "a v0.3 interface has no tenant")
    said = str(first.get("protocolVersion") or "")
    return {
        "protocolVersion": said if said.startswith(Version.V0_3) else V03_CARD_VERSION,
        "url": first.get("url"),
        "preferredTransport": first.get("protocolBinding"),
        "additionalInterfaces": [
            {"url": e.get("url"), "transport": e.get("protocolBinding")} for e in interfaces
        ],
    }


def _write_security(w: Walker, card: Obj, target: Dialect, path: str) -> None:
    schemes = card.get("securitySchemes")
    if target is Dialect.V03 and isinstance(schemes, dict):
        card["securitySchemes"] = {
            name: _write_scheme(w, scheme, f"{path}.securitySchemes.{name}")
            for name, scheme in schemes.items()
        }
    _write_requirements(w, card, target, path)
    if isinstance(card.get("skills"), list):
        card["skills"] = [
            _write_requirements(w, dict(s), target, f"{path}.skills[{i}]")
            if isinstance(s, dict)
            else s
            for i, s in enumerate(card["skills"])
        ]


def _write_scheme(w: Walker, scheme: Json, path: str) -> Json:
    members = {v: k for k, v in V03_SECURITY_SCHEME_MEMBERS.items()}
    found = [k for k in scheme if k in members] if isinstance(scheme, dict) else []
    if len(found) != 1 or not isinstance(scheme[found[0]], dict):
        return scheme
    w.note(_R.CARD_FIELD, f'"type":"{members[found[0]]}"', found[0], path)
    back = {new: old for old, new in V03_SECURITY_SCHEME_FIELDS.items()}
    fields = {back.get(k, k): v for k, v in scheme[found[0]].items()}
    return {"type": members[found[0]], **fields}


def _write_requirements(w: Walker, holder: Obj, target: Dialect, path: str) -> Obj:
    entries = holder.pop("securityRequirements", None)
    if not isinstance(entries, list):
        return holder
    w.note(_R.CARD_FIELD, "security", "securityRequirements", f"{path}.securityRequirements")
    if target is Dialect.V03_PROTO:  # the v0.3 proto's Security is v1.0's shape
        holder["security"] = entries
        return holder
    holder["security"] = [
        {name: scopes.get("list", []) for name, scopes in entry["schemes"].items()}
        if isinstance(entry, dict) and isinstance(entry.get("schemes"), dict)
        else entry
        for entry in entries
    ]
    return holder
