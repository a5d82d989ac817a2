"""The 2026-07-28 wire through the buffered (Lambda) transport: discover, caching, MRTR, logging, listen."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.client import MCPTestClient

pytestmark = pytest.mark.anyio


async def test_discover_lists_versions_capabilities_server_info_and_cache_hints(client: MCPTestClient) -> None:
    result = (await client.modern("server/discover")).result
    assert result["resultType"] == "complete"
    assert result["supportedVersions"][0] == "2026-07-28"
    assert {"2025-11-25", "2025-06-18", "2025-03-26"} <= set(result["supportedVersions"])
    assert result["capabilities"]["tools"] == {"listChanged": True}
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcp-conformance-test-server"
    assert result["ttlMs"] > 0 and result["cacheScope"] == "public"


async def test_every_result_carries_result_type_and_reads_are_private(client: MCPTestClient) -> None:
    read = (await client.modern("resources/read", {"uri": "test://static-text"})).result
    assert read["resultType"] == "complete" and read["cacheScope"] == "private"
    assert read["contents"][0]["text"] == "This is the content of the static text resource."
    call = (await client.modern("tools/call", {"name": "test_simple_text", "arguments": {}})).result
    assert call["resultType"] == "complete"
    assert "ttlMs" not in call


async def test_unknown_resource_is_invalid_params_with_the_uri(client: MCPTestClient) -> None:
    exchange = await client.modern("resources/read", {"uri": "test://missing"})
    assert exchange.error["code"] == -32602
    assert exchange.error["data"] == {"uri": "test://missing"}


async def test_template_resource_reads_with_its_variables(client: MCPTestClient) -> None:
    result = (await client.modern("resources/read", {"uri": "test://template/123/data"})).result
    assert '"id": "123"' in result["contents"][0]["text"]
    assert result["contents"][0]["uri"] == "test://template/123/data"


async def test_mrtr_round_trip_carries_answers_across_rounds_in_sealed_state(client: MCPTestClient) -> None:
    caps = {"elicitation": {}}
    meta = {"io.modelcontextprotocol/clientCapabilities": caps}
    params = {"name": "test_input_required_result_multi_round", "arguments": {}}
    first = (await client.modern("tools/call", params, meta=meta)).result
    assert first["resultType"] == "input_required"
    assert list(first["inputRequests"]) == ["step1"]
    assert "ttlMs" not in first
    answer1 = {"step1": {"action": "accept", "content": {"name": "Ada"}}}
    second = (
        await client.modern(
            "tools/call", {**params, "inputResponses": answer1, "requestState": first["requestState"]}, meta=meta
        )
    ).result
    assert list(second["inputRequests"]) == ["step2"]
    answer2 = {"step2": {"action": "accept", "content": {"color": "green"}}}
    done = (
        await client.modern(
            "tools/call", {**params, "inputResponses": answer2, "requestState": second["requestState"]}, meta=meta
        )
    ).result
    assert done["content"][0]["text"] == "Multi-round complete for Ada who likes green"


async def test_tampered_or_misbound_request_state_is_invalid_params(client: MCPTestClient) -> None:
    meta = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    params = {"name": "test_input_required_result_tampered_state", "arguments": {}}
    state = (await client.modern("tools/call", params, meta=meta)).result["requestState"]
    answers = {"confirm": {"action": "accept", "content": {"ok": True}}}
    data, mac = state.split(".")
    forged = data[:-2] + ("AA" if data[-2:] != "AA" else "BB") + "." + mac
    tampered = await client.modern(
        "tools/call", {**params, "inputResponses": answers, "requestState": forged}, meta=meta
    )
    assert tampered.error["code"] == -32602
    other = {"name": "test_input_required_result_request_state", "arguments": {}}
    misbound = await client.modern("tools/call", {**other, "inputResponses": answers, "requestState": state}, meta=meta)
    assert misbound.error["code"] == -32602
    good = await client.modern("tools/call", {**params, "inputResponses": answers, "requestState": state}, meta=meta)
    assert good.result["content"][0]["text"] == "integrity-ok: state verified"


async def test_input_request_for_an_undeclared_capability_is_32021(client: MCPTestClient) -> None:
    exchange = await client.modern("tools/call", {"name": "test_input_required_result_elicitation", "arguments": {}})
    assert exchange.status == 400
    assert exchange.error["code"] == -32021
    assert exchange.error["data"]["requiredCapabilities"] == {"elicitation": {}}


async def test_logs_only_when_the_request_sets_a_log_level(client: MCPTestClient) -> None:
    quiet = await client.modern("tools/call", {"name": "test_tool_with_logging", "arguments": {}})
    assert [m for m in quiet.messages if m.get("method") == "notifications/message"] == []
    assert quiet.headers["content-type"].startswith("application/json")
    loud = await client.modern(
        "tools/call",
        {"name": "test_tool_with_logging", "arguments": {}},
        meta={"io.modelcontextprotocol/logLevel": "info"},
    )
    assert loud.headers["content-type"].startswith("text/event-stream")
    logs = [m for m in loud.messages if m.get("method") == "notifications/message"]
    assert [m["params"]["data"] for m in logs] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    assert "result" in loud.messages[-1]


async def test_progress_goes_on_the_requests_own_sse_body_in_order(client: MCPTestClient) -> None:
    exchange = await client.modern(
        "tools/call", {"name": "test_tool_with_progress", "arguments": {}}, meta={"progressToken": "p1"}
    )
    progress = [m["params"]["progress"] for m in exchange.messages if m.get("method") == "notifications/progress"]
    assert progress == [0, 50, 100]
    assert exchange.result["content"][0]["text"] == "p1"


async def test_buffered_listen_acknowledges_then_closes_gracefully(client: MCPTestClient) -> None:
    exchange = await client.modern("subscriptions/listen", {"notifications": {"toolsListChanged": True, "bogus": True}})
    ack, closing = exchange.messages
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"toolsListChanged": True}
    listen_id = closing["id"]
    assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == listen_id
    assert closing["result"] == {
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/subscriptionId": listen_id},
    }


async def test_removed_legacy_methods_are_404(client: MCPTestClient) -> None:
    for method in ("ping", "logging/setLevel", "resources/subscribe", "initialize"):
        exchange = await client.modern(method)
        assert (exchange.status, exchange.error["code"]) == (404, -32601), method


async def test_notifications_are_accepted_with_202(client: MCPTestClient) -> None:
    message = '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}'
    exchange = await client.send("POST", message, {"mcp-protocol-version": "2026-07-28"})
    assert exchange.status == 202 and exchange.messages == []


async def test_structured_output_and_its_schema_are_served(client: MCPTestClient) -> None:
    from lambda_mcp import MCPApp
    from lambda_mcp.config import Settings
    from lambda_mcp.kit import build_kit

    app = MCPApp("s")

    @app.tool(structured_output=True)
    def area(w: int, h: int) -> int:
        return w * h

    other = MCPTestClient(build_kit(app, Settings(), streaming=False, local=True))
    try:
        tool = (await other.modern("tools/list")).result["tools"][0]
        assert tool["outputSchema"]["properties"]["result"]["type"] == "integer"
        result = (await other.modern("tools/call", {"name": "area", "arguments": {"w": 3, "h": 4}})).result
        assert result["structuredContent"] == {"result": 12}
        assert result["content"][0]["text"] == '{"result": 12}'
        assert other.recorder.violations == []
    finally:
        await other.close()


async def test_an_mrtr_rerun_does_not_send_again_what_an_earlier_round_sent() -> None:
    from lambda_mcp.config import Settings
    from lambda_mcp.kit import build_kit
    from lambda_mcp.loader import load_app
    from tests.support.processes import ROOT

    app = load_app(str(ROOT / "tests/apps/interaction.py"))
    client = MCPTestClient(build_kit(app, Settings(state_key=b"k"), streaming=False, local=True))
    meta = {
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}},
        "io.modelcontextprotocol/logLevel": "info",
        "progressToken": "p",
    }

    def notes(messages: list[dict[str, Any]]) -> list[Any]:
        return [m["params"].get("data", m["params"].get("progress")) for m in messages if "method" in m]

    try:
        params: dict[str, Any] = {"name": "survey", "arguments": {}}
        first = await client.modern("tools/call", params, meta=meta)
        assert notes(first.messages) == ["starting", 1] and first.result["resultType"] == "input_required"
        named = {"name": {"action": "accept", "content": {"name": "Ada"}}}
        params = {**params, "inputResponses": named, "requestState": first.result["requestState"]}
        second = await client.modern("tools/call", params, meta=meta)
        assert notes(second.messages) == ["elicitation: accept", 2]  # not "starting" and 1 again
        sampled = {"hi": {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"}}
        params = {**params, "inputResponses": sampled, "requestState": second.result["requestState"]}
        third = await client.modern("tools/call", params, meta=meta)
        assert notes(third.messages) == [3] and third.result["content"][0]["text"] == "accept:Ada|hello"
    finally:
        await client.close()
