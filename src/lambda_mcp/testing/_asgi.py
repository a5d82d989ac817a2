"""One HTTP exchange with an ASGI app in this process: the request body in, the response's JSON-RPC
messages out as they arrive (a JSON body, or each event of an SSE stream), with no socket.

The request's `receive` blocks after the body until the exchange ends, as a connected client's would: a
streaming response that watches for a disconnect keeps streaming.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

OnMessage = Callable[[dict[str, Any]], Awaitable[None]]


class Response:
    def __init__(self) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.messages: list[dict[str, Any]] = []
        self.body = b""


async def exchange(
    app: Any, method: str, headers: dict[str, str], body: bytes, on_message: OnMessage | None = None
) -> Response:
    """Send one request to `app`; `on_message` sees each JSON-RPC message of an SSE response as it arrives
    (it may send further requests to the app: the stream is read by another task meanwhile)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    response = Response()
    chunks: asyncio.Queue[bytes | None] = asyncio.Queue()
    finished = asyncio.Event()
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await finished.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            response.status = int(message["status"])
            response.headers = {k.decode().lower(): v.decode() for k, v in message.get("headers", [])}
        elif message["type"] == "http.response.body":
            await chunks.put(message.get("body", b""))
            if not message.get("more_body", False):
                await chunks.put(None)

    async def serve() -> None:
        try:
            await app(scope, receive, send)
        finally:
            await chunks.put(None)

    server = asyncio.ensure_future(serve())
    try:
        await _read(response, chunks, on_message)
    finally:
        finished.set()
        await server
    return response


async def _read(response: Response, chunks: asyncio.Queue[bytes | None], on_message: OnMessage | None) -> None:
    buffer = b""
    while (chunk := await chunks.get()) is not None:
        response.body += chunk
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            continue
        buffer += chunk.replace(b"\r\n", b"\n")
        while b"\n\n" in buffer:
            event, buffer = buffer.split(b"\n\n", 1)
            data = "\n".join(
                line[5:].removeprefix(" ") for line in event.decode().split("\n") if line.startswith("data:")
            )
            if data:
                message = json.loads(data)
                response.messages.append(message)
                if on_message is not None:
                    await on_message(message)
    if response.body and response.headers.get("content-type", "").startswith("application/json"):
        response.messages.append(json.loads(response.body))


def require_asyncio() -> None:
    """The kit runs on asyncio (as Lambda and uvicorn run it): say so, rather than fail deep inside, when
    a test runs on another event loop (anyio's pytest plugin also runs trio when it is installed)."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(
            "lambda_mcp.testing.Client runs on asyncio: with anyio's pytest plugin, add to conftest.py a fixture"
            " `anyio_backend` that returns 'asyncio' (lambda-mcp new's tests/conftest.py has one)"
        ) from None
