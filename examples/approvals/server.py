"""Approvals: an app that asks its user (typed elicitation) and its client's model (sampling), and keeps
process-wide resources (a lifespan) that every request reads as `ctx.state`.

    lambda-mcp dev examples/approvals/server.py
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from lambda_mcp import Context, MCPApp

app = MCPApp("approvals", version="1.0.0", instructions="Asks before it spends.")
_lifespan_runs = itertools.count(1)


@dataclass
class Ledger:
    """What the lifespan opens once per execution environment (a database client in a real app)."""

    lifespan_runs: int
    approved: list[float] = field(default_factory=list)
    calls: int = 0


@app.lifespan
async def ledger(app: MCPApp) -> AsyncIterator[Ledger]:
    yield Ledger(lifespan_runs=next(_lifespan_runs))


class Approval(BaseModel):
    approved: bool = Field(description="Approve the expense?")
    approver: str = Field(min_length=1, description="Your name")
    priority: Literal["low", "normal", "high"] = "normal"


@app.tool()
async def request_expense(amount: float, ctx: Context) -> str:
    """Ask the user to approve an expense."""
    answer = await ctx.elicit(f"Approve an expense of {amount:.2f}?", Approval)
    ledger: Ledger = ctx.state
    ledger.calls += 1  # after the question: code before an ask may run again when the answer comes
    if answer.data is None:
        return f"The request was {answer.action}d"
    verdict = "approved" if answer.data.approved else "rejected"
    if answer.data.approved:
        ledger.approved.append(amount)
    return f"{answer.data.approver} {verdict} {amount:.2f} ({answer.data.priority} priority)"


@app.tool()
async def confirm_delete(name: str, ctx: Context) -> str:
    """Ask a yes/no question: a primitive type is asked as a one-field form."""
    answer = await ctx.elicit(f"Delete {name}?", bool)
    return f"deleted {name}" if answer.data else f"kept {name}"


@app.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Ask the client's model for a one-line summary."""
    result = await ctx.sample(
        f"Summarize in one line: {text}",
        system_prompt="You are terse.",
        temperature=0.2,
        model_preferences=["claude"],
        max_tokens=60,
    )
    ctx.state.calls += 1
    return result.text


@app.tool(structured_output=True)
def stats(ctx: Context) -> dict[str, int]:
    """How often the lifespan ran in this process, and how many calls its state has seen."""
    ledger: Ledger = ctx.state
    return {"lifespan_runs": ledger.lifespan_runs, "calls": ledger.calls, "approved": len(ledger.approved)}


@app.tool(task_support="optional")
async def total(ctx: Context) -> str:
    """The approved total, computed as a task where the client supports tasks (state is there too)."""
    return f"{sum(ctx.state.approved):.2f}"
