"""`Client`: drive an app in process through the kit's real HTTP endpoint (the stateless 2026-07-28 wire
over ASGI), with no network and no server to start: for an app's tests.

```python
from lambda_mcp.testing import Client

async def test_forecast() -> None:  # with pytest's anyio plugin: @pytest.mark.anyio
    async with Client(app) as client:
        result = await client.call_tool("forecast", {"city": "Lisbon"})
        assert not result.is_error and "Lisbon" in result.text
```
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from .config import Settings
from .kit import build_kit
from .server.app import MCPApp
from .transport.app import create_app

VERSION = "2026-07-28"
HOST = "127.0.0.1:8000"


class RequestFailed(Exception):
    """The server answered a JSON-RPC error (`code`, `message`, `data`)."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = error.get("code")
        self.data = error.get("data")


@dataclass(frozen=True)
class ToolResult:
    """A `CallToolResult`: `content` blocks, `structured_content`, `is_error`; `text` joins the text blocks."""

    content: list[dict[str, Any]]
    structured_content: dict[str, Any] | None = None
    is_error: bool = False
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n".join(block["text"] for block in self.content if block.get("type") == "text")


class Client:
    """A client of `app` in this process; each method sends one request and returns its result."""

    def __init__(self, app: MCPApp, *, capabilities: dict[str, Any] | None = None) -> None:
        self.kit = build_kit(app, Settings(state_key=secrets.token_bytes(32)), streaming=False, local=True)
        self.asgi = create_app(self.kit)
        self.capabilities = capabilities or {}
        self._ids = 0

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        return None

    async def list_tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = (await self.request("tools/list"))["tools"]
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
        raw = await self.request("tools/call", {"name": name, "arguments": arguments or {}}, name=name)
        return ToolResult(raw.get("content", []), raw.get("structuredContent"), raw.get("isError") is True, raw)

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        contents: list[dict[str, Any]] = (await self.request("resources/read", {"uri": uri}, name=uri))["contents"]
        return contents

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
        prompt: dict[str, Any] = await self.request(
            "prompts/get", {"name": name, "arguments": arguments or {}}, name=name
        )
        return prompt

    async def request(self, method: str, params: dict[str, Any] | None = None, *, name: str | None = None) -> Any:
        """Any request's result; raises `RequestFailed` for a JSON-RPC error."""
        self._ids += 1
        meta = {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": self.capabilities,
        }
        message = {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": {**(params or {}), "_meta": meta}}
        headers = [
            (b"host", HOST.encode()),
            (b"content-type", b"application/json"),
            (b"accept", b"application/json"),
            (b"mcp-protocol-version", VERSION.encode()),
            (b"mcp-method", method.encode()),
        ]
        if name is not None:
            headers.append((b"mcp-name", name.encode()))
        status, answer = await _post(self.asgi, headers, json.dumps(message).encode())
        decoded = json.loads(answer)
        if "error" in decoded:
            raise RequestFailed(decoded["error"])
        if status != 200:
            raise RequestFailed({"code": status, "message": answer.decode(errors="replace")})
        return decoded["result"]


async def _post(app: Any, headers: list[tuple[bytes, bytes]], body: bytes) -> tuple[int, bytes]:
    """One POST to `/mcp` through the ASGI app (the body, then a disconnect, as a server would send)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    delivered = False
    status = 0
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if delivered:
            return {"type": "http.disconnect"}
        delivered = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    return status, b"".join(chunks)
