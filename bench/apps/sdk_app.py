"""The benchmark's one-tool app on the official MCP Python SDK, behind Mangum.

`MCPServer.streamable_http_app(stateless_http=True, json_response=True)` needs
its session manager's `run()` context (the Starlette lifespan) entered before
it serves anything, so Mangum runs with `lifespan="auto"`: each invocation
enters and leaves the lifespan. The first invocation works; the manager's
`run()` may be entered only once, so a second invocation raises.

Logging as deployed: `logging.basicConfig(level=INFO)` (the SDK's examples and
`MCPServer`'s own default level), a plain handler on stderr, as the Lambda
runtime's root handler would be. `BENCH_SDK_LOG_LEVEL=WARNING` keeps its
per-request INFO lines out (bench/run.py's secondary `sdk-quiet` stack).
"""

from __future__ import annotations

import logging
import os

from mangum import Mangum
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

_level = "WARNING" if os.environ.get("BENCH_SDK_LOG_LEVEL", "INFO").upper() == "WARNING" else "INFO"
# First, so that MCPServer's own basicConfig (a Rich handler) finds the root logger configured and
# leaves it: on Lambda the runtime's handler is already there.
logging.basicConfig(level=_level)
mcp = MCPServer("bench", version="1.0.0", log_level=_level)


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


# The SDK's default host check allows only localhost; allow the API Gateway
# domain the benchmark's events carry, as lambda-mcp does from the event.
_allowed = [h for h in os.environ.get("BENCH_ALLOWED_HOSTS", "").split(",") if h]
asgi_app = mcp.streamable_http_app(
    stateless_http=True,
    json_response=True,
    transport_security=TransportSecuritySettings(allowed_hosts=_allowed),
)
handler = Mangum(asgi_app, lifespan="auto")
