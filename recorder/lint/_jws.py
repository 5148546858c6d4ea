"""Agent card signatures: the canonical card (RFC 8785 JCS) and JWS verification (RFC 7515).

Spec §8.4: a signature covers the card without `signatures` and without default values,
canonicalized with JCS.  Defaults come from the proto (§8.4.1): a REQUIRED field or one with
explicit presence stays whatever its value; unknown keys are kept.  Both 1.3.0 SDKs sign
something else (`sdk_payload`), so a finding can say which a signature covers.  Nothing here
raises on junk: a bad key or signature "does not verify".
"""

from __future__ import annotations

import binascii
import hashlib
import hmac
import json
import math
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from recorder.lint._b64url import b64url, b64url_decode
from recorder.lint._schema import descriptor, fields_by_key, is_repeated, required_fields

CARD_TYPE = "lf.a2a.v1.AgentCard"


# ---- RFC 8785 canonical JSON ----


def canonical_json(value: Any) -> str:
    """JCS: sorted keys (by UTF-16 code units), no whitespace, ECMAScript number forms."""
    if isinstance(value, Mapping):
        keys = sorted(value, key=lambda k: str(k).encode("utf-16-be", "surrogatepass"))
        inner = ",".join(f"{_string(str(k))}:{canonical_json(value[k])}" for k in keys)
        return "{" + inner + "}"
    if isinstance(value, list):
        return "[" + ",".join(canonical_json(item) for item in value) + "]"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return _number(value)
    return _string(str(value))


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _number(value: int | float) -> str:
    """ECMAScript Number::toString (ECMA-262 §6.1.6.1.20), which JCS prescribes for numbers."""
    number = float(value)
    if not math.isfinite(number):
        raise ValueError("JSON numbers are finite")
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    # repr gives the shortest digits that round-trip, as ECMAScript asks.
    parts = Decimal(repr(abs(number))).normalize().as_tuple()
    digits = "".join(map(str, parts.digits))
    k, n = len(digits), int(parts.exponent) + len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return f"{sign}{digits[:n]}.{digits[n:]}"
    if -6 < n <= 0:
        return f"{sign}0.{'0' * -n}{digits}"
    mantissa = digits[0] + (f".{digits[1:]}" if k > 1 else "")
    return f"{sign}{mantissa}e{'+' if n > 0 else '-'}{abs(n - 1)}"


# ---- what a card signature covers ----


def spec_payload(card: Mapping[str, Any]) -> str:
    """The canonical card the spec signs (§8.4.1): defaults removed by field presence."""
    found = descriptor(CARD_TYPE)
    body = {k: v for k, v in card.items() if k != "signatures"}
    return canonical_json(_drop_defaults(body, found) if found is not None else body)


def sdk_payload(card: Mapping[str, Any]) -> str:
    """The canonical card both 1.3.0 SDKs sign: proto fields only, every empty value gone."""
    found = descriptor(CARD_TYPE)
    body = {k: v for k, v in card.items() if k != "signatures"}
    known = _known_only(body, found) if found is not None else body
    return canonical_json(_drop_empty(known) or {})


def _drop_defaults(value: Mapping[str, Any], message: Descriptor) -> dict[str, Any]:
    keys, required = fields_by_key(message), set(required_fields(message))
    kept: dict[str, Any] = {}
    for key, item in value.items():
        field = keys.get(key)
        if field is None:
            kept[key] = item
        elif field in required or field.has_presence or not _is_default(item, field):
            kept[key] = _inner(item, field, _drop_defaults)
    return kept


def _known_only(value: Mapping[str, Any], message: Descriptor) -> dict[str, Any]:
    """What a proto round trip keeps: known fields, defaults only where presence is explicit."""
    keys = fields_by_key(message)
    return {
        key: _inner(item, keys[key], _known_only)
        for key, item in value.items()
        if key in keys and (keys[key].has_presence or not _is_default(item, keys[key]))
    }


_Pass = Callable[[Mapping[str, Any], Descriptor], dict[str, Any]]


def _inner(value: Any, field: FieldDescriptor, step: _Pass) -> Any:
    message = field.message_type
    if message is None or message.full_name.startswith("google.protobuf."):
        return value
    if message.GetOptions().map_entry:
        inner = message.fields_by_name["value"].message_type
        if inner is None or not isinstance(value, Mapping):
            return value
        return {k: step(v, inner) if isinstance(v, Mapping) else v for k, v in value.items()}
    if is_repeated(field) and isinstance(value, list):
        return [step(v, message) if isinstance(v, Mapping) else v for v in value]
    return step(value, message) if isinstance(value, Mapping) else value


def _is_default(value: Any, field: FieldDescriptor) -> bool:
    if isinstance(value, bool):
        return value is False
    if value in ("", 0, [], {}):
        return True
    return field.enum_type is not None and value == field.enum_type.values[0].name


def _drop_empty(value: Any) -> Any:
    if isinstance(value, Mapping):
        kept = {k: v for k, v in ((k, _drop_empty(v)) for k, v in value.items()) if v is not None}
        return kept or None
    if isinstance(value, list):
        items = [v for v in (_drop_empty(v) for v in value) if v is not None]
        return items or None
    return None if value == "" or value is None else value


# ---- JWS ----


def protected_header(signature: Mapping[str, Any]) -> dict[str, Any] | None:
    """The decoded JWS Protected Header of a card signature, or None if it is no JSON object."""
    value = signature.get("protected")
    if not isinstance(value, str):
        return None
    try:
        header = json.loads(b64url_decode(value))
    except (ValueError, binascii.Error):
        return None
    return header if isinstance(header, dict) else None


def verifies(signature: Mapping[str, Any], payload: str, jwk: Mapping[str, Any]) -> bool:
    """Whether a card signature (`protected`, `signature`) covers `payload` under `jwk`."""
    header = protected_header(signature) or {}
    sig = signature.get("signature")
    alg = header.get("alg")
    if not isinstance(sig, str) or not isinstance(alg, str):
        return False
    signing_input = f"{signature['protected']}.{b64url(payload.encode('utf-8'))}".encode("ascii")
    try:
        return _VERIFIERS.get(alg[:2], _unknown)(alg, jwk, signing_input, b64url_decode(sig))
    except (ValueError, TypeError, KeyError, binascii.Error):
        return False


def _unknown(alg: str, jwk: Mapping[str, Any], data: bytes, sig: bytes) -> bool:
    return False


def _public_key(alg: str, jwk: Mapping[str, Any], data: bytes, sig: bytes) -> bool:
    # `cryptography` is imported only when needed: it costs `show` tens of milliseconds.
    from recorder.lint._jwskeys import verify_public

    return verify_public(alg, jwk, data, sig)


def _hmac(alg: str, jwk: Mapping[str, Any], data: bytes, sig: bytes) -> bool:
    names = {"256": hashlib.sha256, "384": hashlib.sha384, "512": hashlib.sha512}
    expected = hmac.new(b64url_decode(str(jwk["k"])), data, names[alg[2:]]).digest()
    return hmac.compare_digest(expected, sig)


_VERIFIERS: Mapping[str, Callable[[str, Mapping[str, Any], bytes, bytes], bool]] = {
    "ES": _public_key, "RS": _public_key, "PS": _public_key, "Ed": _public_key, "HS": _hmac,
}  # fmt: skip
