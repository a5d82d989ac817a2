"""A test app whose tools call another service as the user: connection `demo` (the stand-in provider of
tests/support/oauth_provider.py, at `LAMBDA_MCP_TEST_PROVIDER`), and the upstream's own token."""

from __future__ import annotations

import hashlib
import json
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
async def upstream_whoami(ctx: Context) -> str:
    """Who the upstream's userinfo endpoint says a fresh upstream access token belongs to, as JSON `{"sub",
    "token"}`: `token` is the first 12 hex digits of the token's SHA-256 (never the token itself), so a caller
    can tell a kept token from a refreshed one. The upstream is the facade's (`LAMBDA_MCP_AUTH_UPSTREAM_ISSUER`)."""
    token = await ctx.upstream_token()
    issuer = os.environ["LAMBDA_MCP_AUTH_UPSTREAM_ISSUER"].rstrip("/")
    async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
        discovery = await http.get(issuer + "/.well-known/openid-configuration")
        discovery.raise_for_status()
        answer = await http.get(discovery.json()["userinfo_endpoint"], headers={"Authorization": f"Bearer {token}"})
    answer.raise_for_status()
    return json.dumps({"sub": answer.json()["sub"], "token": hashlib.sha256(token.encode()).hexdigest()[:12]})


@app.tool()
async def downstream_length(audience: str, ctx: Context) -> int:
    """The length of a token exchanged for `audience` (never the token itself)."""
    return len(await ctx.exchange_token(audience, ["orders:read"]))
