"""A test app whose tools, resources and prompts need OAuth scopes, and that shows who called."""

from __future__ import annotations

import json

from lambda_mcp import Context, MCPApp

app = MCPApp("scoped", version="1.0.0")


def _caller(ctx: Context) -> str:
    return json.dumps({"principal": ctx.principal, "scopes": sorted(ctx.scopes) if ctx.scopes is not None else None})


@app.tool()
def whoami(ctx: Context) -> str:
    """Who is calling, and with which scopes."""
    return _caller(ctx)


@app.tool(scopes=["inventory:write"])
def restock(item: str, ctx: Context) -> str:
    """Restock an item (needs inventory:write)."""
    return f"restocked {item} for {ctx.principal}"


@app.tool(scopes=["inventory:write"], task_support="optional")
async def audit(ctx: Context) -> str:
    """A task that reports who it runs for (needs inventory:write)."""
    return _caller(ctx)


@app.resource("inventory://items", scopes=["inventory:read"], mime_type="application/json")
def items() -> str:
    """The stock (needs inventory:read)."""
    return '{"widgets": 3}'


@app.resource("inventory://public", mime_type="text/plain")
def public() -> str:
    """Opening hours (no scope)."""
    return "9-17"


@app.prompt(scopes=["inventory:read"])
def stock_report() -> str:
    """A prompt over the stock (needs inventory:read)."""
    return "Summarise the stock."
