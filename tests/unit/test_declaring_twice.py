"""Declaring as a FastMCP user would: `ctx: Context | None = None` (or `Optional[Context]`) is the context,
a second tool, prompt or resource of the same name (URI) is refused at once, naming both places, and a
refusal names the line of the parameter at fault in a signature spread over several lines."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

import pytest

from lambda_mcp import Context, MCPApp
from lambda_mcp.testing import Client

pytestmark = pytest.mark.anyio
HERE = os.path.relpath(__file__) if Path(__file__).resolve().is_relative_to(Path.cwd().resolve()) else __file__


def _line(fn: Callable[..., Any], text: str) -> int:
    """The line of this file holding `text` inside `fn`'s source."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(index for index, line in enumerate(lines) if text in line)


def _refusal(declare: Callable[[], Any]) -> str:
    with pytest.raises(TypeError) as raised:
        declare()
    message = str(raised.value)
    assert "\n" not in message
    return message


# -- the context, optional ------------------------------------------------------------------------------
@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_an_optional_context_is_the_context_on_tools_prompts_and_resources(era: str) -> None:
    app = MCPApp("optional")

    @app.tool
    async def where(city: str, ctx: Context | None = None) -> str:
        assert ctx is not None
        await ctx.info(f"looking up {city}")
        return f"{city} for {ctx.protocol_version}"

    @app.tool
    def legacy_spelling(ctx: Optional[Context] = None) -> str:  # noqa: UP045 - the spelling under test
        return type(ctx).__name__

    @app.prompt
    def brief(topic: str, ctx: Context | None = None) -> str:
        return f"{topic} {ctx is not None}"

    @app.resource("notes://{name}")
    def note(name: str, ctx: Context | None = None) -> str:
        return f"{name} {ctx is not None}"

    async with Client(app, protocol_version=era) as client:
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert set(tools["where"]["inputSchema"]["properties"]) == {"city"}  # the context is no argument
        assert (
            "properties" not in tools["legacy_spelling"]["inputSchema"]
            or not (tools["legacy_spelling"]["inputSchema"]["properties"])
        )
        assert (await client.call_tool("where", {"city": "Porto"})).text == f"Porto for {era}"
        assert (await client.call_tool("legacy_spelling")).text == "Context"
        prompt = await client.get_prompt("brief", {"topic": "rain"})
        assert prompt["messages"][0]["content"]["text"] == "rain True"
        (content,) = await client.read_resource("notes://a")
        assert content["text"] == "a True"


# -- the same name twice --------------------------------------------------------------------------------
def test_a_second_tool_of_the_same_name_is_refused_naming_both_places() -> None:
    app = MCPApp("twice")

    @app.tool
    def search(query: str) -> str:
        return "first"

    def declare() -> None:
        @app.tool(name="search")
        def search_again(query: str) -> str:
            return "second"

    message = _refusal(declare)
    first, second = _line(search, "def search"), _line(declare, "def search_again")
    assert message == (
        f"{HERE}:{second}: tool 'search' is declared twice (first at {HERE}:{first}):"
        ' give one of them another name: @app.tool(name="...")'
    )
    assert app.tools["search"].fn is search  # the first one stays


def test_a_second_prompt_resource_or_template_of_the_same_name_is_refused() -> None:
    app = MCPApp("twice")

    @app.prompt("brief")
    def brief() -> str:
        return ""

    @app.resource("notes://all")
    def notes() -> str:
        return ""

    @app.resource("notes://{name}")
    def note(name: str) -> str:
        return ""

    @app.ui_resource("ui://chart")
    def chart() -> str:
        return ""

    def prompt() -> None:
        @app.prompt(name="brief")
        def other() -> str:
            return ""

    def resource() -> None:
        @app.resource("notes://all")
        def other() -> str:
            return ""

    def template() -> None:
        @app.resource("notes://{name}")
        def other(name: str) -> str:
            return ""

    def ui() -> None:
        @app.ui_resource("ui://chart")
        def other() -> str:
            return ""

    assert f"prompt 'brief' is declared twice (first at {HERE}:{_line(brief, 'def brief')})" in _refusal(prompt)
    assert "resource 'notes://all' is declared twice" in _refusal(resource)
    assert "resource template 'notes://{name}' is declared twice" in _refusal(template)
    assert f"resource 'ui://chart' is declared twice (first at {HERE}:{_line(chart, 'def chart')})" in _refusal(ui)
    for declare in (prompt, resource, template, ui):
        assert _refusal(declare).startswith(f"{HERE}:{_line(declare, 'def other')}: ")
    assert app.prompts["brief"].fn is brief and app.resources["notes://all"].fn is notes


def test_the_same_name_in_two_apps_is_fine() -> None:
    one, two = MCPApp("one"), MCPApp("two")
    for app in (one, two):

        @app.tool
        def search() -> str:
            return ""

    assert set(one.tools) == set(two.tools) == {"search"}


# -- the line of the parameter at fault -----------------------------------------------------------------
class Widget:
    """No JSON Schema."""


def test_a_refusal_names_the_line_of_the_parameter_at_fault() -> None:
    app = MCPApp("lines")

    def declare() -> None:
        @app.tool
        def paint(
            count: int,
            widget: Widget,
        ) -> str:
            return ""

    assert _refusal(declare).startswith(f"{HERE}:{_line(declare, 'widget: Widget')}: tool 'paint': parameter 'widget'")
