"""Public-key JWS verification (ES*, RS*, PS*, EdDSA) with `cryptography` (mitmproxy brings
it), imported only when needed; a signature that does not verify is False, never raises."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from recorder.lint._b64url import b64url_decode


def verify_public(alg: str, jwk: Mapping[str, Any], data: bytes, sig: bytes) -> bool:
    """Whether `sig` signs `data` under the public key `jwk`, by the JWS algorithm `alg`."""
    try:
        return _BY_FAMILY[alg[:2]](alg, jwk, data, sig)
    except InvalidSignature:
        return False


_HASHES: Mapping[str, Callable[[], hashes.HashAlgorithm]] = {
    "256": hashes.SHA256, "384": hashes.SHA384, "512": hashes.SHA512,
}  # fmt: skip
_CURVES: Mapping[str, ec.EllipticCurve] = {
    "P-256": ec.SECP256R1(), "P-384": ec.SECP384R1(), "P-521": ec.SECP521R1(),
}  # fmt: skip


def _int(jwk: Mapping[str, Any], name: str) -> int:
    return int.from_bytes(b64url_decode(str(jwk[name])), "big")


def _ec(alg: str, jwk: Mapping[str, Any], data: bytes, sig: bytes) -> bool:
    curve = _CURVES[str(jwk["crv"])]
    key = ec.EllipticCurvePublicNumbers(_int(jwk, "x"), _int(jwk, "y"), curve).public_key()
    half = len(sig) // 2
    der = encode_dss_signature(int.from_bytes(sig[:half], "big"), int.from_bytes(sig[half:], "big"))
    key.verify(der, data, ec.ECDSA(_HASHES[alg[2:]]()))
    return True


def _rsa(alg: str, jwk: Mapping[str, Any], data: bytes, sig: bytes) -> bool:
    key = rsa.RSAPublicNumbers(_int(jwk, "e"), _int(jwk, "n")).public_key()
    digest = _HASHES[alg[2:]]()
    if alg.startswith("PS"):
        pss = padding.PSS(mgf=padding.MGF1(digest), salt_length=digest.digest_size)
        key.verify(sig, data, pss, digest)
    else:
        key.verify(sig, data, padding.PKCS1v15(), digest)
    return True


def _eddsa(alg: str, jwk: Mapping[str, Any], data: bytes, sig: bytes) -> bool:
    raw = b64url_decode(str(jwk["x"]))
    curve = str(jwk.get("crv"))
    key = (
        ed25519.Ed25519PublicKey.from_public_bytes(raw)
        if curve == "Ed25519"
        else ed448.Ed448PublicKey.from_public_bytes(raw)
    )
    key.verify(sig, data)
    return True


_BY_FAMILY: Mapping[str, Callable[[str, Mapping[str, Any], bytes, bytes], bool]] = {
    "ES": _ec, "RS": _rsa, "PS": _rsa, "Ed": _eddsa,
}  # fmt: skip
