"""An app whose lifespan notes each entry and exit in `$LIFESPAN_LOG`, and a tool showing its state."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from typing import Any

from lambda_mcp import Context, MCPApp

app = MCPApp("lifespan-test", version="1.0.0")


def _note(line: str) -> None:
    with open(os.environ["LIFESPAN_LOG"], "a") as log:
        log.write(f"{line} {os.getpid()}\n")


@app.lifespan
async def resources(app: MCPApp) -> AsyncIterator[dict[str, Any]]:
    _note("enter")
    yield {"loop": id(asyncio.get_running_loop()), "pid": os.getpid(), "calls": 0}
    _note("exit")


@app.tool(structured_output=True)
async def where(ctx: Context) -> dict[str, Any]:
    """The lifespan's state, and whether this call runs on the loop the lifespan was entered on."""
    ctx.state["calls"] += 1
    same = ctx.state["loop"] == id(asyncio.get_running_loop())
    return {"pid": ctx.state["pid"], "calls": ctx.state["calls"], "same_loop": same}
