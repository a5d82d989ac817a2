"""The outside review of auth and hardening (issue 21), one test per finding, in process through the real
endpoint (`MCPTestClient`), with tokens from a local issuer.

Each test names its finding; each failed before its fix. The key-fetching findings (4, 9, 10) are in
tests/unit/test_issuer.py, the principal encoding (8) in tests/unit/test_auth.py, and what needs the
emulated front doors (`dev --lambda`: the REST authorizer's failure, gateway mode) in
tests/integration/test_auth_lambda.py.
"""

from __future__ import annotations

import base64
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from lambda_mcp.config import Settings
from lambda_mcp.kit import Kit, build_kit
from lambda_mcp.loader import load_app
from lambda_mcp.protocol.ids import CallStream
from lambda_mcp.protocol.limits import MAX_ARGUMENTS_BYTES, MAX_CLIENT_DATA_BYTES, MAX_META_BYTES
from lambda_mcp.protocol.names import META_CAPABILITIES
from tests.support.client import META, MCPTestClient
from tests.support.issuer import LocalIssuer
from tests.support.polling import until
from tests.support.processes import ROOT

pytestmark = pytest.mark.anyio
RESOURCE = "http://127.0.0.1:8000/mcp"
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
ELICIT = {"elicitation": {}}


def _kit(issuer: LocalIssuer, *, streaming: bool = False, **settings: Any) -> Kit:
    app = load_app(str(ROOT / "tests/apps/scoped.py"))
    options: dict[str, Any] = {"state_key": b"k", "auth": "jwt", "auth_issuer": issuer.url, "retry_ms": 50}
    return build_kit(app, Settings(**{**options, **settings}), streaming=streaming, local=True)


@pytest.fixture
async def mcp(issuer: LocalIssuer) -> AsyncIterator[MCPTestClient]:
    client = MCPTestClient(_kit(issuer))
    yield client
    await client.close()


def bearer(issuer: LocalIssuer, scope: str, sub: str = "alice") -> dict[str, str]:
    return {"authorization": "Bearer " + issuer.token(RESOURCE, scope=scope, sub=sub)}


def _b64(value: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def _forged(header: dict[str, Any]) -> str:
    return f"{_b64(header)}.{_b64({'iss': 'x', 'sub': 'y', 'exp': 9999999999})}.c2ln"


# -- 1. a token's header copied into response headers --------------------------------------------
@pytest.mark.parametrize("alg", ["\u2603", "A" * 9000, 'RS256", error="x', "\x00\x7f\x1b[31m"])
async def test_a_token_header_is_never_echoed_into_headers_or_the_body(
    mcp: MCPTestClient, alg: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="lambda_mcp")
    exchange = await mcp.modern("tools/list", headers={"authorization": "Bearer " + _forged({"alg": alg})})
    assert exchange.status == 401
    header_text = "".join(f"{k}: {v}\r\n" for k, v in exchange.headers.items())
    header_text.encode("latin-1")  # a header that cannot be encoded was the 500
    assert len(header_text) < 1024
    assert alg[:40] not in header_text and alg[:40] not in exchange.text
    assert "error_description=" in exchange.headers["www-authenticate"]
    assert all(len(record.getMessage()) < 1024 for record in caplog.records)


# -- 2. what a request can make the kit store ---------------------------------------------------
async def test_a_task_keeps_only_what_its_run_needs_within_the_caps(issuer: LocalIssuer) -> None:
    mcp = MCPTestClient(_kit(issuer, streaming=True))  # the dev server runs tasks in process
    writer = bearer(issuer, "inventory:write")
    huge_meta = {"junk": "x" * 600_000}
    refused = await mcp.modern("tools/call", {"name": "audit", "arguments": {}}, headers=writer, meta=huge_meta)
    assert refused.error["code"] == -32602 and f"{MAX_META_BYTES} bytes" in refused.error["message"]
    huge_caps = {META_CAPABILITIES: {**TASKS, "junk": "y" * (MAX_CLIENT_DATA_BYTES + 1)}}
    refused = await mcp.modern("tools/call", {"name": "audit", "arguments": {}}, headers=writer, meta=huge_caps)
    assert refused.error["code"] == -32602 and "client capabilities" in refused.error["message"]
    assert mcp.kit.stores.tasks._items == {}  # type: ignore[attr-defined]

    capabilities = {**TASKS, "junk": "z" * (MAX_CLIENT_DATA_BYTES - 200)}
    meta = {META_CAPABILITIES: capabilities, "app.example/trace": "t" * 6_000, "progressToken": 7}
    params = {"name": "audit", "arguments": {}, "stray": "s" * 300_000}
    created = await mcp.modern("tools/call", params, headers=writer, meta=meta)
    assert created.result["resultType"] == "task"
    record = next(iter(mcp.kit.stores.tasks._items.values()))  # type: ignore[attr-defined]
    assert set(record.params) == {"name", "arguments", "_meta"}  # the stray param is not kept
    assert META_CAPABILITIES not in record.params["_meta"]  # kept once, in its own field
    assert record.params["_meta"]["progressToken"] == 7 and record.progress_token == 7
    stored = len(json.dumps([record.params, record.client_capabilities, record.input_responses]))
    assert stored <= MAX_ARGUMENTS_BYTES + MAX_META_BYTES + MAX_CLIENT_DATA_BYTES
    await mcp.close()


async def test_tasks_update_refuses_answers_over_the_caps(issuer: LocalIssuer) -> None:
    client = MCPTestClient(_kit(issuer, streaming=True))
    token = bearer(issuer, "")
    caps = {META_CAPABILITIES: {**TASKS, **ELICIT}}
    try:
        created = await client.modern("tools/call", {"name": "survey", "arguments": {}}, headers=token, meta=caps)
        task_id = created.result["taskId"]

        async def asking() -> bool:
            got = await client.modern(
                "tasks/get", {"taskId": task_id}, headers={**token, "mcp-name": task_id}, meta=caps
            )
            return bool(got.result["status"] == "input_required")

        await until(asking, what="the task to ask")
        big = {"q0": {"action": "accept", "content": {"text": "x" * 70_000}}}
        refused = await client.modern(
            "tasks/update",
            {"taskId": task_id, "inputResponses": big},
            headers={**token, "mcp-name": task_id},
            meta=caps,
        )
        assert refused.error["code"] == -32602 and "65536 bytes" in refused.error["message"]
        record = client.kit.stores.tasks._items[task_id]  # type: ignore[attr-defined]
        assert record.input_responses == {} and record.status == "input_required"
    finally:
        await client.close()


async def test_a_suspended_call_keeps_the_request_without_what_its_rerun_does_not_need(
    mcp: MCPTestClient, issuer: LocalIssuer
) -> None:
    mcp.headers = bearer(issuer, "admin")
    await mcp.initialize("2025-11-25", ELICIT)
    rid = mcp._ids + 1
    message = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": "rotate", "arguments": {}, "stray": "s" * 500_000},
        "junk": "j" * 100_000,
    }
    mcp._ids = rid
    suspended = await mcp.send("POST", json.dumps(message), mcp.legacy_headers())
    assert suspended.messages[-1]["method"] == "elicitation/create"
    assert mcp.session_id is not None
    record = await mcp.kit.stores.calls.get(mcp.session_id, CallStream(rid).format(), time.time())
    assert record is not None
    assert record.request == {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": "rotate", "arguments": {}},
    }


# -- 3. completion of a scoped resource template ------------------------------------------------
async def test_completion_checks_resource_template_scopes_and_tells_the_handler_who_asks(
    mcp: MCPTestClient, issuer: LocalIssuer
) -> None:
    params = {
        "ref": {"type": "ref/resource", "uri": "inventory://items/{sku}"},
        "argument": {"name": "sku", "value": ""},
    }
    refused = await mcp.modern("completion/complete", params, headers=bearer(issuer, "inventory:write"))
    assert refused.status == 403 and 'error="insufficient_scope"' in refused.headers["www-authenticate"]
    answered = await mcp.modern("completion/complete", params, headers=bearer(issuer, "inventory:read"))
    assert answered.result["completion"]["values"] == [f"{issuer.url}#alice:inventory:read"]


# -- 5. a listen filter naming resources the token may not read ---------------------------------
async def test_subscriptions_listen_honours_only_resources_the_token_may_read(
    mcp: MCPTestClient, issuer: LocalIssuer
) -> None:
    wanted = {"resourceSubscriptions": ["inventory://items", "inventory://items/a1", "inventory://public"]}
    listened = await mcp.modern(
        "subscriptions/listen", {"notifications": wanted}, headers=bearer(issuer, "inventory:write")
    )
    acknowledged = listened.messages[0]["params"]["notifications"]
    assert acknowledged["resourceSubscriptions"] == ["inventory://public"]
    listened = await mcp.modern(
        "subscriptions/listen", {"notifications": wanted}, headers=bearer(issuer, "inventory:read")
    )
    assert listened.messages[0]["params"]["notifications"]["resourceSubscriptions"] == wanted["resourceSubscriptions"]


# -- 6. resuming a suspended call with a token that lost the scope -------------------------------
async def test_resuming_a_call_needs_the_scopes_of_what_it_reaches(mcp: MCPTestClient, issuer: LocalIssuer) -> None:
    admin, plain = bearer(issuer, "admin"), bearer(issuer, "inventory:read")
    mcp.headers = admin
    await mcp.initialize("2025-11-25", ELICIT)
    suspended = await mcp.legacy("tools/call", {"name": "rotate", "arguments": {}})
    question = suspended.messages[-1]
    answer = {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {}}}
    assert (await mcp.send("POST", json.dumps(answer), mcp.legacy_headers())).status == 202
    resume = {**mcp.legacy_headers(), "accept": "text/event-stream", "last-event-id": str(suspended.last_event_id)}
    refused = await mcp.send("GET", b"", {**resume, **plain})  # same subject, without admin
    assert refused.status == 403
    assert 'error="insufficient_scope"' in refused.headers["www-authenticate"]
    assert "rotated" not in refused.text
    resumed = await mcp.send("GET", b"", {**resume, **admin})
    assert resumed.status == 200 and f"rotated for {issuer.url}#alice (accept)" in resumed.text


async def test_an_mrtr_retry_needs_the_scopes_of_the_tool(mcp: MCPTestClient, issuer: LocalIssuer) -> None:
    caps = {META_CAPABILITIES: ELICIT}
    first = await mcp.modern("tools/call", {"name": "rotate"}, headers=bearer(issuer, "admin"), meta=caps)
    assert first.result["resultType"] == "input_required"
    retry = {
        "name": "rotate",
        "requestState": first.result["requestState"],
        "inputResponses": {"elicit": {"action": "accept", "content": {}}},
    }
    refused = await mcp.modern("tools/call", retry, headers=bearer(issuer, "inventory:read"), meta=caps)
    assert refused.status == 403


async def test_a_task_result_needs_the_scopes_of_its_tool(mcp: MCPTestClient, issuer: LocalIssuer) -> None:
    client = MCPTestClient(_kit(issuer, streaming=True))
    writer, reader = bearer(issuer, "inventory:write"), bearer(issuer, "inventory:read")
    caps = {META_CAPABILITIES: TASKS}
    try:
        created = await client.modern("tools/call", {"name": "audit"}, headers=writer, meta=caps)
        task_id = created.result["taskId"]
        refused = await client.modern(
            "tasks/get", {"taskId": task_id}, headers={**reader, "mcp-name": task_id}, meta=caps
        )
        assert refused.error["code"] == -32600 and refused.error["data"] == {"requiredScopes": ["inventory:write"]}
        assert refused.status == 403
        client.headers = writer
        await client.initialize("2025-11-25")
        made = await client.legacy("tools/call", {"name": "audit", "arguments": {}, "task": {}})
        legacy_id = made.result["task"]["taskId"]
        result = await client.legacy("tasks/result", {"taskId": legacy_id}, headers=reader)
        assert result.status == 403 and result.error["data"] == {"requiredScopes": ["inventory:write"]}
        result = await client.legacy("tasks/result", {"taskId": legacy_id})
        assert "inventory:write" in result.result["content"][0]["text"]
    finally:
        await client.close()


# -- 7. a number no float can hold, in an Mcp-Param header --------------------------------------
async def test_a_huge_number_in_an_mcp_param_header_is_a_400_not_a_500(mcp: MCPTestClient, issuer: LocalIssuer) -> None:
    digits = "1" + "0" * 400
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "shard", "arguments": {"count": 5}, "_meta": META},
    }
    headers = {
        **bearer(issuer, ""),
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "shard",
        "mcp-param-count": digits,
    }
    exchange = await mcp.send("POST", json.dumps(body), headers)
    assert exchange.status == 400 and exchange.error["code"] == -32020
    body["params"]["arguments"] = {"count": 10**400}
    exchange = await mcp.send("POST", json.dumps(body), headers)  # equal, exactly: the call runs
    assert exchange.status == 200 and exchange.result["content"][0]["text"] == digits


# -- 11. the 403 challenge names every scope the next token needs -------------------------------
async def test_a_per_tool_403_names_the_base_scopes_too_and_carries_the_challenge_in_its_body(
    issuer: LocalIssuer,
) -> None:
    client = MCPTestClient(_kit(issuer, auth_scopes=("mcp:tools",)))
    try:
        refused = await client.modern(
            "tools/call", {"name": "restock", "arguments": {"item": "x"}}, headers=bearer(issuer, "mcp:tools")
        )
        challenge = refused.headers["www-authenticate"]
        assert refused.status == 403 and 'scope="inventory:write mcp:tools"' in challenge
        assert refused.error["data"] == {"wwwAuthenticate": challenge}
    finally:
        await client.close()


# -- also seen -----------------------------------------------------------------------------------
async def test_a_request_state_with_a_lone_surrogate_is_invalid_params(mcp: MCPTestClient, issuer: LocalIssuer) -> None:
    body = (
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","requestState":"a\\ud800.b",'
        '"_meta":' + json.dumps(META) + "}}"
    )
    headers = {
        **bearer(issuer, ""),
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "whoami",
    }
    exchange = await mcp.send("POST", body, headers)
    assert exchange.error["code"] == -32602 and "integrity" in exchange.error["message"]


async def test_the_token_type_can_be_required(issuer: LocalIssuer) -> None:
    client = MCPTestClient(_kit(issuer, auth_token_type="at+jwt"))
    try:
        plain = issuer.token(RESOURCE, scope="")
        refused = await client.modern("tools/list", headers={"authorization": f"Bearer {plain}"})
        assert refused.status == 401 and "typ" in refused.headers["www-authenticate"]
        typed = issuer.token(RESOURCE, scope="", typ="application/at+jwt")
        assert (await client.modern("tools/list", headers={"authorization": f"Bearer {typed}"})).status == 200
    finally:
        await client.close()
