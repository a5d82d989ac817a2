"""A test app for the hardening tests: a handler that catches everything around an elicitation, a
two-variable resource template, a task tool, principal-scoped updates and a subscription filter."""

from __future__ import annotations

from lambda_mcp import Context, MCPApp

app = MCPApp("hardened", version="1.0.0")
NAME = {"type": "object", "properties": {"name": {"type": "string"}}}


@app.tool()
async def careless(ctx: Context) -> str:
    """Catches `Exception` around an elicitation: the kit's suspension must still get through."""
    try:
        answer = await ctx.elicit("Your name?", NAME)
    except Exception:  # noqa: BLE001 (the point of the test)
        return "swallowed"
    return f"answered {answer['action']}"


@app.tool(task_support="optional")
async def quick(label: str) -> str:
    """Returns at once (as a task when the client asks for one)."""
    return f"done {label}"


@app.tool()
async def announce(uri: str, ctx: Context, principal: str | None = None) -> str:
    """Publishes an update of `uri`, to one principal's listeners when `principal` is given."""
    await ctx.notify_resource_updated(uri, principal=principal)
    return "announced"


@app.resource("files://docs/{name}.{ext}")
def document(name: str, ext: str) -> str:
    return f"{name}|{ext}"


@app.resource("secret://{owner}/notes")
def notes(owner: str) -> str:
    return f"notes of {owner}"


@app.subscription_filter()
def only_own_secrets(uri: str, principal: str | None) -> bool:
    """`secret://<owner>/...` is for the principal whose subject is `<owner>` only (without auth, the owner
    `anyone` stands for everyone)."""
    if not uri.startswith("secret://"):
        return True
    return uri.split("/")[2] == (principal.rsplit("#", 1)[-1] if principal else "anyone")
