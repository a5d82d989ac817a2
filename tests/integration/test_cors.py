"""CORS for browser clients (issue 12): the origins `LAMBDA_MCP_ALLOWED_ORIGINS` lists get their preflight
answered and the headers they must read exposed; any other origin gets no CORS header and a 403."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest

from lambda_mcp.config import Settings
from lambda_mcp.kit import build_kit
from lambda_mcp.loader import load_app
from tests.support.processes import ROOT

pytestmark = pytest.mark.anyio
APP_ORIGIN = "https://app.example.com"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    app = load_app(str(ROOT / "examples/conformance/server.py"))
    kit = build_kit(app, Settings(state_key=b"k", allowed_origins=(APP_ORIGIN,)), streaming=False, local=True)
    transport = httpx.ASGITransport(app=kit.asgi())
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
        yield client


async def test_a_preflight_from_an_allowed_origin_is_answered_with_what_mcp_sends(http: httpx.AsyncClient) -> None:
    asked = "Content-Type, Mcp-Session-Id, MCP-Protocol-Version, Mcp-Param-City, Authorization, X-Evil"
    headers = {"origin": APP_ORIGIN, "access-control-request-method": "POST", "access-control-request-headers": asked}
    preflight = await http.options("/mcp", headers=headers)
    assert preflight.status_code == 204 and preflight.content == b""
    assert preflight.headers["access-control-allow-origin"] == APP_ORIGIN
    assert set(preflight.headers["access-control-allow-methods"].split(", ")) == {"GET", "POST", "DELETE", "OPTIONS"}
    allowed = set(preflight.headers["access-control-allow-headers"].split(", "))
    assert allowed == {"content-type", "mcp-session-id", "mcp-protocol-version", "mcp-param-city", "authorization"}
    assert preflight.headers["vary"] == "Origin" and int(preflight.headers["access-control-max-age"]) > 0


async def test_responses_to_an_allowed_origin_expose_the_session_id(http: httpx.AsyncClient) -> None:
    headers = {"origin": APP_ORIGIN, "accept": "application/json, text/event-stream"}
    answered = await http.post("/mcp", content=json.dumps(INITIALIZE), headers=headers)
    assert answered.status_code == 200 and "mcp-session-id" in answered.headers
    assert answered.headers["access-control-allow-origin"] == APP_ORIGIN
    exposed = {name.strip().lower() for name in answered.headers["access-control-expose-headers"].split(",")}
    assert {"mcp-session-id", "www-authenticate", "mcp-protocol-version"} <= exposed


async def test_another_origin_gets_no_cors_header_and_a_403(http: httpx.AsyncClient) -> None:
    evil = {"origin": "https://evil.example.net", "access-control-request-method": "POST"}
    preflight = await http.options("/mcp", headers=evil)
    assert preflight.status_code == 403 and "access-control-allow-origin" not in preflight.headers
    posted = await http.post("/mcp", content=json.dumps(INITIALIZE), headers={"origin": "https://evil.example.net"})
    assert posted.status_code == 403 and "access-control-allow-origin" not in posted.headers


async def test_a_client_without_an_origin_sees_no_cors_headers(http: httpx.AsyncClient) -> None:
    answered = await http.post("/mcp", content=json.dumps(INITIALIZE), headers={"accept": "application/json"})
    assert answered.status_code == 200 and not any(k.startswith("access-control") for k in answered.headers)
    assert (await http.options("/mcp")).status_code == 405  # not a preflight: the endpoint's own answer
