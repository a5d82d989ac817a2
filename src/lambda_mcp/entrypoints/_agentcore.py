"""Serve one AgentCore Gateway Lambda-target invocation on a kit: one synchronous invocation per tool
call (`agentcore.py` is the entrypoint that builds the kit; tests run this on kits of their own).

The gateway's invocation, as AWS documents it
(gateway-add-target-lambda): the event is the tool's arguments object; the Lambda client context's
`custom` map carries `bedrockAgentCoreToolName` (`<target>___<tool>`: the target's name, which can hold
no underscore, then three underscores), `bedrockAgentCoreGatewayId`, `bedrockAgentCoreTargetId`,
`bedrockAgentCoreAwsRequestId`, `bedrockAgentCoreMcpMessageId` and `bedrockAgentCoreMessageVersion`.

Each invocation is a 2026-07-28 `tools/call` built here and served by the kit's own dispatcher: the same
argument validation, `ToolError` handling, middlewares, JSON log line and metrics as `/mcp`. It returns
the MCP `CallToolResult` (`content`, `isError`, `structuredContent` when the tool has it), as AWS's
run-mcp handler does. Nothing is raised for a caller's mistake: an unknown tool, bad arguments, or a tool
that needs what a synchronous Lambda target cannot give (elicitation, sampling, roots, a task) each end
in an `isError` result that says so.

Identity: the client context documents no key for the gateway's inbound caller (its JWT claims or IAM
principal), so the principal is `agentcore:<gateway id>` (None without a gateway id) and scopes are not
enforced, as under `LAMBDA_MCP_AUTH=none`: whoever may invoke this function (the gateway's role, by the
function's resource policy) may call every tool. The gateway and target ids go on the log line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..dispatch.context import Channel, RequestContext
from ..kit import Kit
from ..observe.invocation import invocation, note
from ..protocol import jsonrpc, revisions
from ..protocol.errors import MISSING_CLIENT_CAPABILITY
from ..runloop import run

if TYPE_CHECKING:
    from ..observe.powertools import Observer

DELIMITER = "___"
"""Between the target's name and the tool's in `bedrockAgentCoreToolName`."""
TOOL_NAME_KEY = "bedrockAgentCoreToolName"
GATEWAY_ID_KEY = "bedrockAgentCoreGatewayId"
TARGET_ID_KEY = "bedrockAgentCoreTargetId"
REQUEST_ID_KEY = "bedrockAgentCoreAwsRequestId"
MESSAGE_ID_KEY = "bedrockAgentCoreMcpMessageId"
PRINCIPAL_PREFIX = "agentcore:"
_WHAT = {
    "elicitation": "ask the user for input (elicitation)",
    "sampling": "ask the client's model (sampling)",
    "roots": "list the client's roots",
    "extensions": "run as a task",
}


def gateway_fields(context: Any) -> dict[str, Any]:
    """The client context's `custom` map the gateway sets ({} when there is none)."""
    client_context = getattr(context, "client_context", None)
    custom = getattr(client_context, "custom", None)
    return dict(custom) if isinstance(custom, dict) else {}


def tool_name(gateway_name: str) -> str:
    """The app's tool name: everything after the FIRST `___` (a target name has no underscore, a tool name
    may hold `___`); the name as given when it has no prefix."""
    _, found, rest = gateway_name.partition(DELIMITER)
    return rest if found else gateway_name


def error_result(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}


class LambdaTarget:
    """Runs one Lambda-target invocation through a kit's dispatcher."""

    def __init__(self, kit: Kit) -> None:
        self.kit = kit

    async def call(self, event: Any, fields: dict[str, Any]) -> dict[str, Any]:
        """The `CallToolResult` for one invocation: `event` the arguments, `fields` the client context's."""
        gateway_name = fields.get(TOOL_NAME_KEY)
        if not isinstance(gateway_name, str) or not gateway_name:
            return error_result(f"No tool named: the Lambda client context has no {TOOL_NAME_KEY}")
        name = tool_name(gateway_name)
        gateway = fields.get(GATEWAY_ID_KEY)
        principal = f"{PRINCIPAL_PREFIX}{gateway}" if isinstance(gateway, str) and gateway else None
        note(
            agentcore_gateway_id=gateway,
            agentcore_target_id=fields.get(TARGET_ID_KEY),
            agentcore_tool=gateway_name,
            principal=principal,
        )
        message_id = fields.get(MESSAGE_ID_KEY)
        request_id = message_id if jsonrpc.valid_id(message_id) else "agentcore"
        params: dict[str, Any] = {"name": name, "arguments": {} if event is None else event}
        raw = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
        message = jsonrpc.Message("request", raw, request_id, "tools/call", params)
        request = RequestContext("modern", revisions.MODERN, {}, None, principal, None, request_id)
        reply = await self.kit.dispatcher.handle(message, request, Channel())
        response = reply.response or {}
        if "error" in response:
            return error_result(_refusal(name, response["error"]))
        result = response.get("result") or {}
        if result.get("resultType") == "input_required":  # the tool asked the client for something
            return error_result(_cannot(name, "ask the client for input"))
        shaped: dict[str, Any] = {"content": result.get("content", []), "isError": result.get("isError") is True}
        if "structuredContent" in result:
            shaped["structuredContent"] = result["structuredContent"]
        return shaped


def _cannot(name: str, what: str) -> str:
    return (
        f"The tool {name} needs to {what}, which an AgentCore Gateway Lambda target cannot do: the gateway"
        " invokes it synchronously, once per call. Serve this tool from an MCP-server target instead."
    )


def _refusal(name: str, error: dict[str, Any]) -> str:
    """The text of an error result for a JSON-RPC error of the call."""
    text = str(error.get("message") or "The call failed")
    data = error.get("data")
    needed = data.get("requiredCapabilities") if isinstance(data, dict) else None
    if error.get("code") == MISSING_CLIENT_CAPABILITY and isinstance(needed, dict) and needed:
        return _cannot(name, " and ".join(_WHAT.get(str(key)) or str(key) for key in needed))
    return text


def observed(target: LambdaTarget, report: Observer, context: Any, event: Any) -> dict[str, Any]:
    """One invocation under its own log line and metrics (`report`: the entrypoints' `Observer`)."""
    fields = gateway_fields(context)
    correlation = fields.get(REQUEST_ID_KEY) or getattr(context, "aws_request_id", None)
    with invocation(str(correlation) if correlation else None, cold_start=report.take_cold_start()) as record:
        result: dict[str, Any] = error_result("Internal error")
        try:
            result = run(target.call(event, fields))
            return result
        finally:
            report.write(record, "agentcore tool call", is_error=result.get("isError") is True)
