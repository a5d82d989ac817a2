"""Run an app under uvicorn with in-memory state and streaming responses (the embedded default), logging
one line per request; with `LAMBDA_MCP_AUTH=proxy` and no upstream, the development sign-in (local/idp.py)
on the same port."""

from __future__ import annotations

import errno
import socket
import sys
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl

from ..config import ConfigError, Settings
from ..kit import build_kit
from ..loader import AppLoadError, load_app
from ..observe.invocation import Invocation, invocation
from .requestlog import log_request
from .requestlog import request_line as _line

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from .idp import DevIdentityProvider


def serve(target: str, host: str, port: int, *, sockets: list[socket.socket] | None = None) -> None:
    """Serve `target` on `host:port` (on `sockets[0]` when given one: a `--reload` child) until SIGINT or
    SIGTERM."""
    import uvicorn

    from .idp import from_env
    from .signin import banner, base_url

    settings = Settings.from_env(default_auth="none")
    kit = build_kit(load_app(target), settings, streaming=True, local=True)
    sign_in = from_env(base_url(host, port))
    sock = sockets[0] if sockets else listen(host, port)
    state = f"state in DynamoDB table {settings.table_name}" if settings.table_name else "in-memory state"
    url = base_url(host, port) + "/mcp"
    print(f"lambda-mcp dev: serving {kit.app.name} on {url} ({state}, streaming, auth {settings.auth})", flush=True)
    if sign_in is not None:
        print(banner(base_url(host, port)), flush=True)
    app = kit.asgi() if sign_in is None else with_sign_in(kit.asgi(), sign_in)
    config = uvicorn.Config(logged(app), log_level="warning", timeout_graceful_shutdown=1)
    try:
        uvicorn.Server(config).run(sockets=[sock])  # stops on SIGINT and SIGTERM, then raises them again
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()


def serve_reloaded(target: str, host: str, port: int, *, sockets: list[socket.socket]) -> None:
    """`serve` in a `--reload` child: a mistake in the app is one line, and the reloader waits for a change."""
    try:
        serve(target, host, port, sockets=sockets)
    except (AppLoadError, ConfigError) as exc:
        print(f"lambda-mcp dev: {exc} (waiting for a change)", file=sys.stderr, flush=True)


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to `host:port` and listening; an `OSError` whose message says which address and
    what to do when it cannot be."""
    address = host.strip("[]")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    # IPPROTO_TCP named, as getaddrinfo would: asyncio turns Nagle off (TCP_NODELAY) only on a connection whose
    # socket says so, and with Nagle on, a response written in two parts waited for the client's delayed ACK:
    # 40 ms on every request after a connection's first.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((address, port))
        sock.listen(128)
    except (OSError, OverflowError) as exc:
        sock.close()
        if isinstance(exc, OverflowError):
            raise OSError(errno.EINVAL, f"cannot listen on port {port}: --port must be 1-65535") from exc
        raise cannot_listen(exc, host, port) from exc
    return sock


def cannot_listen(exc: OSError, host: str, port: int) -> OSError:
    """The bind failure `exc` restated: the address, the reason, and the fix (the host's, or the port's)."""
    reason = exc.strerror or str(exc)
    if isinstance(exc, socket.gaierror):
        fix = f"--host {host} is not a name this machine can resolve: " + _HOSTS
    elif exc.errno == errno.EADDRNOTAVAIL:
        fix = f"{host} is not an address of this machine: " + _HOSTS
    elif exc.errno == errno.EACCES and port < 1024:
        fix = "ports below 1024 need privileges: choose a --port from 1024 up"
    elif exc.errno in (errno.EAFNOSUPPORT, errno.EPROTONOSUPPORT):
        fix = f"this machine cannot listen on {host}: " + _HOSTS
    else:
        fix = "stop what uses it or choose --port"
    return OSError(exc.errno, f"cannot listen on {host}:{port}: {reason}; {fix}")


_HOSTS = "choose another --host (127.0.0.1: this machine only; 0.0.0.0: every network interface)"


def with_sign_in(app: ASGIApp, sign_in: DevIdentityProvider) -> ASGIApp:
    """`app`, with the development sign-in's routes (`/_dev/idp/...`) in front of it."""
    from anyio import to_thread

    from .idp import MAX_BODY, Request, mounted

    async def signing_in(scope: Scope, receive: Receive, send: Send) -> None:
        path = mounted(scope["path"]) if scope["type"] == "http" else None
        if path is None:
            await app(scope, receive, send)
            return
        body = b""
        while len(body) <= MAX_BODY:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        query = dict(parse_qsl(scope["query_string"].decode("latin-1")))
        request = Request(scope["method"], path, query, headers, body[:MAX_BODY])
        reply = await to_thread.run_sync(sign_in.respond, request)
        raw = [(k.lower().encode(), v.encode()) for k, v in reply.headers]
        raw.append((b"content-length", str(len(reply.body)).encode()))
        await send({"type": "http.response.start", "status": reply.status, "headers": raw})
        await send({"type": "http.response.body", "body": reply.body})

    return signing_in


def logged(app: ASGIApp) -> ASGIApp:
    """`app`, writing one line per HTTP request to stderr: method, path, status, MCP method, tool, time."""

    async def logging_app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        status = 0

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        with invocation(None) as record:
            try:
                await app(scope, receive, sending)
            finally:
                log_request(request_line(scope["method"], scope["path"], status, record))

    return logging_app


def request_line(method: str, path: str, status: int, record: Invocation) -> str:
    return _line(method, path, status, record.fields, record.elapsed_ms())
