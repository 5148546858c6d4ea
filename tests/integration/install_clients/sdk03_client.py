"""A user's tests against a2a-sdk 0.3.x, recorded once and then replayed by a2a-recorder."""

import asyncio
import uuid

import grpc
import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, TextPart


async def echo(url: str, binding: str, text: str) -> list[str]:
    async with httpx.AsyncClient(timeout=10) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        config = ClientConfig(
            streaming=False,
            supported_transports=[binding],
            grpc_channel_factory=grpc.aio.insecure_channel,
            httpx_client=http,
        )
        client = ClientFactory(config).create(card)
        message = Message(
            message_id=str(uuid.uuid4()), role=Role.user, parts=[Part(root=TextPart(text=text))]
        )
        try:
            events = [e async for e in client.send_message(message)]
        finally:
            await client.close()
    task = next(e[0] for e in reversed(events) if not isinstance(e, Message))
    return [p.root.text for a in task.artifacts or [] for p in a.parts]


@pytest.mark.a2a_capture("captures/jsonrpc.http")
def test_jsonrpc(a2a_replay):
    assert asyncio.run(echo(a2a_replay.url, "JSONRPC", "echo hello")) == ["echo hello"]


@pytest.mark.a2a_capture("captures/rest.http")
def test_rest(a2a_replay):
    assert asyncio.run(echo(a2a_replay.url, "HTTP+JSON", "echo hello")) == ["echo hello"]


@pytest.mark.a2a_capture("captures/grpc.http")
def test_grpc(a2a_replay):
    assert asyncio.run(echo(a2a_replay.url, "GRPC", "echo hello")) == ["echo hello"]
