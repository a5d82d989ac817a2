"""Middlewares on every path: a recorder of what each one sees, refusals on both eras, a task tool."""

from __future__ import annotations

from typing import Any

from lambda_mcp import MCPApp, MCPError, ToolError
from lambda_mcp.middleware import CallNext, RequestInfo

app = MCPApp("guarded-test", version="1.0.0")
seen: list[RequestInfo] = []
order: list[str] = []


@app.middleware
async def record(request: RequestInfo, call_next: CallNext) -> dict[str, Any]:
    seen.append(request)
    order.append("outer in")
    result = await call_next(request)
    order.append("outer out")
    return result


@app.middleware
async def refuse(request: RequestInfo, call_next: CallNext) -> dict[str, Any]:
    order.append("inner")
    name = request.params.get("name")
    if name == "forbidden":
        raise MCPError(-32000, "Not for you")
    if name == "politely_forbidden":
        raise ToolError("This tool is switched off today")
    if name == "rewritten":
        return await call_next(_with_arguments(request, {"text": "rewritten by middleware"}))
    return await call_next(request)


def _with_arguments(request: RequestInfo, arguments: dict[str, Any]) -> RequestInfo:
    import dataclasses

    return dataclasses.replace(request, params={**request.params, "arguments": arguments})


@app.tool()
def echo(text: str) -> str:
    return text


@app.tool()
def rewritten(text: str) -> str:
    return text


@app.tool()
def forbidden() -> str:
    return "should not run"


@app.tool()
def politely_forbidden() -> str:
    return "should not run"


@app.tool(task_support="optional")
async def slow_echo(text: str) -> str:
    return text
