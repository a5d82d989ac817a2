"""A FastMCP server (the `fastmcp` package's own, served by uvicorn as its users run it) for the mount tests:
`python tests/support/fastmcp_server.py PORT` serves Streamable HTTP at http://127.0.0.1:PORT/mcp."""

from __future__ import annotations

import sys

import uvicorn
from fastmcp import Context, FastMCP

server = FastMCP("fast-vendor")


@server.tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@server.tool
async def count_up(n: int, ctx: Context) -> str:
    """Report progress n times, then answer."""
    for step in range(1, n + 1):
        await ctx.report_progress(step, n, f"fast step {step}")
    return f"fast counted to {n}"


@server.resource("fast://docs/readme", mime_type="text/plain")
def readme() -> str:
    return "FastMCP's readme."


@server.prompt
def greet(name: str) -> str:
    """Greet someone, FastMCP style."""
    return f"Say hello to {name}, from FastMCP."


if __name__ == "__main__":
    uvicorn.run(server.http_app(path="/mcp"), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
