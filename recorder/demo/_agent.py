"""The bundled demo A2A agent: a real a2a-sdk 1.3.0 server on every binding, v0.3 compat on.

One ``DefaultRequestHandler`` (in-memory stores, the SDK's push sender, so pushes really POST)
serves JSON-RPC at ``/a2a/jsonrpc`` and ``/a2a/jsonrpc/`` (Starlette routes are exact; the TCK
posts to ``<url>/``), HTTP+JSON under a ``Mount`` (the SDK mounts ``/{tenant}`` outside a
``path_prefix``), and gRPC with the v1.0 and v0.3 services on one server.  The A2A errors come
from the SDK itself.  Ports are bound before the card is built, so it names the real ones.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Self

# a2a-sdk 1.3.0 quirk: importing the v0.3 gRPC handler before `a2a.client` leaves the client
# factory without its v0.3 gRPC transport, so the client is imported first, on purpose.
import a2a.client  # noqa: F401
import grpc
import httpx
import uvicorn
from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc
from a2a.compat.v0_3.grpc_handler import CompatGrpcHandler
from a2a.server.agent_execution import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
)
from a2a.types import a2a_pb2_grpc
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    APIKeySecurityScheme,
    SecurityScheme,
)
from starlette.applications import Starlette
from starlette.routing import BaseRoute, Mount

from recorder._background import GRPC_SERVER_OPTIONS, BackgroundLoop, Service, bind_socket
from recorder._errors import StartError, StateError
from recorder.demo._executor import COMMANDS, DEFAULT_EVENT_DELAY, DemoExecutor, QueryKeeper

DEFAULT_NAME = "a2a-recorder demo agent"
JSONRPC_PATH = "/a2a/jsonrpc"
REST_PATH = "/a2a/rest"
CARD_PATH = "/.well-known/agent-card.json"
_BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC")
_VERSIONS = ("1.0", "0.3")


def _interface_urls(host: str, http_port: int, grpc_port: int | None) -> dict[str, str]:
    urls = {
        "JSONRPC": f"http://{host}:{http_port}{JSONRPC_PATH}",
        "HTTP+JSON": f"http://{host}:{http_port}{REST_PATH}",
    }
    if grpc_port is not None:
        urls["GRPC"] = f"{host}:{grpc_port}"
    return urls


def build_agent_card(
    host: str,
    http_port: int,
    grpc_port: int | None,
    api_key_query: str | None = None,
    api_key_headers: tuple[str, ...] = (),
    name: str = DEFAULT_NAME,
    skills: tuple[str, ...] | None = None,
) -> AgentCard:
    """The public card: every binding in v1.0 then v0.3, streaming, push, extended card; the
    API keys it declares (any value is accepted) show what the recorder does with them."""
    urls = _interface_urls(host, http_port, grpc_port)
    interfaces = [
        AgentInterface(url=urls[b], protocol_binding=b, protocol_version=v)
        for v in _VERSIONS
        for b in _BINDINGS
        if b in urls
    ]
    listed = [
        AgentSkill(id=command, name=command, description=desc, tags=["demo"])
        for command, (_, desc) in COMMANDS.items()
        if skills is None or command in skills
    ]
    return AgentCard(
        name=name,
        description="Deterministic demo agent for a2a-recorder",
        version="1.0.0",
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(
            streaming=True, push_notifications=True, extended_agent_card=True
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=listed,
        security_schemes=_api_key_schemes(api_key_query, api_key_headers),
    )


def _api_key_schemes(
    query_name: str | None, header_names: tuple[str, ...]
) -> dict[str, SecurityScheme]:
    places = [("query", query_name)] if query_name else []
    places += [("header", name) for name in header_names]
    schemes = {}
    for index, (location, name) in enumerate(places):
        key = APIKeySecurityScheme(
            location=location, name=name, description="demo API key (any value is accepted)"
        )
        schemes["apiKey" if index == 0 else f"apiKey{index + 1}"] = SecurityScheme(
            api_key_security_scheme=key
        )
    return schemes


def build_extended_card(card: AgentCard) -> AgentCard:
    """The public card plus one extra skill, so a client can tell them apart."""
    extended = AgentCard()
    extended.CopyFrom(card)
    extended.description = card.description + " (extended card)"
    extended.skills.append(
        AgentSkill(
            id="extended",
            name="extended",
            description="only listed on the extended card",
            tags=["demo", "extended"],
        )
    )
    return extended


def _http_routes(
    handler: DefaultRequestHandler, card: AgentCard, cache_control: str | None
) -> list[BaseRoute]:
    routes: list[BaseRoute] = list(
        create_agent_card_routes(card, card_url=CARD_PATH, cache_control=cache_control)
    )
    for path in (JSONRPC_PATH, JSONRPC_PATH + "/"):
        routes += create_jsonrpc_routes(handler, rpc_url=path, enable_v0_3_compat=True)
    routes.append(Mount(REST_PATH, routes=create_rest_routes(handler, enable_v0_3_compat=True)))
    return routes


class _Servers:
    """The running pieces inside the agent's loop; built and torn down there."""

    def __init__(self, agent: DemoAgent) -> None:
        host = agent.host
        self.sock = bind_socket(host, agent.requested_http_port)
        self.http_port = int(self.sock.getsockname()[1])
        self.grpc: grpc.aio.Server | None = (
            grpc.aio.server(options=GRPC_SERVER_OPTIONS) if agent.enable_grpc else None
        )
        self.grpc_port: int | None = None
        if self.grpc is not None:
            self.grpc_port = int(self.grpc.add_insecure_port(f"{host}:{agent.requested_grpc_port}"))
            if not self.grpc_port:  # older grpcio signals a failed bind with 0
                raise OSError(f"cannot bind gRPC port {host}:{agent.requested_grpc_port}")
        event_delay = agent.event_delay
        self.card = build_agent_card(
            host,
            self.http_port,
            self.grpc_port,
            agent.api_key_query,
            agent.api_key_headers,
            agent.name,
            agent.skills,
        )
        # An explicit proxy wins over HTTP_PROXY/NO_PROXY from the environment.
        self.push_client = httpx.AsyncClient(timeout=10.0, proxy=agent.push_proxy)
        push_store = InMemoryPushNotificationConfigStore()
        self.handler = DefaultRequestHandler(
            agent_executor=agent.executor
            or DemoExecutor(
                event_delay,
                agent.artifact_names,
                agent.extra_status,
                noise_seed=agent.noise_seed,
                skills=agent.skills,
            ),
            task_store=InMemoryTaskStore(),
            agent_card=self.card,
            push_config_store=push_store,
            push_sender=BasePushNotificationSender(
                self.push_client, push_store, **agent.push_sender_options
            ),
            extended_agent_card=build_extended_card(self.card),
        )
        app = QueryKeeper(
            Starlette(routes=_http_routes(self.handler, self.card, agent.card_cache_control))
        )
        self.uvicorn = uvicorn.Server(
            uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1)
        )
        self._serve_task: asyncio.Task[None] | None = None

    async def start(self, timeout: float) -> None:
        if self.grpc is not None:
            # /lf.a2a.v1.A2AService/* and the v0.3 /a2a.v1.A2AService/* on one server.
            a2a_pb2_grpc.add_A2AServiceServicer_to_server(  # type: ignore[no-untyped-call]
                GrpcHandler(self.handler), self.grpc
            )
            a2a_v0_3_pb2_grpc.add_A2AServiceServicer_to_server(  # type: ignore[no-untyped-call]
                CompatGrpcHandler(self.handler), self.grpc
            )
            await self.grpc.start()
        self._serve_task = asyncio.create_task(self.uvicorn.serve(sockets=[self.sock]))
        async with asyncio.timeout(timeout):
            while not self.uvicorn.started:
                if self._serve_task.done():
                    self._serve_task.result()  # surfaces the start-up error
                    raise StartError("demo agent HTTP server exited during start-up")
                await asyncio.sleep(0.01)

    async def stop(self) -> None:
        self.uvicorn.should_exit = True
        if self._serve_task is not None:
            await asyncio.wait([self._serve_task], timeout=5)
        if self.grpc is not None:
            await self.grpc.stop(grace=0.5)
        await self.handler.aclose()
        await self.push_client.aclose()
        self.sock.close()


class DemoAgent(Service):
    """The demo agent on 127.0.0.1, free ports unless pinned, in a thread with its own loop; a
    context manager, sync or async.  The ``*_url`` properties carry the real ports
    (``StateError`` while it is not running)."""

    def __init__(
        self,
        *,
        event_delay: float = DEFAULT_EVENT_DELAY,
        enable_grpc: bool = True,
        host: str = "127.0.0.1",
        http_port: int = 0,
        grpc_port: int = 0,
        startup_timeout: float = 10.0,
        push_proxy: str | None = None,  # push deliveries through this HTTP proxy
        api_key_query: str | None = None,
        card_cache_control: str | None = None,
        api_key_headers: tuple[str, ...] = (),
        artifact_names: Mapping[str, str] | None = None,
        extra_status: bool = False,  # `slow N` sends one working status more
        push_url_validator: Callable[[str], Awaitable[bool]] | None = None,
        noise_seed: int | None = None,  # words sampled into each artifact, as an LLM would
        name: str = DEFAULT_NAME,
        skills: tuple[str, ...] | None = None,  # the only commands it lists and runs
        executor: AgentExecutor | None = None,  # in place of the demo's commands
    ) -> None:
        self.name = name
        self.executor = executor
        self.skills = skills
        self.noise_seed = noise_seed
        self.event_delay = event_delay
        # a2a-sdk's sender skips webhooks this refuses (its `validate_push_notification_url`
        # refuses loopback and private addresses); given only when set, for older a2a-sdk.
        self.push_sender_options: dict[str, Any] = (
            {"push_url_validator": push_url_validator} if push_url_validator else {}
        )
        self.artifact_names = dict(artifact_names or {})
        self.extra_status = extra_status
        self.card_cache_control = card_cache_control
        self.api_key_headers = api_key_headers
        self.push_proxy = push_proxy
        self.api_key_query = api_key_query
        self.enable_grpc = enable_grpc
        self.host = host
        self.requested_http_port = http_port  # 0: a free port
        self.requested_grpc_port = grpc_port
        self.startup_timeout = startup_timeout
        self._runner: BackgroundLoop | None = None
        self._servers: _Servers | None = None

    def _running(self) -> _Servers:
        if self._servers is None:
            raise StateError("DemoAgent is not running; call start() first")
        return self._servers

    @property
    def http_port(self) -> int:
        return self._running().http_port

    @property
    def grpc_port(self) -> int | None:
        return self._running().grpc_port

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.http_port}"

    @property
    def card_url(self) -> str:
        return self.base_url + CARD_PATH

    @property
    def jsonrpc_url(self) -> str:
        return self.base_url + JSONRPC_PATH

    @property
    def rest_url(self) -> str:
        return self.base_url + REST_PATH

    @property
    def grpc_target(self) -> str | None:
        port = self.grpc_port
        return None if port is None else f"{self.host}:{port}"

    @property
    def card(self) -> AgentCard:
        return self._running().card

    def start(self) -> Self:
        if self._runner is not None:
            raise StateError("DemoAgent already started")
        self._runner = BackgroundLoop(self._main, name="demo-agent")
        try:
            self._runner.start(self.startup_timeout + 5)
        except StartError:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self._runner is not None:
            self._runner.stop()
        self._runner = None
        self._servers = None

    async def _main(self, ready: Callable[[], None], stop: asyncio.Event) -> None:
        servers = _Servers(self)
        try:
            await servers.start(self.startup_timeout)
            self._servers = servers
            ready()
            await stop.wait()
        finally:
            await servers.stop()

    async def __aenter__(self) -> Self:
        return await asyncio.to_thread(self.start)

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.stop)

    def __repr__(self) -> str:
        state = f"base_url={self.base_url!r}" if self._servers else "stopped"
        return f"<DemoAgent {state}>"
