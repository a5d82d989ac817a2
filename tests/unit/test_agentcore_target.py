"""The AgentCore Gateway Lambda-target entrypoint: synthetic gateway invocations (arguments as the event,
the tool name and ids in the Lambda client context) for every tool of the conformance example."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from lambda_mcp import Context
from lambda_mcp.config import Settings
from lambda_mcp.entrypoints._agentcore import LambdaTarget, gateway_fields, observed, tool_name
from lambda_mcp.kit import Kit, build_kit
from lambda_mcp.loader import load_app
from lambda_mcp.local.context import LambdaContext
from lambda_mcp.observe.invocation import Invocation
from tests.support.processes import ROOT

APP = str(ROOT / "examples/conformance/server.py")
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

ANSWERED: dict[str, tuple[dict[str, Any], bool, str]] = {
    # tool: (arguments, isError, the first content block's text, or its type when it has none)
    "test_simple_text": ({}, False, "This is a simple text response for testing."),
    "test_image_content": ({}, False, "image"),
    "test_audio_content": ({}, False, "audio"),
    "test_embedded_resource": ({}, False, "resource"),
    "test_multiple_content_types": ({}, False, "Multiple content types test:"),
    "test_tool_with_logging": ({}, False, "Tool with logging executed successfully"),
    "test_tool_with_progress": ({}, False, "None"),  # no progress token: nobody to report progress to
    "test_error_handling": ({}, True, "This tool intentionally returns an error for testing"),
    "test_reconnection": ({}, False, "Reconnection test completed successfully."),
    "json_schema_2020_12_tool": ({"email": "a@b.c"}, False, 'JSON Schema 2020-12 tool called with: {"email": "a@b.c"}'),
    "test_trigger_tool_change": ({}, False, "Mutation triggered"),
    "test_trigger_prompt_change": ({}, False, "Mutation triggered"),
    "test_x_mcp_header": ({"region": "eu-west-1"}, False, "region=eu-west-1"),
    "test_streaming_elicitation": ({}, False, "Streaming complete"),
    "test_logging_tool": ({}, False, "Logging evaluated"),
    "test_input_required_result_capabilities": ({}, False, "No supported capabilities declared"),
    "greet": ({"name": "Ada"}, False, "Hello, Ada!"),
    "slow_compute": ({"seconds": 0, "label": "sum"}, False, "computed sum in 0s"),  # optional task: runs inline
}
REFUSED: dict[str, str] = {
    "test_sampling": "ask the client's model (sampling)",
    "test_missing_capability": "ask the client's model (sampling)",
    "test_input_required_result_sampling": "ask the client's model (sampling)",
    "test_elicitation": "ask the user for input (elicitation)",
    "test_elicitation_sep1034_defaults": "ask the user for input (elicitation)",
    "test_elicitation_sep1330_enums": "ask the user for input (elicitation)",
    "test_input_required_result_elicitation": "ask the user for input (elicitation)",
    "test_input_required_result_request_state": "ask the user for input (elicitation)",
    "test_input_required_result_multiple_inputs": "ask the user for input (elicitation)",
    "test_input_required_result_multi_round": "ask the user for input (elicitation)",
    "test_input_required_result_tampered_state": "ask the user for input (elicitation)",
    "test_input_required_result_list_roots": "list the client's roots",
    "failing_job": "run as a task",
    "protocol_error_job": "run as a task",
    "confirm_delete": "run as a task",
    "multi_input": "run as a task",
    "test_tool_with_task": "run as a task",
}


@pytest.fixture(scope="module")
def kit() -> Iterator[Kit]:
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield build_kit(load_app(APP), Settings(state_key=b"agentcore-test-key"), streaming=False)
    asyncio.set_event_loop(None)
    loop.close()


def gateway(tool: str, target: str = "orders-v2", **extra: Any) -> dict[str, Any]:
    return {
        "bedrockAgentCoreMessageVersion": "1.0",
        "bedrockAgentCoreAwsRequestId": "req-1",
        "bedrockAgentCoreMcpMessageId": "msg-1",
        "bedrockAgentCoreGatewayId": "gw-123",
        "bedrockAgentCoreTargetId": "TGT456",
        "bedrockAgentCoreToolName": f"{target}___{tool}",
        **extra,
    }


def context_with(custom: dict[str, Any] | None) -> LambdaContext:
    context = LambdaContext()
    context.client_context = SimpleNamespace(custom=custom, env=None, client=None)
    return context


def call(kit: Kit, event: Any, fields: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = asyncio.get_event_loop().run_until_complete(LambdaTarget(kit).call(event, fields))
    return result


def test_every_example_tool_is_either_answered_or_refused(kit: Kit) -> None:
    assert set(ANSWERED) | set(REFUSED) == set(kit.app.tools)


@pytest.mark.parametrize("tool", sorted(ANSWERED))
def test_a_tool_that_needs_no_client_answers_with_its_call_tool_result(kit: Kit, tool: str) -> None:
    arguments, is_error, expected = ANSWERED[tool]
    result = call(kit, arguments, gateway(tool))
    assert set(result) <= {"content", "isError", "structuredContent"}
    assert result["isError"] is is_error
    first = result["content"][0]
    assert first.get("text", "").startswith(expected) or first["type"] == expected
    if tool == "test_image_content":
        assert first == {"type": "image", "data": PNG, "mimeType": "image/png"}


@pytest.mark.parametrize("tool", sorted(REFUSED))
def test_a_tool_that_needs_the_client_or_a_task_is_a_clear_refusal(kit: Kit, tool: str) -> None:
    arguments = {"message": "hi", "prompt": "hi"}
    properties = kit.app.tools[tool].definition["inputSchema"].get("properties") or {}
    result = call(kit, {k: v for k, v in arguments.items() if k in properties}, gateway(tool))
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert f"The tool {tool} needs to {REFUSED[tool]}" in text
    assert "AgentCore Gateway Lambda target cannot" in text


def test_structured_output_travels_as_structured_content() -> None:
    from lambda_mcp import MCPApp

    app = MCPApp("structured")

    @app.tool(structured_output=True)
    def total(values: list[int]) -> dict[str, int]:
        """Add up values."""
        return {"sum": sum(values)}

    loop = asyncio.new_event_loop()
    try:
        kit = build_kit(app, Settings(), streaming=False)
        result = loop.run_until_complete(LambdaTarget(kit).call({"values": [1, 2, 3]}, gateway("total")))
    finally:
        loop.close()
    assert result["isError"] is False
    assert result["structuredContent"] == {"sum": 6}
    assert json.loads(result["content"][0]["text"]) == {"sum": 6}


def test_bad_arguments_are_an_error_result_naming_the_argument(kit: Kit) -> None:
    result = call(kit, {"name": 3}, gateway("greet"))
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("Invalid arguments for tool greet: name")
    missing = call(kit, {}, gateway("greet"))
    assert missing["isError"] is True and "name" in missing["content"][0]["text"]
    not_an_object = call(kit, ["Ada"], gateway("greet"))
    assert not_an_object == {
        "content": [{"type": "text", "text": "tools/call arguments must be an object"}],
        "isError": True,
    }


def test_an_unknown_tool_or_a_missing_name_is_an_error_result(kit: Kit) -> None:
    assert call(kit, {}, gateway("nope"))["content"][0]["text"] == "Unknown tool: nope"
    fields = gateway("greet")
    del fields["bedrockAgentCoreToolName"]
    result = call(kit, {"name": "Ada"}, fields)
    assert result["isError"] is True and "bedrockAgentCoreToolName" in result["content"][0]["text"]


def test_only_the_first_delimiter_is_the_targets() -> None:
    assert tool_name("orders___get___order") == "get___order"
    assert tool_name("a-b___greet") == "greet"
    assert tool_name("greet") == "greet"


def test_the_gateway_fields_come_from_the_client_context() -> None:
    assert gateway_fields(context_with(gateway("greet")))["bedrockAgentCoreToolName"] == "orders-v2___greet"
    assert gateway_fields(LambdaContext()) == {}
    assert gateway_fields(context_with(None)) == {}


class Reporter:
    """Stands in for the entrypoints' Observer: keeps what it would write."""

    def __init__(self) -> None:
        self.written: list[tuple[Invocation, str, dict[str, Any]]] = []

    def take_cold_start(self) -> bool:
        return False

    def write(self, record: Invocation, message: str, **fields: Any) -> None:
        self.written.append((record, message, fields))


def test_each_invocation_is_one_record_with_the_gateway_ids_principal_and_tool_metrics(kit: Kit) -> None:
    reporter = Reporter()
    result = observed(LambdaTarget(kit), reporter, context_with(gateway("greet")), {"name": "Ada"})  # type: ignore[arg-type]
    assert result["content"][0]["text"] == "Hello, Ada!"
    [(record, message, fields)] = reporter.written
    assert message == "agentcore tool call" and fields == {"is_error": False}
    assert record.correlation_id == "req-1"
    assert record.fields["agentcore_gateway_id"] == "gw-123"
    assert record.fields["agentcore_target_id"] == "TGT456"
    assert record.fields["principal"] == "agentcore:gw-123"
    assert record.fields["mcp_method"] == "tools/call"
    assert [(m.name, m.tool) for m in record.metrics if m.name == "ToolCalls"] == [("ToolCalls", "greet")]


def test_the_principal_tools_see_is_the_gateways_and_scopes_are_not_enforced() -> None:
    from lambda_mcp import MCPApp

    app = MCPApp("scoped")

    @app.tool(scopes=["orders:write"])
    def whoami(ctx: Context) -> str:
        """Who calls."""
        return f"{ctx.principal} {ctx.scopes}"

    loop = asyncio.new_event_loop()
    try:
        kit = build_kit(app, Settings(), streaming=False)
        target = LambdaTarget(kit)
        result = loop.run_until_complete(target.call({}, gateway("whoami")))
        fields = gateway("whoami")
        del fields["bedrockAgentCoreGatewayId"]
        anonymous = loop.run_until_complete(target.call({}, fields))
    finally:
        loop.close()
    assert result == {"content": [{"type": "text", "text": "agentcore:gw-123 frozenset()"}], "isError": False}
    assert anonymous["content"][0]["text"] == "None frozenset()"


def test_the_deployed_handler_builds_from_lambda_mcp_app_and_logs_one_json_line() -> None:
    """`lambda_mcp.entrypoints.agentcore.handler` as Lambda imports it, in a process of its own."""
    script = f"""
import json
from types import SimpleNamespace
from lambda_mcp.local.context import LambdaContext
from lambda_mcp.entrypoints.agentcore import handler
context = LambdaContext()
context.client_context = SimpleNamespace(custom=json.loads({json.dumps(gateway("greet"))!r}))
result = handler({{"name": "Ada"}}, context)
print("RESULT " + json.dumps(result))
"""
    env = {**os.environ, "LAMBDA_MCP_APP": APP, "LAMBDA_MCP_STATE_KEY": "a" * 64}
    env.pop("LAMBDA_MCP_TABLE_NAME", None)
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    [answer] = [json.loads(line.removeprefix("RESULT ")) for line in lines if line.startswith("RESULT ")]
    assert answer == {"content": [{"type": "text", "text": "Hello, Ada!"}], "isError": False}
    [log] = [json.loads(line) for line in lines if line.startswith("{") and "agentcore tool call" in line]
    assert log["correlation_id"] == "req-1"
    assert log["agentcore_gateway_id"] == "gw-123" and log["agentcore_tool"] == "orders-v2___greet"
    assert log["is_error"] is False and log["cold_start"] is True
    assert "ToolCalls" in json.dumps(log["_aws"])
