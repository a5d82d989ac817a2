"""`app.lambda_tool` (issue 39), in process against the stand-in Lambda endpoint (tests/support/lambda_endpoint.py):
a declaration the kit cannot serve is refused at once, naming what is wrong; a call invokes the function
synchronously with exactly the arguments and the caller in the client context, off the event loop, within the
request's deadline; the function's answer, its error and AWS's refusals each map to a result or a tool error that
names the function, without a stack trace."""

from __future__ import annotations

import base64
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from lambda_mcp import MCPApp
from lambda_mcp.server.errors import DeclarationError, ToolError
from lambda_mcp.server.lambda_tools import Invocation, Target, client_context, lambda_client
from lambda_mcp.testing import Client
from tests.support.lambda_endpoint import LambdaEndpoint
from tests.support.processes import free_port

pytestmark = pytest.mark.anyio
HERE = os.path.relpath(__file__) if Path(__file__).resolve().is_relative_to(Path.cwd().resolve()) else __file__
ARN = "arn:aws:lambda:eu-west-1:123456789012:function:orders"


def _boom(event: Any, context: Any) -> Any:
    raise ValueError(f"order {event['id']} is unknown")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[LambdaEndpoint]:
    stand_in = LambdaEndpoint()
    stand_in.register("echo", lambda event, context: {"event": event, "custom": context.client_context.custom})
    stand_in.register(
        "orders", lambda event, context: {"id": event.get("id"), "qualifier": context.invoked_function_arn}
    )
    stand_in.register("boom", _boom)
    stand_in.register("slow", lambda event, context: time.sleep(event.get("seconds", 3)) or "late")
    stand_in.refuse("locked", 403, "AccessDeniedException", "User: arn:aws:sts::123456789012:assumed-role/x is not...")
    stand_in.refuse("busy", 429, "TooManyRequestsException", "Rate Exceeded.")
    stand_in.refuse("huge", 413, "RequestTooLargeException", "Request must be smaller than 6291456 bytes")
    yield stand_in
    stand_in.stop()


@pytest.fixture(autouse=True)
def lambda_endpoint(endpoint: LambdaEndpoint, monkeypatch: pytest.MonkeyPatch) -> LambdaEndpoint:
    monkeypatch.setenv("AWS_ENDPOINT_URL_LAMBDA", endpoint.url)
    endpoint.invocations.clear()
    return endpoint


@dataclass
class Caller:
    """The parts of a `Context` an invocation reads."""

    principal: str | None = "https://issuer.example.com#alice"
    request_id: str | int | None = 7
    task_id: str | None = None
    deadline: float | None = None


def _declare(**kwargs: Any) -> dict[str, Any]:
    app = MCPApp("lambdas")
    name = kwargs.pop("name", "orders")
    app.lambda_tool(name, **{"function": "orders", **kwargs})
    definition: dict[str, Any] = app.tools[name].definition
    return definition


# -- declarations --------------------------------------------------------------------------------------------
REFUSALS = [
    ("a name with a space", {"name": "look up"}, "a tool name is 1 to 128 ASCII letters"),
    ("an empty name", {"name": ""}, "a tool name is 1 to 128"),
    ("a name too long", {"name": "x" * 129}, "a tool name is 1 to 128"),
    ("a name with a comma", {"name": "a,b"}, "no spaces"),
    ("a name with a slash", {"name": "orders/get"}, "a tool name"),
    ("no function", {"function": ""}, "is not a Lambda function"),
    ("a function name with a space", {"function": "my orders"}, "is not a Lambda function"),
    ("an S3 ARN", {"function": "arn:aws:s3:::bucket"}, "its ARN (arn:aws:lambda:"),
    ("an ARN without its account", {"function": "arn:aws:lambda:eu-west-1:function:orders"}, "not a Lambda function"),
    ("two qualifiers", {"function": "orders:live:3"}, "is not a Lambda function"),
    ("a function that is not a string", {"function": 42}, "function=42 is not a Lambda function"),
    ("a qualifier twice", {"function": "orders:live", "qualifier": "3"}, "already names a version or alias"),
    ("a bad qualifier", {"qualifier": "li ve"}, "qualifier='li ve' is not an alias or a version"),
    ("a string input schema", {"input_schema": {"type": "string"}}, "input_schema must be a JSON Schema of an object"),
    ("an input schema that is a list", {"input_schema": ["id"]}, "input_schema must be a JSON Schema of an object"),
    ("properties that are a list", {"input_schema": {"type": "object", "properties": ["id"]}}, "properties must be"),
    ("an array output schema", {"output_schema": {"type": "array"}}, "output_schema must be a JSON Schema of an obj"),
    ("an unknown task support", {"task_support": "sometimes"}, "task_support='sometimes'; use one of 'forbidden'"),
]


@pytest.mark.parametrize(("case", "kwargs", "advice"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_a_declaration_the_kit_cannot_serve_is_refused_where_it_is_written(
    case: str, kwargs: dict[str, Any], advice: str
) -> None:
    app = MCPApp("lambdas")
    name = kwargs.pop("name", "orders")
    with pytest.raises(DeclarationError) as raised:
        app.lambda_tool(name, **{"function": "orders", **kwargs})
    assert advice in str(raised.value)
    assert str(raised.value).startswith(f"{HERE}:") and "\n" not in str(raised.value)
    assert f"app.lambda_tool({name!r})" in str(raised.value)
    assert app.tools == {}


def test_the_definition_is_what_was_declared_and_any_object_by_default() -> None:
    assert _declare() == {"name": "orders", "inputSchema": {"type": "object"}}
    schema = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
    output = {"type": "object", "properties": {"total": {"type": "number"}}}
    definition = _declare(
        name="order.total-v2",
        input_schema=schema,
        output_schema=output,
        title="Order total",
        description="The total of an order.",
        annotations={"readOnlyHint": True},
        task_support="optional",
    )
    assert definition == {
        "name": "order.total-v2",
        "inputSchema": schema,
        "outputSchema": output,
        "title": "Order total",
        "description": "The total of an order.",
        "annotations": {"readOnlyHint": True},
        "execution": {"taskSupport": "optional"},
    }
    app = MCPApp("lambdas")
    app.lambda_tool("scoped", function="orders", scopes=["orders:read"], task_support="required")
    assert app.tools["scoped"].scopes == {"orders:read"} and app.tools["scoped"].task_support == "required"
    for function in ("orders", "orders:live", "orders:3", "orders:$LATEST", ARN, f"{ARN}:live", "a_b-C"):
        assert _declare(function=function)["name"] == "orders", function


def test_a_second_tool_of_the_same_name_is_refused() -> None:
    app = MCPApp("lambdas")

    @app.tool()
    def orders() -> str:
        return "mine"

    with pytest.raises(DeclarationError, match="a tool named 'orders' is already declared"):
        app.lambda_tool("orders", function="orders")


# -- what the function answers -------------------------------------------------------------------------------
def _answer(payload: Any, *, structured: bool = False, error: str | None = None, raw: bool = False) -> dict[str, Any]:
    invocation = Invocation("orders", Target("orders", None, None, "orders"), structured=structured)
    return invocation.answer(error, payload if raw else json.dumps(payload).encode())


def test_an_answer_is_a_call_tool_result_structured_content_or_text() -> None:
    result = {"content": [{"type": "text", "text": "made by the function"}], "isError": True, "_meta": {"a": 1}}
    assert _answer(result) == result  # served as it is
    assert _answer(result, structured=True) == result
    assert _answer({"total": 12.5}, structured=True) == {
        "content": [{"type": "text", "text": '{"total": 12.5}'}],
        "structuredContent": {"total": 12.5},
    }
    assert _answer("plain words") == {"content": [{"type": "text", "text": "plain words"}]}
    for value, text in [({"total": 3}, '{"total": 3}'), ([1, "a"], '[1, "a"]'), (4, "4"), (None, "null")]:
        assert _answer(value) == {"content": [{"type": "text", "text": text}]}, value
    # A list of blocks or a dict with a "type" is the function's data, not content blocks.
    assert _answer({"type": "text", "text": "x"})["content"][0]["text"] == '{"type": "text", "text": "x"}'
    assert _answer({"content": "not a list"})["content"][0]["text"] == '{"content": "not a list"}'
    assert _answer(b"not json \xff", raw=True) == {"content": [{"type": "text", "text": "not json \ufffd"}]}


@pytest.mark.parametrize(("value", "kind"), [([1], "a JSON list"), ("text", "a JSON str"), (None, "nothing")])
def test_a_structured_tool_whose_function_answers_no_object_fails(value: Any, kind: str) -> None:
    with pytest.raises(ToolError, match=f"the function orders answered {kind}, not the object its output schema"):
        _answer(value, structured=True)


def test_a_function_error_names_the_function_its_type_and_message_and_no_stack_trace() -> None:
    trace = ['  File "/var/task/app.py", line 3, in handler\n    raise ValueError(x)\n']
    error = {"errorMessage": "order 7 is unknown", "errorType": "ValueError", "stackTrace": trace}
    with pytest.raises(ToolError) as raised:
        _answer(error, error="Unhandled")
    assert str(raised.value) == "the function orders failed: ValueError: order 7 is unknown"
    long = {"errorType": "Exception", "errorMessage": "first line\n" + "  at frame\n" * 200}
    with pytest.raises(ToolError) as raised:
        _answer(long, error="Unhandled")
    assert str(raised.value) == "the function orders failed: Exception: first line"
    one_long_line = {"errorMessage": "x" * 5000}
    with pytest.raises(ToolError) as raised:
        _answer(one_long_line, error="Handled")
    assert str(raised.value) == "the function orders failed: " + "x" * 299 + "…"
    timed_out = {"errorMessage": "2026-01-01T00:00:00Z 1-ab Task timed out after 3.00 seconds"}
    with pytest.raises(ToolError, match="failed: 2026-01-01T00:00:00Z 1-ab Task timed out after 3.00 seconds$"):
        _answer(timed_out, error="Unhandled")
    with pytest.raises(ToolError, match="^the function orders failed: no error message$"):
        _answer({}, error="Unhandled")
    with pytest.raises(ToolError, match="^the function orders failed: Segmentation fault$"):
        _answer(b"Segmentation fault", error="Unhandled", raw=True)


# -- the client context --------------------------------------------------------------------------------------
def _decoded(encoded: str) -> dict[str, Any]:
    custom: dict[str, Any] = json.loads(base64.b64decode(encoded))["custom"]
    return custom


def test_the_client_context_carries_the_caller_the_tool_and_the_request() -> None:
    caller: Any = Caller()
    assert _decoded(client_context("orders", caller)) == {
        "principal": "https://issuer.example.com#alice",
        "tool": "orders",
        "requestId": "7",
    }
    anonymous: Any = Caller(principal=None, request_id="r-1", task_id="t-1")
    assert _decoded(client_context("orders", anonymous)) == {"tool": "orders", "requestId": "r-1", "taskId": "t-1"}


def test_a_client_context_over_lambdas_limit_drops_the_request_then_refuses_the_call() -> None:
    near: Any = Caller(principal="p" * 2600, request_id="r" * 128, task_id="t" * 64)
    encoded = client_context("orders", near)
    assert len(encoded) <= 3583 and _decoded(encoded) == {"principal": "p" * 2600, "tool": "orders"}
    with pytest.raises(ToolError, match="the caller's principal is too long to pass to the function"):
        client_context("orders", Caller(principal="p" * 2700))  # type: ignore[arg-type]


# -- calls through the kit, against the stand-in ----------------------------------------------------------------
def _app() -> MCPApp:
    app = MCPApp("lambdas")
    app.lambda_tool("echo", function="echo", description="Echo the event.")
    app.lambda_tool("order", function="orders", qualifier="live")
    app.lambda_tool("order_by_arn", function=f"{ARN}:3")
    app.lambda_tool("boom", function="boom")
    app.lambda_tool("missing", function="no-such-function")
    for name in ("locked", "busy", "huge"):
        app.lambda_tool(name, function=name)
    return app


async def test_a_call_invokes_the_function_with_exactly_the_arguments_and_the_caller(
    lambda_endpoint: LambdaEndpoint,
) -> None:
    arguments = {"id": "A-7", "lines": [{"sku": "x", "n": 2}], "note": None, "unicode": "ß"}
    async with Client(_app(), principal="alice", raise_exceptions=True) as client:
        result = await client.call_tool("echo", arguments)
    assert not result.is_error
    answered = json.loads(result.text)
    assert answered["event"] == arguments
    (invocation,) = lambda_endpoint.invocations
    assert invocation.payload == arguments and invocation.qualifier is None
    assert invocation.invocation_type == "RequestResponse"
    assert (invocation.signed_for, invocation.region) == ("lambda", "us-east-1")  # SigV4, for Lambda
    custom = invocation.client_context and invocation.client_context["custom"]
    assert custom == answered["custom"]
    assert custom["principal"] == "alice" and custom["tool"] == "echo" and custom["requestId"].isdigit()


async def test_without_a_caller_the_client_context_has_no_principal(lambda_endpoint: LambdaEndpoint) -> None:
    async with Client(_app(), raise_exceptions=True) as client:
        result = await client.call_tool("echo", {})
    assert "principal" not in json.loads(result.text)["custom"]
    assert lambda_endpoint.invocations[0].payload == {}


async def test_the_qualifier_and_the_arns_region_reach_lambda(lambda_endpoint: LambdaEndpoint) -> None:
    async with Client(_app(), raise_exceptions=True) as client:
        aliased = await client.call_tool("order", {"id": "1"})
        by_arn = await client.call_tool("order_by_arn", {"id": "2"})
    assert json.loads(aliased.text) == {
        "id": "1",
        "qualifier": "arn:aws:lambda:us-east-1:123456789012:function:orders:live",
    }
    assert json.loads(by_arn.text)["qualifier"].endswith(":function:orders:3")
    first, second = lambda_endpoint.invocations
    assert (first.function, first.qualifier, first.region) == ("orders", "live", "us-east-1")
    assert (second.function, second.qualifier, second.region) == ("orders", "3", "eu-west-1")  # signed for its region


async def test_a_raising_function_is_a_tool_error_without_its_stack_trace() -> None:
    async with Client(_app(), raise_exceptions=True) as client:
        result = await client.call_tool("boom", {"id": "A-7"})
    assert result.is_error and result.text == "the function boom failed: ValueError: order A-7 is unknown"


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        ("missing", "the function no-such-function could not be invoked: ResourceNotFoundException (no such function)"),
        ("locked", "the function locked could not be invoked: AccessDeniedException (this server may not invoke it)"),
        ("busy", "the function busy could not be invoked: TooManyRequestsException (throttled, try again later)"),
        ("huge", "the function huge could not be invoked: RequestTooLargeException (the arguments are too large"),
    ],
)
async def test_aws_refusing_the_call_is_a_tool_error_naming_the_function_and_the_code(
    tool: str, message: str, lambda_endpoint: LambdaEndpoint, caplog: pytest.LogCaptureFixture
) -> None:
    async with Client(_app(), raise_exceptions=True) as client:
        result = await client.call_tool(tool, {"id": "1"})
    assert result.is_error and result.text.startswith(message)
    assert "arn:" not in result.text and "123456789012" not in result.text  # AWS's details stay in the log
    assert len(lambda_endpoint.invocations) == 1  # never retried: an invocation is not idempotent
    assert any(tool in record.getMessage() and "failed" in record.getMessage() for record in caplog.records)


async def test_an_unreachable_endpoint_is_a_tool_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_LAMBDA", f"http://127.0.0.1:{free_port()}")  # nothing listens there
    async with Client(_app(), raise_exceptions=True) as client:
        result = await client.call_tool("echo", {})
    assert result.is_error and result.text == "the function echo could not be reached: EndpointConnectionError"


async def test_the_call_ends_at_the_requests_deadline_and_never_blocks_the_loop() -> None:
    invocation = Invocation("slow", Target("slow", None, None, "slow"), structured=False)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await anyio.sleep(0.05)
            ticks += 1

    started = time.monotonic()
    async with anyio.create_task_group() as group:
        group.start_soon(tick)
        with pytest.raises(ToolError, match="^the function slow did not answer within 1 s$"):
            await invocation.call({"seconds": 3}, Caller(deadline=time.time() + 1.5))  # type: ignore[arg-type]
        group.cancel_scope.cancel()
    assert 0.9 < time.monotonic() - started < 2.0 and ticks >= 10  # the loop ran while Lambda was waited for


def test_botocore_itself_stops_reading_at_the_calls_timeout() -> None:
    """The thread and its connection are freed at the deadline, not only the wait for them."""
    invocation = Invocation("slow", Target("slow", None, None, "slow"), structured=False)
    started = time.monotonic()
    with pytest.raises(ToolError, match="did not answer within 0.5 s"):
        invocation._invoke({"FunctionName": "slow", "Payload": b'{"seconds": 3}'}, 0.5)
    assert time.monotonic() - started < 1.5


def test_the_lambda_client_honours_aws_endpoint_url_lambda_and_is_made_once(
    lambda_endpoint: LambdaEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = lambda_client()
    assert made is lambda_client()
    assert made.meta.endpoint_url == lambda_endpoint.url and made.meta.region_name == "us-east-1"
    assert made.meta.config.retries["total_max_attempts"] == 1
    assert lambda_client("eu-west-1").meta.region_name == "eu-west-1"
    monkeypatch.delenv("AWS_ENDPOINT_URL_LAMBDA")
    assert lambda_client().meta.endpoint_url == "https://lambda.us-east-1.amazonaws.com"
