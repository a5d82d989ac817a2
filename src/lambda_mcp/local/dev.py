"""Run an app under uvicorn with in-memory state and streaming responses (the embedded default), logging
one line per request."""

from __future__ import annotations

import socket
import sys
from typing import TYPE_CHECKING, Any

from ..config import Settings
from ..kit import build_kit
from ..loader import load_app
from ..observe.invocation import Invocation, invocation

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send


def serve(target: str, host: str, port: int) -> None:
    import uvicorn

    settings = Settings.from_env(default_auth="none")
    kit = build_kit(load_app(target), settings, streaming=True, local=True)
    sock = listen(host, port)
    state = f"state in DynamoDB table {settings.table_name}" if settings.table_name else "in-memory state"
    url = f"http://{host}:{port}/mcp"
    print(f"lambda-mcp dev: serving {kit.app.name} on {url} ({state}, streaming, auth {settings.auth})", flush=True)
    config = uvicorn.Config(logged(kit.asgi()), host=host, port=port, log_level="warning", timeout_graceful_shutdown=1)
    try:
        uvicorn.Server(config).run(sockets=[sock])  # stops on SIGINT and SIGTERM, then raises them again
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to `host:port` and listening; an `OSError` whose message says which address and
    what to do when it cannot be."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise cannot_listen(exc, host, port) from exc
    return sock


def cannot_listen(exc: OSError, host: str, port: int) -> OSError:
    """The bind failure `exc` restated: the address, the reason, and the fix."""
    return OSError(exc.errno, f"cannot listen on {host}:{port}: {exc.strerror}; stop what uses it or choose --port")


def logged(app: ASGIApp) -> ASGIApp:
    """`app`, writing one line per HTTP request to stderr: method, path, status, MCP method, tool, time."""

    async def logging_app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        status = 0

        async def sending(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        with invocation(None) as record:
            try:
                await app(scope, receive, sending)
            finally:
                print(request_line(scope["method"], scope["path"], status, record), file=sys.stderr, flush=True)

    return logging_app


def request_line(method: str, path: str, status: int, record: Invocation) -> str:
    mcp = " ".join(str(record.fields[k]) for k in ("mcp_method", "tool_name") if record.fields.get(k))
    return f"{method} {path} {status or '-'}{' ' + mcp if mcp else ''} {record.elapsed_ms():.0f} ms"
