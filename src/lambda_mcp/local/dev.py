"""Run an app under uvicorn with in-memory state and streaming responses (the embedded default), logging
one line per request."""

from __future__ import annotations

import os
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


def dev_signing_key() -> None:
    """`LAMBDA_MCP_AUTH=proxy` without a signing key: generate one for this run (the environment passes it
    to the dev server's child processes); a deployment names a KMS key instead."""
    if os.environ.get("LAMBDA_MCP_AUTH", "").lower() != "proxy":
        return
    if os.environ.get("LAMBDA_MCP_AUTH_SIGNING_KEY") or os.environ.get("LAMBDA_MCP_AUTH_SIGNING_KEY_ID"):
        return
    from ..facade.signing import generate_pem

    os.environ["LAMBDA_MCP_AUTH_SIGNING_KEY"] = generate_pem()


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to `host:port` and listening; an `OSError` whose message says which address and
    what to do when it cannot be."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, as getaddrinfo would: asyncio turns Nagle off (TCP_NODELAY) only on a connection whose
    # socket says so, and with Nagle on, a response written in two parts waited for the client's delayed ACK:
    # 40 ms on every request after a connection's first.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
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
