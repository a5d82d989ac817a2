"""`lambda_mcp.testing.Client`: an app's tools, resources and prompts in process, as an app's tests use it."""

from __future__ import annotations

import pytest

from lambda_mcp.loader import load_app
from lambda_mcp.testing import Client, RequestFailed
from tests.support.processes import ROOT

pytestmark = pytest.mark.anyio


async def test_a_tool_call_reads_as_a_result_object() -> None:
    async with Client(load_app(str(ROOT / "examples/conformance/server.py"))) as client:
        simple = await client.call_tool("test_simple_text")
        failing = await client.call_tool("test_error_handling")
        assert not simple.is_error and simple.text == "This is a simple text response for testing."
        assert failing.is_error and failing.text == "This tool intentionally returns an error for testing"
        assert {t["name"] for t in await client.list_tools()} >= {"test_simple_text", "test_error_handling"}
        (contents,) = await client.read_resource("test://template/7/data")
        assert "7" in contents["text"]
        prompt = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        assert prompt["messages"]
        with pytest.raises(RequestFailed) as failed:
            await client.call_tool("no_such_tool")
        assert failed.value.code == -32602


async def test_structured_output_comes_back_as_structured_content() -> None:
    async with Client(load_app(str(ROOT / "examples/weather/server.py"))) as client:
        result = await client.call_tool("forecast", {"city": "Lisbon", "days": 2})
    assert result.structured_content is not None and len(result.structured_content["result"]) == 2
