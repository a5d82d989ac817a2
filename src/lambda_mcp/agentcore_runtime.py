"""`lambda-mcp serve --agentcore`: the kit as the MCP server of an Amazon Bedrock AgentCore Runtime
container, under the Runtime's MCP protocol contract (docs.aws.amazon.com/bedrock-agentcore, "MCP protocol
contract"; issue 38):

- it listens on `0.0.0.0:8000` (`--host`/`--port` override it: tests bind a free loopback port) and serves
  streamable HTTP at `/mcp`, both JSON and SSE responses, under uvicorn as `lambda-mcp serve` does;
- it is stateless: the platform mints the `Mcp-Session-Id` of every request itself (and routes by it to a
  microVM), so a 2025-11-25 request naming a session the kit never issued is served as a stateless server
  (the SDKs' `stateless_http`) serves it, not refused with 404 (`build_kit(stateless=True)`,
  `transport/inbound.py`, `stateless_session`); a 2026-07-28 request is stateless by the spec and reads no
  session header. `X-Amzn-Bedrock-AgentCore-Runtime-Session-Id` is an ordinary header the kit never refuses;
- health: `GET /ping` answers `{"status": "Healthy", "time_of_last_update": <unix s>}` (the Runtime service
  contract's shape, as the AgentCore SDK answers it); the platform's sidecar also probes `POST /mcp` from
  127.0.0.1, which the endpoint answers as any request (with `LAMBDA_MCP_AUTH=none`: AgentCore's own inbound
  auth, SigV4 or its JWT authorizer, guards the Runtime);
- Host: any, unless `LAMBDA_MCP_ALLOWED_HOSTS` names some (`runtime_hosts`);
- settings from `LAMBDA_MCP_*` as everywhere (auth must be chosen); state in DynamoDB with
  `LAMBDA_MCP_TABLE_NAME` (the platform may route a session's requests to another microVM: with tasks or
  2025-11-25 sessions opened by `initialize`, configure a table), else in this process's memory.

No environment variable documented by the Runtime says a process runs in it: the mode is chosen by flag.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

RUNTIME_HOST = "0.0.0.0"
"""The contract's address: the platform's health checks must reach the server (127.0.0.1 fails them)."""
RUNTIME_PORT = 8000
"""The contract's port for MCP servers (HTTP agents use 8080, A2A 9000)."""
PING = "/ping"
ANY_HOST = ("*",)
LOOPBACK = ("127.0.0.1:*", "localhost:*", "[::1]:*")
SESSION_HEADER = "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id"
"""The Runtime's session header, forwarded to the server with `Mcp-Session-Id`: accepted, never read."""


def runtime_hosts(configured: tuple[str, ...]) -> tuple[str, ...]:
    """The Host patterns `/mcp` accepts in the Runtime: every Host, unless `LAMBDA_MCP_ALLOWED_HOSTS` names
    some (then those and the loopback names, which the platform's sidecar probes at).

    Allowing any Host is safe here. The Host check guards a server a browser can reach against DNS
    rebinding (a page of the attacker's, its name re-pointed at the server's address). A Runtime container
    has no address anyone outside reaches: every request comes through InvokeAgentRuntime, which AgentCore
    authenticates (SigV4 or its JWT authorizer), and its sidecar, which forwards it with a Host of the
    platform's choosing (not documented: the Runtime's endpoint, `bedrock-agentcore.<region>.amazonaws.com`,
    or an internal name). The Origin check stays: a rebinding page's requests carry its Origin, which no
    `LAMBDA_MCP_ALLOWED_ORIGINS` lists, so the same image run on a laptop (`docker run -p 8000:8000`) still
    refuses them."""
    return (*configured, *LOOPBACK) if configured else ANY_HOST


class RuntimeHealth:
    """ASGI middleware: `GET /ping` answered with the Runtime contract's health document; the rest to `app`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == PING and scope["method"] in ("GET", "HEAD"):
            from starlette.responses import JSONResponse

            # "HealthyBusy" would keep the session's microVM from being reclaimed while work runs in the
            # background; the kit's tasks persist their state (DynamoDB), so it always says "Healthy".
            await JSONResponse({"status": "Healthy", "time_of_last_update": int(time.time())})(scope, receive, send)
            return
        await self.app(scope, receive, send)


def serve_runtime(
    target: str, host: str | None = None, port: int | None = None, environ: Mapping[str, str] | None = None
) -> None:
    """Serve `target` under the AgentCore Runtime contract until SIGTERM or SIGINT (the module docstring)."""

    from .config import Settings, require_auth_choice
    from .kit import build_kit
    from .loader import load_app
    from .local.dev import listen
    from .serving import run_uvicorn

    env = os.environ if environ is None else environ
    require_auth_choice(env)
    settings = Settings.from_env(env)
    settings = replace(settings, allowed_hosts=runtime_hosts(settings.allowed_hosts))
    host = host or RUNTIME_HOST
    port = RUNTIME_PORT if port is None else port
    kit = build_kit(load_app(target), settings, streaming=True, stateless=True)
    kit.access.guard  # noqa: B018 (build the auth guard now: a bad setting fails the start, not a request)
    sock = listen(host, port)
    state = f"DynamoDB table {settings.table_name}" if settings.table_name else "in-memory state"
    print(
        f"lambda-mcp serve --agentcore: {kit.app.name} on http://{host}:{port}/mcp"
        f" (AgentCore Runtime contract, stateless, {state}, auth {settings.auth}, health GET {PING})",
        file=sys.stderr,
        flush=True,
    )
    run_uvicorn(RuntimeHealth(kit.asgi()), sock)
