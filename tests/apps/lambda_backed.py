"""A test app whose tools are Lambda functions (`app.lambda_tool`): tests/integration/test_lambda_tools.py serves
it with `lambda-mcp dev --lambda`, `AWS_ENDPOINT_URL_LAMBDA` pointing at the stand-in
(tests/support/lambda_endpoint.py)."""

from __future__ import annotations

from lambda_mcp import MCPApp

app = MCPApp("lambda-backed", version="1.0.0")

app.lambda_tool(
    "lookup_order",
    function="lookup-order",
    description="Look up an order by its id.",
    input_schema={"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
)
app.lambda_tool(
    "order_total",
    function="arn:aws:lambda:us-east-1:123456789012:function:order-total",
    qualifier="live",
    description="The total of an order (long: it may run as a task).",
    input_schema={"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
    output_schema={"type": "object", "properties": {"id": {"type": "string"}, "total": {"type": "number"}}},
    task_support="optional",
)
app.lambda_tool("explode", function="explode", description="A function that raises.")
app.lambda_tool("missing", function="no-such-function", description="A function that does not exist.")
