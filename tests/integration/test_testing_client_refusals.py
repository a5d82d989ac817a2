"""When the client says no, as an app's own tests see it through `lambda_mcp.testing.Client`:

- a client that answers `ctx.sample`, `ctx.elicit` or `ctx.list_roots` with an error, to a tool that does
  not catch the `ClientError`, gets an error result naming the refusal; the server logs a warning without a
  traceback (the client refused: the server has no bug);
- a test client without the handler a tool needs says which argument to pass it.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from lambda_mcp import ClientError, Context, MCPApp
from lambda_mcp.testing import Client, RequestFailed

pytestmark = pytest.mark.anyio
LEGACY = ["2025-11-25", "2025-06-18"]

app = MCPApp("refusals")


@app.tool
async def summarize(text: str, ctx: Context) -> str:
    return (await ctx.sample(f"Summarize: {text}")).text


@app.tool
async def approve(ctx: Context) -> str:
    return str((await ctx.elicit("Approve?", bool)).data)


@app.tool
async def first_root(ctx: Context) -> str:
    return (await ctx.list_roots())[0]["uri"]


@app.tool
async def careful(ctx: Context) -> str:
    try:
        return (await ctx.sample("hi")).text
    except ClientError as refusal:
        return f"no model: {refusal.message}"


@app.tool
async def with_tools(ctx: Context) -> str:
    tool = {"name": "lookup", "inputSchema": {"type": "object"}}
    return (await ctx.sample("hi", tools=[tool])).text


@app.tool(task_support="required")
async def nightly_summary(ctx: Context) -> str:
    return (await ctx.sample("Summarize the day")).text


def refuse(*asked: Any) -> Any:
    raise RuntimeError("the user said no")


def _refused(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """What the kit logged about refusals; nothing it logged is an error."""
    kit = [record for record in caplog.records if record.name == "lambda_mcp"]
    assert not [record for record in kit if record.levelno >= logging.ERROR], [r.getMessage() for r in kit]
    return [record for record in kit if "the client refused" in record.getMessage()]


@pytest.mark.parametrize("version", LEGACY)
@pytest.mark.parametrize(
    ("tool", "arguments", "method"),
    [
        ("summarize", {"text": "a long text"}, "sampling/createMessage"),
        ("approve", {}, "elicitation/create"),
        ("first_root", {}, "roots/list"),
    ],
)
async def test_a_refusal_the_tool_does_not_catch_is_an_error_result_and_a_warning(
    version: str, tool: str, arguments: dict[str, Any], method: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="lambda_mcp"):
        async with Client(
            app,
            protocol_version=version,
            sampling_handler=refuse,
            elicitation_handler=refuse,
            capabilities={"roots": {}},  # declared, with no roots to answer: the test client errs
        ) as client:
            result = await client.call_tool(tool, arguments)
    assert result.is_error
    assert result.text == f"The tool {tool} asked the client for {method}, and the client refused" + (
        " (error -32603: the user said no)"
        if method != "roots/list"
        else " (error -32603: the test client has no handler for roots/list: give the test client one,"
        " Client(app, roots=[...]))"
    )
    (warning,) = _refused(caplog)
    assert warning.levelno == logging.WARNING and warning.exc_info is None
    assert warning.getMessage() == result.text


async def test_a_tool_that_catches_the_refusal_still_decides() -> None:
    async with Client(app, protocol_version="2025-11-25", sampling_handler=refuse) as client:
        assert (await client.call_tool("careful")).text == "no model: the user said no"


async def test_a_refusal_in_a_task_fails_the_task_with_the_refusal(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="lambda_mcp"):
        async with Client(app, protocol_version="2025-11-25", sampling_handler=refuse) as client:
            result = await client.call_tool("nightly_summary")
    assert result.is_error and "asked the client for sampling/createMessage, and the client refused" in result.text
    assert len(_refused(caplog)) == 1


async def test_raise_exceptions_leaves_a_refusal_an_error_result_like_a_tool_error() -> None:
    async with Client(app, protocol_version="2025-11-25", sampling_handler=refuse, raise_exceptions=True) as client:
        assert (await client.call_tool("summarize", {"text": "x"})).is_error


# -- a missing handler --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("tool", "give"),
    [
        ("summarize", "Client(app, sampling_handler=...)"),
        ("approve", "Client(app, elicitation_handler=...)"),
        ("first_root", "Client(app, roots=[...])"),
    ],
)
async def test_without_the_handler_a_tool_needs_the_failure_says_what_to_pass(tool: str, give: str) -> None:
    async with Client(app) as client:
        with pytest.raises(RequestFailed) as failed:
            await client.call_tool(tool, {"text": "x"} if tool == "summarize" else {})
    assert failed.value.code == -32021 and failed.value.message.endswith(
        f"(the test client declares it when given: {give})"
    )
    for version in LEGACY:
        async with Client(app, protocol_version=version) as client:
            result = await client.call_tool(tool, {"text": "x"} if tool == "summarize" else {})
        assert result.is_error and result.text.endswith(f"(the test client declares it when given: {give})")


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_sampling_with_tools_names_the_capability_to_add(version: str) -> None:
    give = 'Client(app, capabilities={"sampling": {"tools": {}}})'
    async with Client(app, protocol_version=version, sampling_handler=refuse) as client:
        if version == "2026-07-28":
            with pytest.raises(RequestFailed) as failed:
                await client.call_tool("with_tools")
            text = failed.value.message
        else:
            text = (await client.call_tool("with_tools")).text
            assert text.startswith("the client did not declare the 'sampling.tools' capability")
    assert text.endswith(f"(the test client declares it when given: {give})")
