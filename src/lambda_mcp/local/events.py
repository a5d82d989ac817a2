"""Lambda events for `lambda-mcp invoke`: MCP requests as a front door would deliver them, and which
handler an event file belongs to.

`invoke --tool NAME` builds its events here rather than from a file: the JSON-RPC body, the
`Mcp-Method` / `Mcp-Name` headers and (on 2026-07-28) the `_meta` the modern wire requires always
agree. The event shapes come from local/gateways.py, as `dev --lambda` builds them.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from ..protocol import revisions
from ..protocol.names import META_CAPABILITIES, META_VERSION
from .gateways import ApiType, Call, http_api_event, rest_api_event

Handler = Literal["http", "worker"]
DOMAINS: dict[ApiType, str] = {
    "http": "local.execute-api.us-east-1.amazonaws.com",
    "rest": "local.execute-api.us-east-1.amazonaws.com",
    "url": "local.lambda-url.us-east-1.on.aws",
}
CLIENT_INFO = {"name": "lambda-mcp-invoke", "version": "1"}


def handler_for(event: object) -> Handler | None:
    """Which entrypoint takes `event`: `http` (API Gateway or Function URL), `worker` (SQS records or
    an EventBridge scheduled event), or None (no shape the kit deploys a handler for)."""
    if not isinstance(event, dict):
        return None
    records = event.get("Records")
    if isinstance(records, list) and records:
        sources = {r.get("eventSource") for r in records if isinstance(r, dict)}
        return "worker" if sources == {"aws:sqs"} else None
    if event.get("source") == "aws.events" or event.get("detail-type") == "Scheduled Event":
        return "worker"
    if "requestContext" in event and ("httpMethod" in event or event.get("version") == "2.0"):
        return "http"
    return None


def request_event(api: ApiType, message: dict[str, Any], version: str, session_id: str | None = None) -> dict[str, Any]:
    """A POST of one JSON-RPC `message` to /mcp through the `api` front door, with the headers the
    revision `version` asks for."""
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "user-agent": "lambda-mcp-invoke",
        "host": DOMAINS[api],
    }
    if message.get("method") != "initialize":
        headers["mcp-protocol-version"] = version
    if revisions.is_modern(version):
        headers["mcp-method"] = str(message["method"])
        name = (message.get("params") or {}).get("name")
        if isinstance(name, str):
            headers["mcp-name"] = name
    if session_id is not None:
        headers["mcp-session-id"] = session_id
    body = json.dumps(message).encode()
    if api == "rest":
        return rest_api_event(Call("POST", "/mcp", headers, body, DOMAINS[api]), "/mcp", None)
    return http_api_event("POST", "/mcp", headers, body, DOMAINS[api])


def tool_call(
    name: str,
    arguments: dict[str, Any],
    version: str,
    request_id: int = 1,
    *,
    capabilities: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A `tools/call` request; on the modern wire with the `_meta` every request carries (the client's
    `capabilities`: none unless given)."""
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if revisions.is_modern(version):
        params["_meta"] = {META_VERSION: version, META_CAPABILITIES: capabilities or {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def initialize(version: str) -> dict[str, Any]:
    """The legacy handshake's `initialize` request, asking for `version`."""
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO}
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


def initialized() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/initialized"}
