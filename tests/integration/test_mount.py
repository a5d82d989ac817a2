"""`app.mount`: another MCP server's tools, resources and prompts under a prefix. The remote servers are
real processes on loopback: the kit's own `lambda-mcp dev` serving another app (reached on the 2026 wire,
and forced onto a legacy session), and FastMCP's server under uvicorn. The mounting app runs in process
through `lambda_mcp.testing.Client` on both eras here; tests/integration/test_mount_e2e.py runs it through
`dev --lambda` with the official SDK."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

from lambda_mcp import MCPApp
from lambda_mcp.testing import Client
from tests.apps.mounted import make_front
from tests.support.processes import ROOT, ServerProcess, free_port, lambda_mcp_dev

pytestmark = pytest.mark.anyio

ERAS = ["2026-07-28", "2025-11-25"]
REMOTES = ["auto", "2025-11-25"]
"""How the mount reaches the kit's dev server: found on its own (the 2026 wire), or a legacy session."""


@pytest.fixture(scope="module")
def vendor() -> Iterator[ServerProcess]:
    process = lambda_mcp_dev("tests/apps/mounted.py:vendor", through_lambda=False)
    yield process
    process.stop()


@pytest.fixture(scope="module")
def fast() -> Iterator[ServerProcess]:
    port = free_port()
    process = ServerProcess([sys.executable, str(ROOT / "tests/support/fastmcp_server.py"), str(port)], port)
    yield process
    process.stop()


def accept(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    assert message == "Proceed with the vendor's change?"
    return {"action": "accept", "content": {"ok": True}}


def names(items: list[dict[str, Any]]) -> list[str]:
    return [item["name"] for item in items]


@pytest.mark.parametrize("remote", REMOTES)
@pytest.mark.parametrize("era", ERAS)
async def test_the_lists_are_merged_under_the_prefixes(vendor: ServerProcess, era: str, remote: str) -> None:
    app = make_front(vendor.url, vendor_protocol=remote)
    async with Client(app, protocol_version=era) as client:
        tools = await client.list_tools()
        assert names(tools) == [
            "ping",
            "helpers_state_says",
            "vendor_add",
            "vendor_count_up",
            "vendor_confirm",
            "vendor_whoami",
            "vendor_regional",
            "vendor_hold",
        ]
        add = next(tool for tool in tools if tool["name"] == "vendor_add")
        assert add["description"] == "Add two integers."
        assert set(add["inputSchema"]["properties"]) == {"a", "b"}
        assert names(await client.list_prompts()) == ["helpers_remind", "vendor_greet"]
        assert [r["uri"] for r in await client.list_resources()] == ["vendor://vendor/docs/readme"]
        templates = await client.list_resource_templates()
        assert [t["uriTemplate"] for t in templates] == ["vendor://vendor/items/{item_id}"]


@pytest.mark.parametrize("remote", REMOTES)
@pytest.mark.parametrize("era", ERAS)
async def test_calls_reads_prompts_progress_and_questions_pass_through(
    vendor: ServerProcess, era: str, remote: str
) -> None:
    app = make_front(vendor.url, vendor_protocol=remote)
    seen: list[tuple[float, float | None, str | None]] = []

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with Client(app, protocol_version=era, elicitation_handler=accept) as client:
        assert (await client.call_tool("vendor_add", {"a": 2, "b": 40})).text == "42"
        counted = await client.call_tool("vendor_count_up", {"n": 3}, progress_handler=on_progress)
        assert counted.text == "counted to 3"
        assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
        assert (await client.call_tool("vendor_confirm", {})).text == "accept:True"
        readme = await client.read_resource("vendor://vendor/docs/readme")
        assert readme == [
            {"uri": "vendor://vendor/docs/readme", "mimeType": "text/plain", "text": "The vendor's readme."}
        ]
        item = await client.read_resource("vendor://vendor/items/7")
        assert item[0]["uri"] == "vendor://vendor/items/7" and item[0]["text"] == '{"id": "7"}'
        prompt = await client.get_prompt("vendor_greet", {"name": "Ada"})
        assert prompt["messages"][0]["content"]["text"] == "Say hello to Ada, from the vendor."
        assert (await client.call_tool("helpers_state_says", {})).text == "hello from the helpers' lifespan"


@pytest.mark.parametrize("era", ERAS)
async def test_a_fastmcp_server_mounts_too(fast: ServerProcess, era: str) -> None:
    app = make_front(fastmcp_url=fast.url)
    seen: list[float] = []
    async with Client(app, protocol_version=era) as client:
        assert "fast_multiply" in names(await client.list_tools())
        assert (await client.call_tool("fast_multiply", {"a": 6, "b": 7})).text == "42"
        counted = await client.call_tool("fast_count_up", {"n": 2}, progress_handler=lambda p, t, m: seen.append(p))
        assert counted.text == "fast counted to 2" and seen == [1, 2]
        assert [r["uri"] for r in await client.list_resources()] == ["fast://fast/docs/readme"]
        readme = await client.read_resource("fast://fast/docs/readme")
        assert readme[0]["text"] == "FastMCP's readme." and readme[0]["uri"] == "fast://fast/docs/readme"
        prompt = await client.get_prompt("fast_greet", {"name": "Ada"})
        assert prompt["messages"][0]["content"]["text"] == "Say hello to Ada, from FastMCP."


@pytest.mark.parametrize("era", ERAS)
async def test_a_stopped_server_fails_only_its_own_items_naming_itself(era: str) -> None:
    gone = f"http://127.0.0.1:{free_port()}/mcp"  # nothing listens there
    app = make_front(gone)
    async with Client(app, protocol_version=era) as client:
        assert names(await client.list_tools()) == ["ping", "helpers_state_says"]
        assert names(await client.list_prompts()) == ["helpers_remind"]
        assert await client.list_resources() == []
        failed = await client.call_tool("vendor_add", {"a": 1, "b": 2})
        assert (
            failed.is_error and "the mounted server 'vendor'" in failed.text and "could not be reached" in failed.text
        )
        assert "Unknown tool" not in failed.text
        with pytest.raises(Exception, match="the mounted server 'vendor'"):
            await client.read_resource("vendor://vendor/docs/readme")
        with pytest.raises(Exception, match="the mounted server 'vendor'"):
            await client.get_prompt("vendor_greet", {"name": "Ada"})
        assert (await client.call_tool("ping", {})).text == "pong"
        assert (await client.call_tool("helpers_state_says", {})).text == "hello from the helpers' lifespan"


async def test_the_merged_list_pages_with_the_kits_cursors(vendor: ServerProcess) -> None:
    app = make_front(vendor.url, page_size=4)
    async with Client(app) as client:
        first = await client.request("tools/list", {})
        assert names(first["tools"]) == ["ping", "helpers_state_says", "vendor_add", "vendor_count_up"]
        second = await client.request("tools/list", {"cursor": first["nextCursor"]})
        assert names(second["tools"]) == ["vendor_confirm", "vendor_whoami", "vendor_regional", "vendor_hold"]
        assert "nextCursor" not in second


async def test_a_mount_scope_hides_and_refuses_its_items(vendor: ServerProcess) -> None:
    app = make_front(vendor.url, vendor_scopes=("vendor:use",))
    async with Client(app, principal="alice", scopes=["mcp"]) as client:
        assert names(await client.list_tools()) == ["ping", "helpers_state_says"]
        with pytest.raises(Exception, match="vendor:use"):
            await client.call_tool("vendor_add", {"a": 1, "b": 2})
    async with Client(app, principal="bob", scopes=["mcp", "vendor:use"]) as client:
        assert "vendor_add" in names(await client.list_tools())
        assert (await client.call_tool("vendor_add", {"a": 1, "b": 2})).text == "3"


@pytest.mark.parametrize("era", ERAS)
async def test_a_tool_routed_on_an_argument_gets_its_header_at_a_2026_server(vendor: ServerProcess, era: str) -> None:
    app = make_front(vendor.url)
    async with Client(app, protocol_version=era) as client:
        listed = next(tool for tool in await client.list_tools() if tool["name"] == "vendor_regional")
        assert listed["inputSchema"]["properties"]["region"]["x-mcp-header"] == "Region"
        assert (await client.call_tool("vendor_regional", {"region": "eu-west-1"})).text == "served in eu-west-1"


async def test_an_unknown_tool_of_a_reachable_server_is_the_servers_own_error(vendor: ServerProcess) -> None:
    app = make_front(vendor.url)
    async with Client(app) as client:
        with pytest.raises(Exception, match="the mounted server 'vendor'.*Unknown tool: nope"):
            await client.call_tool("vendor_nope", {})


async def test_the_apps_middleware_sees_mounted_calls_as_its_own(vendor: ServerProcess) -> None:
    app = make_front(vendor.url)
    seen: list[tuple[str, Any]] = []

    @app.middleware
    async def record(request: Any, call_next: Any) -> Any:
        seen.append((request.method, request.params.get("name")))
        return await call_next(request)

    async with Client(app) as client:
        assert (await client.call_tool("vendor_add", {"a": 1, "b": 1})).text == "2"
        assert (await client.call_tool("helpers_state_says", {})).text == "hello from the helpers' lifespan"
    assert ("tools/call", "vendor_add") in seen and ("tools/call", "helpers_state_says") in seen


def test_declaration_mistakes_are_refused_at_once() -> None:
    app = MCPApp("x")
    app.mount("http://127.0.0.1:1/mcp", prefix="a")
    for prefix, match in (("a", "already mounted"), ("has_underscore", "letters, digits and '-'"), ("", "prefix")):
        with pytest.raises(TypeError, match=match):
            app.mount("http://127.0.0.1:1/mcp", prefix=prefix)
    with pytest.raises(TypeError, match="protocol"):
        app.mount("http://127.0.0.1:1/mcp", prefix="b", protocol="2024-01-01")
    with pytest.raises(TypeError, match="auth="):
        app.mount("http://127.0.0.1:1/mcp", prefix="c", auth="password")
    with pytest.raises(TypeError, match="cannot mount itself"):
        app.mount(app, prefix="self")
    child = MCPApp("child")

    @child.tool()
    def ping() -> str:
        return "child"

    @app.tool(name="kid_ping")
    def taken() -> str:
        return "parent"

    with pytest.raises(TypeError, match="'kid_ping' is already declared"):
        app.mount(child, prefix="kid")
