"""Card signatures: RFC 8785 canonical JSON, the two canonical card forms, JWS verification."""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes, hmac
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from hypothesis import given
from hypothesis import strategies as st

from recorder.lint import canonical_json, jwks_keys, sdk_payload, spec_payload
from recorder.lint._jws import b64url, protected_header, verifies

# RFC 8785 Appendix B: IEEE 754 values (as hex) and their canonical text.
NUMBERS = [
    ("0000000000000000", "0"), ("8000000000000000", "0"), ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"), ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"), ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"), ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"), ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"), ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"), ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"), ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"), ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"), ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"), ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]  # fmt: skip


@pytest.mark.parametrize(("bits", "text"), NUMBERS)
def test_numbers_follow_ecmascript(bits: str, text: str) -> None:
    (value,) = struct.unpack(">d", bytes.fromhex(bits))
    assert canonical_json(value) == text


def test_objects_sort_by_utf16_and_strings_keep_unicode() -> None:
    # RFC 8785 §3.2.3: keys sorted by UTF-16 code units ("\U0001f600" sorts before "\ufb33").
    value = {"\ufb33": 1, "\U0001f600": 2, "b": [True, None, "\xe9\n\x01"], "a": {}}
    expected = '{"a":{},"b":[true,null,"\xe9\\n\\u0001"],"\U0001f600":2,"\ufb33":1}'
    assert canonical_json(value) == expected


@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers(-(2**53), 2**53)
        | st.text()
        | st.floats(allow_nan=False, allow_infinity=False),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
        max_leaves=20,
    )
)
def test_canonical_json_is_json_that_reads_back_equal(value: Any) -> None:
    text = canonical_json(value)
    # Compared as floats: JCS writes every number as an IEEE double, as ECMAScript does.
    assert json.loads(text, parse_int=float) == json.loads(json.dumps(value), parse_int=float)
    assert canonical_json(json.loads(text)) == text  # idempotent


CARD = {
    "name": "agent", "description": "", "version": "1",
    "supportedInterfaces": [{"url": "http://x/a", "protocolBinding": "JSONRPC",
                             "protocolVersion": "1.0", "tenant": ""}],
    "capabilities": {"streaming": False}, "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"], "skills": [], "url": "http://x/a",
    "signatures": [{"protected": "x", "signature": "y"}],
}  # fmt: skip


def test_spec_form_keeps_required_and_explicit_values_drops_defaults() -> None:
    form = json.loads(spec_payload(CARD))
    assert "signatures" not in form
    assert form["description"] == "" and form["skills"] == []  # REQUIRED stays (§8.4.1)
    assert form["capabilities"] == {"streaming": False}  # optional, explicitly set
    assert "tenant" not in form["supportedInterfaces"][0]  # a default, not REQUIRED
    assert form["url"] == "http://x/a"  # the proto does not know it: kept as served


def test_sdk_form_drops_unknown_fields_and_every_empty_value() -> None:
    form = json.loads(sdk_payload(CARD))
    assert "url" not in form and "description" not in form and "skills" not in form
    assert form["capabilities"] == {"streaming": False}


def _jws(sign: Callable[[bytes], bytes], alg: str, payload: str) -> dict[str, str]:
    protected = b64url(json.dumps({"alg": alg, "typ": "JOSE", "kid": "k"}).encode())
    data = f"{protected}.{b64url(payload.encode())}".encode()
    return {"protected": protected, "signature": b64url(sign(data))}


def _es256() -> tuple[Callable[[bytes], bytes], dict[str, Any]]:
    key = ec.generate_private_key(ec.SECP256R1())
    numbers = key.public_key().public_numbers()

    def sign(data: bytes) -> bytes:
        r, s = decode_dss_signature(key.sign(data, ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")

    jwk = {
        "kty": "EC",
        "crv": "P-256",
        "x": b64url(numbers.x.to_bytes(32, "big")),
        "y": b64url(numbers.y.to_bytes(32, "big")),
    }
    return sign, jwk


def _rsa(pss: bool) -> tuple[Callable[[bytes], bytes], dict[str, Any]]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    numbers = key.public_key().public_numbers()
    pad: padding.AsymmetricPadding = (
        padding.PSS(padding.MGF1(hashes.SHA256()), hashes.SHA256.digest_size)
        if pss
        else padding.PKCS1v15()
    )
    jwk = {
        "kty": "RSA",
        "n": b64url(numbers.n.to_bytes(256, "big")),
        "e": b64url(numbers.e.to_bytes(3, "big")),
    }
    return (lambda data: key.sign(data, pad, hashes.SHA256())), jwk


def _eddsa() -> tuple[Callable[[bytes], bytes], dict[str, Any]]:
    key = ed25519.Ed25519PrivateKey.generate()
    raw = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return key.sign, {"kty": "OKP", "crv": "Ed25519", "x": b64url(raw)}


def _hs256() -> tuple[Callable[[bytes], bytes], dict[str, Any]]:
    secret = b"a shared secret of enough length"

    def sign(data: bytes) -> bytes:
        mac = hmac.HMAC(secret, hashes.SHA256())
        mac.update(data)
        return mac.finalize()

    return sign, {"kty": "oct", "k": b64url(secret)}


KEYS = {
    "ES256": _es256,
    "RS256": lambda: _rsa(False),
    "PS256": lambda: _rsa(True),
    "EdDSA": _eddsa,
    "HS256": _hs256,
}


@pytest.mark.parametrize("alg", sorted(KEYS))
def test_each_algorithm_verifies_and_rejects_another_payload(alg: str) -> None:
    sign, jwk = KEYS[alg]()
    signature = _jws(sign, alg, spec_payload(CARD))
    assert verifies(signature, spec_payload(CARD), jwk)
    assert not verifies(signature, sdk_payload(CARD), jwk)


@pytest.mark.parametrize(
    "signature",
    [
        {},
        {"protected": 5, "signature": "x"},
        {"protected": "!!!", "signature": "x"},
        {"protected": b64url(b"[1]"), "signature": "x"},
        {"protected": b64url(b'{"alg":"none"}'), "signature": ""},
        {"protected": b64url(b'{"alg":"ES256"}'), "signature": "not base64 !"},
        {"protected": b64url(b'{"alg":"RS256"}'), "signature": "AAAA"},
    ],
)
def test_junk_signatures_do_not_verify_and_do_not_raise(signature: dict[str, Any]) -> None:
    _, jwk = _es256()
    assert not verifies(signature, "{}", jwk)
    assert not verifies(signature, "{}", {"kty": "EC", "crv": "P-999", "x": "", "y": ""})


def test_protected_header_decodes_or_gives_none() -> None:
    assert protected_header({"protected": b64url(b'{"alg":"ES256","kid":"k"}')}) == {
        "alg": "ES256",
        "kid": "k",
    }
    assert protected_header({"protected": b64url(b'"text"')}) is None


def test_jwks_keys_reads_sets_and_single_keys_by_kid() -> None:
    key = {"kty": "OKP", "crv": "Ed25519", "x": "AA", "kid": "k1"}
    assert jwks_keys({"keys": [key, {"kty": "EC"}, "junk"]}) == {"k1": key}
    assert jwks_keys(key) == {"k1": key}
    assert jwks_keys({"keys": "nope"}) == {} and jwks_keys([key]) == {}
