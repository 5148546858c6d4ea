"""Parsers of option values given as text: each returns the keyword argument's value, or raises
ValueError saying what it expected.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

MAX_PORT = 65535
DEFAULT_HOST = "127.0.0.1"
READ_TIMEOUT = 10.0  # seconds a client has to send a request: the recorder's and the replayer's
FORWARD = "forward"  # `--on-miss forward URL`: the URL is the next word
_SIZE = re.compile(r"[0-9]+[bkmgt]?")  # mitmproxy's `parse_size`: bytes, or k, m, g, t
# A gRPC upstream's scheme -> how the recorder reaches it: `tcp` (plaintext) or `tls`.
GRPC_SCHEMES: dict[str, str] = {
    "": "tcp",
    "http": "tcp",
    "grpc": "tcp",
    "tcp": "tcp",
    "https": "tls",
    "grpcs": "tls",
    "tls": "tls",
}


def parse_address(text: str) -> tuple[str, int]:
    """`HOST:PORT` (an empty host: 127.0.0.1; `[::1]:0` for IPv6) as (host, port)."""
    host, sep, port = text.rpartition(":")
    if not sep or not (port.isascii() and port.isdigit()) or int(port) > MAX_PORT:
        raise ValueError(f"expected HOST:PORT (port 0-{MAX_PORT}), got {text!r}")
    return host.strip("[]") or DEFAULT_HOST, int(port)


def show_address(address: tuple[str, int]) -> str:
    host, port = address
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def parse_url(text: str) -> str:
    """An agent's http(s) URL with a host and a valid port (returned as given)."""
    expected = f"expected http://HOST[:PORT] or https://HOST[:PORT], got {text!r}"
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a port out of range or not a number
    except ValueError as exc:
        raise ValueError(f"{expected} ({exc})") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(expected)
    return text


def parse_grpc_upstream(text: str) -> str:
    """A gRPC agent's address: `HOST:PORT`, or with a scheme (`https://` for TLS)."""
    grpc_upstream_parts(text)
    return text


def grpc_upstream_parts(text: str) -> tuple[str, int, str]:
    """`HOST:PORT`, `http://`/`grpc://` (plaintext) or `https://`/`grpcs://` (TLS) as (host, port,
    transport); ValueError for anything else."""
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "", text
    transport = GRPC_SCHEMES.get(scheme.lower())
    host, _, port_text = rest.rstrip("/").rpartition(":")
    host = host.strip("[]")
    if transport is None or not host or not _port_ok(port_text):
        raise ValueError(f"gRPC upstream must be HOST:PORT or https://HOST:PORT, not {text!r}")
    return host, int(port_text), transport


def _port_ok(text: str) -> bool:
    return text.isascii() and text.isdigit() and 0 < int(text) <= MAX_PORT


def parse_on_miss(text: str) -> str | None:
    """`error` (None), or `forward=URL`/`forward:URL`/the URL alone (the URL); `forward` alone is
    `FORWARD`, the URL being the command line's next word."""
    if text == "error":
        return None
    if text == FORWARD:
        return FORWARD
    url = text.removeprefix(FORWARD).lstrip("=:") if text.startswith(FORWARD) else text
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"expected 'error' or 'forward URL', got {text!r}")
    return parse_url(url)


def parse_timing(text: str) -> str:
    """How fast the replayer answers: `none`, `recorded`, or `xN` (N times faster)."""
    try:
        timing_speed(text)
    except ValueError:
        raise ValueError(f"expected none, recorded or xN (N > 0), got {text!r}") from None
    return text


def timing_speed(text: str) -> float:
    """A timing's speed: `none` 0, `recorded` 1, `xN` N (the gaps divided by N); else ValueError."""
    if text == "none":
        return 0.0
    if text == "recorded":
        return 1.0
    if text.startswith("x"):
        try:
            speed = float(text[1:])
        except ValueError:
            speed = -1.0
        if speed > 0:
            return speed
    raise ValueError(f"timing must be none, recorded or xN (N > 0), not {text!r}")


def parse_size(text: str) -> str:
    """A size in bytes, or with a k, m, g or t suffix (returned as given)."""
    if _SIZE.fullmatch(text) is None:
        raise ValueError(
            f"expected a number of bytes, or one with a k, m or g suffix, got {text!r}"
        )
    return text
