"""Scopes on tools, resources and prompts, in process (ASGI), with tokens from a local issuer.

A caller sees in the lists only what its token's scopes allow; naming anything else is answered 403
`insufficient_scope` with the scopes it needs; handlers (and the task worker) see `ctx.principal`,
`ctx.scopes` and, read-only, the token's claims as `ctx.claims`. With auth `none`, scopes are not
enforced and there are no claims.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from lambda_mcp.config import Settings
from lambda_mcp.kit import build_kit
from lambda_mcp.loader import load_app
from lambda_mcp.protocol.names import META_CAPABILITIES
from tests.support.client import Exchange, MCPTestClient
from tests.support.issuer import LocalIssuer
from tests.support.polling import until
from tests.support.processes import ROOT

pytestmark = pytest.mark.anyio
RESOURCE = "http://127.0.0.1:8000/mcp"
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
ELICIT = {"elicitation": {}}


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


OPEN_TOOLS = {"whoami", "shard", "survey", "claims"}


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
        claims = await mcp.modern("tools/call", {"name": "claims", "arguments": {}})
        assert _seen(claims) == {"claims": {}, "changed": False}  # no token, no claims (and still read-only)
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


# -- ctx.claims: the token's claims, read-only, on every path a call runs ---------------------------
PROFILE = {"email": "alice@example.com", "groups": ["staff", "admins"]}
SEEN = {"claims": {"sub": "alice", **PROFILE}, "changed": False}
"""What the `claims` tool answers for a token carrying PROFILE: `changed` is whether it could change them."""
ANSWER = {"action": "accept", "content": {}}


def profiled(issuer: LocalIssuer, **claims: Any) -> dict[str, str]:
    """A bearer token for alice carrying PROFILE's claims (or `claims` instead)."""
    return {"authorization": "Bearer " + issuer.token(RESOURCE, **(claims or PROFILE))}


def _seen(exchange: Exchange) -> Any:
    return json.loads(exchange.result["content"][0]["text"])


@pytest.mark.parametrize("streaming", [False, True], ids=["buffered", "streaming"])
async def test_tools_see_each_requests_token_claims_read_only_on_both_eras(
    issuer: LocalIssuer, streaming: bool
) -> None:
    mcp = _client(issuer, streaming=streaming)
    call = {"name": "claims", "arguments": {}}
    try:
        for _ in range(2):  # the first call's attempt to change them changed nothing
            assert _seen(await mcp.modern("tools/call", call, headers=profiled(issuer))) == SEEN
        mcp.headers = profiled(issuer)
        await mcp.initialize()
        assert _seen(await mcp.legacy("tools/call", call)) == SEEN
        renewed = await mcp.legacy("tools/call", call, headers=profiled(issuer, email="new@example.com"))
        assert _seen(renewed)["claims"] == {"sub": "alice", "email": "new@example.com"}  # the session's next token
        assert mcp.recorder.violations == []
    finally:
        await mcp.close()


async def test_a_call_that_asks_first_sees_the_claims_again_when_it_runs_again(issuer: LocalIssuer) -> None:
    mcp = _client(issuer)  # buffered, as on Lambda: each answer runs the call again from the top
    ask = {"name": "claims", "arguments": {"ask": True}}
    caps = {META_CAPABILITIES: ELICIT}
    try:
        first = await mcp.modern("tools/call", ask, headers=profiled(issuer), meta=caps)
        assert first.result["resultType"] == "input_required"
        retry = {**ask, "requestState": first.result["requestState"], "inputResponses": {"elicit": ANSWER}}
        assert _seen(await mcp.modern("tools/call", retry, headers=profiled(issuer), meta=caps)) == SEEN

        mcp.headers = profiled(issuer)
        await mcp.initialize("2025-11-25", ELICIT)
        suspended = await mcp.legacy("tools/call", ask)
        question = suspended.messages[-1]
        assert question["method"] == "elicitation/create"
        answer = {"jsonrpc": "2.0", "id": question["id"], "result": ANSWER}
        assert (await mcp.send("POST", json.dumps(answer), mcp.legacy_headers())).status == 202
        resume = {**mcp.legacy_headers(), "accept": "text/event-stream", "last-event-id": str(suspended.last_event_id)}
        resumed = await mcp.send("GET", b"", resume)
        assert resumed.status == 200 and _seen(resumed) == SEEN
        assert mcp.recorder.violations == []
    finally:
        await mcp.close()


async def test_a_task_runs_with_the_claims_of_the_request_that_created_it_on_both_eras(issuer: LocalIssuer) -> None:
    mcp = _client(issuer, streaming=True)
    caps = {META_CAPABILITIES: {**TASKS, **ELICIT}}
    later = profiled(issuer, email="later@example.com")  # the same caller's next token, with other claims
    try:
        created = await mcp.modern(
            "tools/call", {"name": "claims", "arguments": {"ask": True}}, headers=profiled(issuer), meta=caps
        )
        task_id = created.result["taskId"]
        routed = {**later, "mcp-name": task_id}

        async def status(wanted: str) -> dict[str, Any] | None:
            got: dict[str, Any] = (await mcp.modern("tasks/get", {"taskId": task_id}, headers=routed, meta=caps)).result
            return got if got["status"] == wanted else None

        await until(lambda: status("input_required"), what="the task to ask")
        answered = await mcp.modern(
            "tasks/update", {"taskId": task_id, "inputResponses": {"elicit": ANSWER}}, headers=routed, meta=caps
        )
        assert answered.status == 200
        done = await until(lambda: status("completed"), what="the task's second run to complete")
        assert json.loads(done["result"]["content"][0]["text"]) == SEEN

        mcp.headers = profiled(issuer)
        await mcp.initialize("2025-11-25")
        made = await mcp.legacy("tools/call", {"name": "claims", "arguments": {}, "task": {}})
        result = await mcp.legacy("tasks/result", {"taskId": made.result["task"]["taskId"]}, headers=later)
        assert _seen(result) == SEEN
        assert mcp.recorder.violations == []
    finally:
        await mcp.close()
