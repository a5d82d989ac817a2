"""A test app for `lambda-mcp serve` (issue 27): a tool that reports progress and then works for a while,
and a tool that works silently for a while (seconds given by the caller)."""

from __future__ import annotations

import asyncio

from lambda_mcp import Context, MCPApp

app = MCPApp("streamed", version="1.0.0")


@app.tool()
async def progress_then_work(ctx: Context, seconds: float = 2.0) -> str:
    """Report progress at once, then work for `seconds`."""
    await ctx.report_progress(1, 2, "started")
    await asyncio.sleep(seconds)
    return "worked"


@app.tool()
async def work_quietly(seconds: float) -> str:
    """Work for `seconds` without sending anything before the result."""
    await asyncio.sleep(seconds)
    return f"worked {seconds:g} s"
