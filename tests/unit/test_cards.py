"""Reading interfaces from v1.0, v0.3 and hybrid agent cards, and from junk."""

from __future__ import annotations

from typing import Any

import pytest
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from hypothesis import given
from hypothesis import strategies as st

from recorder.protocol import Binding, Interface, Version, interfaces_from_card, parse_version

J, R, G = Binding.JSONRPC, Binding.HTTP_JSON, Binding.GRPC


def test_v1_card() -> None:
    card = {
        "name": "echo",
        "supportedInterfaces": [
            {"url": "http://h:1/a2a/jsonrpc", "protocolBinding": "JSONRPC",
             "protocolVersion": "1.0"},
            {"url": "http://h:1/a2a/rest", "protocolBinding": "HTTP+JSON",
             "protocolVersion": "1.0", "tenant": "acme"},
            {"url": "h:2", "protocolBinding": "GRPC", "protocolVersion": "1.0", "tenant": ""},
            {"url": "http://h:1/x", "protocolBinding": "urn:custom", "protocolVersion": "1.0"},
            {"url": "http://h:1/y", "protocolBinding": "WEBSOCKET", "protocolVersion": "1.0"},
        ],
    }  # fmt: skip
    assert interfaces_from_card(card) == (
        Interface("http://h:1/a2a/jsonrpc", J, Version.V1_0),
        Interface("http://h:1/a2a/rest", R, Version.V1_0, "acme"),
        Interface("h:2", G, Version.V1_0),
        # a custom binding is named by a URI (spec §5.8); a bare unknown name is no binding
        Interface("http://h:1/x", Binding.CUSTOM, Version.V1_0, uri="urn:custom"),
    )


def test_v03_card() -> None:
    card = {
        "protocolVersion": "0.3.0",
        "url": "http://h:1/",
        "preferredTransport": "JSONRPC",
        "additionalInterfaces": [
            {"url": "http://h:1/", "transport": "JSONRPC"},
            {"url": "http://h:1/rest", "transport": "HTTP+JSON"},
            {"url": "h:2", "transport": "GRPC"},
        ],
    }
    assert interfaces_from_card(card) == (
        Interface("http://h:1/", J, Version.V0_3),
        Interface("http://h:1/rest", R, Version.V0_3),
        Interface("h:2", G, Version.V0_3),
    )


def test_v03_card_without_preferred_transport_is_jsonrpc() -> None:
    assert interfaces_from_card({"url": "http://h/a2a"}) == (Interface("http://h/a2a", J),)


def test_hybrid_card_served_by_the_py_sdk() -> None:
    ifs = [
        AgentInterface(url=url, protocol_binding=binding, protocol_version=version)
        for version in ("1.0", "0.3")
        for binding, url in (
            ("JSONRPC", "http://h/a2a/jsonrpc"),
            ("HTTP+JSON", "http://h/a2a/rest"),
        )
    ]
    card = AgentCard(
        name="echo", description="d", version="1", supported_interfaces=ifs,
        capabilities=AgentCapabilities(streaming=True), default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="e", name="e", description="e", tags=["e"])],
    )  # fmt: skip
    wire = agent_card_to_dict(card)
    assert "url" in wire  # the py SDK merged the v0.3 fields in
    assert interfaces_from_card(wire) == (
        Interface("http://h/a2a/jsonrpc", J, Version.V1_0),
        Interface("http://h/a2a/rest", R, Version.V1_0),
        Interface("http://h/a2a/jsonrpc", J, Version.V0_3),
        Interface("http://h/a2a/rest", R, Version.V0_3),
    )


@pytest.mark.parametrize(
    "card",
    [
        {},
        {"supportedInterfaces": "nope"},
        {"supportedInterfaces": [None, 1, "x", {"url": 5, "protocolBinding": "JSONRPC"}]},
        {"supportedInterfaces": [{"url": "http://h", "protocolBinding": None}]},
        {"url": ["x"], "additionalInterfaces": {"url": "http://h"}},
        {"url": "", "preferredTransport": "GRPC"},
        {"additionalInterfaces": [{"transport": "GRPC"}, 3]},
    ],
)
def test_junk_gives_nothing(card: dict[str, Any]) -> None:
    assert interfaces_from_card(card) == ()


def test_not_a_mapping() -> None:
    assert interfaces_from_card([1, 2]) == ()  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1.0", Version.V1_0), ("1.0.1", Version.V1_0), ("0.3.0", Version.V0_3),
     (" 0.3 ", Version.V0_3), ("2.0", None), ("", None), (None, None), (1.0, None), ("1", None)],
)  # fmt: skip
def test_parse_version(value: object, expected: Version | None) -> None:
    assert parse_version(value) == expected


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
_keys = st.sampled_from(
    ["supportedInterfaces", "url", "preferredTransport", "additionalInterfaces", "protocolVersion",
     "protocolBinding", "transport", "tenant"]
)  # fmt: skip


@given(
    st.dictionaries(_keys | st.text(max_size=5), _json | st.lists(st.dictionaries(_keys, _json)))
)
def test_never_raises_on_a_dict(card: dict[str, Any]) -> None:
    found = interfaces_from_card(card)
    assert all(isinstance(i, Interface) and i.url for i in found)
