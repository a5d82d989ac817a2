"""A hand-written 2026 request gets one error naming everything it lacks, each item with what to send, and
keeps the status and JSON-RPC code a single problem has always had; `Mcp-Name` errors say what the header
carries for the method."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.client import Exchange, MCPTestClient

pytestmark = pytest.mark.anyio

VERSION = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CALL = {"name": "test_simple_text", "arguments": {}}
ALL_HEADERS = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "test_simple_text"}
FULL_META = {VERSION: "2026-07-28", CAPABILITIES: {}}


async def post(
    client: MCPTestClient, params: dict[str, Any], headers: dict[str, str], method: str = "tools/call"
) -> Exchange:
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return await client.send("POST", json.dumps(message), headers)


def without(headers: dict[str, str], *names: str) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k not in names}


async def test_the_same_request_with_everything_succeeds(client: MCPTestClient) -> None:
    exchange = await post(client, {**CALL, "_meta": FULL_META}, ALL_HEADERS)
    assert exchange.status == 200
    assert exchange.result["content"][0]["text"].startswith("This is a simple text")


async def test_two_missing_headers_are_named_in_one_error(client: MCPTestClient) -> None:
    exchange = await post(client, {**CALL, "_meta": FULL_META}, without(ALL_HEADERS, "mcp-method", "mcp-name"))
    assert exchange.status == 400
    assert exchange.error["code"] == -32020
    message = exchange.error["message"]
    assert "2 problems" in message
    assert "header Mcp-Method: tools/call" in message
    assert "header Mcp-Name: test_simple_text" in message


async def test_three_missing_items_with_only_the_meta_version_are_named_in_one_error(client: MCPTestClient) -> None:
    exchange = await post(client, {**CALL, "_meta": {VERSION: "2026-07-28", CAPABILITIES: {}}}, {})
    assert exchange.status == 400
    assert exchange.error["code"] == -32020  # the first: the version header
    message = exchange.error["message"]
    assert "3 problems" in message
    for item in ("header MCP-Protocol-Version: 2026-07-28", "header Mcp-Method: tools/call", "header Mcp-Name"):
        assert item in message


async def test_four_missing_items_are_named_in_one_error_with_what_to_send(client: MCPTestClient) -> None:
    exchange = await post(client, {**CALL, "_meta": {VERSION: "2026-07-28"}}, {})
    assert exchange.status == 400
    assert exchange.error["code"] == -32020
    message = exchange.error["message"]
    assert "4 problems" in message
    for item in (
        "header MCP-Protocol-Version: 2026-07-28",
        f"params._meta.{CAPABILITIES}: {{}}",
        "header Mcp-Method: tools/call",
        "header Mcp-Name: test_simple_text (for tools/call it carries the tool name, params.name)",
    ):
        assert item in message


async def test_missing_meta_first_keeps_invalid_params_and_still_names_the_headers(client: MCPTestClient) -> None:
    exchange = await post(client, CALL, {"mcp-protocol-version": "2026-07-28"})
    assert exchange.status == 400
    assert exchange.error["code"] == -32602
    message = exchange.error["message"]
    assert "4 problems" in message
    assert f'params._meta.{VERSION}: "2026-07-28"' in message
    assert f"params._meta.{CAPABILITIES}: {{}}" in message
    assert "header Mcp-Method: tools/call" in message and "header Mcp-Name" in message


async def test_missing_and_mismatched_items_are_grouped_by_kind(client: MCPTestClient) -> None:
    headers = {**without(ALL_HEADERS, "mcp-method"), "mcp-name": "other_tool"}
    exchange = await post(client, {**CALL, "_meta": FULL_META}, headers)
    assert exchange.error["code"] == -32020
    message = exchange.error["message"]
    assert "missing: header Mcp-Method: tools/call" in message
    assert "mismatched: header Mcp-Name must match params.name: test_simple_text" in message


@pytest.mark.parametrize(
    ("dropped", "code", "fragment"),
    [
        ("mcp-protocol-version", -32020, "Missing MCP-Protocol-Version header: send MCP-Protocol-Version: 2026-07-28"),
        ("mcp-method", -32020, "Missing Mcp-Method header: send Mcp-Method: tools/call"),
        ("mcp-name", -32020, "Missing Mcp-Name header: send Mcp-Name: test_simple_text"),
    ],
)
async def test_a_single_missing_header_keeps_its_status_code_and_own_message(
    client: MCPTestClient, dropped: str, code: int, fragment: str
) -> None:
    exchange = await post(client, {**CALL, "_meta": FULL_META}, without(ALL_HEADERS, dropped))
    assert exchange.status == 400
    assert exchange.error["code"] == code
    assert exchange.error["message"].startswith(fragment)
    assert "problems" not in exchange.error["message"]


async def test_a_single_missing_meta_field_keeps_invalid_params(client: MCPTestClient) -> None:
    exchange = await post(client, {**CALL, "_meta": {VERSION: "2026-07-28"}}, ALL_HEADERS)
    assert exchange.status == 400
    assert exchange.error["code"] == -32602
    assert CAPABILITIES in exchange.error["message"] and "problems" not in exchange.error["message"]


async def test_a_single_unsupported_version_keeps_32022_with_its_data(client: MCPTestClient) -> None:
    meta = {VERSION: "1900-01-01", CAPABILITIES: {}}
    exchange = await post(client, {**CALL, "_meta": meta}, {**ALL_HEADERS, "mcp-protocol-version": "1900-01-01"})
    assert exchange.status == 400
    assert exchange.error["code"] == -32022
    assert exchange.error["data"]["requested"] == "1900-01-01"


@pytest.mark.parametrize(
    ("method", "key", "value", "noun"),
    [
        ("tools/call", "name", "test_simple_text", "tool name"),
        ("resources/read", "uri", "test://static-text", "resource URI"),
        ("prompts/get", "name", "test_simple_prompt", "prompt name"),
        ("tasks/get", "taskId", "t-123", "task id"),
        ("tasks/cancel", "taskId", "t-123", "task id"),
    ],
)
async def test_mcp_name_errors_say_what_the_header_carries_for_the_method(
    client: MCPTestClient, method: str, key: str, value: str, noun: str
) -> None:
    carries = f"{value} (for {method} it carries the {noun}, params.{key})"
    params = {key: value, "_meta": FULL_META}
    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": method}
    missing = await post(client, params, headers, method)
    assert missing.status == 400 and missing.error["code"] == -32020
    assert missing.error["message"] == f"Missing Mcp-Name header: send Mcp-Name: {carries}"
    wrong = await post(client, params, {**headers, "mcp-name": "something-else"}, method)
    assert wrong.status == 400 and wrong.error["code"] == -32020
    assert wrong.error["message"] == f"Mcp-Name header does not match params.{key}: send Mcp-Name: {carries}"


async def test_a_request_without_any_2026_marker_is_still_legacy(client: MCPTestClient) -> None:
    exchange = await post(client, CALL, {"mcp-method": "tools/call", "mcp-name": "test_simple_text"})
    assert exchange.status == 400
    assert exchange.error["code"] == -32600
    assert "MCP-Session-Id" in exchange.error["message"]


async def test_a_long_name_is_not_repeated_in_the_message(client: MCPTestClient) -> None:
    long_name = "x" * 500
    params = {"name": long_name, "arguments": {}, "_meta": FULL_META}
    exchange = await post(client, params, without(ALL_HEADERS, "mcp-name"))
    assert exchange.error["code"] == -32020
    assert long_name not in exchange.error["message"]
    assert "<tool name>" in exchange.error["message"]


async def test_a_name_no_header_can_carry_gets_a_placeholder_not_a_500(client: MCPTestClient) -> None:
    params = {"name": "\ud800", "arguments": {}, "_meta": FULL_META}  # a lone surrogate: valid JSON, no UTF-8
    exchange = await post(client, params, without(ALL_HEADERS, "mcp-name"))
    assert exchange.status == 400 and exchange.error["code"] == -32020
    assert exchange.error["message"].startswith("Missing Mcp-Name header: send Mcp-Name: <tool name>")
