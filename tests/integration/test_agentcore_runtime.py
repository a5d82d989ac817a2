"""`lambda-mcp serve --agentcore` as an AgentCore Runtime container runs it, without Docker (issue 38): the
same process and environment (no Lambda variable, `LAMBDA_MCP_AUTH=none`: AgentCore authenticates), on a
free loopback port instead of 8000, sent the contract's requests: the health path, and `/mcp` calls that
carry what the platform adds (its own `Mcp-Session-Id`, `X-Amzn-Bedrock-AgentCore-Runtime-Session-Id`,
its Host) on both eras."""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.processes import ROOT, ServerProcess, free_port
from tests.support.schema import body_messages

APP = str(ROOT / "examples/conformance/server.py")
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
RUNTIME_HOST = "bedrock-agentcore.us-east-1.amazonaws.com"


@pytest.fixture(autouse=True)
def in_a_container(monkeypatch: pytest.MonkeyPatch) -> None:
    """No `LAMBDA_MCP_*`, Lambda or LWA variable reaches the server but those a test gives."""
    for name in [n for n in os.environ if n.startswith(("LAMBDA_MCP_", "AWS_LAMBDA_", "AWS_LWA_"))]:
        monkeypatch.delenv(name)


def serve_args(app: str, port: int) -> list[str]:
    """`lambda-mcp serve --agentcore APP` as the image runs it, on a free loopback port instead of 0.0.0.0:8000."""
    return [
        sys.executable,
        "-m",
        "lambda_mcp.cli",
        "serve",
        "--agentcore",
        app,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]


def start(tmp_path: Path, name: str, **env: str) -> ServerProcess:
    port = free_port()
    args = serve_args(APP, port)
    return ServerProcess(args, port, {"LAMBDA_MCP_AUTH": "none", **env}, log=tmp_path / f"{name}.log")


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[ServerProcess]:
    server = start(tmp_path, "runtime")
    yield server
    server.stop()


def platform_headers(session: str | None = None, host: str = RUNTIME_HOST) -> dict[str, str]:
    """What the Runtime's sidecar forwards: its Host, its session ids (a platform-minted `Mcp-Session-Id`)."""
    runtime_session = str(uuid.uuid4())
    return {
        "host": host,
        "accept": ACCEPT,
        "content-type": "application/json",
        "mcp-session-id": session or runtime_session,
        "x-amzn-bedrock-agentcore-runtime-session-id": runtime_session,
    }


def post(server: ServerProcess, body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
    return httpx.post(server.url, content=json.dumps(body), headers=headers, timeout=30)


def result_of(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    messages = body_messages(response.headers.get("content-type", ""), response.content)
    final = [m for m in messages if "result" in m or "error" in m]
    assert final and "result" in final[-1], messages
    result: dict[str, Any] = final[-1]["result"]
    return result


def legacy(method: str, rid: int, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}}


def test_ping_answers_the_runtime_health_document(runtime: ServerProcess) -> None:
    before = int(time.time())
    response = httpx.get(f"http://127.0.0.1:{runtime.port}/ping", timeout=10)
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "Healthy"
    assert before <= body["time_of_last_update"] <= int(time.time()) + 1
    assert "lambda-mcp serve --agentcore" in runtime.log_text()


def test_a_2026_tool_call_with_the_runtime_headers_and_host(runtime: ServerProcess) -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    body["params"] = {"name": "test_simple_text", "arguments": {}, "_meta": meta}
    headers = {
        **platform_headers(),
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "test_simple_text",
    }
    result = result_of(post(runtime, body, headers))
    assert result["content"] == [{"type": "text", "text": "This is a simple text response for testing."}]


def test_2025_initialize_then_tools_list_under_the_platforms_session_ids(runtime: ServerProcess) -> None:
    """The platform sends its own `Mcp-Session-Id` (also on `initialize`) and keeps sending it: the kit,
    stateless, serves `tools/list` under an id it never issued (not 404), with its own or none too."""
    platform_session = str(uuid.uuid4())
    headers = platform_headers(platform_session)
    init = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "agentcore", "version": "1"}}
    started = result_of(post(runtime, legacy("initialize", 1, init), headers))
    assert started["protocolVersion"] == LEGACY
    headers["mcp-protocol-version"] = LEGACY
    notified = post(runtime, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    assert notified.status_code == 202
    tools = result_of(post(runtime, legacy("tools/list", 2), headers))
    assert "test_simple_text" in {tool["name"] for tool in tools["tools"]}
    called = result_of(post(runtime, legacy("tools/call", 3, {"name": "test_simple_text", "arguments": {}}), headers))
    assert called["content"][0]["text"] == "This is a simple text response for testing."
    unsessioned = {k: v for k, v in headers.items() if k != "mcp-session-id"}  # a probe without one: still served
    assert result_of(post(runtime, legacy("ping", 4), unsessioned)) == {}


def test_the_sidecar_probe_from_loopback_and_a_rebinding_origin(runtime: ServerProcess) -> None:
    """The sidecar's `POST /mcp` probe at the loopback address answers 200; any Host is allowed, but a
    browser's foreign Origin (a DNS-rebinding page) is still refused."""
    probe = platform_headers(host=f"127.0.0.1:{runtime.port}")
    assert post(runtime, legacy("ping", 1), probe).status_code == 200
    odd_host = platform_headers(host="10.0.3.7:8000")
    assert post(runtime, legacy("ping", 2), odd_host).status_code == 200
    rebinding = {**platform_headers(host="attacker.example:8000"), "origin": "http://attacker.example:8000"}
    assert post(runtime, legacy("ping", 3), rebinding).status_code == 403


def test_listed_hosts_lock_the_host_check_down(tmp_path: Path) -> None:
    server = start(tmp_path, "locked", LAMBDA_MCP_ALLOWED_HOSTS=RUNTIME_HOST)
    try:
        assert post(server, legacy("ping", 1), platform_headers()).status_code == 200
        assert post(server, legacy("ping", 2), platform_headers(host=f"127.0.0.1:{server.port}")).status_code == 200
        assert post(server, legacy("ping", 3), platform_headers(host="other.example")).status_code == 403
    finally:
        server.stop()


def test_a_kit_issued_session_still_works_in_the_runtime(runtime: ServerProcess) -> None:
    """A client that keeps the kit's own session id (where the platform passes it through) keeps its
    session: the negotiated revision, not the stateless default."""
    headers = platform_headers()
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    response = post(runtime, legacy("initialize", 1, init), headers)
    assert result_of(response)["protocolVersion"] == "2025-06-18"
    issued = response.headers.get("mcp-session-id")
    assert issued
    headers.update({"mcp-session-id": issued, "mcp-protocol-version": "2025-06-18"})
    assert "tools" in result_of(post(runtime, legacy("tools/list", 2), headers))


def test_a_new_agentcore_project_serves_as_its_dockerfile_runs_it(tmp_path: Path) -> None:
    """`lambda-mcp new --target agentcore`'s image runs `serve --agentcore app.py` in /app (the app/ folder)."""
    from lambda_mcp.scaffold import create_project

    project = create_project("demo-rt", tmp_path, agentcore=True)
    port = free_port()
    args = serve_args("app.py", port)
    env = {"LAMBDA_MCP_AUTH": "none"}  # the Dockerfile's ENV
    assert "ENV LAMBDA_MCP_AUTH=none" in (project / "Dockerfile").read_text()
    server = ServerProcess(args, port, env, log=tmp_path / "project.log", cwd=project / "app")
    try:
        assert httpx.get(f"http://127.0.0.1:{port}/ping", timeout=10).json()["status"] == "Healthy"
        tools = result_of(post(server, legacy("tools/list", 1), platform_headers()))
        assert tools["tools"]
    finally:
        server.stop()
