"""`app.mount` through a real `lambda-mcp dev --lambda` (each request one Lambda invocation), with the
official Python SDK as the client on both eras: the kit's own dev server and FastMCP's server mounted
under prefixes, their lists merged, a call, progress, an elicitation, a resource read and a prompt get
passed through; then the vendor stopped, and only its items fail, naming it."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client

from tests.support.processes import ROOT, ServerProcess, free_port, lambda_mcp_dev

pytestmark = pytest.mark.anyio

ERAS = ["2026-07-28", "2025-11-25"]


@pytest.fixture(scope="module")
def cancelled_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("vendor") / "cancelled.txt"


@pytest.fixture(scope="module")
def remotes(cancelled_file: Path) -> Iterator[dict[str, ServerProcess]]:
    env = {"VENDOR_CANCELLED_FILE": str(cancelled_file)}
    vendor = lambda_mcp_dev("tests/apps/mounted.py:vendor", through_lambda=False, env=env)
    port = free_port()
    fast = ServerProcess([sys.executable, str(ROOT / "tests/support/fastmcp_server.py"), str(port)], port)
    yield {"vendor": vendor, "fast": fast}
    fast.stop()
    vendor.stop()


@pytest.fixture(scope="module")
def front(remotes: dict[str, ServerProcess], tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    env = {"VENDOR_URL": remotes["vendor"].url, "FASTMCP_URL": remotes["fast"].url, "VENDOR_PROTOCOL": "2025-11-25"}
    log = tmp_path_factory.mktemp("mount") / "front.log"
    process = lambda_mcp_dev("tests/apps/mounted.py:front", through_lambda=True, env=env, log=log)
    yield process
    process.stop()


async def accept(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"ok": True})


@asynccontextmanager
async def connected(url: str, era: str) -> AsyncIterator[Client]:
    mode = "legacy" if era == "2025-11-25" else era
    with anyio.fail_after(60):
        async with Client(streamable_http_client(url), mode=mode, elicitation_callback=accept) as client:
            assert client.protocol_version == era
            yield client


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content if getattr(block, "type", None) == "text")


@pytest.mark.parametrize("era", ERAS)
async def test_mounted_servers_pass_through_dev_lambda(front: ServerProcess, era: str) -> None:
    async with connected(front.url, era) as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        assert tools[:2] == ["ping", "helpers_state_says"]
        assert {"vendor_add", "vendor_count_up", "vendor_confirm", "fast_multiply", "fast_count_up"} <= set(tools)
        assert text_of(await client.call_tool("vendor_add", {"a": 20, "b": 22})) == "42"
        assert text_of(await client.call_tool("fast_multiply", {"a": 6, "b": 7})) == "42"
        seen: list[tuple[float, float | None, str | None]] = []

        async def progress(value: float, total: float | None, message: str | None) -> None:
            seen.append((value, total, message))

        counted = await client.call_tool("vendor_count_up", {"n": 2}, progress_callback=progress)
        assert text_of(counted) == "counted to 2"
        assert seen == [(1, 2, "step 1"), (2, 2, "step 2")]
        seen.clear()
        assert text_of(await client.call_tool("fast_count_up", {"n": 2}, progress_callback=progress)) == (
            "fast counted to 2"
        )
        assert [value for value, _, _ in seen] == [1, 2]
        assert text_of(await client.call_tool("vendor_confirm", {})) == "accept:True"
        readme = await client.read_resource("vendor://vendor/docs/readme")
        assert readme.contents[0].text == "The vendor's readme." and str(readme.contents[0].uri).startswith(
            "vendor://vendor/"
        )
        fast_readme = await client.read_resource("fast://fast/docs/readme")
        assert fast_readme.contents[0].text == "FastMCP's readme."
        prompt = await client.get_prompt("vendor_greet", {"name": "Ada"})
        assert prompt.messages[0].content.text == "Say hello to Ada, from the vendor."
        fast_prompt = await client.get_prompt("fast_greet", {"name": "Ada"})
        assert fast_prompt.messages[0].content.text == "Say hello to Ada, from FastMCP."


async def test_a_stopped_vendor_fails_its_own_items_only(
    remotes: dict[str, ServerProcess], tmp_path_factory: pytest.TempPathFactory
) -> None:
    vendor = lambda_mcp_dev("tests/apps/mounted.py:vendor", through_lambda=False)
    env = {"VENDOR_URL": vendor.url, "FASTMCP_URL": remotes["fast"].url, "VENDOR_LIST_TTL": "0"}
    log = tmp_path_factory.mktemp("mount-stop") / "front.log"
    front = lambda_mcp_dev("tests/apps/mounted.py:front", through_lambda=True, env=env, log=log)
    try:
        for era in ERAS:
            async with connected(front.url, era) as client:
                assert text_of(await client.call_tool("vendor_add", {"a": 1, "b": 1})) == "2"
        vendor.stop()
        for era in ERAS:
            async with connected(front.url, era) as client:
                tools = [tool.name for tool in (await client.list_tools()).tools]
                assert "fast_multiply" in tools and "ping" in tools and not any(t.startswith("vendor_") for t in tools)
                failed = await client.call_tool("vendor_add", {"a": 1, "b": 1})
                assert failed.is_error and "the mounted server 'vendor'" in text_of(failed)
                assert text_of(await client.call_tool("fast_multiply", {"a": 2, "b": 3})) == "6"
                assert text_of(await client.call_tool("ping", {})) == "pong"
                with pytest.raises(Exception, match="the mounted server 'vendor'"):
                    await client.read_resource("vendor://vendor/docs/readme")
        assert "the mounted server 'vendor'" in front.log_text() and "left out of tools/list" in front.log_text()
    finally:
        front.stop()
        vendor.stop()


def test_a_call_the_client_cancels_is_cancelled_at_the_mounted_legacy_server(
    remotes: dict[str, ServerProcess], cancelled_file: Path
) -> None:
    """On the streaming server (`dev`: `dev --lambda` runs one invocation at a time, so a cancel would wait
    for the call it cancels; the buffered transport stops a cancelled run the same way, by cancelling it)."""
    cancelled_file.unlink(missing_ok=True)
    env = {"VENDOR_URL": remotes["vendor"].url, "VENDOR_PROTOCOL": "2025-11-25"}
    log = cancelled_file.parent / "front-streaming.log"
    front = lambda_mcp_dev("tests/apps/mounted.py:front", through_lambda=False, env=env, log=log)
    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    try:
        with httpx.Client(timeout=30) as http:
            init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
            opened = http.post(
                front.url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}, headers=accept
            )
            session = {
                **accept,
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            http.post(front.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
            call = {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {"name": "vendor_hold", "arguments": {}},
            }
            answered: list[httpx.Response] = []
            running = threading.Thread(target=lambda: answered.append(http.post(front.url, json=call, headers=session)))
            running.start()
            time.sleep(1.5)
            notice = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
            assert http.post(front.url, json=notice, headers=session).status_code == 202
            deadline = time.monotonic() + 8
            while not cancelled_file.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            running.join(timeout=15)
        assert cancelled_file.exists(), front.log_text()
        assert cancelled_file.read_text() == "cancelled\n"  # the vendor's tool saw its own call cancelled
        assert "held" not in answered[0].text  # and our client got no result for it
    finally:
        front.stop()
