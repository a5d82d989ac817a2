"""Issue 38: the kit as an Amazon Bedrock AgentCore Gateway MCP-server target, with the gateway role's
SigV4 outbound auth to a Function URL (`AuthMode=iam`, `ApiType=URL`).

`lambda-mcp dev examples/conformance/server.py --lambda --api url --iam-caller ROLE` with
`LAMBDA_MCP_AUTH=gateway` (what `AuthMode=iam` sets) emulates the Function URL's event and the caller
`AWS_IAM` puts on it, but does not itself check signatures: the SigV4 door (tests/support/sigv4_door.py)
stands in front of it as the Function URL's IAM check, verifying every request's signature for service
`lambda` with the gateway role's (fake) credentials. The stand-in gateway (tests/support/agentcore_gateway.py)
signs, keeps and reuses the target's session, and re-initializes on a 404.

The kit's legacy session TTL is 3 s here (`LAMBDA_MCP_SESSION_TTL_SECONDS`; sessions slide only every
`SESSION_TOUCH_SECONDS`, 300 s), so a session the gateway reuses is forgotten within the test.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.agentcore_gateway import LEGACY, MODERN, ROLE_CREDENTIALS, AgentCoreGateway
from tests.support.processes import ServerProcess, lambda_mcp_dev
from tests.support.sigv4_door import SigV4Door

APP = "examples/conformance/server.py"
ROLE = "arn:aws:sts::123456789012:assumed-role/agentcore-gateway-role/gateway-session"
SESSION_TTL = 3.0


class Target:
    def __init__(self, process: ServerProcess, door: SigV4Door) -> None:
        self.process = process
        self.door = door
        self.url = f"{door.origin}/mcp"


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    log: Path = tmp_path_factory.mktemp("agentcore") / "dev.log"
    process = lambda_mcp_dev(
        APP,
        through_lambda=True,
        log=log,
        extra_args=["--api", "url", "--iam-caller", ROLE],
        env={"LAMBDA_MCP_AUTH": "gateway", "LAMBDA_MCP_SESSION_TTL_SECONDS": str(int(SESSION_TTL))},
    )
    door = SigV4Door(f"http://127.0.0.1:{process.port}", service="lambda", credentials=ROLE_CREDENTIALS)
    try:
        yield Target(process, door)
    finally:
        door.stop()
        process.stop()


def _text(result: dict[str, object]) -> str:
    content = result["content"]
    assert isinstance(content, list) and content, result
    return str(content[0]["text"])


def test_an_unsigned_or_wrongly_signed_request_is_refused(target: Target) -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
    refused_before = len(target.door.refused)
    unsigned = httpx.post(
        target.url, json=listing, headers={"mcp-protocol-version": MODERN, "mcp-method": "tools/list"}
    )
    assert unsigned.status_code == 403, unsigned.text
    # signed for the wrong service (API Gateway's), as a target configured with the wrong service name would be
    wrong = AgentCoreGateway(target.url, version=MODERN, service="execute-api")
    try:
        with pytest.raises(AssertionError, match="HTTP 403"):
            wrong.list_tools()
    finally:
        wrong.close()
    # signed right, then a signed header changed on the way: the signature itself is checked
    body = json.dumps(listing).encode()
    base = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    routing = {"mcp-protocol-version": MODERN, "mcp-method": "tools/list"}
    with AgentCoreGateway(target.url, version=MODERN) as gateway:
        signed = gateway.signed_headers("POST", body, {**base, **routing})
    tampered = httpx.post(target.url, content=body, headers={**signed, "mcp-method": "tools/call"})
    assert tampered.status_code == 403, tampered.text
    assert target.door.refused[refused_before:] == [
        "no SigV4 Authorization header",
        f"wrong credential scope {ROLE_CREDENTIALS.access_key}/us-east-1/execute-api",
        "signature does not match",
    ]
    # the same signed headers, untouched, are accepted: what was refused was the change
    accepted = httpx.post(target.url, content=body, headers=signed)
    assert accepted.status_code == 200, accepted.text
    assert "greet" in {tool["name"] for tool in accepted.json()["result"]["tools"]}


def test_on_2026_07_28_the_gateway_lists_calls_and_runs_a_task_to_completion(target: Target) -> None:
    accepted = target.door.accepted
    with AgentCoreGateway(target.url, version=MODERN) as gateway:
        tools = {tool["name"]: tool for tool in gateway.list_tools()}
        assert {"greet", "slow_compute", "failing_job"} <= set(tools)
        greeted = gateway.call_tool("greet", {"name": "gateway"})
        assert _text(greeted) == "Hello, gateway!" and not greeted.get("isError")
        created, task = gateway.run_task("slow_compute", {"seconds": 1, "label": "through agentcore"})
        assert created["status"] == "working"
        assert task["status"] == "completed", task
        assert _text(task["result"]) == "computed through agentcore in 1s"
        failed_created, failed = gateway.run_task("failing_job")
        assert failed["status"] == "completed" and failed["result"]["isError"] is True, failed
        assert gateway.initializations == 0 and gateway.session_id is None  # stateless: no handshake, no session
        assert {exchange.status for exchange in gateway.log} == {200}
        assert all(exchange.session_id is None for exchange in gateway.log)
        assert target.door.accepted - accepted == len(gateway.log)  # every request passed the IAM check
    assert failed_created["taskId"] != created["taskId"]


def test_on_2025_11_25_the_gateway_reuses_its_session_and_recovers_an_expired_one(target: Target) -> None:
    with AgentCoreGateway(target.url, version=LEGACY) as gateway:
        started = time.monotonic()
        gateway.initialize()
        first = gateway.session_id
        assert first
        for name in ("alice", "bob", "carol"):
            assert _text(gateway.call_tool("greet", {"name": name})) == f"Hello, {name}!"
        assert "greet" in {tool["name"] for tool in gateway.list_tools()}
        assert time.monotonic() - started < SESSION_TTL, "too slow to show reuse within the kit's session TTL"
        reused = [exchange for exchange in gateway.log if exchange.method in ("tools/call", "tools/list")]
        assert len(reused) == 4 and {(e.status, e.session_id) for e in reused} == {(200, first)}
        assert gateway.initializations == 1

        # the kit forgets the session (its TTL passes); the gateway still holds and reuses the id
        time.sleep(max(0.0, started + SESSION_TTL + 0.5 - time.monotonic()))
        raw = gateway.signed_headers  # what the target answers the stale id, before any recovery
        body = json.dumps({"jsonrpc": "2.0", "id": 99, "method": "tools/list"}).encode()
        stale = httpx.post(
            target.url,
            content=body,
            headers=raw(
                "POST",
                body,
                {
                    "content-type": "application/json",
                    "accept": "application/json, text/event-stream",
                    "mcp-protocol-version": LEGACY,
                    "mcp-session-id": first,
                },
            ),
        )
        assert stale.status_code == 404, stale.text  # the spec's answer to a session the server does not know
        assert stale.json()["error"]["code"], stale.text

        mark = len(gateway.log)
        assert _text(gateway.call_tool("greet", {"name": "dave"})) == "Hello, dave!"
        recovery = [(e.method, e.status) for e in gateway.log[mark:]]
        assert recovery == [
            ("tools/call", 404),
            ("initialize", 200),
            ("notifications/initialized", 202),
            ("tools/call", 200),
        ], recovery
        assert gateway.log[mark].session_id == first
        assert gateway.session_id and gateway.session_id != first
        assert gateway.log[-1].session_id == gateway.session_id
        assert gateway.initializations == 2
        # and the new session is reused in turn
        assert _text(gateway.call_tool("greet", {"name": "erin"})) == "Hello, erin!"
        assert gateway.log[-1] == type(gateway.log[-1])("tools/call", 200, gateway.session_id)
        assert gateway.initializations == 2
