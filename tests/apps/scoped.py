"""A test app whose tools, resources and prompts need OAuth scopes, and that shows who called (and with
which token claims)."""

from __future__ import annotations

import json
from typing import Annotated

from pydantic import Field

from lambda_mcp import Context, MCPApp

app = MCPApp("scoped", version="1.0.0")


def _caller(ctx: Context) -> str:
    return json.dumps({"principal": ctx.principal, "scopes": sorted(ctx.scopes)})


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


@app.resource("inventory://items/{sku}", scopes=["inventory:read"], mime_type="application/json")
def item(sku: str) -> str:
    """One item of the stock (needs inventory:read)."""
    return json.dumps({"sku": sku})


@app.completion()
def complete(ref: dict[str, str], argument: dict[str, str], context: dict[str, str], ctx: Context) -> list[str]:
    """Suggestions naming who asked (the handler sees the caller like any other)."""
    return [f"{ctx.principal}:{','.join(sorted(ctx.scopes or ()))}"]


@app.tool(scopes=["admin"])
async def rotate(ctx: Context) -> str:
    """A privileged tool that asks the user first (needs admin)."""
    answer = await ctx.elicit("Rotate the keys?", {"type": "object", "properties": {}})
    return f"rotated for {ctx.principal} ({answer.get('action')})"


@app.tool(task_support="optional")
async def survey(ctx: Context) -> str:
    """A task that asks four questions."""
    answers = []
    for round_ in range(4):
        schema = {"type": "object", "properties": {"text": {"type": "string"}}}
        answer = await ctx.elicit(f"Question {round_}?", schema, key=f"q{round_}")
        answers.append(str((answer.get("content") or {}).get("text", ""))[:10])
    return "/".join(answers)


@app.tool(task_support="optional")
async def claims(ctx: Context, ask: bool = False) -> str:
    """The caller's `sub`, `email` and `groups` token claims (after asking the user, with `ask`), and
    whether the tool could change them."""
    if ask:
        await ctx.elicit("Show your claims?", {"type": "object", "properties": {}})
    try:
        ctx.claims["groups"] = ["admins"]  # type: ignore[index]
        changed = True
    except TypeError:
        changed = False
    shown = {key: ctx.claims[key] for key in ("sub", "email", "groups") if key in ctx.claims}
    return json.dumps({"claims": shown, "changed": changed})


@app.tool()
def shard(count: Annotated[int, Field(json_schema_extra={"x-mcp-header": "Count"})]) -> str:
    """Routes on a number, mirrored in the Mcp-Param-Count header."""
    return str(count)
