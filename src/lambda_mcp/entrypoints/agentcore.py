"""The AgentCore Gateway Lambda-target handler: serves the app's tools to a gateway that invokes this
function as a "Lambda target", one synchronous invocation per tool call.

Deployed as `lambda_mcp.entrypoints.agentcore.handler` with the same `LAMBDA_MCP_*` settings as the HTTP
function (`LAMBDA_MCP_APP` at least), and a resource policy letting the gateway's role invoke it. The
event is the tool's arguments; the tool's name is the client context's `bedrockAgentCoreToolName` less
its `<target>___` prefix. Each call is a 2026-07-28 `tools/call` served by the kit's own dispatcher (same
validation, errors, log line and metrics as `/mcp`) and answered with the MCP `CallToolResult`; an unknown
tool, bad arguments, or a tool that elicits, samples, lists roots or must run as a task ends in a clear
`isError` result, never a function error (`_agentcore.py` has the details).

Identity: the gateway's client context documents no key for its inbound caller, so the principal is
`agentcore:<bedrockAgentCoreGatewayId>` and scopes are not enforced (`LAMBDA_MCP_AUTH=none` semantics):
whoever may invoke the function may call every tool. The gateway and target ids go on the log line.
"""

from __future__ import annotations

from typing import Any

from ._agentcore import LambdaTarget, observed
from ._kit import lambda_kit, lambda_observer
from ._loop import start_lifespan

kit = lambda_kit()
start_lifespan(kit.app.lifespans)  # process-wide resources: at cold start
_target = LambdaTarget(kit)
_observer = lambda_observer()


def _handler(event: Any, context: Any) -> dict[str, Any]:
    return observed(_target, _observer, context, event)


handler = _observer.tracer.capture_lambda_handler(_handler) if _observer.tracer is not None else _handler
"""Each gateway invocation: one JSON log line (correlation id = the gateway's request id) and its metrics."""
