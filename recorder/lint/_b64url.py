"""base64url without padding (RFC 7515 §2), as JWS writes it: for `_jws` and `_jwskeys`."""

from __future__ import annotations

import base64


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")
