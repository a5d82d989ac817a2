"""Tools that talk to the client mid-call (elicit, sample, roots, logs, progress) or run until cancelled."""

from __future__ import annotations

import asyncio

from lambda_mcp import ClientError, Context, MCPApp

app = MCPApp("interaction", version="1.0.0")
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}


@app.tool()
async def survey(ctx: Context) -> str:
    """Logs and reports progress around an elicitation and a sampling request."""
    await ctx.info("starting")
    await ctx.report_progress(1, 3)
    answer = await ctx.elicit("Your name?", NAME_SCHEMA, key="name")
    await ctx.info(f"elicitation: {answer['action']}")
    await ctx.report_progress(2, 3)
    sampled = await ctx.sample("Say hi", key="hi")
    await ctx.report_progress(3, 3)
    name = (answer.get("content") or {}).get("name")
    return f"{answer['action']}:{name}|{sampled.text}"


@app.tool()
async def roots(ctx: Context) -> str:
    """The client's root URIs."""
    return ",".join(root["uri"] for root in await ctx.list_roots())


@app.tool()
async def careful_sample(ctx: Context) -> str:
    """Reports a client's error answer instead of failing."""
    try:
        await ctx.sample("anything")
    except ClientError as error:
        return f"client error {error.code}: {error.message}"
    return "sampled"


@app.tool(task_support="optional")
async def until_cancelled(seconds: float, ctx: Context) -> str:
    """Works in small steps, stopping as soon as the client cancels."""
    for _ in range(int(seconds * 20)):
        await asyncio.sleep(0.05)
        ctx.check_cancelled()
    return "finished"


@app.tool(task_support="required")
async def chatty_job(ctx: Context, steps: int = 3) -> str:
    """A task that logs and reports progress at every step."""
    for step in range(1, steps + 1):
        await ctx.info(f"step {step}")
        await ctx.report_progress(step, steps)
        await asyncio.sleep(0.3)
    return f"done after {steps} steps"


@app.tool(task_support="required")
async def approval_job(ctx: Context) -> str:
    """A task that parks in input_required until the user approves (or not)."""
    await ctx.info("asking for approval")
    answer = await ctx.elicit("Approve?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="approve")
    await ctx.info(f"answer: {answer['action']}")
    return f"approved={(answer.get('content') or {}).get('ok')}"


@app.resource("test://counter", name="counter", mime_type="text/plain")
def counter() -> str:
    """A resource whose updates clients can subscribe to"""
    return "counter"


@app.tool()
async def bump(ctx: Context) -> str:
    """Announce an update of test://counter from this instance."""
    await ctx.notify_resource_updated("test://counter")
    return "bumped"


@app.tool(task_support="required")
async def bump_later(ctx: Context) -> str:
    """A task (on the worker) that announces an update of test://counter."""
    await asyncio.sleep(0.2)
    await ctx.notify_resource_updated("test://counter")
    return "bumped later"


@app.tool()
async def announce_tools(ctx: Context) -> str:
    """Announce that the tool list changed."""
    await ctx.notify_list_changed("tools")
    return "announced"


@app.tool()
async def link_account(ctx: Context) -> str:
    """URL-mode elicitation: ask the user to visit a page, then announce the flow finished."""
    answer = await ctx.elicit_url("Link your account", "https://example.com/link", key="link")
    if answer["action"] == "accept":
        await ctx.notify_elicitation_complete(ctx.elicitation_id("link"))
    return f"link: {answer['action']}"


@app.tool()
async def needs_authorization(ctx: Context) -> str:
    """Ends with -32042 until the user completed the authorization flow."""
    raise ctx.url_elicitation_required("Authorize access first", "https://example.com/authorize")


async def _two_of_each(ctx: Context) -> str:
    first = await ctx.elicit("First?", NAME_SCHEMA)
    second = await ctx.elicit("Second?", NAME_SCHEMA)
    one = await ctx.sample("one")
    two = await ctx.sample("two")
    names = [(answer.get("content") or {}).get("name") for answer in (first, second)]
    return f"{names[0]}/{names[1]}|{one.text}/{two.text}"


@app.tool()
async def twice(ctx: Context) -> str:
    """Two questions and two samples, none with a key: each is asked, in the order of the run."""
    return await _two_of_each(ctx)


@app.tool(task_support="required")
async def twice_as_task(ctx: Context) -> str:
    """The same, as a task."""
    return await _two_of_each(ctx)


@app.tool()
async def same_key_twice(ctx: Context) -> str:
    """A developer error: one explicit key for two questions."""
    await ctx.elicit("First?", NAME_SCHEMA, key="name")
    await ctx.elicit("Second?", NAME_SCHEMA, key="name")
    return "unreachable"


keys_read: list[str] = []
"""`ctx.idempotency_key` as each run of `keyed_rounds` read it."""


@app.tool()
async def keyed_rounds(ctx: Context) -> str:
    """Reads its idempotency key only between two questions: the first round never reads it."""
    await ctx.elicit("First?", NAME_SCHEMA)
    keys_read.append(ctx.idempotency_key)
    await ctx.elicit("Second?", NAME_SCHEMA)
    return ctx.idempotency_key
