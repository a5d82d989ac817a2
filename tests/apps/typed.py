"""Tools only (no resources, no prompts), with parameters of every JSON type, for `lambda-mcp call URL TOOL
key=value` and `lambda-mcp list`; and a tool that reports progress and logs, then keeps working."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

from lambda_mcp import Context, MCPApp

app = MCPApp("typed", version="1.0.0")


@app.tool()
def search(
    query: str,
    limit: int = 10,
    exact: bool = False,
    score: float = 0.5,
    tags: list[str] | None = None,
    order: Literal["asc", "desc"] = "asc",
    filters: dict[str, Any] | None = None,
) -> str:
    """Echo the arguments as JSON, with their Python types."""
    given = {"query": query, "limit": limit, "exact": exact, "score": score, "tags": tags, "order": order}
    given["filters"] = filters
    return json.dumps({name: [value, type(value).__name__] for name, value in given.items()})


@app.tool()
async def steps(ctx: Context, seconds: float = 3.0) -> str:
    """Report progress and log at once, then work for `seconds`."""
    await ctx.report_progress(1, 2, "first half")
    await ctx.info("halfway there")
    await ctx.debug("a detail")
    await asyncio.sleep(seconds)
    await ctx.report_progress(2, 2)
    return "all done"
