"""A kit running stateless (`serve --agentcore`: the Runtime's platform mints its own `Mcp-Session-Id`s)
answers a legacy request on a session it never stored: tools work, `logging/setLevel` is accepted with
nothing to keep, and a subscription is a clear error, never an internal one."""

from __future__ import annotations

import httpx
import pytest

from lambda_mcp.config import Settings
from lambda_mcp.kit import Stores, build_kit
from lambda_mcp.loader import load_app

pytestmark = pytest.mark.anyio


async def test_a_session_the_kit_never_stored_gets_answers_not_internal_errors() -> None:
    app = load_app("examples/conformance/server.py")
    kit = build_kit(app, Settings(), streaming=True, local=True, stores=Stores.memory(), stateless=True)
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-session-id": "minted-by-the-platform",
        "mcp-protocol-version": "2025-11-25",
    }
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=kit.asgi()), base_url="http://127.0.0.1:8000"
    ) as http:

        async def send(method: str, params: dict[str, object]) -> dict[str, object]:
            message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
            response = await http.post("/mcp", json=message, headers=headers)
            assert response.status_code == 200, response.text
            return dict(response.json())

        assert (await send("logging/setLevel", {"level": "info"}))["result"] == {}
        for method in ("resources/subscribe", "resources/unsubscribe"):
            refused = await send(method, {"uri": "test://static-text"})
            assert refused["error"] == {  # type: ignore[comparison-overlap]
                "code": -32602,
                "message": "This server runs stateless: its sessions keep no subscriptions",
            }
        called = await send("tools/call", {"name": "test_simple_text", "arguments": {}})
        assert "simple text" in str(called["result"])
