"""Apps for the mount tests. `vendor` is served by its own `lambda-mcp dev` as the remote server; `helpers`
is mounted in process; `front` serves its own tool and mounts both (`VENDOR_URL`), and a FastMCP server
too when `FASTMCP_URL` is set."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from lambda_mcp import Context, MCPApp

vendor = MCPApp("vendor", version="2.0.0")


@vendor.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@vendor.tool()
async def count_up(n: int, ctx: Context) -> str:
    """Report progress n times, then answer."""
    for step in range(1, n + 1):
        await ctx.report_progress(step, n, f"step {step}")
    return f"counted to {n}"


@vendor.tool()
async def confirm(ctx: Context) -> str:
    """Ask the user to confirm."""
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    answer = await ctx.elicit("Proceed with the vendor's change?", schema)
    return f"{answer['action']}:{(answer.get('content') or {}).get('ok')}"


@vendor.tool()
def whoami(ctx: Context) -> str:
    """The caller the vendor sees."""
    return str(ctx.principal)


REGIONAL = {
    "type": "object",
    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
    "required": ["region"],
}


@vendor.tool(input_schema=REGIONAL)
def regional(region: str) -> str:
    """A tool a 2026 gateway routes on: its argument travels in the Mcp-Param-Region header too."""
    return f"served in {region}"


@vendor.tool()
async def hold(ctx: Context) -> str:
    """Wait up to ten seconds; when the caller cancels, note it in the file VENDOR_CANCELLED_FILE names."""
    try:
        for _ in range(100):
            if ctx.cancelled:
                break
            await asyncio.sleep(0.1)
        else:
            return "held"
    except asyncio.CancelledError:  # the streaming server cancels the call's task
        _note_cancelled()
        raise
    _note_cancelled()
    return "cancelled"


def _note_cancelled() -> None:
    with open(os.environ["VENDOR_CANCELLED_FILE"], "a") as noted:
        noted.write("cancelled\n")


@vendor.resource("vendor://docs/readme", mime_type="text/plain")
def readme() -> str:
    return "The vendor's readme."


@vendor.resource("vendor://items/{item_id}", mime_type="application/json")
def item(item_id: str) -> str:
    return f'{{"id": "{item_id}"}}'


@vendor.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Say hello to {name}, from the vendor."


helpers = MCPApp("helpers")


@asynccontextmanager
async def helper_state(app: MCPApp) -> AsyncIterator[dict[str, Any]]:
    yield {"greeting": "hello from the helpers' lifespan"}


helpers.lifespan(helper_state)


@helpers.tool()
def state_says(ctx: Context) -> str:
    """What the helpers' lifespan yielded."""
    return str(ctx.state["greeting"])


@helpers.prompt()
def remind(topic: str) -> str:
    return f"Remember {topic}."


def make_front(
    vendor_url: str | None = None,
    fastmcp_url: str | None = None,
    *,
    vendor_protocol: str = "auto",
    vendor_scopes: tuple[str, ...] = (),
    page_size: int = 50,
    list_ttl: float = 60.0,
) -> MCPApp:
    """An app with its own tool `ping`, the helpers mounted in process, and the remote servers given."""
    app = MCPApp("front", page_size=page_size)

    @app.tool()
    def ping() -> str:
        return "pong"

    app.mount(helpers, prefix="helpers")
    if vendor_url:
        app.mount(vendor_url, prefix="vendor", protocol=vendor_protocol, scopes=vendor_scopes, list_ttl=list_ttl)
    if fastmcp_url:
        app.mount(fastmcp_url, prefix="fast")
    return app


front = make_front(
    os.environ.get("VENDOR_URL"),
    os.environ.get("FASTMCP_URL"),
    vendor_protocol=os.environ.get("VENDOR_PROTOCOL", "auto"),
    list_ttl=float(os.environ.get("VENDOR_LIST_TTL", "60")),
)
