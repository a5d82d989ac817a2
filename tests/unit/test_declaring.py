"""Declaring tools, resources and prompts as a new user does: the bare `@app.tool` and `@app.prompt` forms
work, any misuse (or a signature the kit cannot serve) is a one-line `TypeError` at once that starts with
the file and line of the declaration, `ctx.scopes` is a frozenset under auth `none`, and scopes declared
under auth `none` are warned about at start."""

from __future__ import annotations

import datetime
import inspect
import logging
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from lambda_mcp import Context, MCPApp
from lambda_mcp.config import Settings
from lambda_mcp.kit import warn_unenforced_scopes
from lambda_mcp.server.middleware import RequestInfo
from lambda_mcp.testing import Client

pytestmark = pytest.mark.anyio
ERAS = ["2026-07-28", "2025-11-25"]
HERE = os.path.relpath(__file__) if Path(__file__).resolve().is_relative_to(Path.cwd().resolve()) else __file__
"""This file as a refusal names it (relative to the current directory when it is under it)."""


class Widget:
    """A plain class: it has no JSON Schema, so no tool parameter can be one."""


class Order(BaseModel):
    item: str
    count: int = 1


# -- the bare form --------------------------------------------------------------------------------------
@pytest.mark.parametrize("era", ERAS)
async def test_bare_tool_and_prompt_register_and_answer_like_the_called_form(era: str) -> None:
    app = MCPApp("bare")

    @app.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @app.prompt
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello {name}"

    assert add(2, 3) == 5  # the decorator hands the function back
    async with Client(app, protocol_version=era) as client:
        (listed,) = await client.list_tools()
        assert listed["name"] == "add" and listed["description"] == "Add two integers."
        assert listed["inputSchema"]["required"] == ["a", "b"]
        assert (await client.call_tool("add", {"a": 2, "b": 40})).text == "42"
        assert [p["name"] for p in await client.list_prompts()] == ["greet"]
        got = await client.get_prompt("greet", {"name": "Ada"})
        assert got["messages"][0]["content"]["text"] == "Hello Ada"


async def test_every_called_spelling_still_registers() -> None:
    app = MCPApp("spellings")

    @app.tool()
    def plain() -> str:
        return "plain"

    @app.tool("positional")
    def first() -> str:
        return "positional"

    @app.tool(name="keyword", title="Keyword")
    def second() -> str:
        return "keyword"

    def direct() -> str:
        return "direct"

    assert app.tool(direct) is direct
    app.prompt("outline")(lambda topic: f"Outline {topic}")

    async with Client(app) as client:
        assert {t["name"] for t in await client.list_tools()} == {"plain", "positional", "keyword", "direct"}
        for name in ("plain", "positional", "keyword", "direct"):
            assert (await client.call_tool(name)).text == name
        got = await client.get_prompt("outline", {"topic": "tides"})
        assert got["messages"][0]["content"]["text"] == "Outline tides"


# -- misuse: a TypeError at decoration that says what to write -------------------------------------------
def _fn() -> str:
    return ""


MISUSES: list[tuple[str, Callable[[MCPApp], Any], str]] = [
    ("bare resource", lambda app: app.resource(_fn), '@app.resource needs a URI: write @app.resource("res://...")'),
    ("resource uri not a str", lambda app: app.resource(42), '@app.resource needs a URI: write @app.resource("res://'),
    (
        "bare ui resource",
        lambda app: app.ui_resource(_fn),
        '@app.ui_resource needs a URI: write @app.ui_resource("ui://',
    ),
    ("resource on a value", lambda app: app.resource("res://x")("text"), "decorates a function, not str 'text'"),
    ("tool on a value", lambda app: app.tool()(42), "@app.tool() decorates a function, not int 42"),
    ("prompt on a value", lambda app: app.prompt(title="T")(None), "@app.prompt() decorates a function, not NoneType"),
    ("tool name not a str", lambda app: app.tool(42), 'write @app.tool, @app.tool() or @app.tool("name")'),
    ("prompt name not a str", lambda app: app.prompt(3.5), 'write @app.prompt, @app.prompt() or @app.prompt("name")'),
    ("tool named twice", lambda app: app.tool("a", name="b"), 'write @app.tool("a") or @app.tool(name="b")'),
    (
        "keyword name not a str",
        lambda app: app.tool(name=7),
        "@app.tool's name is a str, not int: write @app.tool(name=\"",
    ),
]


@pytest.mark.parametrize(("case", "misuse", "advice"), MISUSES, ids=[m[0] for m in MISUSES])
def test_a_misused_decorator_is_a_type_error_saying_what_to_write(
    case: str, misuse: Callable[[MCPApp], Any], advice: str
) -> None:
    app = MCPApp("misused")
    with pytest.raises(TypeError) as raised:
        misuse(app)
    assert advice in str(raised.value)
    assert str(raised.value).startswith(f"{HERE}:")  # where the decorator was misused (its line in MISUSES)
    assert "\n" not in str(raised.value)
    assert not (app.tools or app.prompts or app.resources or app.templates)


# -- signatures the kit cannot serve ---------------------------------------------------------------------
def _refusal(declare: Callable[[], Any], at: str) -> str:
    """What is wrong, after checking the refusal is one line that starts with this file and the line of
    `declare`'s source holding `at` (the parameter at fault, or the def)."""
    with pytest.raises(TypeError) as raised:
        declare()
    message = str(raised.value)
    assert "\n" not in message  # one line
    assert not re.search(r"pydantic[._]|core_schema|errors\.pydantic\.dev", message)  # no internal module named
    error = raised.value
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)  # nothing chained
    lines, start = inspect.getsourcelines(declare)
    line = start + next(index for index, text in enumerate(lines) if at in text)
    place = f"{HERE}:{line}: "
    assert message.startswith(place), (message, place)
    return message.removeprefix(place)


def test_a_parameter_type_without_json_schema_is_refused_naming_tool_parameter_and_type() -> None:
    app = MCPApp("types")

    def declare() -> None:
        @app.tool
        def paint(count: int, widget: Widget, note: str = "") -> str:
            return ""

    message = _refusal(declare, "widget: Widget")
    assert message.startswith("tool 'paint': parameter 'widget' has type Widget, which has no JSON Schema")
    assert "int, float, str, bool" in message  # what to use instead
    assert app.tools == {}


def test_the_unsupported_type_is_found_inside_a_generic_and_named_without_module_prefixes() -> None:
    app = MCPApp("types")

    def declare() -> None:
        @app.tool(name="stack")
        def pile(ctx: Context, widgets: list[Widget]) -> str:
            return ""

    message = _refusal(declare, "widgets: list[Widget]")
    assert message.startswith("tool 'stack': parameter 'widgets' has type list[Widget],")
    assert __name__ not in message


def test_an_undefined_annotation_is_refused_naming_it() -> None:
    app = MCPApp("types")

    def declare() -> None:
        @app.tool
        def find(what: Undefined) -> str:  # type: ignore[name-defined]  # noqa: F821 - the point of the test
            return ""

    message = _refusal(declare, "what: Undefined")
    assert message.startswith("tool 'find': parameter 'what' has type 'Undefined', which names something not defined")


@pytest.mark.parametrize("kind", ["args", "kwargs"])
def test_star_args_and_star_star_kwargs_are_refused(kind: str) -> None:
    app = MCPApp("variadic")

    def declare() -> None:
        if kind == "args":

            @app.tool
            def tag(first: str, *names: str) -> str:
                return ""
        else:

            @app.tool(name="tag")
            def configure(first: str, **opts: int) -> str:
                return ""

    stars = "*names" if kind == "args" else "**opts"
    message = _refusal(declare, f"{stars}: ")
    assert message.startswith(f"tool 'tag': parameter {stars} is not supported")
    assert app.tools == {}


async def test_kwargs_are_allowed_with_an_explicit_input_schema_and_receive_the_arguments() -> None:
    app = MCPApp("explicit")
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}}

    @app.tool(input_schema=schema)
    def echo(**arguments: Any) -> str:
        return ",".join(f"{k}={v}" for k, v in sorted(arguments.items()))

    async with Client(app) as client:
        assert (await client.call_tool("echo", {"x": 1, "y": "z"})).text == "x=1,y=z"


async def test_types_with_a_json_schema_still_work() -> None:
    app = MCPApp("fine")

    @app.tool
    def book(
        order: Order, when: datetime.date, size: Literal["s", "m"] = "s", n: Annotated[int, Field(gt=0)] = 1
    ) -> str:
        return f"{order.count}x{order.item} on {when.isoformat()} {size} {n}"

    async with Client(app) as client:
        result = await client.call_tool("book", {"order": {"item": "tea"}, "when": "2026-01-02"})
        assert result.text == "1xtea on 2026-01-02 s 1"


def test_a_structured_return_type_without_json_schema_is_refused() -> None:
    app = MCPApp("structured")

    def declare() -> None:
        @app.tool(structured_output=True)
        def make() -> Widget:
            return Widget()

    message = _refusal(declare, "def make")
    assert message.startswith("tool 'make': its return type Widget has no JSON Schema")


def test_a_prompt_refuses_star_args_and_non_string_types() -> None:
    app = MCPApp("prompts")

    def variadic() -> None:
        @app.prompt
        def summary(*topics: str) -> str:
            return ""

    def typed() -> None:
        @app.prompt("brief")
        def summary(words: int) -> str:
            return ""

    assert _refusal(variadic, "*topics").startswith("prompt 'summary': parameter *topics is not supported")
    message = _refusal(typed, "words: int")
    assert message.startswith("prompt 'brief': parameter 'words' has type int, but prompt arguments arrive as strings")
    assert app.prompts == {}


async def test_a_prompt_takes_string_kinds_of_annotation() -> None:
    app = MCPApp("prompts")

    @app.prompt
    def plan(
        ctx: Context, city: str, mood: Literal["calm", "busy"] = "calm", note: Annotated[str | None, "free"] = None
    ) -> str:
        return f"{city} {mood} {note}"

    async with Client(app) as client:
        got = await client.get_prompt("plan", {"city": "Porto", "mood": "busy"})
        assert got["messages"][0]["content"]["text"] == "Porto busy None"


# -- scopes under auth `none` ----------------------------------------------------------------------------
def _scoped_app(seen: list[Any]) -> MCPApp:
    app = MCPApp("scoped")

    @app.tool(scopes=["inventory:write"])
    def restock(item: str, ctx: Context) -> str:
        """Needs inventory:write, which auth none does not enforce."""
        return f"{item}: {type(ctx.scopes).__name__} {sorted(ctx.scopes)}"

    @app.resource("stock://levels", scopes=["inventory:read"])
    def levels() -> str:
        return "12"

    @app.prompt(scopes=["inventory:read"])
    def report() -> str:
        return "report"

    @app.middleware
    async def record(request: RequestInfo, call_next: Any) -> dict[str, Any]:
        seen.append(request.scopes)
        result: dict[str, Any] = await call_next(request)
        return result

    return app


@pytest.mark.parametrize("era", ERAS)
async def test_ctx_scopes_is_an_empty_frozenset_under_auth_none_and_the_scoped_tool_runs(era: str) -> None:
    seen: list[Any] = []
    async with Client(_scoped_app(seen), protocol_version=era) as client:
        assert [t["name"] for t in await client.list_tools()] == ["restock"]
        assert (await client.call_tool("restock", {"item": "nut"})).text == "nut: frozenset []"
    assert seen and all(scopes == frozenset() and isinstance(scopes, frozenset) for scopes in seen)


def test_request_info_built_with_no_scopes_holds_an_empty_frozenset() -> None:
    info = RequestInfo("tools/call", {}, None, "modern", "2026-07-28", None, None, None)
    assert info.scopes == frozenset()
    granted = RequestInfo("tools/call", {}, "p", "modern", "2026-07-28", scopes=frozenset({"a"}))
    assert granted.scopes == {"a"}


async def test_declared_scopes_under_auth_none_are_warned_about_once_naming_them(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = _scoped_app([])
    with caplog.at_level(logging.WARNING, logger="lambda_mcp"):
        async with Client(app) as client:
            await client.call_tool("restock", {"item": "bolt"})
            await client.call_tool("restock", {"item": "nut"})
        async with Client(app):  # another kit for the same app in this process: no second warning
            pass
    warnings = [r for r in caplog.records if r.name == "lambda_mcp" and "not enforced" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    message = warnings[0].getMessage()
    assert "LAMBDA_MCP_AUTH=none" in message and "LAMBDA_MCP_AUTH=jwt" in message and "gateway" in message
    assert "tool 'restock'" in message and "resource 'stock://levels'" in message and "prompt 'report'" in message


async def test_no_warning_without_declared_scopes_or_when_auth_enforces_them(caplog: pytest.LogCaptureFixture) -> None:
    app = MCPApp("open")

    @app.tool
    def ping() -> str:
        return "pong"

    with caplog.at_level(logging.WARNING, logger="lambda_mcp"):
        async with Client(app) as client:
            assert (await client.call_tool("ping")).text == "pong"
        warn_unenforced_scopes(_scoped_app([]), Settings(auth="jwt"))
        warn_unenforced_scopes(_scoped_app([]), Settings(auth="gateway"))
    assert not [r for r in caplog.records if "not enforced" in r.getMessage()]
