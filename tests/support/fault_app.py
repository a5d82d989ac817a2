"""An app for the task fault tests: tools that count their runs, crash their worker, or finish fast."""

from __future__ import annotations

import asyncio
import random
from collections import Counter

from lambda_mcp import Context, MCPApp

app = MCPApp("fault-fixtures")
runs: Counter[str] = Counter()
"""Executions per label, in this process (the test runs the worker in-process)."""


class WorkerKilled(BaseException):
    """Stands for the runtime killing the invocation (timeout, out of memory): nothing in the
    worker catches it, so the whole invocation fails and its messages stay on the queue."""


@app.tool(task_support="required")
async def counted(label: str, seconds: float = 0.3) -> str:
    """Runs once per execution: counts itself, then works for `seconds`."""
    runs[label] += 1
    await asyncio.sleep(seconds)
    return f"{label} done"


@app.tool(task_support="required")
async def crash_once(label: str) -> str:
    """The first execution kills its worker; the next one completes."""
    runs[label] += 1
    if runs[label] == 1:
        raise WorkerKilled(label)
    return f"{label} survived"


@app.tool(task_support="required")
async def always_crash(label: str) -> str:
    """Every execution kills its worker."""
    runs[label] += 1
    raise WorkerKilled(label)


@app.tool(task_support="required")
async def quick(ctx: Context, label: str) -> str:
    """Finishes after a random few milliseconds, checking for cancellation (for cancel races)."""
    await asyncio.sleep(random.uniform(0, 0.05))
    ctx.check_cancelled()
    return f"{label} finished"


@app.tool()
async def ask(ctx: Context) -> str:
    """One elicitation, then the answer (a buffered call suspends and resumes around it)."""
    answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}}, key="n")
    return f"hello {(answer.get('content') or {}).get('name')}"


@app.tool(task_support="required")
async def approve(ctx: Context) -> str:
    """A task that parks in input_required until the client answers."""
    answer = await ctx.elicit("Approve?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="ok")
    return f"approved={(answer.get('content') or {}).get('ok')}"


@app.tool()
async def publish(ctx: Context) -> str:
    """Announces an update of a resource (a write to the change feed)."""
    await ctx.notify_resource_updated("test://announced")
    return "published"


FORM = {"type": "object", "properties": {"text": {"type": "string"}}}
keys_seen: dict[str, list[str]] = {}
"""`ctx.idempotency_key` of every run, per label."""


@app.tool(task_support="optional")
async def five_rounds(ctx: Context, label: str) -> str:
    """Five questions, one per run: four parks in `input_required`, then the result."""
    runs[label] += 1
    answers = []
    for round_ in range(5):
        answer = await ctx.elicit(f"Round {round_}?", FORM, key=f"q{round_}")
        answers.append(str((answer.get("content") or {}).get("text")))
    return "/".join(answers)


@app.tool(task_support="required")
async def chatty(ctx: Context, label: str) -> str:
    """Logs three lines (events in the task's stream), then finishes."""
    runs[label] += 1
    for step in range(3):
        await ctx.info(f"{label} step {step}")
    return f"{label} told"


@app.tool(task_support="required")
async def looping(ctx: Context, label: str, seconds: float = 20) -> str:
    """Works in small steps for `seconds`, stopping as soon as it is cancelled; counts the steps."""
    runs[label] += 1
    for _ in range(int(seconds * 20)):
        await asyncio.sleep(0.05)
        runs[f"{label}:steps"] += 1
        ctx.check_cancelled()
    return "finished"


@app.tool(task_support="required")
async def keyed(ctx: Context, label: str) -> str:
    """Records its idempotency key, and kills its worker on the first run."""
    keys_seen.setdefault(label, []).append(ctx.idempotency_key)
    runs[label] += 1
    if runs[label] == 1:
        raise WorkerKilled(label)
    return ctx.idempotency_key
