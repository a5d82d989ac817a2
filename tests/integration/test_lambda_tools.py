"""Lambda functions as tools (issue 39) end to end: tests/apps/lambda_backed.py served by a real
`lambda-mcp dev --lambda` process (auth `jwt`, tokens from the local issuer), its botocore client pointed at the
stand-in Lambda endpoint by `AWS_ENDPOINT_URL_LAMBDA`, as every AWS SDK reads it.

On both protocol eras the tools are listed and a call returns the function's answer; the function received
exactly the call's arguments, a SigV4-signed request, and the caller's principal in its client context; a
function that raises and one that does not exist are tool errors naming them. A task-capable Lambda tool runs
as a task through the testing client."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from lambda_mcp.loader import load_app
from lambda_mcp.testing import Client
from tests.support.issuer import LocalIssuer
from tests.support.lambda_endpoint import LambdaEndpoint
from tests.support.legacy_client import LegacyClient
from tests.support.processes import ROOT, ServerProcess, free_port, lambda_mcp_dev
from tests.support.recorder import Recorder

APP = "tests/apps/lambda_backed.py"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ERAS = [MODERN, LEGACY]
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
_ids = itertools.count(1000)


def _explode(event: Any, context: Any) -> Any:
    raise KeyError(f"no order {event['id']}")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[LambdaEndpoint]:
    stand_in = LambdaEndpoint()
    stand_in.register("lookup-order", lambda event, context: {"id": event["id"], "status": "shipped"})
    stand_in.register("order-total", lambda event, context: {"id": event["id"], "total": 41.5})
    stand_in.register("explode", _explode)
    yield stand_in
    stand_in.stop()


@pytest.fixture(scope="module")
def server(
    endpoint: LambdaEndpoint, issuer: LocalIssuer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    port = free_port()
    env = {
        "AWS_ENDPOINT_URL_LAMBDA": endpoint.url,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "LAMBDA_MCP_AUTH": "jwt",
        "LAMBDA_MCP_AUTH_ISSUER": issuer.url,
        "LAMBDA_MCP_AUTH_AUDIENCE": f"http://127.0.0.1:{port}/mcp",
    }
    log = tmp_path_factory.mktemp("lambda-tools") / "dev.log"
    process = lambda_mcp_dev(APP, through_lambda=True, env=env, port=port, log=log)
    yield process
    process.stop()


class BearerLegacyClient(LegacyClient):
    """The 2025-11-25 test client, with a bearer token on every request (the initialize too)."""

    def __init__(self, url: str, recorder: Recorder, token: str) -> None:
        self.token = token
        super().__init__(url, recorder)

    def headers(self) -> dict[str, str]:
        return {**super().headers(), "authorization": f"Bearer {self.token}"}


class Caller:
    """One era's client of the dev server, schema-checking every exchange."""

    def __init__(self, server: ServerProcess, token: str, era: str) -> None:
        self.server, self.token, self.era = server, token, era
        self.recorder = Recorder()
        self.legacy = BearerLegacyClient(server.url, self.recorder, token) if era == LEGACY else None

    def request(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The request's id and its response message."""
        if self.legacy is not None:
            response = self.legacy.call(method, params)
            return int(self.legacy.last_request_id), response
        request_id = next(_ids)
        body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": META}})
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": MODERN,
            "mcp-method": method,
            "authorization": f"Bearer {self.token}",
        }
        if "name" in params:
            headers["mcp-name"] = params["name"]
        answer = httpx.post(self.server.url, content=body, headers=headers, timeout=30)
        sent = headers | {"host": answer.request.headers["host"]}
        received = {k.lower(): v for k, v in answer.headers.items()}
        messages = self.recorder.exchange(sent, body.encode(), answer.status_code, received, answer.content)
        assert answer.status_code == 200 and messages, (answer.status_code, answer.text)
        return request_id, messages[-1]

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        request_id, response = self.request("tools/call", {"name": name, "arguments": arguments})
        assert "result" in response, response
        assert self.recorder.violations == [], self.recorder.violations
        return request_id, response["result"]


@pytest.fixture(params=ERAS)
def caller(request: pytest.FixtureRequest, server: ServerProcess, issuer: LocalIssuer) -> Caller:
    return Caller(server, issuer.token(server.url), request.param)


def test_the_lambda_tools_are_listed(caller: Caller) -> None:
    _, response = caller.request("tools/list", {})
    tools = {tool["name"]: tool for tool in response["result"]["tools"]}
    assert set(tools) == {"lookup_order", "order_total", "explode", "missing"}
    assert tools["lookup_order"]["inputSchema"]["required"] == ["id"]
    assert tools["explode"]["inputSchema"] == {"type": "object"}  # any object, by default
    assert tools["order_total"]["outputSchema"]["properties"]["total"] == {"type": "number"}
    if caller.era == LEGACY:  # 2026 has no `execution`: a task-capable tool is one the tasks extension may run
        assert tools["order_total"]["execution"] == {"taskSupport": "optional"}
    assert caller.recorder.violations == []


def test_a_call_returns_the_functions_answer_and_the_function_gets_the_arguments_and_the_caller(
    caller: Caller, endpoint: LambdaEndpoint, issuer: LocalIssuer
) -> None:
    arguments = {"id": f"A-{caller.era}", "lines": [{"sku": "x", "count": 2}], "gift": None}
    request_id, result = caller.call("lookup_order", arguments)
    assert result.get("isError") is not True
    assert json.loads(result["content"][0]["text"]) == {"id": arguments["id"], "status": "shipped"}
    (invocation,) = [i for i in endpoint.received("lookup-order") if i.payload == arguments]
    assert invocation.payload == arguments  # exactly the call's arguments, nothing added
    assert (invocation.signed_for, invocation.invocation_type) == ("lambda", "RequestResponse")
    assert invocation.client_context == {
        "custom": {"principal": f"{issuer.url}#alice", "tool": "lookup_order", "requestId": str(request_id)}
    }


def test_an_output_schema_makes_the_answer_structured_content(caller: Caller, endpoint: LambdaEndpoint) -> None:
    _, result = caller.call("order_total", {"id": "B-1"})
    assert result["structuredContent"] == {"id": "B-1", "total": 41.5}
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert endpoint.received("order-total")[-1].qualifier == "live"


def test_a_raising_function_is_a_tool_error(caller: Caller) -> None:
    _, result = caller.call("explode", {"id": "C-9"})
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": "the function explode failed: KeyError: 'no order C-9'"}]


def test_an_unknown_function_is_a_tool_error_naming_it(caller: Caller) -> None:
    _, result = caller.call("missing", {})
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text == "the function no-such-function could not be invoked: ResourceNotFoundException (no such function)"


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_a_task_capable_lambda_tool_runs_as_a_task(
    era: str, endpoint: LambdaEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_LAMBDA", endpoint.url)
    app = load_app(str(ROOT / APP))
    async with Client(app, protocol_version=era, principal="alice", raise_exceptions=True) as client:
        task = await client.start_task("order_total", {"id": f"T-{era}"})
        result = await client.task_result(task["taskId"])
    assert not result.is_error and result.structured_content == {"id": f"T-{era}", "total": 41.5}
    (invocation,) = [i for i in endpoint.received("order-total") if i.payload == {"id": f"T-{era}"}]
    assert invocation.client_context is not None
    custom = invocation.client_context["custom"]
    assert custom["principal"] == "alice" and custom["tool"] == "order_total" and custom["taskId"] == task["taskId"]


def test_the_dev_server_logged_no_traceback(server: ServerProcess) -> None:
    assert "Traceback" not in server.log_text()
