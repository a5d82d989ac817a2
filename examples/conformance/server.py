"""The fixture server the official MCP conformance suite expects, written with lambda-mcp.

Run it with `lambda-mcp dev examples/conformance/server.py` (or `--lambda`) and point
`@modelcontextprotocol/conformance` at http://127.0.0.1:8000/mcp.
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

from pydantic import Field

from lambda_mcp import Context, MCPApp, MCPError, ToolError

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

app = MCPApp(
    "mcp-conformance-test-server", version="1.0.0", instructions="Fixture server for the MCP conformance suite."
)


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _form(**properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties)}


# ----- tools: content ---------------------------------------------------------------------
@app.tool()
def test_simple_text() -> str:
    """Tests simple text content response"""
    return "This is a simple text response for testing."


@app.tool()
def test_image_content() -> dict[str, Any]:
    """Tests image content response"""
    return {"type": "image", "data": PNG, "mimeType": "image/png"}


@app.tool()
def test_audio_content() -> dict[str, Any]:
    """Tests audio content response"""
    return {"type": "audio", "data": WAV, "mimeType": "audio/wav"}


@app.tool()
def test_embedded_resource() -> dict[str, Any]:
    """Tests embedded resource content response"""
    resource = {
        "uri": "test://embedded-resource",
        "mimeType": "text/plain",
        "text": "This is an embedded resource content.",
    }
    return {"type": "resource", "resource": resource}


@app.tool()
def test_multiple_content_types() -> list[dict[str, Any]]:
    """Tests response with multiple content types (text, image, resource)"""
    resource = {
        "uri": "test://mixed-content-resource",
        "mimeType": "application/json",
        "text": json.dumps({"test": "data", "value": 123}),
    }
    return [
        _text("Multiple content types test:"),
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {"type": "resource", "resource": resource},
    ]


@app.tool()
async def test_tool_with_logging(ctx: Context) -> str:
    """Tests tool that emits log messages during execution"""
    await ctx.info("Tool execution started")
    await asyncio.sleep(0.05)
    await ctx.info("Tool processing data")
    await asyncio.sleep(0.05)
    await ctx.info("Tool execution completed")
    return "Tool with logging executed successfully"


@app.tool()
async def test_tool_with_progress(ctx: Context) -> str:
    """Tests tool that reports progress notifications"""
    for step in (0, 50, 100):
        await ctx.report_progress(step, 100, f"Completed step {step} of 100")
        if step < 100:
            await asyncio.sleep(0.05)
    return str(ctx.progress_token)


@app.tool()
def test_error_handling() -> str:
    """Tests error response handling"""
    raise ToolError("This tool intentionally returns an error for testing")


@app.tool()
async def test_reconnection(ctx: Context) -> str:
    """Tests SSE stream disconnection and client reconnection (SEP-1699)"""
    await ctx.close_sse_stream()
    await asyncio.sleep(0.1)
    return (
        "Reconnection test completed successfully. "
        "If you received this, the client properly reconnected after stream closure."
    )


# ----- tools: client input (legacy requests / 2026 MRTR) --------------------------------------
@app.tool()
async def test_sampling(
    prompt: Annotated[str, Field(description="The prompt to send to the LLM")], ctx: Context
) -> str:
    """Tests server-initiated sampling (LLM completion request)"""
    result = await ctx.sample(prompt, max_tokens=100)
    return f"LLM response: {result.text or 'No response'}"


@app.tool()
async def test_elicitation(
    message: Annotated[str, Field(description="The message to show the user")], ctx: Context
) -> str:
    """Tests server-initiated elicitation (user input request)"""
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    result = await ctx.elicit(message, schema)
    return f"User response: action={result.get('action')}, content={json.dumps(result.get('content') or {})}"


@app.tool()
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Tests elicitation with default values per SEP-1034"""
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        },
        "required": [],
    }
    result = await ctx.elicit("Please review and update the form fields with defaults", schema)
    return f"Elicitation completed: action={result.get('action')}, content={json.dumps(result.get('content') or {})}"


@app.tool()
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Tests elicitation with enum schema improvements per SEP-1330"""
    titled = [
        {"const": f"value{i}", "title": t} for i, t in ((1, "First Option"), (2, "Second Option"), (3, "Third Option"))
    ]
    choices = [
        {"const": f"value{i}", "title": t} for i, t in ((1, "First Choice"), (2, "Second Choice"), (3, "Third Choice"))
    ]
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Select one option",
                "enum": ["option1", "option2", "option3"],
            },
            "titledSingle": {"type": "string", "description": "Select one option with titles", "oneOf": titled},
            "legacyEnum": {
                "type": "string",
                "description": "Select one option (legacy)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "description": "Select multiple options",
                "minItems": 1,
                "maxItems": 3,
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "description": "Select multiple options with titles",
                "minItems": 1,
                "maxItems": 3,
                "items": {"anyOf": choices},
            },
        },
        "required": [],
    }
    result = await ctx.elicit("Please select options from the enum fields", schema)
    return f"Elicitation completed: action={result.get('action')}, content={json.dumps(result.get('content') or {})}"


JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@app.tool(input_schema=JSON_SCHEMA_2020_12)
def json_schema_2020_12_tool(**arguments: Any) -> str:
    """Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)"""
    return f"JSON Schema 2020-12 tool called with: {json.dumps(arguments)}"


# ----- tools: 2026-07-28 wire ------------------------------------------------------------------
@app.tool()
def test_missing_capability(ctx: Context) -> str:
    """Test tool requiring sampling"""
    ctx.require("sampling")
    return "Success"


@app.tool()
async def test_trigger_tool_change(ctx: Context) -> str:
    """Emits notifications/tools/list_changed to open listen streams"""
    await ctx.notify_list_changed("tools")
    return "Mutation triggered"


@app.tool()
async def test_trigger_prompt_change(ctx: Context) -> str:
    """Emits notifications/prompts/list_changed to open listen streams"""
    await ctx.notify_list_changed("prompts")
    return "Mutation triggered"


@app.tool()
def test_x_mcp_header(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    """Routes on the region argument, mirrored in the Mcp-Param-Region header"""
    return f"region={region}"


@app.tool()
async def test_streaming_elicitation(ctx: Context) -> str:
    """Diagnostic tool validating response progress streams"""
    await ctx.report_progress(50, 100)
    return "Streaming complete"


@app.tool()
async def test_logging_tool(ctx: Context) -> str:
    """Diagnostic logging validator tool"""
    await ctx.info("Diagnostic trace logging activated")
    return "Logging evaluated"


@app.tool()
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """MRTR: returns InputRequiredResult with elicitation request"""
    answer = await ctx.elicit("What is your name?", _form(name={"type": "string"}), key="user_name")
    return f"Hello, {(answer.get('content') or {}).get('name', 'unknown')}!"


@app.tool()
async def test_input_required_result_sampling(ctx: Context) -> str:
    """MRTR: returns InputRequiredResult with sampling request"""
    answer = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
    return f"Sampling result: {answer.text or 'no response'}"


@app.tool()
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """MRTR: returns InputRequiredResult with roots/list request"""
    roots = await ctx.list_roots(key="client_roots")
    return f"Found {len(roots)} root(s): " + ", ".join(str(r.get("uri")) for r in roots)


@app.tool()
async def test_input_required_result_request_state(ctx: Context) -> str:
    """MRTR: returns InputRequiredResult with requestState"""
    answer = await ctx.elicit("Please confirm", _form(ok={"type": "boolean"}), key="confirm")
    return "state-ok: requestState validated" if answer.get("action") == "accept" else "state-ok: declined"


@app.tool()
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """MRTR: returns InputRequiredResult with multiple input requests"""
    answers = await ctx.ask(
        {
            "user_name": {
                "method": "elicitation/create",
                "params": {"message": "What is your name?", "requestedSchema": _form(name={"type": "string"})},
            },
            "greeting": {
                "method": "sampling/createMessage",
                "params": {
                    "messages": [{"role": "user", "content": _text("Generate a greeting")}],
                    "maxTokens": 50,
                },
            },
            "client_roots": {"method": "roots/list", "params": {}},
        }
    )
    name = (answers["user_name"].get("content") or {}).get("name", "unknown")
    greeting = (answers["greeting"].get("content") or {}).get("text", "Hello there!")
    return f"Name: {name}; Greeting: {greeting}; Roots: {len(answers['client_roots'].get('roots', []))}"


@app.tool()
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """MRTR: multi-round InputRequiredResult workflow"""
    first = await ctx.elicit("Step 1: What is your name?", _form(name={"type": "string"}), key="step1")
    second = await ctx.elicit("Step 2: What is your favorite color?", _form(color={"type": "string"}), key="step2")
    name = (first.get("content") or {}).get("name", "friend")
    color = (second.get("content") or {}).get("color", "unknown")
    return f"Multi-round complete for {name} who likes {color}"


@app.tool()
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """MRTR: HMAC-signed requestState integrity test"""
    await ctx.elicit("Please confirm", _form(ok={"type": "boolean"}), key="confirm")
    return "integrity-ok: state verified"


@app.tool()
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """MRTR: respects client capabilities in inputRequests"""
    wanted: dict[str, dict[str, Any]] = {}
    if "elicitation" in ctx.client_capabilities:
        wanted["elicit_input"] = {
            "method": "elicitation/create",
            "params": {"message": "Elicitation input", "requestedSchema": _form(value={"type": "string"})},
        }
    if "sampling" in ctx.client_capabilities:
        wanted["sample_input"] = {
            "method": "sampling/createMessage",
            "params": {"messages": [{"role": "user", "content": _text("Sample request")}], "maxTokens": 50},
        }
    if not wanted:
        return "No supported capabilities declared"
    answers = await ctx.ask(wanted)
    return f"capabilities-ok: received {','.join(answers)}"


# ----- resources ---------------------------------------------------------------------------------
@app.resource("test://static-text", name="static-text", title="Static Text Resource", mime_type="text/plain")
def static_text() -> str:
    """A static text resource for testing"""
    return "This is the content of the static text resource."


@app.resource("test://static-binary", name="static-binary", title="Static Binary Resource", mime_type="image/png")
def static_binary() -> dict[str, Any]:
    """A static binary resource (image) for testing"""
    return {"mimeType": "image/png", "blob": PNG}


@app.resource("test://watched-resource", name="watched-resource", title="Watched Resource", mime_type="text/plain")
def watched_resource() -> str:
    """A resource clients can subscribe to"""
    return "Watched resource content"


@app.resource("test://template/{id}/data", name="template", title="Resource Template", mime_type="application/json")
def template_data(id: str) -> str:
    """A resource template with parameter substitution"""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


# ----- prompts -----------------------------------------------------------------------------------
@app.prompt(title="Simple Test Prompt")
def test_simple_prompt() -> str:
    """A simple prompt without arguments"""
    return "This is a simple prompt for testing."


@app.prompt(
    title="Prompt With Arguments",
    arguments={"arg1": "First test argument", "arg2": "Second test argument"},
)
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with required arguments"""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@app.prompt(title="Prompt With Embedded Resource", arguments={"resourceUri": "URI of the resource to embed"})
def test_prompt_with_embedded_resource(resourceUri: str) -> list[dict[str, Any]]:  # noqa: N803 - the wire name
    """A prompt that includes an embedded resource"""
    resource = {"uri": resourceUri, "mimeType": "text/plain", "text": "Embedded resource content for testing."}
    return [
        {"role": "user", "content": {"type": "resource", "resource": resource}},
        {"role": "user", "content": _text("Please process the embedded resource above.")},
    ]


@app.prompt(title="Prompt With Image")
def test_prompt_with_image() -> list[dict[str, Any]]:
    """A prompt that includes image content"""
    return [
        {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
        {"role": "user", "content": _text("Please analyze the image above.")},
    ]


@app.prompt()
async def test_input_required_result_prompt(ctx: Context) -> str:
    """MRTR: prompt that requires elicitation input"""
    answer = await ctx.elicit(
        "What context should the prompt use?", _form(context={"type": "string"}), key="user_context"
    )
    return f"Prompt with context: {(answer.get('content') or {}).get('context', 'unknown')}"


# --- Tasks extension (SEP-2663) fixtures -------------------------------------------------


@app.tool()
def greet(name: str) -> str:
    """Greet someone synchronously (never a task)"""
    return f"Hello, {name}!"


@app.tool(task_support="optional")
async def slow_compute(ctx: Context, seconds: int = 3, label: str = "") -> str:
    """Work for `seconds`; a task when the client supports tasks, cancellable"""
    for _ in range(max(0, seconds) * 10):
        ctx.check_cancelled()
        await asyncio.sleep(0.1)
    return f"computed {label or 'result'} in {seconds}s"


@app.tool(task_support="required")
async def failing_job() -> str:
    """A task whose tool fails: the task completes with isError"""
    await asyncio.sleep(0.5)
    raise ToolError("the job failed")


@app.tool(task_support="required")
async def protocol_error_job() -> str:
    """A task that ends in a JSON-RPC error: the task fails"""
    await asyncio.sleep(0.2)
    raise MCPError(-32603, "the job hit an internal error")


@app.tool(task_support="required")
async def confirm_delete(ctx: Context, filename: str = "important.txt") -> str:
    """A task that parks in input_required until the user confirms"""
    answer = await ctx.elicit(f"Delete {filename!r}?", _form(confirm={"type": "boolean"}), key="confirm")
    confirmed = answer.get("action") == "accept" and (answer.get("content") or {}).get("confirm") is True
    return f"deleted {filename!r}" if confirmed else f"kept {filename!r}"


@app.tool(task_support="required")
async def multi_input(ctx: Context) -> str:
    """A task with two input requests outstanding at once"""
    answers = await ctx.ask(
        {
            "name": {
                "method": "elicitation/create",
                "params": {"message": "Your name?", "requestedSchema": _form(name={"type": "string"})},
            },
            "confirm": {
                "method": "elicitation/create",
                "params": {"message": "Confirm?", "requestedSchema": _form(confirm={"type": "boolean"})},
            },
        }
    )
    name = (answers["name"].get("content") or {}).get("name", "unknown")
    return f"got {name}, confirmed: {(answers['confirm'].get('content') or {}).get('confirm')}"


@app.tool(task_support="required", defer_task=True)
async def test_tool_with_task(ctx: Context) -> str:
    """One synchronous MRTR round, then the rest runs as a task"""
    answer = await ctx.elicit("What is your name?", _form(name={"type": "string"}), key="user_name")
    await ctx.start_task()
    await asyncio.sleep(0.2)
    return f"Hello, {(answer.get('content') or {}).get('name', 'unknown')}!"


@app.completion()
def complete(ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]) -> list[str]:
    """Suggest values for `test_prompt_with_arguments` arguments that start with what was typed."""
    if ref.get("name") != "test_prompt_with_arguments":
        return []
    typed = str(argument.get("value", ""))
    return [v for v in ("paris", "london", "tokyo") if v.startswith(typed)]
