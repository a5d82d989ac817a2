"""A test app whose tools call another service as the user: connection `demo` (the stand-in provider of
tests/support/oauth_provider.py, at `LAMBDA_MCP_TEST_PROVIDER`), and the upstream's own token."""

from __future__ import annotations

import os

import httpx

from lambda_mcp import ConnectionDeclined, Context, MCPApp

PROVIDER = os.environ.get("LAMBDA_MCP_TEST_PROVIDER", "http://127.0.0.1:9")
app = MCPApp("connected", version="1.0.0")
app.connection(
    "demo",
    authorize_url=PROVIDER + "/authorize",
    token_url=PROVIDER + "/token",
    client_id="mcp-app",
    client_secret="demo-secret",
    scopes=["read:user", "repo"],
    authorize_params={"prompt": "consent"},
)


@app.tool()
async def my_data(ctx: Context) -> str:
    """What the demo service holds for the caller, read with the caller's own token there."""
    token = await ctx.connection("demo")
    async with httpx.AsyncClient() as http:
        answer = await http.get(PROVIDER + "/api/me", headers={"Authorization": f"Bearer {token}"})
    answer.raise_for_status()
    return str(answer.json()["data"])


@app.tool()
async def my_data_or_none(ctx: Context) -> str:
    """As my_data, going on without when the user declines."""
    try:
        await ctx.connection("demo")
    except ConnectionDeclined:
        return "declined"
    return "connected"


@app.tool(task_support="optional")
async def my_data_later(ctx: Context) -> str:
    """my_data as a task."""
    return await my_data(ctx)


@app.tool()
async def forget_demo(ctx: Context) -> str:
    """Disconnect the demo service."""
    await ctx.disconnect("demo")
    return "forgotten"


@app.tool()
async def upstream_length(ctx: Context) -> int:
    """The length of a fresh upstream access token (never the token itself)."""
    return len(await ctx.upstream_token())


@app.tool()
async def downstream_length(audience: str, ctx: Context) -> int:
    """The length of a token exchanged for `audience` (never the token itself)."""
    return len(await ctx.exchange_token(audience, ["orders:read"]))
