"""The soak benchmark's app (`bench/soak.py`): a quick tool, an elicitation tool and a task-capable tool."""

from __future__ import annotations

import asyncio

from lambda_mcp import Context, MCPApp

app = MCPApp("soak", version="1.0.0")
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@app.tool()
def echo(text: str) -> str:
    """Return `text` unchanged (the plain calls)."""
    return text


@app.tool()
async def ask_name(ctx: Context) -> str:
    """Ask the user for a name (one elicitation round trip), then greet it."""
    answer = await ctx.elicit("Your name?", NAME_SCHEMA, key="name")
    name = (answer.get("content") or {}).get("name")
    return f"{answer.get('action')}:{name}"


@app.tool(task_support="optional")
async def work(ctx: Context, seconds: float = 0.5, label: str = "") -> str:
    """Work for `seconds` (checking for cancellation every 50 ms); a task when the client asks for one."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max(0.0, seconds)
    while loop.time() < deadline:
        ctx.check_cancelled()
        await asyncio.sleep(min(0.05, max(0.0, deadline - loop.time())))
    return f"worked {label}"
