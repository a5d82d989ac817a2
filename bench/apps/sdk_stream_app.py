"""The benchmark's one-tool app on the official MCP Python SDK as its own Streamable HTTP server, for
uvicorn behind the Lambda Web Adapter (bench/serve_cold.py), written as a user would write it:

    exec python -m uvicorn --port "$PORT" sdk_stream_app:app     # the function's run.sh

Stateless, as Lambda needs (an instance holds no session another invocation could reach); otherwise
the SDK's defaults: SSE responses, its own logging set-up (`MCPServer`'s, at INFO), its default Host
check (loopback, where LWA connects), uvicorn's default logging and access log.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("bench", version="1.0.0")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


app = mcp.streamable_http_app(stateless_http=True)
