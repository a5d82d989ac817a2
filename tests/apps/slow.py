"""A test app with a slow, cancellable tool and a tool that announces changes."""

from __future__ import annotations

import asyncio

from lambda_mcp import Context, MCPApp

app = MCPApp("slow", version="1.0.0")


@app.tool()
async def slow(ctx: Context) -> str:
    """Report progress every 50 ms for 10 s, unless cancelled."""
    for step in range(200):
        ctx.check_cancelled()
        await ctx.report_progress(step + 1, 200)
        await asyncio.sleep(0.05)
    return "finished"


@app.tool()
async def touch(uri: str, ctx: Context) -> str:
    """Announce that `uri` changed and that the tool list changed."""
    await ctx.notify_resource_updated(uri)
    await ctx.notify_list_changed("tools")
    return "announced"


@app.resource("test://watched")
def watched() -> str:
    return "watched"
