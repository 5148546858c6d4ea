"""Card rewrite: interface URLs move to the proxy; everything else stays byte-identical."""

from __future__ import annotations

import json

import pytest

from recorder.protocol._cardrewrite import origin_of, rewrite_card, rewrite_url

UP = "http://127.0.0.1:9999"
PROXY = "http://127.0.0.1:7777"

V1_CARD = {
    "name": "demo",
    "provider": {"url": "http://127.0.0.1:9999/about", "organization": "x"},
    "supportedInterfaces": [
        {
            "url": "http://127.0.0.1:9999/a2a/jsonrpc",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        },
        {
            "url": "http://localhost:9999/a2a/rest",
            "protocolBinding": "HTTP+JSON",
            "tenant": "t1",
            "protocolVersion": "1.0",
        },
        {"url": "127.0.0.1:50051", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
        {"url": "http://elsewhere.example:9999/x", "protocolBinding": "JSONRPC"},
    ],
}

V03_CARD = {
    "name": "legacy",
    "url": "http://127.0.0.1:9999/a2a/jsonrpc",
    "preferredTransport": "JSONRPC",
    "additionalInterfaces": [
        {"url": "http://127.0.0.1:9999/a2a/rest?x=1", "transport": "HTTP+JSON"},
    ],
}


def compact(doc: object) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


def test_v1_interfaces_rewritten_paths_and_tenants_kept() -> None:
    result = rewrite_card(compact(V1_CARD), UP, PROXY)
    card = json.loads(result.body)
    urls = [i["url"] for i in card["supportedInterfaces"]]
    assert urls == [
        "http://127.0.0.1:7777/a2a/jsonrpc",
        "http://127.0.0.1:7777/a2a/rest",
        "127.0.0.1:50051",
        "http://elsewhere.example:9999/x",
    ]
    assert card["supportedInterfaces"][1]["tenant"] == "t1"
    assert card["provider"]["url"] == "http://127.0.0.1:9999/about"  # not an interface
    assert result.changed and not result.signed
    assert len(result.replaced) == 2


def test_compact_style_kept_byte_for_byte_outside_urls() -> None:
    body = compact(V1_CARD)
    result = rewrite_card(body, UP, PROXY)
    expected = body.replace(b"127.0.0.1:9999/a2a", b"127.0.0.1:7777/a2a").replace(
        b"localhost:9999/a2a", b"127.0.0.1:7777/a2a"
    )
    assert result.body == expected


def test_indented_style_kept() -> None:
    body = json.dumps(V03_CARD, indent=4).encode()
    result = rewrite_card(body, UP, PROXY)
    assert result.body == body.replace(b":9999/", b":7777/")
    card = json.loads(result.body)
    assert card["url"] == "http://127.0.0.1:7777/a2a/jsonrpc"
    assert card["additionalInterfaces"][0]["url"] == "http://127.0.0.1:7777/a2a/rest?x=1"


def test_duplicate_url_elsewhere_falls_back_to_reserialising() -> None:
    card = {"url": "http://127.0.0.1:9999/a", "documentationUrl": "http://127.0.0.1:9999/a"}
    result = rewrite_card(compact(card), UP, PROXY)
    out = json.loads(result.body)
    assert out == {"url": "http://127.0.0.1:7777/a", "documentationUrl": "http://127.0.0.1:9999/a"}
    assert b" " not in result.body  # stays compact


def test_extended_card_inside_jsonrpc_result() -> None:
    body = compact({"jsonrpc": "2.0", "id": 3, "result": V03_CARD})
    result = rewrite_card(body, UP, PROXY, at=("result",))
    assert json.loads(result.body)["result"]["url"] == "http://127.0.0.1:7777/a2a/jsonrpc"
    assert json.loads(result.body)["id"] == 3


def test_signed_card_flagged() -> None:
    card = dict(V03_CARD, signatures=[{"protected": "e30", "signature": "abc"}])
    assert rewrite_card(compact(card), UP, PROXY).signed


@pytest.mark.parametrize(
    "body", [b"", b"not json", b"[1,2]", b'{"jsonrpc":"2.0","error":{"code":-1}}', b"\xff\xfe"]
)
def test_bad_input_unchanged(body: bytes) -> None:
    result = rewrite_card(body, UP, PROXY, at=("result",))
    assert result.body == body and not result.changed


def test_nothing_to_rewrite_keeps_bytes() -> None:
    body = compact({"url": "http://other:1/x"})
    assert rewrite_card(body, UP, PROXY).body == body


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://LOCALHOST:9999/p", "http://127.0.0.1:7777/p"),
        ("http://[::1]:9999/p", "http://127.0.0.1:7777/p"),
        ("https://127.0.0.1:9999/p", None),
        ("http://127.0.0.1/p", None),
        ("http://127.0.0.1:notaport/p", None),
        ("grpc://127.0.0.1:9999", None),
    ],
)
def test_rewrite_url(url: str, expected: str | None) -> None:
    assert rewrite_url(url, UP, PROXY) == expected


def test_origin_default_ports() -> None:
    assert origin_of("https://example.com/x") == ("https", "example.com", 443)
    assert origin_of("http://example.com") == ("http", "example.com", 80)
    assert origin_of("mailto:x") is None
