"""Bad input gets the right JSON-RPC code and HTTP status, never a stack trace or a 500."""

from __future__ import annotations

import json

import pytest

from lambda_mcp.config import Settings
from tests.support.client import MCPTestClient, conformance_kit

pytestmark = pytest.mark.anyio


async def test_malformed_json_is_a_parse_error_with_400(client: MCPTestClient) -> None:
    exchange = await client.send("POST", b'{"jsonrpc": "2.0", "id": 1, "method": ')
    assert exchange.status == 400
    assert exchange.error["code"] == -32700
    assert "id" not in exchange.body


async def test_envelope_without_jsonrpc_version_is_invalid_request_echoing_the_id(client: MCPTestClient) -> None:
    exchange = await client.send("POST", json.dumps({"id": 7, "method": "tools/list"}))
    assert exchange.status == 400
    assert exchange.error["code"] == -32600
    assert exchange.body["id"] == 7


async def test_params_that_are_not_an_object_are_an_invalid_request(client: MCPTestClient) -> None:
    exchange = await client.send("POST", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]}))
    assert exchange.status == 400
    assert exchange.error["code"] == -32600


async def test_non_object_body_is_an_invalid_request(client: MCPTestClient) -> None:
    exchange = await client.send("POST", b'"hello"')
    assert exchange.status == 400
    assert exchange.error["code"] == -32600


async def test_tool_arguments_of_the_wrong_type_are_a_tool_error_the_model_can_read(client: MCPTestClient) -> None:
    exchange = await client.modern("tools/call", {"name": "test_sampling", "arguments": {"prompt": 42}})
    assert exchange.status == 200
    assert exchange.result["isError"] is True
    assert "prompt" in exchange.result["content"][0]["text"]


async def test_tool_name_of_the_wrong_type_is_invalid_params(client: MCPTestClient) -> None:
    await client.initialize()
    exchange = await client.legacy("tools/call", {"name": 5})
    assert exchange.error["code"] == -32602


async def test_unknown_tool_is_invalid_params(client: MCPTestClient) -> None:
    exchange = await client.modern("tools/call", {"name": "no_such_tool"})
    assert exchange.error["code"] == -32602
    assert "no_such_tool" in exchange.error["message"]


async def test_unknown_method_is_404_on_the_modern_wire(client: MCPTestClient) -> None:
    exchange = await client.modern("tools/frobnicate")
    assert exchange.status == 404
    assert exchange.error["code"] == -32601


async def test_unknown_method_is_method_not_found_on_the_legacy_wire(client: MCPTestClient) -> None:
    await client.initialize()
    exchange = await client.legacy("tools/frobnicate", {})
    assert exchange.status == 200
    assert exchange.error["code"] == -32601


async def test_oversized_body_is_413_with_a_reason() -> None:
    client = MCPTestClient(conformance_kit(settings=Settings(state_key=b"k", max_body_bytes=512)))
    try:
        big = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * 2000}})
        exchange = await client.send("POST", big)
        assert exchange.status == 413
        assert "too large" in exchange.error["message"]
    finally:
        await client.close()


async def test_foreign_origin_is_403(client: MCPTestClient) -> None:
    exchange = await client.modern("server/discover", headers={"origin": "https://evil.example.com"})
    assert exchange.status == 403


async def test_foreign_host_is_403(client: MCPTestClient) -> None:
    exchange = await client.modern("server/discover", headers={"host": "evil.example.com"})
    assert exchange.status == 403


async def test_configured_host_is_allowed() -> None:
    client = MCPTestClient(conformance_kit(settings=Settings(state_key=b"k", allowed_hosts=("mcp.example.com",))))
    try:
        exchange = await client.modern("server/discover", headers={"host": "mcp.example.com"})
        assert exchange.status == 200
    finally:
        await client.close()


async def test_unknown_session_is_404(client: MCPTestClient) -> None:
    exchange = await client.legacy("tools/list", {}, headers={"mcp-session-id": "not-a-session"})
    assert exchange.status == 404


async def test_missing_session_is_400(client: MCPTestClient) -> None:
    exchange = await client.send("POST", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    assert exchange.status == 400
    assert "MCP-Session-Id" in exchange.error["message"]


async def test_deleted_session_is_404(client: MCPTestClient) -> None:
    await client.initialize()
    deleted = await client.send("DELETE", b"", client.legacy_headers())
    assert deleted.status == 200
    exchange = await client.legacy("tools/list", {})
    assert exchange.status == 404


async def test_unsupported_legacy_protocol_version_header_is_400(client: MCPTestClient) -> None:
    await client.initialize()
    exchange = await client.legacy("tools/list", {}, headers={"mcp-protocol-version": "2024-01-01"})
    assert exchange.status == 400


@pytest.mark.parametrize(
    ("headers", "fragment"),
    [
        ({"mcp-method": "tools/list"}, "Mcp-Method"),
        ({"mcp-name": "other_tool"}, "Mcp-Name"),
        ({"mcp-name": "=?base64?not*base64?="}, "Base64"),
        ({"mcp-protocol-version": "2025-11-25"}, "MCP-Protocol-Version"),
    ],
)
async def test_bad_routing_headers_are_header_mismatch_with_400(
    client: MCPTestClient, headers: dict[str, str], fragment: str
) -> None:
    exchange = await client.modern("tools/call", {"name": "test_simple_text", "arguments": {}}, headers=headers)
    assert exchange.status == 400
    assert exchange.error["code"] == -32020
    assert fragment in exchange.error["message"]


async def test_base64_encoded_routing_header_is_decoded(client: MCPTestClient) -> None:
    exchange = await client.modern(
        "tools/call",
        {"name": "test_simple_text", "arguments": {}},
        headers={"mcp-name": "=?base64?dGVzdF9zaW1wbGVfdGV4dA==?="},
    )
    assert exchange.status == 200
    assert exchange.result["content"][0]["text"].startswith("This is a simple text")


async def test_missing_mcp_param_header_for_a_routed_argument_is_rejected(client: MCPTestClient) -> None:
    exchange = await client.modern("tools/call", {"name": "test_x_mcp_header", "arguments": {"region": "eu"}})
    assert exchange.status == 400
    assert exchange.error["code"] == -32020
    ok = await client.modern(
        "tools/call", {"name": "test_x_mcp_header", "arguments": {"region": "eu"}}, headers={"mcp-param-region": "eu"}
    )
    assert ok.result["content"][0]["text"] == "region=eu"


async def test_missing_meta_fields_are_invalid_params_with_400(client: MCPTestClient) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"}
    exchange = await client.send("POST", json.dumps(message), headers)
    assert exchange.status == 400
    assert exchange.error["code"] == -32602


async def test_unsupported_modern_version_is_32022_listing_supported_versions(client: MCPTestClient) -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "1900-01-01"}
    exchange = await client.modern("tools/list", meta=meta, headers={"mcp-protocol-version": "1900-01-01"})
    assert exchange.status == 400
    assert exchange.error["code"] == -32022
    assert exchange.error["data"]["requested"] == "1900-01-01"
    assert "2026-07-28" in exchange.error["data"]["supported"]


async def test_missing_client_capability_is_32021_with_required_capabilities(client: MCPTestClient) -> None:
    exchange = await client.modern("tools/call", {"name": "test_missing_capability", "arguments": {}})
    assert exchange.status == 400
    assert exchange.error["code"] == -32021
    assert exchange.error["data"]["requiredCapabilities"] == {"sampling": {}}


async def test_get_and_delete_without_a_session_on_the_modern_wire_are_405(client: MCPTestClient) -> None:
    assert (await client.send("GET", b"", {"mcp-protocol-version": "2026-07-28"})).status == 405
    assert (await client.send("DELETE", b"", {"mcp-protocol-version": "2026-07-28"})).status == 405


async def test_invalid_cursor_is_invalid_params(client: MCPTestClient) -> None:
    exchange = await client.modern("tools/list", {"cursor": "definitely-not-ours"})
    assert exchange.error["code"] == -32602


async def test_invalid_log_level_is_invalid_params(client: MCPTestClient) -> None:
    await client.initialize()
    exchange = await client.legacy("logging/setLevel", {"level": "verbose"})
    assert exchange.error["code"] == -32602


async def test_an_exception_inside_the_kit_is_a_500_without_internals() -> None:
    kit = conformance_kit()

    async def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret internals")

    kit.endpoint.front.read = explode  # type: ignore[method-assign]
    client = MCPTestClient(kit)
    try:
        exchange = await client.send("POST", b"{}")
        assert exchange.status == 500
        assert "secret" not in json.dumps(exchange.body)
        assert exchange.error["code"] == -32603
    finally:
        await client.close()
