"""A stand-in for Amazon Bedrock AgentCore Gateway's client side toward an MCP-server target, as AWS
documents it and field reports show it (docs/agentcore.md; the research notes' section 3):

- every request is signed with AWS Signature Version 4 for service `lambda` (a Function URL target with
  IAM outbound auth), with the gateway role's credentials, in us-east-1 by default;
- on 2025-11-25 (what the gateway sends an IAM Function URL target, even when it serves 2026-07-28 to
  its own clients) it opens a session with `initialize` and `notifications/initialized`, keeps the
  target's `Mcp-Session-Id` and reuses it on every later request;
- a 404 for that session (the target no longer knows it) makes it re-initialize once and retry the
  request. AWS does not document what the gateway does there; this is the behaviour the spec asks of a
  client, and the one issue 38 tests the kit against;
- on 2026-07-28 every request is stateless, with the routing headers and `_meta`, and a task tool can
  be run to completion (`tools/call` declaring the tasks extension, then `tasks/get`).

`log` records every HTTP exchange as (JSON-RPC method, HTTP status, session id sent), so a test can
assert what the target answered on the wire, not only what the stand-in made of it.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

import httpx
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
ACCEPT = "application/json, text/event-stream"
TASKS: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
ROLE_CREDENTIALS = Credentials("ASIAGATEWAYROLEFAKE1", "fake-gateway-role-secret", "fake-gateway-session-token")
"""Fake temporary credentials of the gateway's role (an assumed role has a session token)."""
FINAL = ("completed", "failed", "cancelled")


class GatewayFailure(AssertionError):
    """The target answered something the gateway cannot use."""


@dataclass(frozen=True)
class Exchange:
    method: str
    status: int
    session_id: str | None


def message_of(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC response in a JSON body, or the last one in an SSE stream."""
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]
        if not data:
            raise GatewayFailure(f"an event stream with no message: {text!r}")
        text = data[-1]
    try:
        message = json.loads(text)
    except ValueError:
        raise GatewayFailure(f"HTTP {response.status_code}, not JSON: {text[:300]!r}") from None
    if not isinstance(message, dict):
        raise GatewayFailure(f"not a JSON-RPC message: {message!r}")
    return message


class AgentCoreGateway:
    """The gateway's side of one target: `url` is the target's MCP endpoint."""

    def __init__(
        self,
        url: str,
        *,
        version: str = LEGACY,
        credentials: Credentials = ROLE_CREDENTIALS,
        region: str = "us-east-1",
        service: str = "lambda",
        timeout: float = 30.0,
    ) -> None:
        self.url = url
        self.version = version
        self.credentials = credentials
        self.region = region
        self.service = service
        self.session_id: str | None = None
        self.initializations = 0
        self.log: list[Exchange] = []
        self._ids = 0
        self._http = httpx.Client(timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> AgentCoreGateway:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- the wire ----------------------------------------------------------------------------------
    def signed_headers(self, method: str, body: bytes, headers: dict[str, str]) -> dict[str, str]:
        """`headers` with the SigV4 ones added: Authorization, X-Amz-Date, the session token, and the
        payload hash (a Function URL wants it on POST)."""
        signed = {**headers, "x-amz-content-sha256": hashlib.sha256(body).hexdigest()}
        request = AWSRequest(method=method, url=self.url, data=body, headers=signed)
        SigV4Auth(self.credentials, self.service, self.region).add_auth(request)
        return {name.lower(): value for name, value in request.headers.items()}

    def _post(self, message: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
        body = json.dumps(message).encode()
        base = {"content-type": "application/json", "accept": ACCEPT, **headers}
        response = self._http.post(self.url, content=body, headers=self.signed_headers("POST", body, base))
        self.log.append(Exchange(message["method"], response.status_code, headers.get("mcp-session-id")))
        return response

    def _message(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        self._ids += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._ids, "method": method}
        if params is not None:
            message["params"] = params
        return message

    # -- 2025-11-25: a kept session ------------------------------------------------------------------
    def initialize(self) -> dict[str, Any]:
        """Open a session as the gateway does on its first call to a target; keep its id."""
        params = {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "stand-in-agentcore-gateway", "version": "1"},
        }
        response = self._post(self._message("initialize", params), {})
        if response.status_code != 200:
            raise GatewayFailure(f"initialize answered HTTP {response.status_code}: {response.text[:300]}")
        result = message_of(response).get("result")
        if not isinstance(result, dict) or result.get("protocolVersion") != LEGACY:
            raise GatewayFailure(f"initialize did not agree on {LEGACY}: {response.text[:300]}")
        self.session_id = response.headers.get("mcp-session-id")
        self.initializations += 1
        headers = self._legacy_headers()
        done = self._post({"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
        if done.status_code != 202:
            raise GatewayFailure(f"notifications/initialized answered HTTP {done.status_code}: {done.text[:300]}")
        return result

    def _legacy_headers(self) -> dict[str, str]:
        headers = {"mcp-protocol-version": LEGACY}
        if self.session_id:
            headers["mcp-session-id"] = self.session_id
        return headers

    def _legacy(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        if self.initializations == 0:
            self.initialize()
        message = self._message(method, params)
        response = self._post(message, self._legacy_headers())
        if response.status_code == 404 and self.session_id is not None:
            # the target forgot the session: re-initialize once, then retry the same request
            self.session_id = None
            self.initialize()
            response = self._post(message, self._legacy_headers())
        if response.status_code != 200:
            raise GatewayFailure(f"{method} answered HTTP {response.status_code}: {response.text[:300]}")
        return message_of(response)

    # -- 2026-07-28: stateless -----------------------------------------------------------------------
    def _modern(
        self, method: str, params: dict[str, Any] | None, capabilities: dict[str, Any] | None
    ) -> dict[str, Any]:
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        }
        body_params = {**(params or {}), "_meta": meta}
        headers = {"mcp-protocol-version": MODERN, "mcp-method": method}
        name = body_params.get("name") or body_params.get("uri") or body_params.get("taskId")
        if isinstance(name, str):
            headers["mcp-name"] = name
        response = self._post(self._message(method, body_params), headers)
        if response.status_code != 200:
            raise GatewayFailure(f"{method} answered HTTP {response.status_code}: {response.text[:300]}")
        return message_of(response)

    # -- what a gateway asks ---------------------------------------------------------------------------
    def request(
        self, method: str, params: dict[str, Any] | None = None, *, capabilities: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """One JSON-RPC request in this gateway's protocol version; the response message."""
        if self.version == MODERN:
            return self._modern(method, params, capabilities)
        return self._legacy(method, params)

    def result(self, method: str, params: dict[str, Any] | None = None, **options: Any) -> dict[str, Any]:
        answer = self.request(method, params, **options)
        if "result" not in answer:
            raise GatewayFailure(f"{method} failed: {answer}")
        return dict(answer["result"])

    def list_tools(self) -> list[dict[str, Any]]:
        return list(self.result("tools/list")["tools"])

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.result("tools/call", {"name": name, "arguments": arguments or {}})

    def run_task(
        self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float = 20.0
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """On 2026-07-28: call a task tool declaring the tasks extension, then `tasks/get` until the task
        is final. Returns (the `tools/call` result, the final task)."""
        if self.version != MODERN:
            raise GatewayFailure("run_task drives the 2026-07-28 tasks extension")
        created = self.result("tools/call", {"name": name, "arguments": arguments or {}}, capabilities=TASKS)
        if created.get("resultType") != "task" or not created.get("taskId"):
            raise GatewayFailure(f"{name} did not start a task: {created}")
        deadline = time.monotonic() + timeout
        while True:
            task = self.result("tasks/get", {"taskId": created["taskId"]}, capabilities=TASKS)
            if task.get("status") in FINAL:
                return created, task
            if task.get("status") != "working":
                raise GatewayFailure(f"task {created['taskId']} is {task.get('status')}, which a gateway cannot serve")
            if time.monotonic() > deadline:
                raise GatewayFailure(f"task {created['taskId']} still working after {timeout}s: {task}")
            time.sleep(0.1)
