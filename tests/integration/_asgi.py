"""Serve an ASGI app with uvicorn on a bound socket, for the tests' tiny agents.

The replayer has its own HTTP face; uvicorn is the demo agent's (the demo extra) and these
helpers', nobody else's.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from typing import Any

import uvicorn


async def serve_asgi(
    app: Any, sock: socket.socket, ready: Callable[[], None], stop: asyncio.Event
) -> None:
    """Serve `app` on `sock` until `stop` is set; `ready()` once uvicorn listens."""
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="off",
        access_log=False,
        proxy_headers=False,
        server_header=False,
        date_header=False,
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            await task
            raise RuntimeError("uvicorn stopped while starting")
        await asyncio.sleep(0.01)
    ready()
    await stop.wait()
    server.should_exit = True
    await task
    sock.close()
