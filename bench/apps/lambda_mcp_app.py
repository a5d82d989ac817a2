"""The benchmark's one-tool app on lambda-mcp, loaded via `LAMBDA_MCP_APP`."""

from __future__ import annotations

from lambda_mcp import MCPApp

app = MCPApp("bench", version="1.0.0")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
