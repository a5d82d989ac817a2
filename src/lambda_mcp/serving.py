"""`lambda-mcp serve`: the production streaming server, the kit's streaming app under uvicorn with its
settings from the environment (as the Lambda handler reads them), for the Lambda Web Adapter (LWA) to
forward requests to (`run.sh`, the function's handler, starts it).

Behind LWA, and only there (`behind_adapter`), every request carries two headers LWA writes from the
invocation, replacing any copy a client sent: `x-amzn-request-context` (the event's `requestContext`:
the authorizer's identity for auth `gateway`, the API's domain and stage) and `x-amzn-lambda-context`
(the invocation's `deadline`, epoch ms). `FromAdapter` puts them in the ASGI scope as the buffered
handler's Mangum does (`aws.event`, `aws.context`), so auth, Host checks, URLs and stream deadlines
work as in Lambda. Anywhere else they are ordinary client headers, never read.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .env_reader import ConfigError, _Reader

if TYPE_CHECKING:
    import socket

    from starlette.types import ASGIApp, Receive, Scope, Send

DEFAULT_PORT = 8080
"""LWA's default port (`AWS_LWA_PORT`, else `PORT`, else this)."""
DEFAULT_HOST = "127.0.0.1"
"""Where LWA connects (`AWS_LWA_HOST`, else this)."""
REQUEST_CONTEXT = b"x-amzn-request-context"
LAMBDA_CONTEXT = b"x-amzn-lambda-context"
HEALTH = "/healthz"
"""The kit's health check (transport/app.py), LWA's default readiness path."""
MAX_HEADER_BYTES = 65_536
"""Request headers uvicorn accepts (its h11 default, 16 KiB, refuses big authorizer contexts)."""


def behind_adapter(environ: Mapping[str, str]) -> bool:
    """Whether this process is a Lambda function's runtime process started by LWA's wrapper: Lambda sets
    `AWS_LAMBDA_RUNTIME_API` for the runtime process and the function sets `AWS_LAMBDA_EXEC_WRAPPER`
    (`/opt/bootstrap`); no client can set either. `LAMBDA_MCP_BEHIND_ADAPTER=false` turns it off."""
    if not _Reader(environ).flag("BEHIND_ADAPTER", True):
        return False
    return bool(environ.get("AWS_LAMBDA_RUNTIME_API")) and bool(environ.get("AWS_LAMBDA_EXEC_WRAPPER"))


def own_hosts(host: str, port: int) -> tuple[str, ...]:
    """The Host headers naming the address `serve` listens on outside Lambda: a loopback address with its
    port (and `localhost`), or, when it listens on all interfaces, that address (its banner's URL) and
    every loopback name, with the port."""
    address = host.strip("[]")
    loopback = {"127.0.0.1": "127.0.0.1", "localhost": "localhost", "::1": "[::1]"}
    if address in ("0.0.0.0", "::"):
        return tuple(f"{name}:{port}" for name in (*loopback.values(), "[::]" if address == "::" else address))
    if address in loopback or address.startswith("127."):
        return tuple(dict.fromkeys([f"{loopback.get(address, address)}:{port}", f"localhost:{port}"]))
    return ()


def listen_address(host: str | None, port: int | None, environ: Mapping[str, str]) -> tuple[str, int]:
    """`--host`/`--port`, else LWA's `AWS_LWA_HOST` and `AWS_LWA_PORT` (then `PORT`), else 127.0.0.1:8080."""
    host = host or environ.get("AWS_LWA_HOST") or DEFAULT_HOST
    if port is None:
        raw = environ.get("AWS_LWA_PORT") or environ.get("PORT") or str(DEFAULT_PORT)
        if not raw.strip().isdigit() or not 0 < int(raw) < 65536:
            raise ConfigError(f"AWS_LWA_PORT or PORT must be a port number (1-65535), not {raw!r}")
        port = int(raw)
    return host, port


@dataclass(frozen=True)
class InvocationClock:
    """The Lambda context's remaining-time method, for a deadline LWA passed (`transport/deadline.py`)."""

    deadline_ms: float

    def get_remaining_time_in_millis(self) -> int:
        return int(self.deadline_ms - time.time() * 1000)


class FromAdapter:
    """ASGI middleware of `lambda-mcp serve`: the invocation's request context and deadline into the scope
    when `trusted` (behind LWA); LWA's readiness path (`readiness`) answered by the app's `/healthz`.

    The deadline is the one in `x-amzn-lambda-context`, else `function_timeout` seconds after the request
    arrived (`LAMBDA_MCP_FUNCTION_TIMEOUT`), else none (streams are bounded only by the client)."""

    def __init__(self, app: ASGIApp, *, trusted: bool, function_timeout: float | None, readiness: str) -> None:
        self.app = app
        self.trusted = trusted
        self.function_timeout = function_timeout
        self.readiness = readiness

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            if scope["path"] == self.readiness != HEALTH and scope["method"] == "GET":
                scope = {**scope, "path": HEALTH, "raw_path": HEALTH.encode()}
            scope = self.with_invocation(scope)
        await self.app(scope, receive, send)

    def with_invocation(self, scope: Scope) -> Scope:
        """`scope` with `aws.event` and `aws.context` (when there is something trusted to put there)."""
        added: dict[str, Any] = {}
        deadline_ms: float | None = None
        if self.trusted:
            context = _header_json(scope, REQUEST_CONTEXT)
            if isinstance(context, dict):
                event: dict[str, Any] = {"requestContext": context}
                if isinstance(context.get("httpMethod"), str):  # a REST API (payload 1.0) event
                    event["httpMethod"] = context["httpMethod"]
                added["aws.event"] = event
            deadline_ms = _deadline_ms(_header_json(scope, LAMBDA_CONTEXT))
        if deadline_ms is None and self.function_timeout is not None:
            deadline_ms = time.time() * 1000 + self.function_timeout * 1000
        if deadline_ms is not None:
            added["aws.context"] = InvocationClock(deadline_ms)
        return {**scope, **added} if added else scope


def _header_json(scope: Scope, name: bytes) -> object:
    """The JSON in header `name`; None when it is absent, sent more than once, or not JSON."""
    values = [value for key, value in scope.get("headers", ()) if key.lower() == name]
    if len(values) != 1:
        return None
    try:
        return json.loads(values[0])
    except ValueError:
        return None


def _deadline_ms(context: object) -> float | None:
    """The invocation's deadline in a Lambda context (lambda_runtime's `deadline`, epoch ms)."""
    if not isinstance(context, dict):
        return None
    for key in ("deadline", "deadline_ms"):
        value = context.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return float(value)
    return None


def serve(
    target: str, host: str | None = None, port: int | None = None, environ: Mapping[str, str] | None = None
) -> None:
    """Serve `target` until SIGTERM or SIGINT: settings from `LAMBDA_MCP_*` (auth must be chosen, as in
    Lambda), state where they say (DynamoDB with `LAMBDA_MCP_TABLE_NAME`, else this process's memory)."""

    from .config import Settings, require_auth_choice
    from .kit import build_kit
    from .loader import load_app
    from .local.dev import listen, logged

    env = os.environ if environ is None else environ
    require_auth_choice(env)
    settings = Settings.from_env(env)
    timeout = _Reader(env).text("FUNCTION_TIMEOUT")
    function_timeout = _Reader(env).number("FUNCTION_TIMEOUT", 0, minimum=1) if timeout else None
    host, port = listen_address(host, port, env)
    trusted = behind_adapter(env)
    if not trusted:  # its own address is its banner's URL: a Host header to allow (behind LWA: the API's domain)
        settings = replace(settings, allowed_hosts=(*own_hosts(host, port), *settings.allowed_hosts))
    kit = build_kit(load_app(target), settings, streaming=True)
    kit.access.guard  # noqa: B018 (build the auth guard now: a bad setting fails the start, not a request)
    readiness = env.get("AWS_LWA_READINESS_CHECK_PATH") or HEALTH
    app: ASGIApp = FromAdapter(kit.asgi(), trusted=trusted, function_timeout=function_timeout, readiness=readiness)
    if not trusted:  # a terminal, not CloudWatch: one readable line per request, as `lambda-mcp dev` prints
        app = logged(app)
    sock = listen(host, port)
    mode = env.get("AWS_LWA_INVOKE_MODE", "")
    if trusted and mode.lower() != "response_stream":
        print(
            f"lambda-mcp serve: AWS_LWA_INVOKE_MODE is {mode or 'unset'}: LWA buffers every response", file=sys.stderr
        )
    state = f"DynamoDB table {settings.table_name}" if settings.table_name else "in-memory state"
    where = "behind the Lambda Web Adapter" if trusted else "not behind the Lambda Web Adapter, logging requests"
    print(
        f"lambda-mcp serve: {kit.app.name} on http://{host}:{port}/mcp ({state}, auth {settings.auth}, {where})",
        file=sys.stderr,
        flush=True,
    )
    run_uvicorn(app, sock)


def run_uvicorn(app: Any, sock: socket.socket) -> None:
    """Serve `app` on the bound `sock` until SIGINT or SIGTERM (`serve`, `serve --agentcore`).

    HTTP/1.1 on h11, named rather than `auto` (which would take httptools when installed, and ignore the
    header limit), and no WebSocket protocol: the kit serves none, and `auto` imports the `websockets`
    package at start (about 15 ms of a cold start, `bench/serve_cold.py`)."""
    import uvicorn

    config = uvicorn.Config(
        app,
        http="h11",
        ws="none",
        log_level="warning",
        timeout_graceful_shutdown=1,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])  # stops on SIGINT and SIGTERM
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
