"""An in-process HTTP client for the kit's ASGI app that schema-checks every server message it sees."""

from __future__ import annotations

import json
from typing import Any

import httpx

from lambda_mcp.config import Settings
from lambda_mcp.kit import Kit, build_kit
from lambda_mcp.loader import load_app

from .processes import ROOT
from .recorder import Recorder

MODERN = "2026-07-28"
ACCEPT = "application/json, text/event-stream"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


def conformance_kit(*, streaming: bool = False, settings: Settings | None = None) -> Kit:
    app = load_app(str(ROOT / "examples/conformance/server.py"))
    return build_kit(app, settings or Settings(state_key=b"test-key"), streaming=streaming, local=True)


class Exchange:
    def __init__(self, response: httpx.Response, messages: list[dict[str, Any]]) -> None:
        self.status = response.status_code
        self.headers = response.headers
        self.messages = messages
        self.text = response.text
        ids = [line[4:].strip() for line in self.text.splitlines() if line.startswith("id: ")]
        self.last_event_id = ids[-1] if ids else None
        """The id of the last SSE event (where a GET with `Last-Event-ID` resumes), if any."""

    @property
    def body(self) -> dict[str, Any]:
        """The JSON-RPC response (the last message)."""
        return self.messages[-1]

    @property
    def result(self) -> dict[str, Any]:
        assert "result" in self.body, self.body
        result: dict[str, Any] = self.body["result"]
        return result

    @property
    def error(self) -> dict[str, Any]:
        assert "error" in self.body, self.body
        error: dict[str, Any] = self.body["error"]
        return error


class MCPTestClient:
    """Posts to `/mcp` of an ASGI app; `recorder.violations` collects schema problems."""

    def __init__(self, kit: Kit) -> None:
        self.kit = kit
        self.recorder = Recorder()
        self.http = httpx.AsyncClient(transport=httpx.ASGITransport(app=kit.asgi()), base_url="http://127.0.0.1:8000")
        self.session_id: str | None = None
        self.headers: dict[str, str] = {}
        """Sent with every request (e.g. `authorization`), under the request's own headers."""
        self.version = "2025-11-25"
        self._ids = 0

    async def close(self) -> None:
        await self.http.aclose()

    def next_id(self) -> int:
        self._ids += 1
        return self._ids

    async def send(self, method: str, content: bytes | str, headers: dict[str, str] | None = None) -> Exchange:
        request_headers = {"content-type": "application/json", "accept": ACCEPT, **self.headers, **(headers or {})}
        response = await self.http.request(method, "/mcp", content=content, headers=request_headers)
        lowered = {k.lower(): v for k, v in request_headers.items()}
        lowered.setdefault("host", "127.0.0.1:8000")
        response_headers = {k.lower(): v for k, v in response.headers.items()}
        body = content.encode() if isinstance(content, str) else content
        messages = self.recorder.exchange(lowered, body, response.status_code, response_headers, response.content)
        return Exchange(response, messages)

    async def modern(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        headers: dict[str, str] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Exchange:
        """A 2026-07-28 request with correct `_meta` and routing headers unless overridden."""
        body_params = {**(params or {}), "_meta": {**META, **(meta or {})}}
        routing = {"mcp-protocol-version": MODERN, "mcp-method": method}
        name = body_params.get("name") or body_params.get("uri")
        if isinstance(name, str):
            routing["mcp-name"] = name
        message = {"jsonrpc": "2.0", "id": self.next_id(), "method": method, "params": body_params}
        return await self.send("POST", json.dumps(message), {**routing, **(headers or {})})

    async def initialize(self, version: str = "2025-11-25", capabilities: dict[str, Any] | None = None) -> Exchange:
        params = {
            "protocolVersion": version,
            "capabilities": capabilities or {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        message = {"jsonrpc": "2.0", "id": self.next_id(), "method": "initialize", "params": params}
        exchange = await self.send("POST", json.dumps(message))
        self.session_id = exchange.headers.get("mcp-session-id")
        self.version = exchange.result["protocolVersion"]
        return exchange

    def legacy_headers(self) -> dict[str, str]:
        headers = {"mcp-protocol-version": self.version}
        if self.session_id:
            headers["mcp-session-id"] = self.session_id
        return headers

    async def legacy(
        self, method: str, params: dict[str, Any] | None = None, *, headers: dict[str, str] | None = None
    ) -> Exchange:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id(), "method": method}
        if params is not None:
            message["params"] = params
        return await self.send("POST", json.dumps(message), {**self.legacy_headers(), **(headers or {})})
