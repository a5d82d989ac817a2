"""A test app for the observability tests: a tool that fails with a secret, one that fails for the user,
and a task."""

from __future__ import annotations

from lambda_mcp import MCPApp, ToolError

app = MCPApp("observed", version="1.0.0")


@app.tool()
def leaky() -> str:
    """Fails with an internal detail that must stay in the logs."""
    raise RuntimeError("secret: the database password is hunter2")


@app.tool()
def picky(city: str) -> str:
    """Fails with a message meant for the user."""
    raise ToolError(f"No forecast for {city}: pick a city in Europe")


@app.tool(task_support="optional")
async def report(label: str) -> str:
    """Returns at once (as a task when the client asks for one)."""
    return f"report {label}"
