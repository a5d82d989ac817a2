"""Per-resource cache hints on the 2026 wire, and MCP Apps (`io.modelcontextprotocol/ui`)."""

from __future__ import annotations

import pytest

from lambda_mcp import MCPApp
from lambda_mcp.loader import load_app
from lambda_mcp.testing import Client
from tests.support.processes import ROOT
from tests.support.schema import APPS_EXTENSION, errors_for

pytestmark = pytest.mark.anyio


def _app() -> MCPApp:
    app = MCPApp("cached", list_ttl_ms=120_000)

    @app.resource("data://live")
    def live() -> str:
        return "changes every second"

    @app.resource("data://catalog", ttl_ms=600_000, cache_scope="public")
    def catalog() -> str:
        return "the same for everyone for ten minutes"

    @app.resource("data://item/{id}", ttl_ms=5_000)
    def item(id: str) -> str:
        return id

    return app


async def test_reads_are_not_cached_unless_the_resource_says_so_and_lists_keep_their_ttl() -> None:
    async with Client(_app()) as client:
        live = await client.request("resources/read", {"uri": "data://live"})
        catalog = await client.request("resources/read", {"uri": "data://catalog"})
        item = await client.request("resources/read", {"uri": "data://item/7"})
        listed = await client.request("resources/list")
    assert (live["ttlMs"], live["cacheScope"]) == (0, "private")
    assert (catalog["ttlMs"], catalog["cacheScope"]) == (600_000, "public")
    assert (item["ttlMs"], item["cacheScope"]) == (5_000, "private")
    assert (listed["ttlMs"], listed["cacheScope"]) == (120_000, "public")
    for result in (live, catalog, item):
        assert errors_for(result, "2026-07-28", "ReadResourceResult") == []


def test_cache_hints_are_checked_at_registration() -> None:
    app = MCPApp("x")
    with pytest.raises(ValueError, match="ttl_ms"):
        app.resource("data://x", ttl_ms=-1)
    with pytest.raises(ValueError, match="cache_scope"):
        app.resource("data://x", cache_scope="shared")  # type: ignore[arg-type]


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_an_mcp_app_tool_links_its_ui_resource_and_the_server_declares_the_extension(version: str) -> None:
    app = load_app(str(ROOT / "examples/dashboard/server.py"))
    async with Client(app, protocol_version=version) as client:
        (tool,) = await client.list_tools()
        (listed,) = await client.list_resources()
        (content,) = await client.read_resource("ui://dashboard/weather")
        result = await client.call_tool("weather_dashboard", {"city": "Porto"})
        capabilities = client.server["capabilities"]
    assert tool["_meta"]["ui"] == {"resourceUri": "ui://dashboard/weather"}
    assert tool["_meta"]["ui/resourceUri"] == "ui://dashboard/weather"
    assert errors_for(tool["_meta"]["ui"], APPS_EXTENSION, "McpUiToolMeta") == []
    assert listed["mimeType"] == content["mimeType"] == "text/html;profile=mcp-app"
    assert content["text"].startswith("<!doctype html>")
    ui = content["_meta"]["ui"]
    assert ui == {"csp": {"connectDomains": ["https://api.open-meteo.com"]}, "prefersBorder": True}
    assert errors_for(ui, APPS_EXTENSION, "McpUiResourceMeta") == []
    assert capabilities["extensions"][APPS_EXTENSION] == {}
    if version == "2026-07-28":  # the tasks extension is declared beside it, not instead of it
        assert "io.modelcontextprotocol/tasks" in capabilities["extensions"]
    assert result.structured_content == {"city": "Porto", "temperature_c": 21, "sky": "clear"}
    assert result.text  # hosts without apps still get text


def test_mcp_app_settings_are_checked_at_registration() -> None:
    app = MCPApp("x")
    with pytest.raises(ValueError, match="ui://"):
        app.tool(ui="https://example.com/page")
    with pytest.raises(ValueError, match="ui_visibility"):
        app.tool(ui="ui://x", ui_visibility=["everyone"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="permissions"):
        app.ui_resource("ui://x", permissions=["teleport"])
    with pytest.raises(ValueError, match="csp"):
        app.ui_resource("ui://x", csp={"scriptDomains": []})


def test_an_app_only_tool_carries_its_visibility() -> None:
    app = MCPApp("x")

    @app.tool(ui="ui://x/page", ui_visibility=["app"])
    def refresh() -> str:
        return "ok"

    meta = app.tools["refresh"].definition["_meta"]
    assert meta["ui"] == {"resourceUri": "ui://x/page", "visibility": ["app"]}
    assert errors_for(meta["ui"], APPS_EXTENSION, "McpUiToolMeta") == []
    assert app.capabilities()["extensions"] == {APPS_EXTENSION: {}}
