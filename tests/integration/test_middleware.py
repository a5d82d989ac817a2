"""`@app.middleware` on both eras, on task runs, and the two shipped examples (audit line, rate limit)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest
from moto import mock_aws

from lambda_mcp.loader import load_app
from lambda_mcp.storage.dynamodb import create_table
from lambda_mcp.testing import Client, RequestFailed
from tests.apps import guarded
from tests.support.processes import ROOT, lambda_mcp_dev

pytestmark = pytest.mark.anyio
ERAS = ["2026-07-28", "2025-11-25"]


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    guarded.seen.clear()
    guarded.order.clear()
    yield


@pytest.mark.parametrize("version", ERAS)
async def test_each_request_passes_the_middlewares_in_order_with_its_method_and_era(version: str) -> None:
    async with Client(guarded.app, protocol_version=version) as client:
        guarded.order.clear()
        assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
        assert guarded.order == ["outer in", "inner", "outer out"]
        await client.list_tools()
    methods = [r.method for r in guarded.seen]
    assert "tools/call" in methods and "tools/list" in methods
    call = next(r for r in guarded.seen if r.method == "tools/call")
    assert call.params["arguments"] == {"text": "hi"} and call.principal is None and call.task_id is None
    assert call.era == ("modern" if version == "2026-07-28" else "legacy") and call.protocol_version == version
    assert (call.session_id is None) == (version == "2026-07-28")
    if version != "2026-07-28":
        assert methods[0] == "initialize"


@pytest.mark.parametrize("version", ERAS)
async def test_a_middleware_refuses_with_a_json_rpc_error_or_a_tool_error_and_may_rewrite(version: str) -> None:
    async with Client(guarded.app, protocol_version=version) as client:
        with pytest.raises(RequestFailed) as refused:
            await client.call_tool("forbidden")
        politely = await client.call_tool("politely_forbidden")
        rewritten = await client.call_tool("rewritten", {"text": "original"})
    assert (refused.value.code, refused.value.message) == (-32000, "Not for you")
    assert politely.is_error and politely.text == "This tool is switched off today"
    assert rewritten.text == "rewritten by middleware"


@pytest.mark.parametrize("version", ERAS)
async def test_a_task_run_goes_through_the_middlewares_again_with_its_task_id(version: str) -> None:
    async with Client(guarded.app, protocol_version=version) as client:
        task = await client.start_task("slow_echo", {"text": "later"})
        result = await client.task_result(task["taskId"])
    assert result.text == "later"
    runs = [r for r in guarded.seen if r.method == "tools/call"]
    assert [r.task_id for r in runs] == [None, task["taskId"]]
    assert runs[1].params["arguments"] == {"text": "later"}


async def test_the_audit_example_writes_one_json_line_per_request(capsys: pytest.CaptureFixture[str]) -> None:
    app = load_app(str(ROOT / "examples/middleware/server.py"))
    async with Client(app) as client:
        await client.call_tool("echo", {"text": "x"})
        with pytest.raises(RequestFailed):
            await client.call_tool("missing")
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith('{"audit"')]
    calls = [line for line in lines if line["audit"] == "tools/call"]
    assert [(c["target"], c["outcome"], c["era"]) for c in calls] == [
        ("echo", "ok", "modern"),
        ("missing", "error -32602", "modern"),
    ]
    assert all(isinstance(c["duration_ms"], float) for c in calls)


async def test_the_rate_limit_example_counts_per_principal_in_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    from lambda_mcp import MCPApp

    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_table(client, "limits")
        rate_limit = _rate_limit_class()(  # in-process moto: the wire version is the two-process test below
            "limits", limit=3, window_seconds=3600, client=client
        )
        app = MCPApp("limited")
        app.middleware(rate_limit)

        @app.tool()
        def ping() -> str:
            return "pong"

        async with Client(app) as mcp:
            answers = [(await mcp.call_tool("ping")).text for _ in range(3)]
            with pytest.raises(RequestFailed) as limited:
                await mcp.call_tool("ping")
            await mcp.list_tools()  # only tools/call counts
        items = client.scan(TableName="limits")["Items"]
    assert answers == ["pong"] * 3
    assert limited.value.code == -32000 and "Rate limit exceeded: at most 3 tools/call" in limited.value.message
    assert limited.value.data["limit"] == 3 and 0 < limited.value.data["retryAfterSeconds"] <= 3600
    (item,) = items
    assert item["pk"]["S"] == "RATE#anonymous" and item["count"]["N"] == "3" and "expires_at" in item


def _rate_limit_class() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("rate_limit_example", ROOT / "examples/middleware/rate_limit.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.RateLimit


def _call(url: str, n: int) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": n,
        "method": "tools/call",
        "params": {
            "name": "echo",
            "arguments": {"text": str(n)},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "accept": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "echo",
    }
    answer: dict[str, Any] = httpx.post(url, json=body, headers=headers, timeout=30).json()
    return answer


def test_the_rate_limit_holds_across_two_handler_processes_on_one_table(
    dynamodb_local_url: str, tmp_path: Path
) -> None:
    """Two `dev --lambda` processes (two execution environments) on one DynamoDB Local table: the limit of
    5 is shared, whichever process serves the call."""
    env = {"LAMBDA_MCP_RATE_LIMIT": "5", "LAMBDA_MCP_TABLE_NAME": "rate-limited"}
    args = ["--table", "rate-limited"]
    servers = []
    try:
        for name in ("first", "second"):
            servers.append(
                lambda_mcp_dev(
                    "examples/middleware/server.py",
                    through_lambda=True,
                    aws_endpoint=dynamodb_local_url,
                    env=env,
                    extra_args=args,
                    log=tmp_path / f"{name}.log",
                )
            )
        answers = [_call(servers[n % 2].url, n) for n in range(8)]
    finally:
        for server in servers:
            server.stop()
    served = [a["result"]["content"][0]["text"] for a in answers if "result" in a]
    refused = [a["error"] for a in answers if "error" in a]
    assert served == ["0", "1", "2", "3", "4"], answers  # alternating between the two processes
    assert len(refused) == 3 and all(e["code"] == -32000 and "Rate limit exceeded" in e["message"] for e in refused)
    audit = (tmp_path / "first.log").read_text() + (tmp_path / "second.log").read_text()
    assert audit.count('"audit": "tools/call"') == 8
