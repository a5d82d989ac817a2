"""An app for the checkpoint tests (`ctx.step`, `ctx.sleep`): the issue's task `step A -> sleep 2 h -> step B
-> elicit -> step C`, and a task whose step B kills its worker.

Each step counts its runs by a side effect, as a tool author's would: a line in a file per label under
`$LAMBDA_MCP_TEST_COUNTS` (a temporary directory by default), so a test reads the counts of a tool that ran
in another process (`lambda-mcp dev`) as well as in its own. Progress is sent from inside steps and from the
top level between them (the notification keys must survive the steps a re-run skips).
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from lambda_mcp import Context, MCPApp

app = MCPApp("checkpointed")
FORM = {"type": "object", "properties": {"go": {"type": "boolean"}}}


def counts_dir() -> Path:
    return Path(os.environ.get("LAMBDA_MCP_TEST_COUNTS") or Path(tempfile.gettempdir()) / "lambda-mcp-steps")


def runs(label: str) -> Counter[str]:
    """How often each step of the task labelled `label` ran (`run`: the tool's runs from the top)."""
    path = counts_dir() / label
    return Counter(path.read_text().split()) if path.exists() else Counter()


def _count(label: str, what: str) -> None:
    counts_dir().mkdir(parents=True, exist_ok=True)
    with (counts_dir() / label).open("a") as counts:
        counts.write(what + "\n")


def _sync_work(label: str, name: str) -> dict[str, Any]:
    _count(label, name)
    return {"step": name, "rows": (1, 2)}  # a tuple: given back as JSON gives it (a list), every run


class WorkerKilled(BaseException):
    """Stands for the runtime killing the invocation while a step runs (a timeout, out of memory)."""


@app.tool(task_support="optional")
async def pipeline(label: str, ctx: Context) -> str:
    """step A -> sleep 2 h -> step B -> elicit -> step C, with progress in and between the steps."""
    _count(label, "run")

    async def a() -> str:
        await ctx.report_progress(1, 5, "in A")
        _count(label, "A")
        return "a"

    async def c(answer: bool) -> str:
        await ctx.report_progress(5, 5, "in C")
        _count(label, "C")
        return f"c={answer}"

    first = await ctx.step("A", a)
    await ctx.report_progress(2, 5, "after A")
    await ctx.sleep(7200)
    second = await ctx.step("B", _sync_work, label, "B")
    await ctx.report_progress(3, 5, "after B")
    answer = await ctx.elicit("Go on?", FORM, key="go")
    await ctx.report_progress(4, 5, "answered")
    third = await ctx.step("C", c, bool((answer.get("content") or {}).get("go")))
    return f"{first} {second['step']}{second['rows']} {third}"


@app.tool(task_support="required")
async def crash_in_b(label: str, ctx: Context) -> str:
    """Step A, then a step B that kills its worker while it runs."""
    _count(label, "run")

    def b() -> str:
        _count(label, "B")
        raise WorkerKilled(label)

    await ctx.step("A", _count, label, "A")
    await ctx.step("B", b)
    return "unreachable"


@app.tool(task_support="required")
async def nap(label: str, seconds: float, ctx: Context) -> str:
    """A short sleep between two steps."""
    _count(label, "run")
    await ctx.step("before", _count, label, "before")
    await ctx.sleep(seconds)
    await ctx.step("after", _count, label, "after")
    return "rested"
