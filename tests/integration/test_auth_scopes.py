"""Scopes on tools, resources and prompts, in process (ASGI), with tokens from a local issuer.

A caller sees in the lists only what its token's scopes allow; naming anything else is answered 403
`insufficient_scope` with the scopes it needs; handlers (and the task worker) see `ctx.principal`
and `ctx.scopes`. With auth `none`, scopes are not enforced.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from lambda_mcp.config import Settings
from lambda_mcp.kit import build_kit
from lambda_mcp.loader import load_app
from tests.support.client import MCPTestClient
from tests.support.issuer import LocalIssuer
from tests.support.processes import ROOT

pytestmark = pytest.mark.anyio
RESOURCE = "http://127.0.0.1:8000/mcp"
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


def _client(issuer: LocalIssuer, *, auth: str = "jwt", streaming: bool = False) -> MCPTestClient:
    app = load_app(str(ROOT / "tests/apps/scoped.py"))
    settings = Settings(state_key=b"k", auth=auth, auth_issuer=issuer.url)  # type: ignore[arg-type]
    return MCPTestClient(build_kit(app, settings, streaming=streaming, local=True))


@pytest.fixture
async def mcp(issuer: LocalIssuer) -> AsyncIterator[MCPTestClient]:
    client = _client(issuer)
    yield client
    await client.close()


def bearer(issuer: LocalIssuer, scope: str) -> dict[str, str]:
    return {"authorization": "Bearer " + issuer.token(RESOURCE, scope=scope)}


def _names(result: dict[str, Any], key: str, field: str = "name") -> set[str]:
    return {item[field] for item in result[key]}


OPEN_TOOLS = {"whoami", "shard", "survey"}


async def test_lists_show_only_what_the_token_may_use_on_both_eras(mcp: MCPTestClient, issuer: LocalIssuer) -> None:
    reader, writer = bearer(issuer, "inventory:read"), bearer(issuer, "inventory:write")
    assert _names((await mcp.modern("tools/list", headers=reader)).result, "tools") == OPEN_TOOLS
    assert _names((await mcp.modern("tools/list", headers=writer)).result, "tools") == {*OPEN_TOOLS, "restock", "audit"}
    resources = (await mcp.modern("resources/list", headers=reader)).result
    assert _names(resources, "resources", "uri") == {"inventory://items", "inventory://public"}
    assert _names((await mcp.modern("resources/list", headers=writer)).result, "resources", "uri") == {
        "inventory://public"
    }
    assert _names((await mcp.modern("prompts/list", headers=writer)).result, "prompts") == set()
    assert _names((await mcp.modern("prompts/list", headers=reader)).result, "prompts") == {"stock_report"}

    mcp.headers = bearer(issuer, "")
    await mcp.initialize()
    listed = await mcp.legacy("tools/list", headers=reader)
    assert _names(listed.result, "tools") == OPEN_TOOLS
    assert _names((await mcp.legacy("tools/list", headers=writer)).result, "tools") == {*OPEN_TOOLS, "restock", "audit"}
    assert mcp.recorder.violations == []


@pytest.mark.parametrize(
    ("method", "params", "needs"),
    [
        ("tools/call", {"name": "restock", "arguments": {"item": "widget"}}, "inventory:write"),
        ("resources/read", {"uri": "inventory://items"}, "inventory:read"),
        ("prompts/get", {"name": "stock_report"}, "inventory:read"),
    ],
)
async def test_naming_what_the_token_may_not_use_is_403_insufficient_scope(
    mcp: MCPTestClient, issuer: LocalIssuer, method: str, params: dict[str, Any], needs: str
) -> None:
    refused = await mcp.modern(method, params, headers=bearer(issuer, "mcp:tools"))
    assert refused.status == 403
    challenge = refused.headers["www-authenticate"]
    assert challenge.startswith("Bearer ") and 'error="insufficient_scope"' in challenge
    assert f'scope="{needs}"' in challenge
    assert 'resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"' in challenge
    assert refused.error["message"].startswith("Forbidden")
    assert refused.body["id"] == 1  # the request's own id

    mcp.headers = bearer(issuer, "")
    await mcp.initialize()
    legacy = await mcp.legacy(method, params, headers=bearer(issuer, "mcp:tools"))
    assert legacy.status == 403 and 'error="insufficient_scope"' in legacy.headers["www-authenticate"]
    allowed = await mcp.legacy(method, params, headers=bearer(issuer, needs))
    assert allowed.status == 200 and "result" in allowed.body


async def test_handlers_see_the_principal_and_its_scopes(mcp: MCPTestClient, issuer: LocalIssuer) -> None:
    called = await mcp.modern("tools/call", {"name": "whoami", "arguments": {}}, headers=bearer(issuer, "a b"))
    assert json.loads(called.result["content"][0]["text"]) == {"principal": f"{issuer.url}#alice", "scopes": ["a", "b"]}
    restocked = await mcp.modern(
        "tools/call", {"name": "restock", "arguments": {"item": "bolt"}}, headers=bearer(issuer, "inventory:write")
    )
    assert restocked.result["content"][0]["text"] == f"restocked bolt for {issuer.url}#alice"


async def test_a_task_runs_with_the_scopes_of_the_request_that_created_it(issuer: LocalIssuer) -> None:
    mcp = _client(issuer, streaming=True)
    try:
        headers = bearer(issuer, "inventory:write extra")
        created = await mcp.modern("tools/call", {"name": "audit", "arguments": {}}, headers=headers, meta=_tasks())
        assert created.result["resultType"] == "task"
        task_id = created.result["taskId"]
        for _ in range(100):
            got = await mcp.modern(
                "tasks/get", {"taskId": task_id}, headers={**headers, "mcp-name": task_id}, meta=_tasks()
            )
            if got.result["status"] == "completed":
                break
        text = got.result["result"]["content"][0]["text"]
        assert json.loads(text) == {"principal": f"{issuer.url}#alice", "scopes": ["extra", "inventory:write"]}
        other = {"authorization": "Bearer " + issuer.token(RESOURCE, sub="bob", scope="inventory:write")}
        foreign = await mcp.modern(
            "tasks/get", {"taskId": task_id}, headers={**other, "mcp-name": task_id}, meta=_tasks()
        )
        assert foreign.error["code"] == -32602  # another principal's task is unknown to it
    finally:
        await mcp.close()


def _tasks() -> dict[str, Any]:
    return {"io.modelcontextprotocol/clientCapabilities": TASKS}


async def test_a_2025_03_26_batch_naming_a_forbidden_tool_runs_nothing(mcp: MCPTestClient, issuer: LocalIssuer) -> None:
    headers = mcp.headers = bearer(issuer, "mcp:tools")
    await mcp.initialize("2025-03-26")
    batch = [
        {"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "restock", "arguments": {"item": "x"}}},
    ]
    refused = await mcp.send("POST", json.dumps(batch), {**mcp.legacy_headers(), **headers})
    assert refused.status == 403 and 'scope="inventory:write"' in refused.headers["www-authenticate"]


async def test_auth_none_enforces_no_scopes(issuer: LocalIssuer) -> None:
    mcp = _client(issuer, auth="none")
    try:
        assert _names((await mcp.modern("tools/list")).result, "tools") == {*OPEN_TOOLS, "restock", "audit", "rotate"}
        called = await mcp.modern("tools/call", {"name": "restock", "arguments": {"item": "nut"}})
        assert called.result["content"][0]["text"] == "restocked nut for None"
        who = await mcp.modern("tools/call", {"name": "whoami", "arguments": {}})
        assert json.loads(who.result["content"][0]["text"]) == {"principal": None, "scopes": []}
        assert (await mcp.send("GET", b"", {})).status == 405  # no session: auth none adds nothing in front
    finally:
        await mcp.close()


async def test_refusals_are_logged_at_info_without_the_token(
    mcp: MCPTestClient, issuer: LocalIssuer, caplog: pytest.LogCaptureFixture
) -> None:
    token = issuer.token("https://elsewhere.example.com/mcp")
    with caplog.at_level("INFO", logger="lambda_mcp.auth"):
        refused = await mcp.modern("tools/list", headers={"authorization": f"Bearer {token}"})
    assert refused.status == 401
    (record,) = [r for r in caplog.records if r.name == "lambda_mcp.auth"]
    assert record.levelname == "INFO" and "refused POST /mcp with 401 (invalid_token)" in record.getMessage()
    assert "audience" in record.getMessage()
    assert token not in caplog.text and token.split(".")[1] not in caplog.text
