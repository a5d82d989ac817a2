"""The 2025-era wires: sessions, negotiation, per-revision field sets, batches, subscriptions."""

from __future__ import annotations

import json

import pytest

from lambda_mcp import MCPApp
from lambda_mcp.config import Settings
from lambda_mcp.kit import build_kit
from tests.support.client import MCPTestClient

pytestmark = pytest.mark.anyio


async def test_initialize_issues_a_visible_ascii_session_and_echoes_a_supported_version(client: MCPTestClient) -> None:
    exchange = await client.initialize("2025-06-18")
    assert exchange.result["protocolVersion"] == "2025-06-18"
    session = exchange.headers["mcp-session-id"]
    assert len(session) >= 24 and all(0x21 <= ord(c) <= 0x7E for c in session)
    assert "resultType" not in exchange.result


async def test_unknown_version_is_counter_offered_with_the_newest_legacy_one(client: MCPTestClient) -> None:
    assert (await client.initialize("2099-01-01")).result["protocolVersion"] == "2025-11-25"
    assert (await client.initialize("2026-07-28")).result["protocolVersion"] == "2025-11-25"


async def test_sessions_are_distinct_and_deleting_one_leaves_the_other(client: MCPTestClient) -> None:
    await client.initialize()
    first = client.session_id
    await client.initialize()
    assert client.session_id != first
    assert (await client.send("DELETE", b"", {"mcp-session-id": first or ""})).status == 200
    assert (await client.legacy("ping")).result == {}
    assert (await client.legacy("ping", headers={"mcp-session-id": first or ""})).status == 404


async def test_missing_protocol_version_header_is_served_as_the_session_version(client: MCPTestClient) -> None:
    await client.initialize("2025-03-26")
    message = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
    exchange = await client.send("POST", message, {"mcp-session-id": client.session_id or ""})
    assert exchange.status == 200 and exchange.result["tools"]


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25"])
async def test_each_revision_gets_its_own_field_set(version: str) -> None:
    app = MCPApp("icons", version="1", icons=[{"src": "https://example.com/i.png"}], website_url="https://example.com")

    @app.tool(title="Pretty", icons=[{"src": "https://example.com/t.png"}], output_schema={"type": "object"})
    def tool() -> dict[str, int]:
        return {"content": [{"type": "resource_link", "uri": "test://x", "name": "x"}], "structuredContent": {"a": 1}}  # type: ignore[return-value]

    client = MCPTestClient(build_kit(app, Settings(), streaming=False, local=True))
    try:
        init = (await client.initialize(version)).result
        listed = (await client.legacy("tools/list")).result["tools"][0]
        called = (await client.legacy("tools/call", {"name": "tool"})).result
        has_icons = version == "2025-11-25"
        assert ("icons" in listed) is has_icons
        assert ("icons" in init["serverInfo"]) is has_icons
        assert ("websiteUrl" in init["serverInfo"]) is has_icons
        assert ("title" in listed) is (version != "2025-03-26")
        assert ("outputSchema" in listed) is (version != "2025-03-26")
        assert ("structuredContent" in called) is (version != "2025-03-26")
        link_type = called["content"][0]["type"]
        assert link_type == ("text" if version == "2025-03-26" else "resource_link")
        assert client.recorder.violations == []
    finally:
        await client.close()


async def test_resource_not_found_is_32002_on_the_legacy_wire(client: MCPTestClient) -> None:
    await client.initialize()
    exchange = await client.legacy("resources/read", {"uri": "test://missing"})
    assert exchange.error["code"] == -32002
    assert exchange.error["data"] == {"uri": "test://missing"}


async def test_set_level_filters_log_messages_per_session(client: MCPTestClient) -> None:
    await client.initialize()
    assert (await client.legacy("logging/setLevel", {"level": "warning"})).result == {}
    quiet = await client.legacy("tools/call", {"name": "test_tool_with_logging"})
    assert [m for m in quiet.messages if m.get("method") == "notifications/message"] == []
    assert (await client.legacy("logging/setLevel", {"level": "debug"})).result == {}
    loud = await client.legacy("tools/call", {"name": "test_tool_with_logging"})
    assert len([m for m in loud.messages if m.get("method") == "notifications/message"]) == 3


async def test_subscribe_and_unsubscribe_are_stored_on_the_session(client: MCPTestClient) -> None:
    await client.initialize()
    assert (await client.legacy("resources/subscribe", {"uri": "test://watched-resource"})).result == {}
    session = await client.kit.sessions.get(client.session_id or "", 0)
    assert session is not None and session.subscriptions == {"test://watched-resource"}
    assert (await client.legacy("resources/unsubscribe", {"uri": "test://watched-resource"})).result == {}
    session = await client.kit.sessions.get(client.session_id or "", 0)
    assert session is not None and session.subscriptions == set()


async def test_lists_paginate_with_opaque_cursors() -> None:
    app = MCPApp("many", page_size=2)
    for index in range(5):
        app.tool(name=f"t{index}")(lambda: "x")
    client = MCPTestClient(build_kit(app, Settings(), streaming=False, local=True))
    try:
        await client.initialize()
        names: list[str] = []
        cursor = None
        for _ in range(5):
            result = (await client.legacy("tools/list", {"cursor": cursor} if cursor else {})).result
            names += [t["name"] for t in result["tools"]]
            cursor = result.get("nextCursor")
            if cursor is None:
                break
        assert names == ["t0", "t1", "t2", "t3", "t4"]
    finally:
        await client.close()


async def test_2025_03_26_batches_are_answered_in_one_array(client: MCPTestClient) -> None:
    await client.initialize("2025-03-26")
    batch = [
        {"jsonrpc": "2.0", "id": "a", "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "b", "method": "tools/call", "params": {"name": "test_simple_text"}},
    ]
    exchange = await client.send("POST", json.dumps(batch), client.legacy_headers())
    assert [m["id"] for m in exchange.messages] == ["a", "b"]
    assert exchange.messages[1]["result"]["content"][0]["type"] == "text"


async def test_batches_are_refused_for_later_revisions(client: MCPTestClient) -> None:
    await client.initialize("2025-06-18")
    exchange = await client.send(
        "POST", json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]), client.legacy_headers()
    )
    assert exchange.status == 400 and exchange.error["code"] == -32600


async def test_completion_returns_values_for_a_known_prompt(client: MCPTestClient) -> None:
    await client.initialize()
    params = {
        "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
        "argument": {"name": "arg1", "value": "pa"},
    }
    result = (await client.legacy("completion/complete", params)).result
    assert result["completion"]["values"] == ["paris"]
    unknown = {**params, "ref": {"type": "ref/prompt", "name": "nope"}}
    assert (await client.legacy("completion/complete", unknown)).error["code"] == -32602
